"""`--set selection_dev=test` (each trial keeps the checkpoint with the best pooled test
accuracy, the released EAR scripts' rule) is refused but under `--preset released` of released
code that selects so, where the dry run lists it as a departure that leaks test."""

import pytest

from sweeps import ear_pawsx, ear_xnli, robust_xnli
from sweeps.cli import apply_overrides, main
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import RELEASED_PRESET, load_card

ON_TEST = ["--set", "selection_dev=test", "--dry-run"]


@pytest.mark.parametrize(
    ("script", "preset"),
    [
        (ear_xnli, "smoke"),
        (ear_xnli, "paper"),
        (ear_pawsx, "paper-xlmr"),
        (robust_xnli, "released"),  # Robust-XLT keeps its checkpoints on English dev
    ],
)
def test_selection_on_test_is_refused_without_released_code_that_selects_so(capsys, script, preset):
    assert main(script, ["--preset", preset, *ON_TEST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: invalid setting selection_dev='test': en or source for ")
    assert f"--preset {preset}: selection on test " in err
    assert "which leaks test; only --preset released" in err


def test_the_released_preset_takes_it_only_when_asked_and_lists_it_as_a_leak(capsys):
    released = experiment_spec(ear_xnli, RELEASED_PRESET, None)
    assert {config.selection_dev for config in released.configs()} == {"en"}
    on_test = apply_overrides(released, {"selection_dev": "test"})
    assert {config.selection_dev for config in on_test.configs()} == {"test"}
    assert main(ear_xnli, ["--preset", RELEASED_PRESET, *ON_TEST]) == 0
    out = capsys.readouterr().out
    source = load_card("ding2022").test_selection(RELEASED_PRESET)
    assert source.startswith("KB-Ding/EAR@b508ce7 run/train.py:")
    assert (
        "  - selection_dev: checkpoints chosen on dev, never on test (the zero-shot protocol) "
        f"-> test; why: LEAKS TEST: --set on the command line, the released code's rule "
        f"({source})" in out
    )
    # Asked for nothing, the released preset's dry run lists no such departure.
    assert main(ear_xnli, ["--preset", RELEASED_PRESET, "--dry-run"]) == 0
    assert "LEAKS TEST" not in capsys.readouterr().out
