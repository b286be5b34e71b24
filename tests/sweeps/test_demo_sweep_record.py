"""What the demo sweep (`make demo`, shrunk: conftest's shared `ear_xnli_smoke`) records for
another lab to rerun, trace and load: the sweep as a file that `--from-run` plans again, MLflow's
system tags and the library versions, each configuration's mean and std over seeds on the
parent run, and models that MLflow's own loaders open as the champion."""

import json
from importlib import metadata
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.utils.mlflow_tags import MLFLOW_GIT_COMMIT, MLFLOW_SOURCE_NAME, MLFLOW_USER
from scipy import stats
from sweep_helpers import DEMO_SETTINGS, child_runs, parent_runs

from analysis.effect_sizes import epsilon_min
from analysis.model_registry import SweepStamp, register_champion
from analysis.verdict import NO_EXAMPLE_DIFFERENCE, identical
from sweeps import ear_xnli
from sweeps.cli import EXIT_DONE, main
from xlt_core.data.examples import XNLI_LABELS
from xlt_schema import CONFIG_KEY_TAG, CONFIG_LABEL_TAG, CONFIRM_PHASE, METHOD_TAG, PHASE_TAG

PAIRS = [
    {"text": "A man is eating an apple.", "text_pair": "Someone eats."},
    {"text": "The train left at noon.", "text_pair": "Nobody travelled."},
]


@pytest.mark.slow
def test_from_run_plans_the_demo_again(ear_xnli_smoke, capsys, monkeypatch):
    monkeypatch.chdir(ear_xnli_smoke.workdir)  # its paths, as the sweep resolved them
    settings = [arg for key, value in DEMO_SETTINGS.items() for arg in ("--set", f"{key}={value}")]
    capsys.readouterr()
    assert main(ear_xnli, ["--preset", "smoke", *settings, "--dry-run"]) == EXIT_DONE
    planned = capsys.readouterr().out
    parent = parent_runs(ear_xnli_smoke.uri)[0]
    replay = ["--from-run", parent.info.run_id, "--tracking-uri", ear_xnli_smoke.uri, "--dry-run"]
    assert main(ear_xnli, replay) == EXIT_DONE
    assert capsys.readouterr().out == planned


@pytest.mark.slow
def test_the_runs_say_what_they_ran_from(ear_xnli_smoke):
    tags = parent_runs(ear_xnli_smoke.uri)[0].data.tags
    assert len(tags[MLFLOW_GIT_COMMIT]) == 40
    assert tags[MLFLOW_SOURCE_NAME].endswith("sweeps/ear_xnli.py")
    assert tags[MLFLOW_USER]
    for library in ("torch", "transformers", "ray", "mlflow"):
        assert tags[f"xlt.version.{library}"] == metadata.version(library)
    for trial in child_runs(ear_xnli_smoke.uri):  # the driver's source, the worker's versions
        assert trial.data.tags[MLFLOW_GIT_COMMIT] == tags[MLFLOW_GIT_COMMIT]
        assert trial.data.tags["xlt.version.torch"] == metadata.version("torch")


@pytest.mark.slow
def test_the_parent_row_shows_mean_and_std_per_configuration(ear_xnli_smoke):
    metrics = parent_runs(ear_xnli_smoke.uri)[0].data.metrics
    labels = {run.data.tags[CONFIG_LABEL_TAG] for run in child_runs(ear_xnli_smoke.uri)}
    for label in labels:
        key = f"seeds/{label.replace('=', ':')}/dev/en/accuracy"
        assert 0 <= metrics[f"{key}/mean"] <= 1 and metrics[f"{key}/std"] >= 0, label


@pytest.mark.slow
def test_a_trials_model_loads_as_the_champion_with_mlflows_loaders(
    ear_xnli_smoke, tmp_path, monkeypatch
):
    sweep = ear_xnli_smoke.copy_to(tmp_path / "copy")  # registering writes to the store
    client = MlflowClient(sweep.uri)
    parent = parent_runs(sweep.uri)[0]
    trial = child_runs(sweep.uri)[0]
    stamp = SweepStamp(parent.info.run_id, parent.info.end_time, complete=True)
    registered = register_champion(client, trial.info.run_id, "ear_xnli", stamp, allow_worse=True)
    assert registered.registered, registered.reason
    # Through the environment, which monkeypatch restores: mlflow.set_registry_uri(previous)
    # would pin the registry of every later MlflowClient in this process to `previous`.
    monkeypatch.setenv("MLFLOW_TRACKING_URI", sweep.uri)
    monkeypatch.setenv("MLFLOW_REGISTRY_URI", sweep.uri)
    pipeline = mlflow.transformers.load_model("models:/ear_xnli@champion")
    predicted = pipeline(PAIRS)
    scored = mlflow.pyfunc.load_model("models:/ear_xnli@champion").predict(pd.DataFrame(PAIRS))
    assert [row["label"] for row in predicted] == list(scored["label"])
    assert set(scored["label"]) <= set(XNLI_LABELS) and len(scored) == 2


@pytest.mark.slow
def test_the_demos_report_shows_the_effect_sizes(ear_xnli_smoke, tmp_path):
    # Issue 40: the seed-aware interval, P(new seed beats baseline) and epsilon_min.
    client = MlflowClient(ear_xnli_smoke.uri)
    parent = parent_runs(ear_xnli_smoke.uri)[0]
    read = {
        name: Path(
            client.download_artifacts(parent.info.run_id, f"report/{name}", str(tmp_path))
        ).read_text(encoding="utf-8")
        for name in ("report.md", "selected_config.json")
    }
    selected = json.loads(read["selected_config.json"])
    comparison = {row["lang"]: row for row in selected["test_comparison"]}
    effect_sizes = {row["lang"]: row for row in selected["effect_sizes"]}
    assert list(effect_sizes) == [*comparison, "avg"]
    # Issue 49: decided on the confirmation phase's runs (fresh seeds), as the verdict.
    trials = [t for t in child_runs(ear_xnli_smoke.uri) if t.data.tags[PHASE_TAG] == CONFIRM_PHASE]
    baseline_key = next(
        t.data.tags[CONFIG_KEY_TAG] for t in trials if t.data.tags[METHOD_TAG] == "finetune"
    )
    for lang, tested in comparison.items():
        row = effect_sizes[lang]
        assert [row[key] for key in ("mean_difference", "ci_low", "ci_high", "test")] == [
            tested[key] for key in ("mean_difference", "ci_low", "ci_high", "test")
        ]
        system, baseline = (
            [
                trial.data.metrics[f"test/{lang}/accuracy"]
                for trial in trials
                if trial.data.tags[CONFIG_KEY_TAG] == key
            ]
            for key in (selected["config_key"], baseline_key)
        )
        won = stats.mannwhitneyu(system, baseline).statistic / (len(system) * len(baseline))
        assert row["p_improvement"] == pytest.approx(won)
        assert row["epsilon_min"] == pytest.approx(epsilon_min(system, baseline))
        cells = [
            f"{100 * tested['mean_difference']:+.1f}",
            NO_EXAMPLE_DIFFERENCE  # the tiny demo's models may score every example alike
            if identical(tested["mean_difference"], tested["ci_low"], tested["ci_high"])
            else f"[{100 * tested['ci_low']:+.1f}, {100 * tested['ci_high']:+.1f}]",
            f"{won:.2f}",
            "–",  # two seeds: no interval
            f"{row['epsilon_min']:.2f}",
            "2 / 2",
        ]
        assert f"| {lang} | {' | '.join(cells)} |" in read["report.md"]
    assert "## Effect sizes: selected configuration vs baseline (test)" in read["report.md"]
