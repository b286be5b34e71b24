"""The vertical slice end to end: a small EAR x XNLI sweep through Ray Tune and MLflow."""

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from sweeps import ear_xnli
from sweeps.cli import main
from xlt_schema import CONFIG_KEY_TAG, CONFIRM_PHASE, PHASE_TAG


@pytest.fixture(scope="module")
def sweep(ear_xnli_smoke):
    """The session's demo sweep (conftest): the smoke grid (baseline + 2 EAR configurations x
    2 seeds), shortened by sweep_helpers.DEMO_SETTINGS (100 evaluation examples)."""
    return ear_xnli_smoke.workdir, ear_xnli_smoke.uri, ear_xnli_smoke.completed


@pytest.mark.slow
def test_sweep_tracks_parent_and_paired_child_runs(sweep):
    _, uri, _ = sweep
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("ear_xnli")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    parents = [r for r in runs if r.data.tags.get("xlt.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    confirming = [c for c in children if c.data.tags[PHASE_TAG] == CONFIRM_PHASE]
    children = [c for c in children if c not in confirming]
    assert len(parents) == 1
    assert len(children) == 6
    # The selected EAR configuration and the baseline again, on fresh seeds 2 and 3.
    assert sorted((c.data.params["method"], c.data.params["seed"]) for c in confirming) == [
        ("ear", "2"),
        ("ear", "3"),
        ("finetune", "2"),
        ("finetune", "3"),
    ]
    assert all(c.data.tags["mlflow.parentRunId"] == parents[0].info.run_id for c in children)
    assert all(c.info.status == "FINISHED" for c in children)
    for child in children:
        params, metrics = child.data.params, child.data.metrics
        # params: the settings that apply, so EAR's hyperparameters on EAR's runs only
        ear = {"alpha", "beta", "layer", "m"}
        assert {"method", "seed"} <= set(params)
        assert ear & set(params) == (ear if params["method"] == "ear" else set())
        assert {
            "dev/en/accuracy",
            "test/en/accuracy",
            "test/es/accuracy",
            "test/de/accuracy",
            "test/ru/accuracy",
        } <= set(metrics)
        assert 0.0 <= metrics["test/es/accuracy"] <= 1.0
        artifacts = {a.path for a in client.list_artifacts(child.info.run_id, "predictions")}
        assert "predictions/test-es.json" in artifacts
    by_method = {}
    for child in children:
        by_method.setdefault(child.data.params["method"], set()).add(child.data.params["seed"])
    # Seeds are paired: every configuration, the baseline included, ran the same seeds.
    assert by_method == {"finetune": {"0", "1"}, "ear": {"0", "1"}}
    assert (
        len({c.data.tags[CONFIG_KEY_TAG] for c in children if c.data.params["method"] == "ear"})
        == 2
    )


@pytest.mark.slow
def test_trials_keep_tunes_result_files_and_no_tensorboard_files(sweep):
    """Each trial directory has the CSV and JSON results that `Result.metrics_dataframe`
    reads, and no TensorBoard event files: Tune's TensorBoard logger, which would import
    tensorboardX and torch into the driver, is left out."""
    workdir, _, _ = sweep
    trial_dirs = [path for path in (workdir / "ray_results").glob("*/*") if path.is_dir()]
    assert len(trial_dirs) == 10  # the grid's 6, the confirmation's 4
    for trial_dir in trial_dirs:
        assert (trial_dir / "progress.csv").stat().st_size > 0
        assert (trial_dir / "result.json").stat().st_size > 0
        assert not list(trial_dir.glob("events.out.tfevents*"))


@pytest.mark.slow
def test_per_example_scores_match_the_logged_accuracy(sweep, tmp_path):
    _, uri, _ = sweep
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("ear_xnli")
    child = next(
        r
        for r in client.search_runs([experiment.experiment_id])
        if r.data.tags.get("xlt.role") == "trial"
    )
    path = client.download_artifacts(child.info.run_id, "predictions/test-de.json", str(tmp_path))
    payload = json.loads(Path(path).read_text())
    assert len(payload["scores"]) == 100
    assert sum(payload["scores"]) / 100 == pytest.approx(child.data.metrics["test/de/accuracy"])


@pytest.mark.slow
def test_parent_run_holds_the_report_and_the_selection(sweep, tmp_path):
    _, uri, completed = sweep
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("ear_xnli")
    parent = next(
        r
        for r in client.search_runs([experiment.experiment_id])
        if r.data.tags.get("xlt.role") == "parent"
    )
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id, "report")}
    assert {"report/report.md", "report/selected_config.json"} <= artifacts
    selected = json.loads(
        Path(
            client.download_artifacts(
                parent.info.run_id, "report/selected_config.json", str(tmp_path)
            )
        ).read_text()
    )
    assert "Selected configuration" in completed.stdout
    assert selected["config_label"] in completed.stdout


@pytest.mark.parametrize(
    "override, field",
    [("beta=-1", "beta"), ("layer=13", "layer"), ("target_langs=es,xx", "target_langs")],
)
def test_bad_setting_fails_fast_before_any_trial(tmp_path, monkeypatch, capsys, override, field):
    """The script's own `main`, in-process (the script is `sys.exit(main(...))`; its exit
    status through a real process is tested by test_cluster_resources)."""
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri, "--set", override]) == 2
    assert f"invalid setting {field}=" in capsys.readouterr().err
    assert not (tmp_path / "mlflow.db").exists()  # nothing started, nothing tracked
    assert not (tmp_path / "ray_results").exists()
