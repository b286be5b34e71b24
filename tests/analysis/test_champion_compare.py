"""On fake sweeps in a SQLite store: the champion alias rule, sanity warnings holding back
registration, the summary on the parent run, the experiment's kind, and sweeps compared."""

import time

import pytest
from mlflow import MlflowClient
from test_registry_reports import BEST, FEW_KEYS, _make_sweep
from tracking_stores import tracking_store

from analysis.__main__ import main
from analysis.compare import compare_sweeps
from analysis.mlflow_ui import (
    SANITY_WARNINGS_TAG,
    SELECTED_CONFIG_TAG,
    VERDICT_TAG,
    VS_BASELINE_TAG_PREFIX,
)
from analysis.report import format_summary, report_sweep
from sweeps.records.tracking import EXPERIMENT_KIND_TAG, MODEL_TRAINING_KIND, ensure_experiment
from xlt_schema import COMPLETE_TAG, PARENT_RUN_TAG


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return tmp_path_factory.mktemp("champion-store")


def test_champion_stays_with_the_newest_complete_sweep(store, tmp_path):
    uri, client, older, _ = _make_sweep(store, "champ_old", "ttest", False, BEST, FEW_KEYS)
    time.sleep(0.01)  # the newer sweep ends strictly later
    _, _, newer, _ = _make_sweep(store, "champ_new", "ttest", False, BEST, FEW_KEYS)
    model = "shared_champion"
    new = report_sweep(
        uri, "champ_new", out_dir=str(tmp_path / "new"), model_name=model, register=True
    )
    assert new.registration.alias_moved
    old = report_sweep(
        uri, "champ_old", out_dir=str(tmp_path / "old"), model_name=model, register=True
    )
    # The older sweep's report comes last, yet the alias stays with the newer sweep.
    assert old.registration.registered and not old.registration.alias_moved
    assert newer in old.registration.alias_reason
    holder = client.get_model_version_by_alias(model, "champion")
    assert str(holder.version) == new.registration.version
    assert f"is held by version {new.registration.version}" in old.markdown
    assert f"@champion is version {new.registration.version}" in format_summary(old)

    # An incomplete sweep never takes it, however new.
    _, _, incomplete, _ = _make_sweep(store, "champ_incomplete", "ttest", False, BEST, FEW_KEYS)
    client.delete_tag(incomplete, COMPLETE_TAG)
    late = report_sweep(
        uri, "champ_incomplete", out_dir=str(tmp_path / "i"), model_name=model, register=True
    )
    assert not late.registration.alias_moved and "not complete" in late.registration.alias_reason
    assert str(client.get_model_version_by_alias(model, "champion").version) == (
        new.registration.version
    )


def _blow_up_a_loss(client: MlflowClient, parent: str, experiment: str) -> None:
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    trial = client.search_runs([experiment_id], f"tags.`{PARENT_RUN_TAG}` = '{parent}'")[0]
    for step, value in enumerate([1.1, 3.0, -6e7], start=1):
        client.log_metric(trial.info.run_id, "train/loss", value, step=step)


def test_a_blown_up_loss_is_said_first_and_holds_back_the_champion(store, tmp_path):
    uri, client, parent, _ = _make_sweep(store, "diverged", "ttest", False, BEST, FEW_KEYS)
    _blow_up_a_loss(client, parent, "diverged")
    report = report_sweep(uri, "diverged", out_dir=str(tmp_path / "a"), register=True)
    assert len(report.warnings) == 1 and "grew by orders of magnitude" in report.warnings[0]
    markdown = report.markdown
    assert markdown.index("## Sanity warnings") < markdown.index("## Selected configuration")
    assert not report.registration.registered
    assert "--register-anyway" in report.registration.reason
    assert client.search_registered_models(filter_string="name = 'diverged'") == []
    summary = format_summary(report)
    assert summary.startswith("WARNING: The training loss grew")
    assert summary.index("WARNING") < summary.index("Selected configuration")
    assert client.get_run(parent).data.tags[SANITY_WARNINGS_TAG] == "1"

    code = main(
        ["report", "--experiment", "diverged", "--tracking-uri", uri, "--out", str(tmp_path / "b")]
        + ["--register-anyway"]
    )
    assert code == 0
    assert client.get_model_version_by_alias("diverged", "champion") is not None


