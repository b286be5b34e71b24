"""The headline (analysis.select.compare_average, the mean over the test languages) on test sets
that are translations of one item set: each item's mean over its translations is one unit, so
a method's effect on an item counts once, not once per language (docs/statistics.md#parallel-
test-sets). Independent and undeclared sets keep 0.5.0's concatenation, and the result and the
verdict say which units the test ran on."""

import numpy as np
import pandas as pd
import pytest

from analysis.parallel_calibration import ParallelCell, headline_p_values, simulate_parallel
from analysis.parallel_items import averaged_items
from analysis.select import compare_average
from analysis.stats import crossed_test
from analysis.verdict import held_out_headline
from xlt_schema import PARALLEL_ITEMS_FIELD

LANGUAGES = ["en", "de", "es", "ru"]  # split_languages' order: the source language first


class _Scores:
    """Per-example 0/1 scores of runs ``system-<seed>`` and ``baseline-<seed>``: per language a
    (seeds, examples) array of each side, and the artifacts' parallel declaration (None: an
    artifact of 0.5.0, without it)."""

    def __init__(self, system: dict, baseline: dict, parallel: bool | None):
        self.sides = {"system": system, "baseline": baseline}
        self.parallel = parallel

    def payload(self, run_id, split, lang):
        declared = {} if self.parallel is None else {PARALLEL_ITEMS_FIELD: self.parallel}
        return {"split": split, "lang": lang, "metric": "accuracy", **declared}

    def scores(self, run_ids, split, lang):
        rows = []
        for run_id in run_ids:
            side, seed = run_id.split("-")
            rows.append(self.sides[side][lang][int(seed)])
        return np.asarray(rows, dtype=float)

    def counts(self, run_ids, split, lang):
        return None


def _trials(languages, seeds: int) -> pd.DataFrame:
    """Finished runs of a configuration (``system``) and the baseline on ``seeds`` seeds, each
    with a test metric per language (the comparison reads the per-example scores)."""
    rows = [
        {
            "run_id": f"{side}-{seed}",
            "config_key": side,
            "config_label": side,
            "method": method,
            "adaptation": "none",
            "seed": seed,
            **{f"test/{lang}/accuracy": 0.5 for lang in languages},
        }
        for side, method in (("system", "ear"), ("baseline", "finetune"))
        for seed in range(seeds)
    ]
    return pd.DataFrame(rows)


def _average(system: dict, baseline: dict, parallel: bool | None) -> dict:
    languages = list(system)
    seeds = len(next(iter(system.values())))
    scores = _Scores(system, baseline, parallel)
    return compare_average(scores, _trials(languages, seeds), "system", "baseline")


# 2 languages x 2 seeds x 3 items. Item 0 is right in both translations on seed 0, items 1
# and 2 in one of them: each item's mean over its translations, by hand, below.
SYSTEM = {
    "en": np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]),
    "de": np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
}
BASELINE = {
    "en": np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    "de": np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
}
SYSTEM_ITEMS = np.array([[1.0, 0.5, 0.5], [0.0, 0.5, 1.0]])
BASELINE_ITEMS = np.array([[0.0, 0.5, 1.0], [0.5, 0.0, 0.0]])


