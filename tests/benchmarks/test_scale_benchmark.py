"""The scale case (`python -m benchmarks --only scale`) and the report's reading of per-example
artifacts at scale (analysis.collect.ExampleScores): read in place, once, without a
`get_run` per trial when the search gave the artifact locations, packed in memory."""

import array
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import scaled_timeout, what_went_wrong
from fake_sweeps import trial_tags
from mlflow import MlflowClient
from mlflow.entities import Param
from tracking_stores import tracking_store

from analysis.collect import ExampleScores
from analysis.frames import AnalysisError
from analysis.sanity import chance_level, one_class
from analysis.sweep_records import read_sweep
from xlt_schema import PARENT_ROLE, ROLE_TAG

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.scale import growth_exponent, timed_command  # noqa: E402

LABELS = [0, 1, 2, 1, 0, 2, 2, 1]
PREDICTIONS = [0, 1, 1, 1, 0, 2, 0, 1]


def _store(tmp_path: Path) -> tuple[MlflowClient, str, str]:
    """A store with one sweep: a parent run and two finished trials with dev-en scores."""
    client = MlflowClient(tracking_store(tmp_path))
    experiment = client.create_experiment("scale", artifact_location=str(tmp_path / "art"))
    parent = client.create_run(experiment, tags={ROLE_TAG: PARENT_ROLE}).info.run_id
    for label, method in (("finetune", "finetune"), ("ear alpha=1", "ear")):
        run_id = client.create_run(experiment, tags=trial_tags(parent, label, method)).info.run_id
        scores = [float(p == t) for p, t in zip(PREDICTIONS, LABELS)]
        payload = {"metric": "accuracy", "scores": scores}
        payload |= {"predictions": PREDICTIONS, "labels": LABELS}
        client.log_dict(run_id, payload, "predictions/dev-en.json")
        client.log_batch(run_id, params=[Param("seed", "0")])
        client.log_metric(run_id, "dev/en/accuracy", float(np.mean(scores)))
        client.set_terminated(run_id)
    client.set_terminated(parent)
    return client, experiment, parent


def _refuse_get_run(client: MlflowClient, monkeypatch) -> None:
    def get_run(run_id):
        raise AssertionError(f"get_run({run_id}) called")

    monkeypatch.setattr(client, "get_run", get_run)


def test_scores_are_read_in_place_without_a_get_run_per_trial(tmp_path, monkeypatch):
    client, experiment, _ = _store(tmp_path)
    runs = client.search_runs([experiment], "tags.`xlt.role` = 'trial'")
    scores = ExampleScores(client, {run.info.run_id: run.info.artifact_uri for run in runs})
    _refuse_get_run(client, monkeypatch)
    matrix = scores.scores([run.info.run_id for run in runs], "dev", "en")
    assert matrix.shape == (2, len(LABELS))
    assert not any(Path(scores._scratch.name).iterdir())  # nothing copied


def test_read_sweep_hands_the_search_s_artifact_locations_to_the_scores(tmp_path, monkeypatch):
    client, _, _ = _store(tmp_path)
    records = read_sweep(client, "scale")
    _refuse_get_run(client, monkeypatch)
    matrix = records.scores.scores(list(records.trials["run_id"]), "dev", "en")
    assert matrix.sum() == 2 * sum(p == t for p, t in zip(PREDICTIONS, LABELS))
    assert not any(Path(records.scores._scratch.name).iterdir())  # read in place


def test_without_locations_each_run_is_looked_up_once(tmp_path, monkeypatch):
    client, experiment, _ = _store(tmp_path)
    run_id = client.search_runs([experiment], "tags.`xlt.role` = 'trial'")[0].info.run_id
    calls = []
    real_get_run = client.get_run
    monkeypatch.setattr(client, "get_run", lambda rid: calls.append(rid) or real_get_run(rid))
    scores = ExampleScores(client)
    scores.payload(run_id, "dev", "en")
    scores.scores([run_id], "dev", "en")
    assert calls == [run_id]


def test_payload_is_packed_and_reads_as_the_lists_did(tmp_path):
    client, experiment, _ = _store(tmp_path)
    run_id = client.search_runs([experiment], "tags.`xlt.role` = 'trial'")[0].info.run_id
    payload = ExampleScores(client).payload(run_id, "dev", "en")
    assert isinstance(payload["labels"], array.array)
    assert isinstance(payload["scores"], np.ndarray)
    as_logged = {"predictions": PREDICTIONS, "labels": LABELS}
    assert one_class(payload) == one_class(as_logged)
    assert chance_level(payload["labels"]) == chance_level(LABELS)
    assert list(payload["predictions"]) == PREDICTIONS
    one_label = {"predictions": [1] * len(LABELS), "labels": LABELS}
    packed = {key: array.array("b", values) for key, values in one_label.items()}
    assert one_class(packed) == one_class(one_label) == "1"


def test_a_payload_with_nan_reads_as_the_json_module_reads_it(tmp_path):
    """json.dumps writes NaN (a metric of an empty set), which orjson alone refuses."""
    client, experiment, _ = _store(tmp_path)
    run_id = client.search_runs([experiment], "tags.`xlt.role` = 'trial'")[0].info.run_id
    client.log_dict(
        run_id, {"value": math.nan, "scores": [1.0, math.nan]}, "predictions/dev-de.json"
    )
    payload = ExampleScores(client).payload(run_id, "dev", "de")
    assert math.isnan(payload["value"])
    assert payload["scores"][0] == 1.0 and math.isnan(payload["scores"][1])


def test_a_run_without_scores_is_named_each_time_it_is_asked(tmp_path):
    client, experiment, _ = _store(tmp_path)
    empty = client.create_run(experiment).info.run_id
    scores = ExampleScores(client)
    for _ in range(2):
        with pytest.raises(AnalysisError, match=f"run {empty}: its predictions/ artifacts"):
            scores.payload(empty, "dev", "en")


def test_growth_exponent_is_the_log_log_slope():
    assert growth_exponent([10, 100, 1000], [2.0, 20.0, 200.0]) == pytest.approx(1.0)
    assert growth_exponent([10, 100, 1000], [5.0, 5.0, 5.0]) == pytest.approx(0.0, abs=1e-9)
    assert growth_exponent([10, 40], [1.0, 16.0]) == pytest.approx(2.0)


def test_peak_memory_is_the_command_s_own(tmp_path):
    """This process holds 300 MB; a child forked from it would count them as its peak."""
    ballast = b"x" * (300 * 2**20)
    small = timed_command(["-c", "pass"], tmp_path, "small")
    large = timed_command(["-c", "b = b'x' * (200 * 2**20)"], tmp_path, "large")
    assert len(ballast) and small.peak_mb < 100 <= 200 <= large.peak_mb
    assert small.seconds > 0


@pytest.mark.slow
def test_quick_scale_case_reports_every_store_and_the_growth_exponents():
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "scale"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(900),
    )
    assert completed.returncode == 0, what_went_wrong(completed)
    out = completed.stdout
    for size in ("4 trials", "8 trials", "4 trials, robust, generalized pairs"):
        for line in ("report seconds", "report peak RSS", "compare seconds"):
            assert f"scale {line} ({size})" in out, out
    assert "scale report time growth exponent" in out
    assert "scale report peak RSS growth exponent" in out
    assert "stores built in" in out