def test_verdict_and_summary_reach_the_report_and_the_parent_run(store, tmp_path):
    uri, client, parent, _ = _make_sweep(store, "verdict", "ttest", False, BEST, FEW_KEYS)
    # The seed-averaged ttest by name: these fake sweeps have 2 seeds, on which the
    # seed-aware default rests its seed variance on one degree of freedom.
    report = report_sweep(
        uri, "verdict", out_dir=str(tmp_path), register=False, significance_test="ttest"
    )
    # The best configuration is ~18 points above the baseline on every language.
    assert report.verdict.outcome == "gain"
    assert (
        f"On held-out test (mean over its 2 languages), the selected configuration {BEST} "
        "beats the baseline" in report.markdown
    )
    assert "The ttest test averages every example over the seeds" in report.markdown
    assert f"{BEST} beats the baseline on dev/en/accuracy" in report.markdown
    assert "significant gains: en (+" in report.markdown and "es (+" in report.markdown
    assert "significant losses: none" in report.markdown
    assert "workflowType=machine_learning" in report.markdown
    run = client.get_run(parent).data
    assert run.tags[SELECTED_CONFIG_TAG] == BEST and run.tags[VERDICT_TAG] == "gain"
    assert run.tags[f"{VS_BASELINE_TAG_PREFIX}test/es"] == "gain"
    assert run.metrics["vs_baseline/test/es/accuracy"] > 0.1
    assert run.metrics["selected/dev/en/accuracy"] > run.metrics["baseline/dev/en/accuracy"]
    summary = format_summary(report)
    assert summary.startswith(
        f"Verdict: On held-out test (mean over its 2 languages), the selected configuration {BEST}"
    )
    experiment = client.get_experiment_by_name("verdict")
    assert f"#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning" in summary
    # The address's shared view is the experiment's tag, with the summary's columns.
    assert "viewStateShareKey=xlt-sweep-summary" in summary
    view = experiment.tags["mlflow.sharedViewState.xlt-sweep-summary"]
    assert f"tags.`{VS_BASELINE_TAG_PREFIX}test/es`" in view


def test_experiments_are_tagged_as_model_training(tmp_path):
    uri = tracking_store(tmp_path)
    client = MlflowClient(uri)
    created = ensure_experiment(client, "fresh", uri)
    assert client.get_experiment(created).tags[EXPERIMENT_KIND_TAG] == MODEL_TRAINING_KIND
    older = client.create_experiment("older")  # made before the tag existed
    assert ensure_experiment(client, "older", uri) == older
    assert client.get_experiment(older).tags[EXPERIMENT_KIND_TAG] == MODEL_TRAINING_KIND


def test_compare_puts_each_sweeps_baseline_and_methods_side_by_side(store, tmp_path):
    uri, _, _, _ = _make_sweep(store, "side_a", "ttest", False, None, FEW_KEYS)
    _make_sweep(store, "side_b", "ttest", False, None, FEW_KEYS)
    # By name, as for the verdict above: these fake sweeps have 2 seeds.
    comparison = compare_sweeps(uri, ["side_a", "side_b"], str(tmp_path), test="ttest")
    (table,) = comparison.tables
    assert table.title == "xnli test accuracy (%)" and table.columns == ["en", "es", "avg"]
    labels = [label for label, _ in table.rows]
    # Per sweep: the baseline, then each method's (and adaptation's) selected configuration.
    assert [label for label in labels if label.startswith("side_a")] == [
        "side_a: finetune (baseline)",
        f"side_a: {BEST}",
        "side_a: finetune adjusted adjust_epochs=1 adjust_learning_rate=5e-05 adjust_reg_weight=1",
    ]
    cells = dict(table.rows)
    assert all(cell.endswith("*") for cell in cells[f"side_b: {BEST}"][:2])
    assert not any(cell.endswith("*") for cell in cells["side_b: finetune (baseline)"])
    markdown = (tmp_path / "compare.md").read_text()
    assert "| side_a: finetune (baseline) |" in markdown
    assert r"\begin{tabular}{lrrr}" in (tmp_path / "compare.tex").read_text()
    assert [path.rsplit("/", 1)[1] for path in comparison.plot_paths] == [
        "compare_xnli_test_accuracy.png"
    ]
