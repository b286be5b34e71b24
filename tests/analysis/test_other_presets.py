"""The read step finds, for a paper-preset sweep, the newest complete sweep of the same
experiment under the other preset (analysis.sweep_records.other_preset_trials)."""

from fake_sweeps import complete_parent, log_scored_trial, trial_tags
from mlflow.entities import Param

from analysis.collect import sweep_parent
from analysis.sweep_records import other_preset_trials
from xlt_schema import COMPLETE_TAG, PARENT_ROLE, ROLE_TAG


def _trial(client, experiment_id, parent, seed):
    tags = trial_tags(parent, "finetune", "finetune")
    params = {"method": "finetune", "adaptation": "none", "seed": str(seed)}
    log_scored_trial(client, experiment_id, tags, {"dev/en": [1.0, 0.0]}, params)


def _parent(client, experiment_id, preset, complete=True):
    tags = {ROLE_TAG: PARENT_ROLE, **({COMPLETE_TAG: "true"} if complete else {})}
    parent = client.create_run(experiment_id, tags=tags).info.run_id
    client.log_batch(parent, params=[Param("preset", preset)])
    return parent


def test_the_other_presets_newest_complete_sweep_is_read(tmp_path):
    _, client, experiment_id, paper = complete_parent(tmp_path, "ear_xnli", {"preset": "paper"})
    _trial(client, experiment_id, paper, 0)
    older = _parent(client, experiment_id, "released")
    _trial(client, experiment_id, older, 1)
    newer = _parent(client, experiment_id, "released")
    _trial(client, experiment_id, newer, 2)
    _trial(client, experiment_id, newer, 3)
    unfinished = _parent(client, experiment_id, "released", complete=False)
    _trial(client, experiment_id, unfinished, 4)
    found = other_preset_trials(client, sweep_parent(client.get_run(paper)))
    assert list(found) == ["released"]
    assert sorted(found["released"]["seed"]) == [2, 3]  # the newest complete one
    smoke = _parent(client, experiment_id, "smoke")
    assert other_preset_trials(client, sweep_parent(client.get_run(smoke))) == {}
