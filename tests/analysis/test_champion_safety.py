"""Champion safety and read-only reports, on fake sweeps in a SQLite store (no Ray): a
configuration that predicts one class, is at chance while the baseline is not, or diverged
holds back registration; @champion never moves to a model worse on dev; a sweep still running
or interrupted is reported without a write to it, and compared only when asked."""

import time

import numpy as np
import pandas as pd
import pytest
from fake_sweeps import trial_tags
from mlflow import MlflowClient
from mlflow.entities import Metric, Param
from tracking_stores import tracking_store

from analysis.__main__ import main
from analysis.compare import compare_sweeps
from analysis.frames import AnalysisError
from analysis.mlflow_ui import SELECTED_CONFIG_TAG, VERDICT_TAG
from analysis.report import format_summary, report_sweep
from analysis.sanity import chance_configs, one_class, one_class_configs
from xlt_schema import (
    COMPLETE_TAG,
    FAILURE_TAG,
    INTERRUPTED,
    PARENT_ROLE,
    ROLE_TAG,
    RUN_STATUS_TAG,
)

SEEDS = (0, 1)
LABELS = [0, 1, 2] * 50  # 150 dev examples: chance 33.3 %, "at chance" up to ~41 %
ONE_CLASS, DIVERGED = "one class", "diverged"
EAR_A, EAR_B = "ear alpha=1 m=1", "ear alpha=0.1 m=1"
BASELINE = "finetune"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("safety-store")
    uri = tracking_store(root)
    return root, uri, MlflowClient(uri)


def _predictions(skill, rng) -> list[int]:
    """Per-example predictions: class 0 for every example (ONE_CLASS), else the gold label
    with probability ``skill`` and another class otherwise."""
    gold = np.asarray(LABELS)
    if skill == ONE_CLASS:
        return [0] * len(gold)
    right = rng.uniform(size=len(gold)) < skill
    return np.where(right, gold, (gold + 1) % 3).tolist()


def _trial(client, experiment_id, parent, label, seed, skill, rng, model_dir):
    method = label.split()[0]
    params = dict(word.split("=") for word in label.split()[1:])
    run_id = client.create_run(
        experiment_id, tags=trial_tags(parent, label, method, hyperparameters=params)
    ).info.run_id
    client.log_batch(
        run_id,
        params=[Param(k, v) for k, v in {"method": method, "seed": str(seed), **params}.items()],
    )
    if skill == DIVERGED:
        client.set_tag(run_id, FAILURE_TAG, "TrainingDiverged: loss became nan at step 3")
        client.set_terminated(run_id, status="FAILED")
        return
    metrics = []
    for split in ("dev", "test"):
        predictions = _predictions(skill, rng)
        scores = [float(p == g) for p, g in zip(predictions, LABELS)]
        payload = {"split": split, "lang": "en", "metric": "accuracy", "scores": scores}
        client.log_dict(
            run_id,
            {**payload, "predictions": predictions, "labels": LABELS},
            f"predictions/{split}-en.json",
        )
        metrics.append(Metric(f"{split}/en/accuracy", float(np.mean(scores)), 0, 0))
    client.log_batch(run_id, metrics=metrics)
    client.log_artifacts(run_id, str(model_dir), "model")
    client.set_terminated(run_id)


def _sweep(store, experiment, skills, state="complete", planned=None):
    """A sweep of ``experiment`` (made if new) whose configurations score ``skills``
    (label -> skill, ONE_CLASS or DIVERGED); ``state``: complete, running or interrupted.
    Returns the parent run id."""
    root, _, client = store
    found = client.get_experiment_by_name(experiment)
    experiment_id = (
        found.experiment_id
        if found
        else client.create_experiment(experiment, artifact_location=(root / experiment).as_uri())
    )
    tags = {ROLE_TAG: PARENT_ROLE, **({COMPLETE_TAG: "true"} if state == "complete" else {})}
    parent = client.create_run(experiment_id, tags=tags).info.run_id
    n_trials = planned or len(skills) * len(SEEDS)
    client.log_batch(
        parent,
        params=[
            Param("n_trials", str(n_trials)),
            Param("base.task", "xnli"),
            Param("base.model", "tiny"),
        ],
    )
    model_dir = root / f"model-{parent}"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    rng = np.random.default_rng(0)
    for label, skill in skills.items():
        for seed in SEEDS:
            _trial(client, experiment_id, parent, label, seed, skill, rng, model_dir)
    if state == "complete":
        client.set_terminated(parent)
    elif state == "interrupted":
        client.set_tag(parent, RUN_STATUS_TAG, INTERRUPTED)
        client.set_terminated(parent, status="KILLED")
    time.sleep(0.01)  # the next sweep starts and ends strictly later
    return parent