def test_items_are_averaged_over_their_translations_as_by_hand():
    assert averaged_items([SYSTEM["en"], SYSTEM["de"]]) == pytest.approx(SYSTEM_ITEMS)
    result = _average(SYSTEM, BASELINE, parallel=True)
    expected = crossed_test(SYSTEM_ITEMS, BASELINE_ITEMS)
    assert result["units"] == "items averaged over their 2 translations"
    assert result["n_examples"] == 3 and result["n_seeds"] == 2
    assert result["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
    assert result["mean_difference"] == pytest.approx(expected.mean_difference)
    # Still the mean of the languages' metrics: 7/12 against 4/12.
    assert (result["system_mean"], result["reference_mean"]) == pytest.approx((7 / 12, 4 / 12))


@pytest.mark.parametrize(
    ("parallel", "units"),
    [(False, "examples of independent test sets"), (None, "do not record whether")],
)
def test_independent_and_undeclared_sets_keep_the_concatenation(parallel, units):
    result = _average(SYSTEM, BASELINE, parallel)
    concatenated = crossed_test(
        np.concatenate([SYSTEM["en"], SYSTEM["de"]], axis=1),
        np.concatenate([BASELINE["en"], BASELINE["de"]], axis=1),
    )
    assert units in result["units"]
    assert result["n_examples"] == 6
    assert result["p_value"] == pytest.approx(concatenated.p_value, rel=1e-12)


def test_translations_of_different_lengths_are_not_paired_and_the_result_says_why():
    # Declared parallel, but de lost an item: no position pairs the translations. The
    # languages are weighted as independent sets are (en's 3 examples by 5/6, de's 2 by 5/4).
    system = {"en": SYSTEM["en"], "de": SYSTEM["de"][:, :2]}
    baseline = {"en": BASELINE["en"], "de": BASELINE["de"][:, :2]}
    result = _average(system, baseline, parallel=True)
    assert "different numbers of items (en 3, de 2)" in result["units"]
    expected = crossed_test(
        np.concatenate([5 / 6 * system["en"], 5 / 4 * system["de"]], axis=1),
        np.concatenate([5 / 6 * baseline["en"], 5 / 4 * baseline["de"]], axis=1),
    )
    assert result["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
    with pytest.raises(ValueError, match="different numbers of items"):
        averaged_items([system["en"], system["de"]])


def test_the_verdict_says_which_units_the_test_ran_on():
    row = _average(SYSTEM, BASELINE, parallel=True)
    _, sentence = held_out_headline("ear", "test", row)
    assert "(crossed test, 2 seeds). The test ran on items averaged over their 2 translations." in (
        sentence
    )
    _, old = held_out_headline("ear", "test", _average(SYSTEM, BASELINE, parallel=None))
    assert "The test ran on examples of every language counted as independent" in old


# The cell: 4 parallel languages of XNLI's 5,010 items, 5 seeds, a run's accuracy
# moving by 0.6 points from seed to seed, each method's own effect on an item (omega 0.45)
# shared by its translations.
CELL = ParallelCell(languages=4, examples=5010, seeds=5, seed_sd=0.6, item_effect=0.45)
REPEATS = 400
BOUND = 0.10


def test_the_headline_holds_its_level_where_translations_share_an_items_effect():
    """Under the null, the headline on items rejects at most 10% of 400 simulated sweeps; on
    the same sweeps 0.5.0's headline (the 4 x 5,010 examples concatenated, what an artifact
    without the declaration still gets) rejects more than 10%.

    The margins: in the calibration's 2,000 repeats of this cell (docs/statistics.md) the items
    reject 4.6%, and 10% is 5.1 binomial standard errors of 400 repeats above that; the
    examples reject 16.2%, and 10% is 3.4 of their standard errors below it. The generator's
    seed is fixed (these 400 sweeps: 4.75% and 21.25%), so the outcome is too. The report's
    p-values are also checked equal to the calibration's (headline_p_values, the table's).
    """
    rng = np.random.default_rng(49)
    trials = _trials(LANGUAGES, CELL.seeds)
    reported, batch = [], {"items": [], "examples": []}
    chunk = 100
    for _ in range(REPEATS // chunk):
        system, baseline = simulate_parallel(rng, CELL, chunk)
        for repeat in range(chunk):
            runs = [dict(zip(LANGUAGES, side[repeat])) for side in (system, baseline)]
            result = compare_average(_Scores(*runs, True), trials, "system", "baseline")
            reported.append(result["p_value"])
        for name, p_values in headline_p_values(system, baseline).items():
            batch[name].extend(p_values)
    rates = {name: np.mean(np.asarray(p) < 0.05) for name, p in batch.items()}
    assert np.mean(np.asarray(reported) < 0.05) <= BOUND, rates
    assert rates["examples"] > BOUND, rates
    np.testing.assert_allclose(reported, batch["items"], rtol=1e-6)
