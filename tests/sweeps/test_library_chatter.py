"""Ray's and Tune's own output on the interrupted, faulted and full-disk paths goes to the log
file in Ray's session folder, not the terminal (`-v` shows it); the terminal shows the
project's lines and a trial's failure in one line (issue 53, item 6: a SIGTERM mid-training
printed Tune's "Stop signal received", "Experiment has been interrupted" with
`Tuner.restore(path=...)` advice, and "Failed to fetch metrics" blocks twice; a full disk 86
lines with Ray's unhandled-error tracebacks)."""

import io
import logging
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from conftest import scaled_timeout
from sweep_helpers import ONE_EAR, TINY, child_runs, start_script, wait_for
from tracking_stores import tracking_store

from sweeps.running import library_output
from sweeps.running.library_output import RAY_LOG_FILE, error_line, ray_log_to_file
from xlt_schema.log import configure

# What Tune printed of its own at a stop signal, as its loggers log it.
TUNE_NOTES = (
    ("ray.tune.tune", "Stop signal received (e.g. via SIGINT/Ctrl+C), ending Ray Tune run."),
    (
        "ray.tune.tune",
        "Experiment has been interrupted, but the most recent state was saved.\nResume "
        'experiment with: Tuner.restore(path="/x/ray_results/sweep-grid", trainable=...)',
    ),
    ("ray.tune.analysis.experiment_analysis", "Failed to fetch metrics for 1 trial(s):\n- t"),
)


class _TaskError(Exception):
    """Ray's RayTaskError as Tune logs it: its traceback text, the trial's error as `cause`."""

    def __init__(self, cause):
        super().__init__("ray::ImplicitFunc.train()\n  File ...\nValueError: bad value")
        self.cause = cause


@pytest.fixture
def ray_terminal(monkeypatch, tmp_path):
    """Ray's logger with a terminal handler of its own (a text buffer), as Ray's import sets
    it up; the log file in `tmp_path` (the temporary folder: no Ray runs)."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    terminal = io.StringIO()
    handler = logging.StreamHandler(terminal)
    monkeypatch.setattr(logging.getLogger("ray"), "handlers", [handler])
    yield terminal
    configure(0)


def _log_a_stop_and_a_failed_trial() -> None:
    for name, message in TUNE_NOTES:
        logging.getLogger(name).warning(message)
    error = _TaskError(ValueError("bad value\nsecond line"))
    logging.getLogger("ray.tune.execution.tune_controller").error(
        "Trial task failed for trial ear seed=1", exc_info=error
    )


def test_tunes_notes_go_to_the_log_file_and_a_failed_trial_to_the_terminal_in_one_line(
    ray_terminal, tmp_path
):
    configure(0)
    handlers = list(logging.getLogger("ray").handlers)
    with ray_log_to_file():
        _log_a_stop_and_a_failed_trial()
    failed = "Trial task failed for trial ear seed=1"
    assert ray_terminal.getvalue() == f"{failed}: ValueError: bad value\n"
    logged = (tmp_path / RAY_LOG_FILE).read_text()
    for _, message in TUNE_NOTES:
        assert message in logged
    # Whole in the file: Ray's error with its traceback's text.
    assert f"{failed}\n{_TaskError.__module__}._TaskError: ray::ImplicitFunc.train()" in logged
    assert logging.getLogger("ray").handlers == handlers  # as Ray had them, after the block


def test_verbose_shows_rays_own_output_on_the_terminal(ray_terminal, tmp_path):
    configure(1)
    with ray_log_to_file():
        _log_a_stop_and_a_failed_trial()
    for _, message in TUNE_NOTES:
        assert message in ray_terminal.getvalue()
    assert not (tmp_path / RAY_LOG_FILE).exists()


def test_a_log_file_that_cannot_be_written_prints_nothing(ray_terminal, tmp_path, capsys):
    configure(0)
    (tmp_path / RAY_LOG_FILE).mkdir()  # as a full disk, the file cannot be opened
    with ray_log_to_file():
        logging.getLogger("ray.tune.tune").warning("Stop signal received")
    assert ray_terminal.getvalue() == "" and capsys.readouterr().err == ""


def test_a_trials_error_line_is_its_own_errors_first_line():
    assert error_line(_TaskError(OSError(28, "No space left on device"))) == (
        "OSError: [Errno 28] No space left on device"
    )
    assert error_line(RuntimeError("The actor died unexpectedly.\n\tclass_name: X")) == (
        "RuntimeError: The actor died unexpectedly."
    )


def test_the_log_file_is_in_the_ray_sessions_log_folder_while_ray_runs(monkeypatch, tmp_path):
    class Node:
        def get_logs_dir_path(self):
            return str(tmp_path / "session" / "logs")

    import ray

    monkeypatch.setattr(ray._private.worker, "_global_node", Node())
    assert library_output.ray_log_path() == tmp_path / "session" / "logs" / RAY_LOG_FILE


@pytest.mark.slow
def test_a_sigterm_mid_training_prints_the_projects_lines_only(tmp_path):
    """The must-show of issue 53: at most 6 lines, no Ray WARNING, no `Tuner.restore`; Tune's
    notes are in the log file."""
    # Ray's socket paths must stay under 108 bytes: a short folder, not pytest's.
    ray_tmp, uri = Path(tempfile.mkdtemp(prefix="xr", dir="/tmp")), tracking_store(tmp_path)
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp), "MLFLOW_TRACKING_URI": uri}
    driver = start_script(tmp_path, "--preset", "smoke", *TINY, *ONE_EAR, env=env)
    try:
        wait_for(
            lambda: driver.poll() is not None or child_runs(uri), 600, "a trial to start training"
        )
        os.killpg(driver.pid, signal.SIGTERM)  # as `timeout`, systemd or Slurm sends it
        code = driver.wait(timeout=scaled_timeout(300))
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    output = (tmp_path / "driver.log").read_text()
    lines = output.strip().splitlines()
    assert code == 143, output
    assert len(lines) <= 6, output
    assert not [line for line in lines if "WARNING" in line], output
    assert "Tuner.restore" not in output and "Failed to fetch metrics" not in output
    assert re.match(r"interrupted \(SIGTERM received.*: the state is saved", lines[-2]), output
    assert lines[-1].endswith("--resume")
    logged = ray_tmp / "ray" / "session_latest" / "logs" / RAY_LOG_FILE
    assert "Stop signal received" in logged.read_text()
    shutil.rmtree(ray_tmp, ignore_errors=True)  # kept for a look when the test fails
