"""Crash-consistent sweep state (issue 22, items 1 and 10): a full disk refused up front or
stopped in one line with a resumable state, unwritable places refused before Ray starts,
Tune state verified before it is restored, `xlt.complete` only for phases whose every trial
ran, and no restored checkpoint left behind in the system temp directory."""

from __future__ import annotations

import errno
import os
import pickle
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import scaled_timeout, what_went_wrong
from sweep_helpers import SCRIPT, child_runs, parent_runs, plugin_sweep, sqlite_uri

from sweeps.running.runner import SweepOptions, _stopped
from sweeps.running.tune_phases import TunePhases
from sweeps.safety import saved_state, storage_checks
from sweeps.safety.storage_checks import StorageFull, check_storage, is_disk_full, trial_bytes
from sweeps.spec.trial_contract import TrialRequest
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError, DataError
from xlt_schema import CONFIG_KEY_TAG, FAILURE_TAG

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "ray_results/x/checkpoint")

# --- what counts as a full disk ---------------------------------------------------------


def test_a_full_disk_is_recognised_in_an_error_or_what_it_was_raised_from():
    assert is_disk_full(ENOSPC)
    try:
        try:
            raise ENOSPC
        except OSError as error:
            raise RuntimeError("Tune could not save its state") from error
    except RuntimeError as wrapped:
        assert is_disk_full(wrapped)
    # SQLite's words, through MLflow; an OSError printed into a Ray error's text.
    assert is_disk_full(Exception("(sqlite3.OperationalError) database or disk is full"))
    assert is_disk_full(RuntimeError("RayTaskError: OSError: [Errno 28] No space left"))
    assert not is_disk_full(PermissionError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(None)


def test_a_trial_failed_on_a_full_disk_is_logged_in_one_line():
    """Tune's controller logs each failed trial with its traceback (some 60 lines)."""
    import logging

    from sweeps.safety.storage_checks import QuietDiskFull, disk_full_text

    ray_error = RuntimeError("ray::ImplicitFunc.train()\n  File x\nOSError: " + str(ENOSPC))
    assert disk_full_text(ray_error) == f"OSError: {ENOSPC}"
    record = logging.LogRecord(
        "tune", logging.ERROR, "f", 1, "Trial task failed for trial %s", ("t1",), None
    )
    record.exc_info = (RuntimeError, ray_error, None)
    assert QuietDiskFull().filter(record) and record.exc_info is None
    assert record.getMessage() == f"Trial task failed for trial t1: OSError: {ENOSPC}"
    other = logging.LogRecord("tune", logging.ERROR, "f", 1, "failed", (), None)
    other.exc_info = (RuntimeError, RuntimeError("a bug"), None)
    assert QuietDiskFull().filter(other) and other.exc_info is not None


def test_the_first_trial_failed_on_a_full_disk_ends_the_phase(monkeypatch, tmp_path):
    """Through Tune's own stop (as a Ctrl-C), so the running trials stay resumable."""
    import signal

    from sweeps.safety.full_disk_stop import StopOnFullDisk
    from sweeps.safety.interruption import TUNE_STOP_SIGNAL

    (tmp_path / "full.txt").write_text(f"Failure # 1\nOSError: {ENOSPC}\n")
    (tmp_path / "bug.txt").write_text("Failure # 1\nRuntimeError: a bug\n")
    stops = []
    monkeypatch.setattr(signal, "getsignal", lambda signum: lambda *args: stops.append(signum))
    callback = StopOnFullDisk()

    def failed(error_file: str, pickled: str | None = None):
        pickled = str(tmp_path / pickled) if pickled else None
        trial = SimpleNamespace(error_file=str(tmp_path / error_file), pickled_error_file=pickled)
        callback.on_trial_error(1, [], trial)

    (tmp_path / "whole.pkl").write_bytes(pickle.dumps(RuntimeError("a bug")))
    failed("bug.txt", "whole.pkl")
    assert stops == [] and (tmp_path / "whole.pkl").exists()
    failed("full.txt")
    assert stops == [TUNE_STOP_SIGNAL]


def test_error_files_the_full_disk_cut_short_end_the_phase_and_the_pickle_goes(
    monkeypatch, tmp_path
):
    """Issue 41 item 1: on a filesystem filled mid-sweep Tune left `error.txt` and
    `error.pkl` empty; the pickle then failed `fit` (EOFError) on every `--resume`."""
    import signal

    from sweeps.safety.full_disk_stop import StopOnFullDisk
    from sweeps.safety.interruption import TUNE_STOP_SIGNAL

    stops = []
    monkeypatch.setattr(signal, "getsignal", lambda signum: lambda *args: stops.append(signum))
    (tmp_path / "error.txt").write_text("")
    whole = pickle.dumps(RuntimeError("worker died"))
    (tmp_path / "error.pkl").write_bytes(whole[: len(whole) // 2])
    trial = SimpleNamespace(
        error_file=str(tmp_path / "error.txt"), pickled_error_file=str(tmp_path / "error.pkl")
    )
    StopOnFullDisk().on_trial_error(1, [], trial)
    assert stops == [TUNE_STOP_SIGNAL]
    assert not (tmp_path / "error.pkl").exists()


# --- refused before Ray starts ----------------------------------------------------------


def test_a_trial_needs_room_for_two_checkpoints_of_its_model():
    tiny = TrialConfig(tiny_layers=2, tiny_hidden_size=16)
    mbert = TrialConfig(model="bert-base-multilingual-cased")
    assert trial_bytes([tiny]) < storage_checks.RESERVE_BYTES + 4 * 2**20  # ~1.5 MB of model
    # mBERT's 178 M parameters x 32 bytes: about 5.7 GB.
    assert 5.5e9 < trial_bytes([tiny, mbert]) < 6e9


def test_a_nearly_full_folder_is_refused_naming_it_and_the_bytes(monkeypatch, tmp_path):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(storage_checks.shutil, "disk_usage", lambda path: usage._replace(free=1000))
    with pytest.raises(ConfigError) as refused:
        check_storage([TrialConfig()], str(tmp_path / "ray_results"), tmp_path)
    message = str(refused.value)
    assert "\n" not in message and str(tmp_path) in message
    assert "it has 1,000" in message and f"{trial_bytes([TrialConfig()]):,} bytes" in message


def test_unwritable_places_are_refused_naming_the_path(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="--storage-path.*a-file/results.*can write"):
        check_storage([TrialConfig()], str(blocker / "results"), tmp_path)
    with pytest.raises(ConfigError, match="working folder.*a-file.*can write"):
        check_storage([TrialConfig()], str(tmp_path), blocker)
    check_storage([TrialConfig()], "s3://bucket/results", tmp_path)  # remote: Ray's to check


@pytest.mark.slow
def test_an_unwritable_storage_path_stops_the_command_before_a_parent_run(tmp_path):
    """Exit 2 and one line naming the path; no parent run records the bad path."""
    (tmp_path / "a-file").write_text("not a folder")
    uri = sqlite_uri(tmp_path)
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--preset", "smoke", "--tracking-uri", uri]
        + ["--storage-path", str(tmp_path / "a-file" / "results"), "--set", "seeds=0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )
    assert completed.returncode == 2, completed.stderr[-3000:]
    # (MLflow logs the new store's tables as it makes them, while the check runs.)
    assert "Traceback" not in completed.stderr
    (line,) = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert "--storage-path" in line and "a-file/results" in line
    assert parent_runs(uri) == []
    assert not (tmp_path / "ray_results").exists()


# --- Tune's saved state, verified before a restore ---------------------------------------


def _state_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ear_xnli-smoke-grid"
    folder.mkdir()
    (folder / "experiment_state-2026.json").write_text('{"trial_data": [], "runner_data": {}}')
    (folder / "basic-variant-state-2026.json").write_bytes(pickle.dumps({"iterators": [1, 2]}))
    return folder


def test_state_files_cut_short_are_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "no-staging"))  # no copy to continue from
    folder = _state_folder(tmp_path)
    saved_state.check_state_files(folder)
    for name in ("experiment_state-2026.json", "basic-variant-state-2026.json"):
        whole = (folder / name).read_bytes()
        (folder / name).write_bytes(whole[: len(whole) // 2])  # a write the disk cut short
        with pytest.raises(DataError) as refused:
            saved_state.check_state_files(folder)
        assert name in str(refused.value) and "without --resume" in str(refused.value)
        assert "\n" not in str(refused.value)
        (folder / name).write_bytes(whole)


def _staging_folder(ray_tmpdir: Path, session: str, experiment: str) -> Path:
    """Where the driver of Ray session `session` stages `experiment`'s state."""
    folder = ray_tmpdir / "ray" / session / "artifacts" / "2026-12-03_15-52-43"
    folder = folder / experiment / "driver_artifacts"
    folder.mkdir(parents=True)
    return folder


def test_a_state_file_emptied_by_a_kill_is_replaced_by_the_drivers_whole_staging_copy(
    tmp_path, monkeypatch, caplog
):
    """SIGKILL while Tune copied its state to storage: the stored file empty (CI, 2026-12-03),
    the driver's staging copy whole; an older session's copy of another experiment ignored."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    folder = _state_folder(tmp_path)
    name = "experiment_state-2026.json"
    whole = '{"trial_data": [["a trial"]], "runner_data": {}}'
    staged = _staging_folder(tmp_path / "raytmp", "session_2026-12-03_15-52-27_1", folder.name)
    (staged / name).write_text(whole)
    other = _staging_folder(tmp_path / "raytmp", "session_2026-12-03_15-40-00_2", "other-grid")
    (other / name).write_text('{"trial_data": [], "runner_data": {"other": 1}}')
    (folder / name).write_text("")
    with caplog.at_level("WARNING", logger="sweeps.safety.saved_state"):
        saved_state.check_state_files(folder)
    assert (folder / name).read_text() == whole
    assert [path.name for path in folder.iterdir() if path.name.startswith(".")] == []
    (warning,) = caplog.messages
    assert name in warning and "JSONDecodeError" in warning and str(staged / name) in warning
    # A staging copy cut short as well is no copy: the file is refused as before.
    (staged / name).write_text(whole[:10])
    (folder / name).write_text("")
    with pytest.raises(DataError, match=f"{name} does not load"):
        saved_state.check_state_files(folder)


def _saved_trial(
    space: dict, status: str = "TERMINATED", error_file: str | None = None, pickled=None
):
    return SimpleNamespace(
        config=space,
        status=status,
        path="/nonexistent",
        run_metadata=SimpleNamespace(error_filename=error_file, pickled_error_filename=pickled),
    )


def _space(seed: int) -> dict:
    request = TrialRequest(
        base={"task": "xnli"}, phase="grid", experiment_id="1", parent_run_id="p", threads=1
    )
    return {**request.to_space(), "point": {"method": "finetune"}, "seed": seed}


def test_a_saved_trial_without_its_configuration_is_refused_before_it_runs(monkeypatch, tmp_path):
    """The full-disk case of issue 22: a state that restored a trial with an empty
    configuration, which then failed with KeyError: 'base'."""
    trials = [_saved_trial(_space(0)), _saved_trial({})]
    monkeypatch.setattr("ray.tune.ExperimentAnalysis", lambda path: SimpleNamespace(trials=trials))
    folder = str(_state_folder(tmp_path))
    with pytest.raises(DataError, match="cannot be restored: ConfigError.*missing: base"):
        saved_state.check_saved_state(folder, planned=2)
    trials[1] = _saved_trial(_space(1))
    assert saved_state.check_saved_state(folder, planned=2) == trials
    with pytest.raises(DataError, match="it holds 2 of the phase's 6 trials"):
        saved_state.check_saved_state(folder, planned=6)


def test_trials_that_errored_on_a_full_disk_are_told_apart(tmp_path):
    (tmp_path / "error.txt").write_text("OSError: [Errno 28] No space left on device: 'x'")
    (tmp_path / "other.txt").write_text("RuntimeError: a bug")
    full = _saved_trial({}, "ERROR", "error.txt")
    bug = _saved_trial({}, "ERROR", "other.txt")
    full.path = bug.path = str(tmp_path)
    assert saved_state.errored_by_full_disk(full)
    assert not saved_state.errored_by_full_disk(bug)
    assert not saved_state.errored_by_full_disk(_saved_trial({}))
    # Cut short by the full disk as Tune wrote them: an empty error.txt, a pickle that
    # does not load beside a text that names no full disk.
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "cut.pkl").write_bytes(pickle.dumps(RuntimeError("a bug"))[:10])
    (tmp_path / "whole.pkl").write_bytes(pickle.dumps(RuntimeError("a bug")))
    empty = _saved_trial({}, "ERROR", "empty.txt")
    cut = _saved_trial({}, "ERROR", "other.txt", "cut.pkl")
    whole = _saved_trial({}, "ERROR", "other.txt", "whole.pkl")
    empty.path = cut.path = whole.path = str(tmp_path)
    assert saved_state.errored_by_full_disk(empty) and saved_state.errored_by_full_disk(cut)
    assert not saved_state.errored_by_full_disk(whole)


def test_error_pickles_a_full_disk_cut_short_are_removed_before_tune_reads_them(tmp_path):
    trials = [tmp_path / f"trial_{index}" for index in range(3)]
    for folder in trials:
        folder.mkdir()
    whole = pickle.dumps(RuntimeError("worker died"))
    (trials[0] / "error.pkl").write_bytes(b"")
    (trials[1] / "error.pkl").write_bytes(whole[:-3])
    (trials[2] / "error.pkl").write_bytes(whole)
    assert saved_state.drop_damaged_error_pickles(str(tmp_path)) == 2
    assert [(folder / "error.pkl").exists() for folder in trials] == [False, False, True]
    assert saved_state.drop_damaged_error_pickles("s3://bucket/sweep") == 0


def test_a_fit_that_failed_on_a_cut_error_pickle_returns_its_saved_results(tmp_path):
    """Tune unpickles the failed trials' error.pkl as `fit` ends: a cut one failed it."""
    from sweeps.running.tune_phases import _fit_results

    (tmp_path / "trial_0").mkdir()
    (tmp_path / "trial_0" / "error.pkl").write_bytes(b"")

    class Tuner:
        def fit(self):
            pickle.loads((tmp_path / "trial_0" / "error.pkl").read_bytes())

        def get_results(self):
            return ["results"]

    assert _fit_results(Tuner(), str(tmp_path)) == ["results"]
    with pytest.raises(EOFError):  # nothing to remove: the error is not hidden
        (tmp_path / "trial_0" / "error.pkl").write_bytes(pickle.dumps(1))
        _fit_results(SimpleNamespace(fit=lambda: pickle.loads(b"")), str(tmp_path))


def _trial_folder(tmp_path: Path, *checkpoints: str) -> Path:
    folder = tmp_path / "run_tracked_trial_0295eb62_1"
    for name in checkpoints:
        (folder / name).mkdir(parents=True)
        (folder / name / "step.txt").write_text(name)
    return folder


def _named_checkpoint(folder: Path, name: str, status: str = "RUNNING") -> SimpleNamespace:
    """A trial as Tune saved it, naming `name` as its latest checkpoint (the path Tune keeps
    is the one it wrote, wherever the folder is now)."""
    return SimpleNamespace(
        trial_id="0295eb62",
        status=status,
        path=str(folder),
        checkpoint=SimpleNamespace(path=f"/elsewhere/{folder.name}/{name}"),
    )


def test_a_checkpoint_deleted_before_the_state_was_saved_is_replaced_by_its_successor(
    tmp_path, caplog
):
    """What CI and a quiet serial `pytest` met (tests/sweeps/test_sweep_search.py, its driver
    killed):
    the state named checkpoint_000002, Tune had deleted it on registering checkpoint_000003,
    and every restore of the trial failed. The trial continues from checkpoint_000003; a newer
    folder the trial wrote after the driver died is left for Tune to write over."""
    folder = _trial_folder(tmp_path, "checkpoint_000003", "checkpoint_000004")
    saved_state.recover_deleted_checkpoints(
        str(tmp_path), [_named_checkpoint(folder, "checkpoint_000002")]
    )
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint_000002", "checkpoint_000004"]
    assert (folder / "checkpoint_000002" / "step.txt").read_text() == "checkpoint_000003"
    assert "names checkpoint_000002, which Tune deleted when checkpoint_000003" in caplog.text


def test_checkpoints_that_exist_or_cannot_be_replaced_are_left_alone(tmp_path, caplog):
    present = _trial_folder(tmp_path / "a", "checkpoint_000001", "checkpoint_000002")
    older_only = _trial_folder(tmp_path / "b", "checkpoint_000000")
    finished = _trial_folder(tmp_path / "c", "checkpoint_000005")
    before = {f: sorted(p.name for p in f.iterdir()) for f in (present, older_only, finished)}
    saved_state.recover_deleted_checkpoints(
        str(tmp_path),
        [
            _named_checkpoint(present, "checkpoint_000001"),
            _named_checkpoint(older_only, "checkpoint_000001"),  # nothing newer to go on from
            _named_checkpoint(finished, "checkpoint_000004", status="TERMINATED"),
            SimpleNamespace(status="PENDING", checkpoint=None, path=str(tmp_path / "d")),
        ],
    )
    # The layout of the deleted checkpoint, but the experiment on remote storage: left to Tune.
    remote = _trial_folder(tmp_path / "e", "checkpoint_000003")
    before[remote] = ["checkpoint_000003"]
    saved_state.recover_deleted_checkpoints(
        "s3://bucket/ray_results/ear_xnli-smoke-search",
        [_named_checkpoint(remote, "checkpoint_000002")],
    )
    assert {f: sorted(p.name for p in f.iterdir()) for f in before} == before
    assert "Tune deleted" not in caplog.text


# --- nothing complete that did not run -----------------------------------------------------


def _phases(results) -> SimpleNamespace:
    return SimpleNamespace(
        grid_tuner=lambda phase, points, seeds: "tuner",
        fit=lambda phase, tuner: results,
        path=lambda phase: f"ray_results/sweep-{phase}",
    )


def test_a_grid_phase_with_trials_missing_is_not_complete():
    points, seeds = [{"method": "finetune"}, {"method": "ear"}], [0, 1, 2]
    ended = [SimpleNamespace(error=None, metrics={})] * 2  # 2 of 6: the state lost the rest
    with pytest.raises(DataError, match="2 of 6 trials ended"):
        TunePhases.run_grid(_phases(ended), "grid", points, seeds)
    every = [SimpleNamespace(error=None, metrics={})] * 6
    assert TunePhases.run_grid(_phases(every), "grid", points, seeds) == every


def test_a_trial_stopped_by_a_full_disk_stops_the_phase_unfinished():
    full = SimpleNamespace(error=RuntimeError(f"trial failed: {ENOSPC}"), metrics={})
    tuner = SimpleNamespace(fit=lambda: [SimpleNamespace(error=None, metrics={}), full])
    phases = SimpleNamespace(
        signals=SimpleNamespace(tune_fit=_no_context),
        restored_phases=(),
        path=lambda phase: "ray_results/sweep-grid",
        saved_trials=lambda phase: [],
    )
    with pytest.raises(RuntimeError, match="No space left"):
        TunePhases.fit(phases, "grid", tuner)


def _no_context():
    import contextlib

    return contextlib.nullcontext()


def test_when_the_store_is_on_the_full_disk_the_runs_stay_resumable(monkeypatch, capsys):
    from sweeps.records import tracking

    def store_full(client, parent_run_id):
        raise Exception("(sqlite3.OperationalError) database or disk is full")

    monkeypatch.setattr(tracking, "mark_interrupted", store_full)
    options = SweepOptions(tracking_uri="sqlite:///x.db", tracking_wait_s=0)
    assert is_disk_full(_stopped(None, "parent", options, ENOSPC))
    assert "its runs stay RUNNING" in capsys.readouterr().out
    # Whatever stopped the sweep (Tune failing on a file the full disk cut short), a store
    # that cannot be written for a full disk means the disk is why: said so, not raised.
    assert is_disk_full(_stopped(None, "parent", options, EOFError("Ran out of input")))

    def store_broken(client, parent_run_id):
        raise RuntimeError("no such table: runs")

    monkeypatch.setattr(tracking, "mark_interrupted", store_broken)
    with pytest.raises(RuntimeError, match="no such table"):
        _stopped(None, "parent", options, ENOSPC)


def test_a_full_disk_ends_the_command_in_one_line_and_exit_3(monkeypatch, tmp_path, capsys):
    import sweeps.running.runner
    from sweeps import ear_xnli
    from sweeps.cli import EXIT_CRASHED, main

    def full():
        raise StorageFull("the disk is full ([Errno 28] No space left on device); ...")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweeps.running.runner, "run_sweep", lambda spec, options, signals: full())
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0"]) == EXIT_CRASHED
    error = capsys.readouterr().err
    assert "Traceback" not in error
    message, command = error.strip().splitlines()
    assert message.startswith("error: the disk is full") and command.endswith("--resume")


# --- no temporary litter ----------------------------------------------------------------


@pytest.fixture
def private_tempdir(monkeypatch, tmp_path):
    """The system temp directory, here a folder of the test's own to count what is left."""
    folder = tmp_path / "system-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _checkpoint(tmp_path: Path):
    from ray import tune

    saved = tmp_path / "saved-checkpoint"
    saved.mkdir()
    (saved / "trainer_state.pt").write_bytes(b"weights")
    return tune.Checkpoint.from_directory(str(saved))


def test_a_restored_checkpoint_is_copied_privately_and_deleted(private_tempdir, tmp_path):
    from sweeps.spec.trial_contract import checkpoint_copy

    with checkpoint_copy(_checkpoint(tmp_path)) as directory:
        assert (Path(directory) / "trainer_state.pt").read_bytes() == b"weights"
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert list(private_tempdir.iterdir()) == []


def test_a_trials_restore_leaves_no_checkpoint_tmp_folder(monkeypatch, private_tempdir, tmp_path):
    from sweeps.running import trainable

    checkpoint = _checkpoint(tmp_path)
    monkeypatch.setattr(trainable.tune, "get_checkpoint", lambda: checkpoint)
    reporter = trainable.RayMlflowReporter(client=None, run_id="r", label="trial")
    first = reporter.latest_checkpoint()
    assert reporter.latest_checkpoint() == first  # every language stage reads one copy
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o700
    reporter.close()
    assert not Path(first).exists()
    assert list(private_tempdir.glob("checkpoint_tmp_*")) == []
    assert list(private_tempdir.iterdir()) == []


# --- end to end: a disk that fills up mid-sweep, then space returns -----------------------

# Imported by every process of the sweep (XLT_PLUGINS): torch.save, the checkpoint writer,
# fails with ENOSPC while the marker file exists, once `SAVES_BEFORE_FULL` saves were made.
DISK_FULL_PLUGIN = """
import errno, os
from pathlib import Path

import torch

_save = torch.save
MARKER = Path(os.environ["XLT_TEST_DISK_FULL"])


def _filling_save(obj, f, *args, **kwargs):
    if MARKER.exists():
        count = len(list(MARKER.parent.glob("save-*")))
        if count >= int(MARKER.read_text()):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(f))
        (MARKER.parent / f"save-{count}-{os.getpid()}").touch()
    return _save(obj, f, *args, **kwargs)


torch.save = _filling_save
"""


def _check_stopped_by_the_full_disk(full, uri: str) -> None:
    """Exit 3, the full disk's line and the `--resume` command last, no traceback, and the
    parent not complete."""
    assert full.returncode == 3, what_went_wrong(full)
    last_lines = full.stderr.strip().splitlines()[-2:]
    assert last_lines[0].startswith("error: the disk is full"), full.stderr[-3000:]
    assert last_lines[1].endswith("--resume")
    assert "Traceback" not in full.stderr, full.stderr[-3000:]  # one line per failed trial
    # Nor Ray's and Tune's own output (issue 53: Ray's unhandled errors, their tracebacks
    # without the word, 86 lines in all): in the log file (sweeps/running/library_output.py).
    chatter = re.compile(r'^\s+File "|Unhandled error|Tuner\.restore|Failed to fetch metrics', re.M)
    assert not chatter.search(full.stdout + full.stderr), (full.stdout + full.stderr)[-3000:]
    (parent,) = parent_runs(uri)
    assert "xlt.complete" not in parent.data.tags


def _check_resumed_to_the_end(resumed, uri: str) -> None:
    """Exit 0, one FINISHED run per (configuration, seed), the parent complete."""
    assert resumed.returncode == 0, what_went_wrong(resumed)
    runs = child_runs(uri)
    assert len(runs) == 4 and all(run.info.status == "FINISHED" for run in runs)
    assert len({(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in runs}) == 4
    (parent,) = parent_runs(uri)
    assert parent.data.tags["xlt.complete"] == "true" and parent.info.status == "FINISHED"


@pytest.mark.slow
def test_a_disk_full_mid_sweep_stops_resumably_and_resume_finishes(tmp_path):
    marker = tmp_path / "disk" / "full"
    marker.parent.mkdir()
    marker.write_text("2")  # two checkpoints fit, then the disk is full
    uri = sqlite_uri(tmp_path)
    plugin = ("disk_full_plugin", DISK_FULL_PLUGIN)
    run = plugin_sweep(tmp_path, tmp_path, uri, *plugin, XLT_TEST_DISK_FULL=str(marker))
    full = run()
    _check_stopped_by_the_full_disk(full, uri)
    (parent,) = parent_runs(uri)
    assert parent.info.status == "KILLED"
    assert all(
        run.info.status != "FINISHED" or FAILURE_TAG not in run.data.tags for run in child_runs(uri)
    )
    marker.unlink()  # space returns
    _check_resumed_to_the_end(run("--resume"), uri)


# --- end to end on a real small filesystem that fills up mid-sweep (issue 41, item 1) ---------

# Imported by every process of the sweep (XLT_PLUGINS): at the sweep's `FILL_AT`-th torch.save
# (counted in a folder off the small disk) a filler file takes every free byte of the small
# disk, so what runs next meets a real full disk: torch's writer, Tune's error files and state,
# the SQLite store.
FILL_DISK_PLUGIN = """
import os
from pathlib import Path

import torch

_save = torch.save
COUNT = Path(os.environ["XLT_TEST_FILL_COUNT"])
FILLER = Path(os.environ["XLT_TEST_FILL_DISK"]) / "filler"


def _filling_save(obj, f, *args, **kwargs):
    (COUNT / f"save-{os.getpid()}-{len(list(COUNT.iterdir()))}").touch()
    if len(list(COUNT.iterdir())) == int(os.environ["XLT_TEST_FILL_AT"]):
        try:
            with open(FILLER, "ab") as filler:
                while True:
                    filler.write(bytes(2**16))
        except OSError:
            pass
    return _save(obj, f, *args, **kwargs)


torch.save = _filling_save
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 200 MiB tmpfs mounted at `tmp_path / "disk"` (as root), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small filesystem needs root and mount(8)")
    command = ["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(disk)]
    made = subprocess.run(command, capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.slow
def test_a_disk_filled_mid_sweep_then_freed_resumes_to_the_report(small_disk, tmp_path):
    """Issue 41 item 1: the first run ends in one line with the `--resume` command (no
    tracebacks); once space is freed one `--resume` finishes every trial once and writes the
    report. Before, every `--resume` failed on an `error.pkl` the full disk cut short."""
    count = tmp_path / "saves"
    count.mkdir()
    uri = f"sqlite:///{small_disk / 'mlflow.db'}"
    run = plugin_sweep(
        tmp_path,
        small_disk,
        uri,
        "fill_disk_plugin",
        FILL_DISK_PLUGIN,
        XLT_TEST_FILL_COUNT=str(count),
        XLT_TEST_FILL_DISK=str(small_disk),
        XLT_TEST_FILL_AT="3",
    )
    full = run()
    assert shutil.disk_usage(small_disk).free < storage_checks.FULL_BELOW_BYTES  # it filled
    _check_stopped_by_the_full_disk(full, uri)

    (small_disk / "filler").unlink()  # space is freed
    _check_resumed_to_the_end(run("--resume"), uri)
    (parent,) = parent_runs(uri)
    assert parent.data.tags["xlt.reported"] == "true"