def _champion(client, model):
    return client.get_model_version_by_alias(model, "champion")


def test_one_class_is_read_from_the_logged_predictions():
    assert one_class({"predictions": [1, 1, 1], "labels": [0, 1, 2]}) == "1"
    assert one_class({"predictions": [1, 0, 1], "labels": [0, 1, 2]}) is None
    # A sequence labeller's tags are joined; a set with one gold class says nothing.
    assert one_class({"predictions": [["O", "O"], ["O"]], "labels": [["O", "B-PER"], ["O"]]})
    assert one_class({"predictions": [0, 0], "labels": [0, 0]}) is None
    assert one_class({"scores": [1.0, 0.0]}) is None  # no predictions logged: not judged


def test_only_configurations_at_chance_beside_a_learned_baseline_are_named():
    means = {BASELINE: 0.48, EAR_A: 0.333, EAR_B: 0.62}
    assert chance_configs(means, BASELINE, LABELS) == [EAR_A]
    # A baseline at chance too is the whole sweep's warning (chance_warning), not this one.
    assert chance_configs({**means, BASELINE: 0.34}, BASELINE, LABELS) == []


def test_one_class_configurations_block_the_champion(store, tmp_path):
    _, uri, client = store
    model = "one_class_model"
    _sweep(store, "earlier", {BASELINE: 0.5, EAR_A: 0.62})
    earlier = report_sweep(
        uri, "earlier", out_dir=str(tmp_path / "e"), model_name=model, register=True
    )
    assert earlier.warnings == () and earlier.registration.alias_moved
    # epochs=1 on the demo: both EAR configurations always say class 0, the baseline learned.
    _sweep(store, "epochs1", {BASELINE: 0.48, EAR_A: ONE_CLASS, EAR_B: ONE_CLASS})
    report = report_sweep(
        uri, "epochs1", out_dir=str(tmp_path / "d"), model_name=model, register=True
    )
    warning, at_chance = report.warnings
    assert f"while the baseline is not: {EAR_B}: 33.3 %; {EAR_A}: 33.3 %" in at_chance
    assert "2 configuration(s) predict one class for every dev/en example in some seed" in warning
    assert f"{EAR_A} (seed 0 always 0, seed 1 always 0)" in warning and EAR_B in warning
    assert not report.registration.registered
    assert str(_champion(client, model).version) == earlier.registration.version
    assert format_summary(report).startswith("WARNING: 2 configuration(s) predict one class")
    assert len(client.search_model_versions(f"name = '{model}'")) == 1


def test_configurations_at_chance_or_diverged_are_named(store, tmp_path):
    _, uri, client = store
    _sweep(store, "at_chance", {BASELINE: 0.6, EAR_A: 0.35, EAR_B: 0.62})
    report = report_sweep(uri, "at_chance", out_dir=str(tmp_path / "c"), register=True)
    (warning,) = report.warnings
    assert (
        f"at chance level on dev/en/accuracy (chance 33.3 %) while the baseline is not: {EAR_A}"
        in warning
    )
    assert not report.registration.registered

    # alpha=1e308: every EAR trial diverges, so the baseline alone is selected.
    _sweep(store, "alpha_huge", {BASELINE: 0.6, EAR_A: DIVERGED, EAR_B: DIVERGED})
    report = report_sweep(uri, "alpha_huge", out_dir=str(tmp_path / "a"), register=True)
    assert report.selection.config_label == BASELINE
    (warning,) = report.warnings
    assert "Trials of 2 configuration(s) diverged" in warning
    assert f"{EAR_A} (seeds 0, 1)" in warning and "TrainingDiverged" in warning
    assert not report.registration.registered
    assert client.search_registered_models(filter_string="name = 'alpha_huge'") == []


