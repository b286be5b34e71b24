"""The adjustment sweep end to end: `sweeps/adjust_xnli.py --preset smoke`, shortened, through
Ray Tune and MLflow: paired seeds, the adjustment's logged distances (one adjusted encoder per
target language), the report, probing PNGs per language stage."""

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from xlt_schema import ADAPTATION_TAG, METHOD_TAG

pytestmark = pytest.mark.slow
PROBED_STATES = {
    "none": {"original", "finetuned"},
    "adjusted": {"original", "adjusted", "adjusted_finetuned"},
    "adjusted_continual": {"original", "adjusted", "adjusted_continual"},
}


@pytest.fixture(scope="module")
def sweep(adjust_xnli_smoke):
    """The session's adjustment sweep (conftest): the smoke grid (finetune, adjusted,
    adjusted_continual x seeds 0, 1) on es and de (sweep_helpers.ADJUST_SETTINGS)."""
    client = MlflowClient(adjust_xnli_smoke.uri)
    runs = client.search_runs(
        [client.get_experiment_by_name("adjust_xnli").experiment_id], max_results=100
    )
    return client, runs


def parent_report(sweep, tmp_path):
    """(client, the parent run, its report.md text)."""
    client, runs = sweep
    parent = next(run for run in runs if run.data.tags.get("xlt.role") == "parent")
    path = client.download_artifacts(parent.info.run_id, "report/report.md", str(tmp_path))
    return client, parent, Path(path).read_text()


def children(runs):
    return [run for run in runs if run.data.tags.get("xlt.role") == "trial"]


def test_every_adaptation_ran_the_same_seeds(sweep):
    _, runs = sweep
    seeds = {}
    for run in children(runs):
        assert run.info.status == "FINISHED"
        assert run.data.tags[METHOD_TAG] == "finetune"
        seeds.setdefault(run.data.tags[ADAPTATION_TAG], set()).add(run.data.params["seed"])
    assert seeds == {
        "none": {"0", "1"},
        "adjusted": {"0", "1"},
        "adjusted_continual": {"0", "1"},
    }


def test_adjustment_brings_aligned_words_closer_in_each_language(sweep):
    _, runs = sweep
    adjusted = [run for run in children(runs) if run.data.tags[ADAPTATION_TAG] != "none"]
    assert len(adjusted) == 4
    for run in adjusted:
        metrics = run.data.metrics
        for lang in ("es", "de"):  # one encoder per language, each measured on its own pairs
            after, before = (
                metrics[f"adjust_{lang}/aligned_distance_{when}"] for when in ("after", "before")
            )
            assert after < before
            # the probe's held-out pairs are the adjustment's: the same mean distance
            assert metrics[f"probing_{lang}/adjusted_related_l2"] == pytest.approx(after, rel=1e-4)
        assert metrics["adjust/aligned_distance_after"] == pytest.approx(
            (
                metrics["adjust_es/aligned_distance_after"]
                + metrics["adjust_de/aligned_distance_after"]
            )
            / 2
        )


def test_parent_report_compares_the_three_encoders(sweep, tmp_path):
    _, _, report = parent_report(sweep, tmp_path)
    # the test table: one row per method, one column per language, side by side
    table = report.split("## test accuracy (%)")[1].split("## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert (
        rows[0].startswith("| Configuration | Seeds | en |")
        and " de |" in rows[0]
        and " es |" in rows[0]
    )
    # labels `finetune`, `finetune adjusted ...`, `finetune adjusted_continual ...`
    configurations = [
        row.split("|")[1].strip().replace("**Baseline:** ", "").split(" ")[:2] for row in rows[2:]
    ]
    assert sorted(" ".join(words) for words in configurations) == [
        "finetune",
        "finetune adjusted",
        "finetune adjusted_continual",
    ]
    # Adjusted trials' per-example scores are means over language stages: the seed-aware
    # default tests them as any continuous score (the parent's param only records the
    # paper's own test).
    assert "significance test: `crossed`" in report


def test_each_trial_logs_the_histograms_of_its_model_states(sweep):
    client, runs = sweep
    for run in children(runs):

        def logged(folder):
            return {
                Path(artifact.path).stem
                for artifact in client.list_artifacts(run.info.run_id, folder)
            }

        states = PROBED_STATES[run.data.tags[ADAPTATION_TAG]]
        files = states | {f"{state}_distances" for state in states}
        if run.data.tags[ADAPTATION_TAG] == "none":
            assert logged("probing") == files
            continue
        # one language stage per target: its own histograms, and the distances pooled
        assert logged("probing") == {"es", "de"} | {f"{state}_distances" for state in states}
        for lang in ("es", "de"):
            assert logged(f"probing/{lang}") == files


def test_the_report_lays_the_five_states_side_by_side(sweep, tmp_path):
    client, parent, report = parent_report(sweep, tmp_path)
    assert "![probing_stages](probing_stages.png)" in report
    figure = client.download_artifacts(
        parent.info.run_id, "report/probing_stages.png", str(tmp_path)
    )
    with open(figure, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
