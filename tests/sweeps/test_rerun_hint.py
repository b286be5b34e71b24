"""A sweep started again without `--resume` while a parent of the same settings has work
left says so in one line, and leaves that parent and its runs as they are."""

from tracking_stores import tracking_store

from sweeps import ear_xnli
from sweeps.records import tracking
from sweeps.running import runner
from sweeps.running.runner import SweepOptions, sweep_key
from sweeps.spec.experiment import experiment_spec
from xlt_schema import COMPLETE_TAG, PARENT_ROLE, REPORTED_TAG, ROLE_TAG, SWEEP_KEY_TAG


def _store(tmp_path):
    uri = tracking_store(tmp_path)
    client, experiment_id = tracking.open_experiment(uri, "ear_xnli")
    return uri, client, experiment_id


def _old_parent(client, experiment_id, key, **tags):
    run = client.create_run(experiment_id, tags={ROLE_TAG: PARENT_ROLE, SWEEP_KEY_TAG: key, **tags})
    return run.info.run_id


def test_a_new_sweep_names_the_unfinished_one_and_leaves_it(tmp_path, capsys):
    uri, client, experiment_id = _store(tmp_path)
    spec = experiment_spec(ear_xnli, "smoke", None)
    key = sweep_key(spec)
    old = _old_parent(client, experiment_id, key)
    new, _ = runner._start_parent(client, experiment_id, spec, SweepOptions(uri), key)
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("Note:")]
    assert len(notes) == 1
    assert f"an unfinished sweep with these settings exists, parent run {old}" in notes[0]
    assert "RUNNING); it is left as it is, its runs kept" in notes[0]
    assert notes[0].endswith(f"(this new one while it has work left, then {old})")
    assert client.get_run(old).info.status == "RUNNING"  # untouched
    assert tracking.find_resumable_parent(client, experiment_id, key).info.run_id == new


def test_no_note_for_a_finished_sweep_or_other_settings(tmp_path):
    _, client, experiment_id = _store(tmp_path)
    _old_parent(client, experiment_id, "k1", **{COMPLETE_TAG: "true", REPORTED_TAG: "true"})
    _old_parent(client, experiment_id, "other")
    assert tracking.unfinished_sweep_note(client, experiment_id, "k1") is None