def test_champion_never_moves_to_a_model_worse_on_dev(store, tmp_path):
    _, uri, client = store
    model = "dev_guarded"
    _sweep(store, "strong", {BASELINE: 0.5, EAR_A: 0.8})
    strong = report_sweep(
        uri, "strong", out_dir=str(tmp_path / "s"), model_name=model, register=True
    )
    _sweep(store, "weaker", {BASELINE: 0.5, EAR_A: 0.62})  # newer, complete, no warning
    weaker = report_sweep(
        uri, "weaker", out_dir=str(tmp_path / "w"), model_name=model, register=True
    )
    assert weaker.warnings == () and weaker.registration.registered
    assert not weaker.registration.alias_moved
    assert "worse on dev/en/accuracy" in weaker.registration.alias_reason
    assert str(_champion(client, model).version) == strong.registration.version
    assert "--register-anyway" in weaker.markdown

    code = main(
        ["report", "--experiment", "weaker", "--tracking-uri", uri, "--model-name", model]
        + ["--out", str(tmp_path / "w2"), "--register-anyway"]
    )
    assert code == 0
    assert str(_champion(client, model).version) == weaker.registration.version


@pytest.mark.parametrize("state", ["running", "interrupted"])
def test_report_of_an_unfinished_sweep_writes_nothing_to_it(store, tmp_path, state):
    _, uri, client = store
    experiment = f"unfinished_{state}"
    parent = _sweep(store, experiment, {BASELINE: 0.5, EAR_A: 0.8}, state, planned=6)
    before = client.get_run(parent).data
    report = report_sweep(
        uri, experiment, out_dir=str(tmp_path), model_name=experiment, register=True
    )
    assert report.incomplete.startswith("incomplete: 4 of 6 trials finished")
    assert "**Sweep incomplete: 4 of 6 trials finished" in report.markdown
    assert (tmp_path / "report.md").is_file() and report.artifact_paths == ()
    after = client.get_run(parent)
    assert after.data.tags == before.tags and after.data.metrics == before.metrics
    assert VERDICT_TAG not in after.data.tags and SELECTED_CONFIG_TAG not in after.data.tags
    assert client.list_artifacts(parent) == []
    assert client.search_registered_models(filter_string=f"name = '{experiment}'") == []
    assert not report.registration.registered and "incomplete" in report.registration.reason
    summary = format_summary(report)
    assert summary.startswith("INCOMPLETE: Sweep incomplete: 4 of 6 trials")
    assert f"Nothing logged to parent run {parent}" in summary
    assert after.info.status == ("RUNNING" if state == "running" else "KILLED")


def test_compare_uses_complete_sweeps_unless_asked(store, tmp_path, capsys):
    _, uri, _ = store
    _sweep(store, "cmp_done", {BASELINE: 0.5, EAR_A: 0.8})
    _sweep(store, "cmp_mixed", {BASELINE: 0.5, EAR_A: 0.8})
    _sweep(store, "cmp_mixed", {BASELINE: 0.5, EAR_B: 0.3}, "running", planned=8)
    comparison = compare_sweeps(uri, ["cmp_done", "cmp_mixed"], str(tmp_path / "a"))
    labels = [label for label, _ in comparison.tables[0].rows]
    assert f"cmp_mixed: {EAR_A}" in labels and not any(EAR_B in label for label in labels)

    code = main(
        ["compare", "--experiments", "cmp_mixed", "--tracking-uri", uri]
        + ["--out", str(tmp_path / "b"), "--include-incomplete"]
    )
    assert code == 0
    assert f"cmp_mixed (incomplete: 4 of 8 trials finished): {EAR_B}" in capsys.readouterr().out

    _sweep(store, "cmp_running", {BASELINE: 0.5, EAR_A: 0.8}, "running")
    with pytest.raises(AnalysisError, match="no complete sweep.*--include-incomplete"):
        compare_sweeps(uri, ["cmp_running"], str(tmp_path / "c"))
    assert main(["compare", "--experiments", "cmp_running", "--tracking-uri", uri]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert (
        "parent run" in line and "incomplete: 4 of 4 trials finished (parent run running)" in line
    )


def test_one_class_configs_skip_runs_without_artifacts():
    class NoArtifacts:
        def payload(self, run_id, split, lang):
            raise AnalysisError("no artifact")

    trials = pd.DataFrame({"run_id": ["a"], "config_label": [EAR_A], "seed": [0]})
    assert one_class_configs(NoArtifacts(), trials, "dev/en/accuracy") == {}
