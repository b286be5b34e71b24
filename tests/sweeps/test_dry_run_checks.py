"""`--dry-run` refuses what the sweep refuses (sweeps/planning/sweep_checks.py, shared with
runner.check_sweep), and a search's plan counts what the search runs: the layers the tiny
model has, and a phase 2 of at most the configurations phase 1 sampled."""

import dataclasses
import re
import sys

import pytest

from sweeps import ear_xnli
from sweeps.cli import apply_overrides, main, resolve_paths
from sweeps.planning import search_space
from sweeps.running.runner import check_sweep
from sweeps.spec.experiment import experiment_spec
from xlt_core.errors import ConfigError

SEARCH = ["--preset", "smoke", "--strategy", "search", "--dry-run"]


def _spec(strategy: str, **settings):
    spec = dataclasses.replace(experiment_spec(ear_xnli, "smoke", None), strategy=strategy)
    return resolve_paths(apply_overrides(spec, {k: str(v) for k, v in settings.items()}))


def test_an_ear_ner_dry_run_is_refused_as_the_sweep_refuses_it(capsys):
    assert main(ear_xnli, ["--preset", "smoke", "--dry-run", "--set", "task=ner"]) == 2
    err = capsys.readouterr().err
    with pytest.raises(ConfigError) as sweep:
        check_sweep(_spec("grid", task="ner"))
    assert err == f"error: {sweep.value}\n"
    assert "task=ner supports method finetune" in err


def test_search_seeds_beyond_the_seeds_are_refused_by_the_dry_run(capsys):
    assert main(ear_xnli, [*SEARCH, "--set", "search_seeds=3"]) == 2
    assert "invalid setting search_seeds=3: at most the sweep's 2 seeds" in capsys.readouterr().err


def test_the_tiny_models_search_offers_only_its_layers(capsys):
    assert main(ear_xnli, SEARCH) == 0
    out = capsys.readouterr().out
    # The tiny model has 6 layers: the declared choices 9 and 12 are not searched.
    assert "for model tiny (ear: alpha 0.1..2.0 step 0.1, beta 0.05..1.0 step 0.05, " in out
    assert "layer in {3, 6}, m in {1};" in out
    assert search_space.search_ranges(_spec("search"))["ear"]["layer"] == ("choice", (3, 6))


def test_search_plan_figures_with_top_k_beyond_the_sampled(capsys):
    argv = [*SEARCH, "--set", "search_trials=3", "--set", "top_k=5"]
    assert main(ear_xnli, argv) == 0
    out = capsys.readouterr().out
    assert "3 configurations sampled by Optuna TPE" in out
    assert "x 1 seed (0) = 3 trials;" in out
    assert (
        "Phase 2 (final): 1 baseline + top 3 of phase 1 (top_k=5, capped at its 3 "
        "configurations) = 4 configurations x 2 seeds = 8 trials" in out
    )
    assert "= 4 trials, none if the baseline is selected" in out  # confirmation, 2 seeds
    assert "Trials: 15 at most (ASHA stops some early)" in out
    rows = [line.split() for line in out.splitlines() if re.match(r"^ +\d+ +[\d.e+-]+ ", line)]
    # phase 1, baseline, top 3 x 2 seeds; the confirmation's baseline and selected x 2 seeds
    assert [int(row[0]) for row in rows] == [3, 2, 6, 2, 2]
    gpu_hours = sum(int(row[0]) * float(row[2]) for row in rows)
    total = re.search(r"Total: (\S+) GPU-hours for 15 trials", out)
    assert total and float(total.group(1)) == pytest.approx(gpu_hours, rel=2e-3)


def test_an_adjustment_sweep_without_eflomal_is_refused_before_ray(capsys, monkeypatch):
    from sweeps import adjust_xnli

    monkeypatch.setitem(sys.modules, "eflomal", None)  # not installed, as find_spec sees it
    assert main(adjust_xnli, ["--preset", "smoke", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "invalid setting adaptation=" in err and "pip install 'xlt-sweeps[adjust]'" in err
    monkeypatch.delitem(sys.modules, "eflomal")
    assert main(adjust_xnli, ["--preset", "smoke", "--dry-run"]) == 0


def test_a_sweep_without_its_baseline_is_refused_by_the_checks_before_training():
    """Issue 53, item 1: it trained, then every report and `--resume` failed (no finished
    baseline runs); the checks the dry run and the sweep share now refuse it."""
    spec = _spec("grid")
    points = [point for point in spec.points if point["method"] != "finetune"]
    spec = dataclasses.replace(spec, points=points)
    with pytest.raises(ConfigError) as refused:
        check_sweep(spec)
    assert refused.value.field == "points" and "- method: finetune" in refused.value.allowed


# Issue 53, items 7 and 10: values with no bound (a traceback in the dry run, or every trial of
# a real sweep failing); (the --set values, the words of the one line).
OUT_OF_BOUNDS = {
    "epochs 1e308": (["epochs=1e308"], ["epochs=1e+308", "a value > 0 and <= 1000"]),
    "a 300-character model": (
        ["model=" + "m" * 300],
        ["model='mmm", "each part of its path at most 255 characters"],
    ),
    "batch_size 1e30": (
        ["batch_size=1e30"],
        ["batch_size=1000000000000000019884624838656", "a value >= 1 and <= 65536"],
    ),
    "20,000 seeds": (
        ["seeds=" + ",".join(map(str, range(20000)))],
        ["trials=100000: at most 10000 in one sweep", "3 configurations x 20000 seeds + 2 x 20000"],
    ),
    "search_trials 1e11": (
        ["search_trials=100000000000"],
        ["trials=100000000008", "search_trials=100000000000 x search_seeds=1"],
    ),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_BOUNDS))
def test_a_value_beyond_its_bound_is_refused_by_the_dry_run_in_one_line(case, capsys):
    values, words = OUT_OF_BOUNDS[case]
    strategy = ["--strategy", "search"] if case.startswith("search") else []
    sets = [arg for value in values for arg in ("--set", value)]
    assert main(ear_xnli, ["--preset", "smoke", "--dry-run", *strategy, *sets]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err[-2000:]
    assert all(word in captured.err for word in words), captured.err[:2000]
