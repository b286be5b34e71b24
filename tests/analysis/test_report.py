"""End-to-end tests of the analysis layer on a fake sweep in a temporary sqlite MLflow store."""

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import scaled_timeout
from fake_sweeps import trial_tags
from mlflow import MlflowClient
from mlflow.entities import Metric, Param
from scipy import stats
from tracking_stores import tracking_store

from analysis.__main__ import main
from analysis.collect import ExampleScores, collect_trials, find_parent_run
from analysis.frames import AnalysisError, tidy_metrics
from analysis.render import format_params
from analysis.report import report_sweep
from analysis.seed_summary import metric_label
from analysis.select import (
    baseline_config_key,
    compare_average,
    compare_to_baseline,
    complexity,
    select_best,
)
from analysis.stats import crossed_test
from xlt_schema import (
    DEPARTURES_ARTIFACT,
    PAPER_TAG,
    PARENT_ROLE,
    PHASE_TAG,
    ROLE_TAG,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = "ear_xnli"
SEEDS = (0, 1)
N_EXAMPLES = 100
GOOD_LABEL = "ear alpha=1 beta=0.1 layer=6"
WEAK_LABEL = "ear alpha=0.5 beta=0.1 layer=6"
# Correct examples out of N_EXAMPLES for (seed 0, seed 1); the logged accuracy is
# count / N_EXAMPLES.
CONFIGS = {
    "finetune": (
        "finetune",
        {},
        {"dev/en": (70, 72), "test/en": (68, 70), "test/es": (60, 62), "test/de": (58, 60)},
    ),
    GOOD_LABEL: (
        "ear",
        {"alpha": "1", "beta": "0.1", "layer": "6", "m": "4"},
        {"dev/en": (85, 87), "test/en": (84, 86), "test/es": (80, 84), "test/de": (78, 80)},
    ),
    WEAK_LABEL: (
        "ear",
        {"alpha": "0.5", "beta": "0.1", "layer": "6", "m": "4"},
        {"dev/en": (72, 76), "test/en": (70, 72), "test/es": (61, 63), "test/de": (59, 61)},
    ),
}


@dataclass
class FakeSweep:
    tracking_uri: str
    client: MlflowClient
    parent_run_id: str
    scores: dict  # (config_label, seed, split, lang) -> per-example scores
    odd_length_run_id: str  # a run whose test-es scores have fewer examples


def _config_key(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()[:12]


def _log_trial(client, experiment_id, parent_id, label, seed, rng, scores, status="FINISHED"):
    method, params, correct = CONFIGS.get(label, ("ear", {"alpha": "9"}, {"dev/en": (99, 99)}))
    run = client.create_run(
        experiment_id,
        tags={
            **trial_tags(
                parent_id, label, method, hyperparameters=params, config_key=_config_key(label)
            ),
            PHASE_TAG: "grid",
        },
    )
    run_id = run.info.run_id
    now = int(time.time() * 1000)
    metrics = [Metric("train/loss", 0.5, now, 0)]
    for split_lang, counts in correct.items():
        split, lang = split_lang.split("/")
        example_scores = np.zeros(N_EXAMPLES)
        example_scores[rng.permutation(N_EXAMPLES)[: counts[seed]]] = 1.0
        scores[(label, seed, split, lang)] = example_scores
        metrics.append(Metric(f"{split_lang}/accuracy", example_scores.mean(), now, 0))
        client.log_dict(
            run_id,
            {
                "split": split,
                "lang": lang,
                "metric": "accuracy",
                "scores": example_scores.tolist(),
                "predictions": [],
                "labels": [],
            },
            f"predictions/{split}-{lang}.json",
        )
    all_params = {"method": method, "adaptation": "none", "seed": str(seed), **params}
    client.log_batch(
        run_id, metrics=metrics, params=[Param(name, value) for name, value in all_params.items()]
    )
    client.set_terminated(run_id, status=status)
    return run_id


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> FakeSweep:
    root = tmp_path_factory.mktemp("mlflow")
    tracking_uri = tracking_store(root)
    client = MlflowClient(tracking_uri=tracking_uri)
    experiment_id = client.create_experiment(EXPERIMENT, artifact_location=str(root / "artifacts"))
    client.create_experiment("other_sweep", artifact_location=str(root / "other"))
    rng = np.random.default_rng(0)
    scores = {}
    start = int(time.time() * 1000)
    parent = client.create_run(experiment_id, start_time=start, tags={ROLE_TAG: PARENT_ROLE})
    parent_id = parent.info.run_id
    client.log_batch(parent_id, params=[Param("preset", "smoke"), Param("strategy", "grid")])
    for label in CONFIGS:
        for seed in SEEDS:
            _log_trial(client, experiment_id, parent_id, label, seed, rng, scores)
    # A failed trial with the best dev score must be ignored.
    _log_trial(client, experiment_id, parent_id, "ear alpha=9", 0, rng, {}, status="FAILED")
    client.set_terminated(parent_id)
    # A newer sweep whose only trial failed must not be picked by default.
    newer = client.create_run(
        experiment_id, start_time=start + 60_000, tags={ROLE_TAG: PARENT_ROLE}
    )
    _log_trial(client, experiment_id, newer.info.run_id, "ear alpha=9", 0, rng, {}, status="FAILED")

    odd = client.create_run(experiment_id)
    client.log_dict(
        odd.info.run_id,
        {"split": "test", "lang": "es", "metric": "accuracy", "scores": [1.0] * (N_EXAMPLES // 2)},
        "predictions/test-es.json",
    )
    client.set_terminated(odd.info.run_id)
    return FakeSweep(tracking_uri, client, parent_id, scores, odd.info.run_id)


def _trials_frame(dev_scores: dict[str, list[float]]) -> pd.DataFrame:
    """An in-memory trials table: config label -> dev/en accuracy per seed.

    A label is ``<method> [<adaptation>] [name=value ...]``; its names are the run's
    recorded hyperparameters.
    """
    rows = []
    for label, values in dev_scores.items():
        words = label.split()
        settings = dict(word.split("=") for word in words[1:] if "=" in word)
        adaptation = next((word for word in words[1:] if "=" not in word), "none")
        for seed, value in enumerate(values):
            rows.append(
                {
                    "run_id": f"{label}-{seed}",
                    "config_key": _config_key(label),
                    "config_label": label,
                    "method": words[0],
                    "adaptation": adaptation,
                    "seed": seed,
                    "hyperparameters": tuple(settings),
                    **settings,
                    "dev/en/accuracy": value,
                }
            )
    return pd.DataFrame(rows)


def test_default_parent_is_newest_with_finished_trials(sweep):
    parent = find_parent_run(sweep.client, EXPERIMENT)
    assert parent.info.run_id == sweep.parent_run_id


def test_collect_trials_keeps_finished_trials_and_evaluation_metrics(sweep):
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    assert len(trials) == len(CONFIGS) * len(SEEDS)
    assert "ear alpha=9" not in set(trials["config_label"])
    assert "train/loss" not in trials.columns
    assert {"dev/en/accuracy", "test/es/accuracy", "alpha", "layer"} <= set(trials.columns)
    assert sorted(trials["seed"].unique()) == list(SEEDS)
    tidy = tidy_metrics(trials)
    assert set(tidy["split"]) == {"dev", "test"}
    assert set(tidy["lang"]) == {"en", "es", "de"}


def test_select_best_picks_the_clearly_better_config(sweep):
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    selection = select_best(trials)
    assert selection.config_label == GOOD_LABEL
    assert selection.method == "ear"
    assert selection.params == {"alpha": 1, "beta": 0.1, "layer": 6, "m": 4}
    assert selection.mean == pytest.approx(0.86)
    assert selection.std == pytest.approx(np.std([0.85, 0.87], ddof=1))
    assert selection.n_seeds == 2
    good_runs = trials.loc[trials["config_label"] == GOOD_LABEL, "run_id"]
    assert set(selection.run_ids) == set(good_runs)


def test_tie_on_mean_goes_to_lower_std():
    # Equal means up to float noise ((0.8 + 0.9) / 2 != 0.85); the steadier config wins
    # although its label sorts last.
    trials = _trials_frame({"ear alpha=1": [0.8, 0.9], "ear alpha=2": [0.85, 0.85]})
    assert select_best(trials).config_label == "ear alpha=2"


def test_full_tie_goes_to_first_label():
    trials = _trials_frame({"ear alpha=2": [0.7, 0.9], "ear alpha=1": [0.9, 0.7]})
    assert select_best(trials).config_label == "ear alpha=1"


def test_only_baseline_selects_baseline():
    selection = select_best(_trials_frame({"finetune": [0.7, 0.8]}))
    assert selection.method == "finetune"


def test_baseline_is_finetune_without_adaptation():
    trials = _trials_frame(
        {
            "finetune": [0.7, 0.7],
            "finetune adjusted adjust_learning_rate=5e-05": [0.9, 0.9],
            "ear alpha=1": [0.8, 0.8],
        }
    )
    assert baseline_config_key(trials) == _config_key("finetune")
    # adjusted fine-tuning is a candidate like any other, and here the best one
    selection = select_best(trials)
    assert (selection.method, selection.adaptation) == ("finetune", "adjusted")
    assert selection.hyperparameters == ("adjust_learning_rate",)
    # with only fine-tuning configurations the adjusted one is still chosen over the baseline
    only_finetune = trials[trials["method"] == "finetune"]
    assert select_best(only_finetune).adaptation == "adjusted"


def test_missing_unadapted_baseline_is_named():
    trials = _trials_frame({"finetune adjusted adjust_epochs=1": [0.8], "ear alpha=1": [0.7]})
    with pytest.raises(AnalysisError, match="adaptation 'none'.*finetune/adjusted"):
        baseline_config_key(trials)


def test_simplicity_counts_the_runs_own_recorded_hyperparameters():
    trials = _trials_frame(
        {
            "ear alpha=1 beta=0": [0.8, 0.8],
            "ear alpha=1 beta=0.1": [0.8, 0.8],
            "rs_rp epsilon=0.1": [0.8, 0.8],
        }
    )
    # a column that is not the run's own hyperparameter does not count, whatever it holds
    trials.loc[trials["method"] == "rs_rp", "alpha"] = "1"
    assert complexity(trials) == {
        _config_key("ear alpha=1 beta=0"): 1,
        _config_key("ear alpha=1 beta=0.1"): 2,
        _config_key("rs_rp epsilon=0.1"): 1,
    }
    # full tie on mean and std: the simpler configurations win, then the first label
    assert select_best(trials).config_label == "ear alpha=1 beta=0"


def test_without_recorded_hyperparameters_no_setting_counts():
    trials = _trials_frame({"ear alpha=2": [0.8, 0.8], "ear alpha=0": [0.8, 0.8]})
    trials = trials.drop(columns="hyperparameters")  # as collected from an older sweep
    assert set(complexity(trials).values()) == {0}
    assert select_best(trials).config_label == "ear alpha=0"  # the label decides


def test_selection_on_test_split_is_refused(sweep):
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    with pytest.raises(AnalysisError, match="test split"):
        select_best(trials, metric="test/en/accuracy")


def test_missing_baseline_is_named(sweep):
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    without_baseline = trials[trials["method"] != "finetune"]
    with pytest.raises(AnalysisError, match="no finished baseline runs.*'finetune'"):
        compare_to_baseline(ExampleScores(sweep.client), without_baseline, _config_key(GOOD_LABEL))


def test_example_scores_of_different_lengths_are_refused(sweep):
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    good_run = trials.loc[trials["config_label"] == GOOD_LABEL, "run_id"].iloc[0]
    with pytest.raises(AnalysisError, match="different number of examples"):
        ExampleScores(sweep.client).scores([good_run, sweep.odd_length_run_id], "test", "es")


def test_report_sweep_writes_logs_and_tests(sweep, tmp_path):
    report = report_sweep(sweep.tracking_uri, EXPERIMENT, out_dir=str(tmp_path / "out"))

    assert report.parent_run_id == sweep.parent_run_id
    assert report.selection.config_label == GOOD_LABEL
    assert Path(report.markdown_path).read_text(encoding="utf-8") == report.markdown
    logged = {info.path for info in sweep.client.list_artifacts(sweep.parent_run_id, "report")}
    assert logged == {
        "report/report.md",
        "report/report.tex",
        "report/selected_config.json",
        "report/gains_test.png",
        "report/hyperparameter_response.png",
        "report/hyperparameter_response_test.png",
        "report/hyperparameter_response_per_language.png",
    }
    # The runs table's row of the sweep: each configuration's mean and std over seeds.
    parent_metrics = sweep.client.get_run(sweep.parent_run_id).data.metrics
    on_test = f"seeds/{metric_label(GOOD_LABEL)}/test/es/accuracy"
    assert parent_metrics[f"{on_test}/mean"] == pytest.approx(0.82)
    assert parent_metrics[f"{on_test}/std"] == pytest.approx(np.std([0.80, 0.84], ddof=1))
    assert f"seeds/{metric_label(GOOD_LABEL)}/dev/en/accuracy/mean" in parent_metrics

    test_table = report.markdown.split("## test accuracy (%)")[1].split("##")[0]
    table_rows = [line for line in test_table.splitlines() if line.startswith("|")]
    assert table_rows[0] == "| Configuration | Seeds | en | de | es |"
    assert table_rows[2].startswith("| **Baseline:** finetune | 2 |")
    # GOOD_LABEL on test/es: accuracies 0.80 and 0.84 -> 82.0 ± 2.8 (sample std 2.83 points).
    assert (
        f"| {GOOD_LABEL} **(selected)** | 2 | 85.0 ± 1.4 | 79.0 ± 1.4 | 82.0 ± 2.8 |" in table_rows
    )

    selected = json.loads(Path(report.json_path).read_text(encoding="utf-8"))
    assert selected["config_label"] == GOOD_LABEL
    assert selected["metric"] == "dev/en/accuracy"
    assert selected["params"] == {"alpha": 1, "beta": 0.1, "layer": 6, "m": 4}
    comparison = {row["lang"]: row for row in selected["test_comparison"]}
    assert list(comparison) == ["en", "de", "es"]
    for lang, row in comparison.items():
        # The report's default, the seed-aware test, on the runs paired by seed (its own
        # checks against scipy and by hand: tests/analysis/test_crossed_test.py).
        system = np.stack([sweep.scores[(GOOD_LABEL, seed, "test", lang)] for seed in SEEDS])
        baseline = np.stack([sweep.scores[("finetune", seed, "test", lang)] for seed in SEEDS])
        expected = crossed_test(system, baseline)
        assert row["test"] == "crossed"
        assert row["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
        assert 0 < row["p_value"] < 1
        assert row["mean_difference"] == pytest.approx(system.mean() - baseline.mean())
        assert f"| {lang} |" in report.markdown


def test_unknown_experiment_lists_existing_ones(sweep):
    with pytest.raises(AnalysisError, match="unknown experiment 'nope'.*ear_xnli.*other_sweep"):
        report_sweep(sweep.tracking_uri, "nope")


def test_missing_database_is_refused_without_creating_it(tmp_path):
    database = tmp_path / "absent.db"
    with pytest.raises(AnalysisError, match="no MLflow database"):
        report_sweep(f"sqlite:///{database}", EXPERIMENT)
    assert not database.exists()


def test_cli_error_is_one_line_with_exit_code_2(sweep, capsys):
    code = main(["report", "--experiment", "nope", "--tracking-uri", sweep.tracking_uri])
    error_lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert error_lines[-1].startswith("error: unknown experiment 'nope'")


def _run_python(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`python ARGS` in `cwd`, the repository importable and no tracking URI taken from the
    environment; fails the test unless it exits 0."""
    env = {name: value for name, value in os.environ.items() if name != "MLFLOW_TRACKING_URI"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    completed = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 0, completed.stderr
    return completed


@pytest.mark.slow
def test_cli_reports_selected_configuration(sweep, tmp_path):
    out_dir = tmp_path / "cli"
    completed = _run_python(
        [
            "-m",
            "analysis",
            "-v",  # before the command as well as after it
            "report",
            "--experiment",
            EXPERIMENT,
            "--tracking-uri",
            sweep.tracking_uri,
            "--parent-run",
            sweep.parent_run_id,
            "--out",
            str(out_dir),
        ],
        tmp_path,
    )
    assert f"Selected configuration: {GOOD_LABEL}" in completed.stdout
    assert str(out_dir / "report.md") in completed.stdout
    assert "report/selected_config.json" in completed.stdout  # -v's "Logged to parent run"
    assert (out_dir / "selected_config.json").is_file()


@pytest.mark.slow
def test_cli_quiet_prints_only_the_verdict_and_the_paths_and_no_progress_bar(sweep, tmp_path):
    # A paper preset's departures: the report downloads that artifact, which MLflow does
    # under a "Downloading artifacts" progress bar unless told not to.
    sweep.client.log_dict(
        sweep.parent_run_id,
        {"paper": "p", "citation": "P et al.", "departures": []},
        DEPARTURES_ARTIFACT,
    )
    sweep.client.set_tag(sweep.parent_run_id, PAPER_TAG, "p")
    out_dir = tmp_path / "quiet"
    try:
        completed = _run_python(
            [
                *("-m", "analysis", "report", "-q", "--experiment", EXPERIMENT),
                *("--tracking-uri", sweep.tracking_uri, "--parent-run", sweep.parent_run_id),
                *("--out", str(out_dir)),
            ],
            tmp_path,
        )
    finally:
        sweep.client.delete_tag(sweep.parent_run_id, PAPER_TAG)
    verdict, languages, files, *paths = completed.stdout.splitlines()
    # Decided on held-out test, the selection's dev evidence after it on the same line.
    assert verdict.startswith("Verdict: On held-out test (mean over its 3 languages), ")
    assert f"the selected configuration {GOOD_LABEL} beats" in verdict
    assert languages.startswith("         On test, against the baseline")
    assert files == f"Report files: {out_dir / 'report.md'}"
    assert paths[:2] == [
        f"              {out_dir / name}" for name in ("report.tex", "selected_config.json")
    ]
    assert all(line.startswith(f"              {out_dir}{os.sep}") for line in paths)
    assert "Downloading artifacts" not in completed.stdout + completed.stderr
    assert "it/s]" not in completed.stderr  # any tqdm bar's rate


def test_cli_verbose_adds_debug_lines_and_the_default_notes(sweep, tmp_path, capsys):
    argv = ["report", "--experiment", EXPERIMENT, "--tracking-uri", sweep.tracking_uri]
    argv += ["--parent-run", sweep.parent_run_id, "--out", str(tmp_path), "--no-register"]
    assert main([*argv, "-v"]) == 0
    out = capsys.readouterr().out
    assert f"Selected configuration: {GOOD_LABEL}" in out  # a note, shown by default too
    assert "Read the predictions of" in out  # the read step's own progress line (INFO)
    debug = [line for line in out.splitlines() if "predictions/ read from" in line]
    assert debug and all(line.startswith("Run ") for line in debug)


@pytest.mark.slow
def test_analysis_imports_neither_ray_nor_torch(tmp_path):
    code = (
        "import sys, analysis.report, analysis.__main__; "
        "print(sorted(m for m in ('ray', 'torch', 'xlt_core') if m in sys.modules))"
    )
    completed = _run_python(["-c", code], tmp_path)
    assert completed.stdout.strip() == "[]"


def test_parameters_line_leaves_out_settings_that_do_not_apply():
    # Another method's hyperparameters are logged as `none` and collected as None.
    assert (
        format_params({"alpha": 0.1, "beta": 1.0, "epsilon": None, "synonyms": None})
        == "alpha=0.1, beta=1.0"
    )
    assert format_params({"epsilon": None}) == "(none)"


def test_report_shows_the_effect_sizes_of_the_selection(sweep, tmp_path):
    # Issue 40: the seed-aware interval, P(new seed beats baseline) and epsilon_min.
    report = report_sweep(sweep.tracking_uri, EXPERIMENT, out_dir=str(tmp_path / "out"))
    section = report.markdown.split("## Effect sizes: selected configuration vs baseline (test)")
    rows = [line for line in section[1].split("\n## ")[0].splitlines() if line.startswith("|")]
    selected = json.loads(Path(report.json_path).read_text(encoding="utf-8"))
    comparison = {row["lang"]: row for row in selected["test_comparison"]}
    effect_sizes = {row["lang"]: row for row in selected["effect_sizes"]}
    assert list(effect_sizes) == ["en", "de", "es", "avg"]
    trials = collect_trials(sweep.client, sweep.parent_run_id)
    keys = [baseline_config_key(trials), _config_key(GOOD_LABEL)]
    # The average's difference and interval are the held-out verdict's test of the mean.
    comparison["avg"] = compare_average(ExampleScores(sweep.client), trials, keys[1], keys[0])
    for lang, row in effect_sizes.items():
        tested = comparison[lang]
        assert (row["mean_difference"], row["ci_low"], row["ci_high"]) == (
            tested["mean_difference"],
            tested["ci_low"],
            tested["ci_high"],
        )
        # Two seeds each, and both selected seeds above both baseline seeds on every
        # language (CONFIGS): all four pairs won, and every bootstrap resample dominated.
        languages = ["en", "de", "es"] if lang == "avg" else [lang]
        system, baseline = (
            [
                np.mean([sweep.scores[(label, seed, "test", one)] for one in languages])
                for seed in SEEDS
            ]
            for label in (GOOD_LABEL, "finetune")
        )
        pairs = stats.mannwhitneyu(system, baseline).statistic / 4
        assert row["p_improvement"] == pairs == 1.0
        assert row["epsilon_min"] == 0.0
        assert row["p_improvement_low"] is None  # two seeds: no interval (JSON null)
        difference = f"{100 * tested['mean_difference']:+.1f}"
        interval = f"[{100 * tested['ci_low']:+.1f}, {100 * tested['ci_high']:+.1f}]"
        assert f"| {lang} | {difference} | {interval} | 1.00 | – | 0.00 | 2 / 2 |" in rows
    latex = Path(report.json_path).with_name("report.tex").read_text(encoding="utf-8")
    assert "P(new seed beats baseline) & 95\\% CI & eps\\_min" in latex
