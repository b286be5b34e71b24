"""robust_xnli end to end (shortened): baseline, ADV, RS-RP and RS-DA over the same seeds,
with generalized-pair and mixed-language metrics, through Ray Tune and MLflow."""

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sweep(robust_xnli_smoke):
    """The session's robust sweep (conftest): seeds 0 and 1, 60 evaluation examples
    (sweep_helpers.ROBUST_SETTINGS), tracked in the demo sweep's store."""
    client = MlflowClient(robust_xnli_smoke.uri)
    runs = client.search_runs(
        [client.get_experiment_by_name("robust_xnli").experiment_id], max_results=100
    )
    return client, runs, robust_xnli_smoke.completed


def test_every_method_ran_the_same_seeds_with_generalized_and_mixed_metrics(sweep):
    client, runs, _ = sweep
    children = [r for r in runs if r.data.tags.get("xlt.role") == "trial"]
    assert len(children) == 8 and all(c.info.status == "FINISHED" for c in children)
    seeds = {}
    for child in children:
        seeds.setdefault(child.data.params["method"], set()).add(child.data.params["seed"])
        metrics = child.data.metrics
        assert {
            "test/es/accuracy",
            "test/en-es/accuracy",
            "test/es-en/accuracy",
            "test/de-ru/accuracy",
            "mixed/es/accuracy",
        } <= set(metrics)
        assert "test/es-es/accuracy" not in metrics  # the diagonal is test/es itself
    assert seeds == {method: {"0", "1"} for method in ("finetune", "adv", "rs_rp", "rs_da")}
    adv = next(c for c in children if c.data.params["method"] == "adv")
    assert adv.data.params["epsilon"] == "0.001" and "alpha" not in adv.data.params
    assert "train/adv_ce" in adv.data.metrics


def test_pair_artifacts_carry_per_example_scores(sweep, tmp_path):
    client, runs, _ = sweep
    child = next(
        r
        for r in runs
        if r.data.tags.get("xlt.role") == "trial" and r.data.params["method"] == "rs_da"
    )
    for key, lang in (("test-en-es", "en-es"), ("mixed-de", "de")):
        payload = json.loads(
            Path(
                client.download_artifacts(
                    child.info.run_id, f"predictions/{key}.json", str(tmp_path)
                )
            ).read_text()
        )
        assert (
            payload["lang"] == lang
            and payload["metric"] == "accuracy"
            and len(payload["scores"]) == 60
        )
        split = key.split("-")[0]
        assert sum(payload["scores"]) / 60 == pytest.approx(
            child.data.metrics[f"{split}/{lang}/accuracy"]
        )


def test_parent_records_the_bootstrap_test_and_holds_the_report(sweep):
    client, runs, completed = sweep
    parent = next(r for r in runs if r.data.tags.get("xlt.role") == "parent")
    assert parent.data.params["significance_test"] == "bootstrap"
    assert {a.path for a in client.list_artifacts(parent.info.run_id, "report")} >= {
        "report/report.md",
        "report/selected_config.json",
    }
    assert "Selected configuration" in completed.stdout
