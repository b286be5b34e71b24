"""`python -m analysis.calibration --languages ...`, the multi-language cells of
docs/statistics.md#parallel-test-sets: in its model the translations of an item share the
methods' effects on it, and its table has a row per cell."""

import numpy as np
import pytest

from analysis.calibration import main
from analysis.parallel_calibration import ParallelCell, simulate_parallel


def _correlation(item_effect: float) -> float:
    """The correlation over items of two languages' system-minus-baseline scores (each item's
    mean over seeds), averaged over 20 simulated sweeps."""
    cell = ParallelCell(languages=2, examples=2000, seeds=5, seed_sd=0.6, item_effect=item_effect)
    system, baseline = simulate_parallel(np.random.default_rng(3), cell, 20)
    differences = (system - baseline).mean(axis=2)  # (sweeps, languages, items)
    return float(np.mean([np.corrcoef(sweep)[0, 1] for sweep in differences]))


def test_the_translations_of_an_item_share_its_method_effects():
    # Without item effects the languages share only the items' difficulty, which weights
    # each language's own seed shifts per item: no correlation on average (per sweep its
    # standard error is about 0.022 over 2,000 items; 20 sweeps: about 0.005).
    assert _correlation(0.45) > 0.5
    assert _correlation(0.3) > 0.4
    assert abs(_correlation(0.0)) < 0.02


def test_the_multi_language_table_has_a_row_per_cell(capsys):
    main(
        ["--languages", "2", "--examples", "60", "--seeds", "3", "--seed-sd", "0.6"]
        + ["--repeats", "20"]
    )
    lines = capsys.readouterr().out.splitlines()
    assert "| items (headline) | examples (0.5.0) |" in lines[1]
    rows = [line for line in lines if line.startswith("| 2 | 60 | 3 | 0.6 | 0.7 |")]
    assert [row.split("|")[6].strip() for row in rows] == ["0.3", "0.45"]  # the item effects
    for row in rows:
        rates = [float(cell) for cell in row.strip("|").split("|")[7:]]
        assert len(rates) == 2 and all(0 <= rate <= 100 for rate in rates)


@pytest.mark.parametrize(
    "options", [["--languages", "4", "--kinds", "ner"], ["--item-effect", "0.3"]]
)
def test_options_of_the_other_table_are_refused(options):
    with pytest.raises(SystemExit):
        main(options)
