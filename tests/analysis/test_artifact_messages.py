"""What a report says of a trial's artifacts that are damaged or gone (issue 53, item 11): a
predictions file that is not JSON names its run and file (before: `error: Expecting value:
line 1 column 1 (char 0)` alone), and a `model/` deleted from a sweep that logged models is not
reported as "the sweep did not log models"."""

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fake_sweeps import complete_parent, log_scored_trial, trial_tags

from analysis.collect import ExampleScores
from analysis.frames import AnalysisError
from analysis.model_registry import MODEL_ARTIFACT, SweepStamp, register_champion


def _artifacts(client, run_id: str) -> Path:
    return Path(urlsplit(client.get_run(run_id).info.artifact_uri).path)


def test_a_predictions_file_that_is_not_json_is_named_with_its_run(tmp_path):
    uri, client, experiment_id, parent = complete_parent(tmp_path, "sweep", {})
    tags = trial_tags(parent, "finetune", "finetune")
    run_id = log_scored_trial(client, experiment_id, tags, {"dev/en": [1.0, 0.0]}, {"seed": "0"})
    damaged = _artifacts(client, run_id) / "predictions" / "dev-en.json"
    damaged.write_bytes(b"")  # a write the disk cut short
    with pytest.raises(AnalysisError) as refused:
        ExampleScores(client).scores([run_id], "dev", "en")
    assert str(refused.value) == (
        f"run {run_id}: its artifact predictions/dev-en.json is not JSON (Expecting value: line "
        f"1 column 1 (char 0); read from {damaged})"
    )


@pytest.mark.parametrize("logged", ["True", "False"])
def test_a_deleted_model_is_not_reported_as_never_logged(tmp_path, logged):
    uri, client, experiment_id, parent = complete_parent(tmp_path, "sweep", {"log_models": logged})
    tags = trial_tags(parent, "finetune", "finetune")
    run_id = log_scored_trial(client, experiment_id, tags, {"dev/en": [1.0]}, {"seed": "0"})
    if logged == "True":  # logged, then deleted from the artifact store
        client.log_text(run_id, "{}", f"{MODEL_ARTIFACT}/MLmodel")
        shutil.rmtree(_artifacts(client, run_id) / MODEL_ARTIFACT)
    outcome = register_champion(client, run_id, "sweep", SweepStamp(parent, 0, True))
    assert not outcome.registered
    if logged == "True":
        assert outcome.reason.startswith(
            f"run {run_id} has no 'model/' artifact, though its sweep logged models "
            f"(log_models=True): it was deleted or moved from the run's artifacts "
            f"({client.get_run(run_id).info.artifact_uri}); restore it there, or rerun the sweep"
        ), outcome.reason
        assert "did not log models" not in outcome.reason
    else:
        assert outcome.reason.endswith(
            "the sweep did not log models (rerun with --set log_models=true)"
        )
