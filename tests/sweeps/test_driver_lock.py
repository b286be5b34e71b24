"""One writer per sweep (`sweeps/safety/driver_lock.py`): a second driver of the same experiment on
the same store is refused naming the holder; a killed holder leaves no stale lock; a link
planted at the lock's path is not followed. End to end (slow): a second driver during a
running smoke sweep is refused with exit 2, and the first finishes."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import scaled_timeout
from sweep_helpers import (
    ONE_EAR,
    REPO,
    SCRIPT,
    TINY,
    child_runs,
    parent_runs,
    sqlite_uri,
    start_script,
    wait_for,
)

from sweeps.safety.driver_lock import SweepLockError, hold, lock_path
from xlt_schema import COMPLETE_TAG, REPORTED_TAG


def _holder_process(uri: str, experiment: str) -> subprocess.Popen:
    """Another process that takes the lock, says so on stdout, and holds it until killed."""
    code = textwrap.dedent(
        f"""
        import time
        from sweeps.safety.driver_lock import hold
        with hold({uri!r}, {experiment!r}):
            print("held", flush=True)
            time.sleep(3600)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_second_holder_is_refused_naming_the_holders_pid(tmp_path):
    uri = sqlite_uri(tmp_path)
    holder = _holder_process(uri, "ear_xnli")
    try:
        with pytest.raises(SweepLockError) as refused, hold(uri, "ear_xnli"):
            pass
    finally:
        holder.kill()
        holder.wait()
    message = str(refused.value)
    assert f"pid {holder.pid} on " in message and "started " in message
    assert "experiment ear_xnli" in message and str(tmp_path / "mlflow.db") in message
    assert "\n" not in message


def test_one_process_cannot_hold_a_sweep_twice_and_other_experiments_are_free(tmp_path):
    uri = sqlite_uri(tmp_path)
    with hold(uri, "ear_xnli"):
        with pytest.raises(SweepLockError, match=f"pid {os.getpid()} "), hold(uri, "ear_xnli"):
            pass
        with hold(uri, "ear_pawsx"):  # another experiment on the same store
            pass
        (tmp_path / "link").symlink_to(tmp_path)  # the same file under another path
        with pytest.raises(SweepLockError), hold(sqlite_uri(tmp_path / "link"), "ear_xnli"):
            pass
    with hold(uri, "ear_xnli"):  # released when the block ended
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    uri = sqlite_uri(tmp_path)
    holder = _holder_process(uri, "ear_xnli")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=scaled_timeout(30))
    with hold(uri, "ear_xnli") as path:
        assert str(os.getpid()) in path.read_text()
    assert path.read_text() == ""  # released: no holder named


def test_a_symbolic_link_at_the_lock_path_is_not_followed(tmp_path):
    uri = sqlite_uri(tmp_path)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    lock_path(uri, "ear_xnli").symlink_to(victim)
    with pytest.raises(SweepLockError, match="is a symlink"), hold(uri, "ear_xnli"):
        pass
    assert victim.read_text() == "keep me"


def test_a_hard_link_at_the_lock_path_is_refused(tmp_path):
    uri = sqlite_uri(tmp_path)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    os.link(victim, lock_path(uri, "ear_xnli"))
    with pytest.raises(SweepLockError, match="a hard link"), hold(uri, "ear_xnli"):
        pass
    assert victim.read_text() == "keep me"


def test_a_server_stores_locks_live_in_a_private_folder_without_the_password(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    uri = "http://alice:s3cret@tracking.example:5000"
    path = lock_path(uri, "ear_xnli")
    assert path.parent == tmp_path / "cache" / "xlt-sweeps" / "locks"
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    assert "s3cret" not in str(path)
    assert lock_path(uri, "ear_pawsx") != path
    with hold(uri, "ear_xnli"):
        with pytest.raises(SweepLockError) as refused, hold(uri, "ear_xnli"):
            pass
    assert "s3cret" not in str(refused.value) and "http://***@tracking.example" in str(
        refused.value
    )


@pytest.mark.slow
def test_a_second_driver_during_a_running_sweep_is_refused_and_the_first_finishes(tmp_path):
    """Issue 22 item 4: `S --resume` and `S` while S runs exit 2 at once, naming the running
    driver's pid; S finishes normally with one FINISHED run per trial."""
    uri = sqlite_uri(tmp_path)
    # Several evaluations per trial: the sweep is still running when the pause below comes.
    longer = ["--set", "max_train_examples=600", "--set", "evals_per_epoch=3"]
    args = ["--tracking-uri", uri, "--set", "seeds=0", *TINY, *ONE_EAR, *longer]
    first = start_script(tmp_path, *args)
    try:
        wait_for(lambda: child_runs(uri), 300, "the first driver's first trial run")
        # Paused (its lock held, as a stopped process keeps its files) while the second
        # drivers start: on a loaded machine their start-up outlasted the whole sweep, and
        # the second took the lock the finished first had released.
        os.kill(first.pid, signal.SIGSTOP)
        seconds = [
            subprocess.Popen(
                [sys.executable, str(SCRIPT), *args, *extra],
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for extra in (["--resume"], [])
        ]
        for second in seconds:
            out, err = second.communicate(timeout=scaled_timeout(120))
            assert second.returncode == 2, out[-2000:] + err[-2000:]
            lines = err.strip().splitlines()
            assert len(lines) == 1 and f"(pid {first.pid} on " in lines[0], err
            assert "experiment ear_xnli" in lines[0]
        assert first.poll() is None, "the first driver ended before the second ones were refused"
        os.kill(first.pid, signal.SIGCONT)
        assert first.wait(timeout=scaled_timeout(600)) == 0, (tmp_path / "driver.log").read_text()[
            -3000:
        ]
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    (parent,) = parent_runs(uri)
    assert parent.info.status == "FINISHED"
    assert parent.data.tags.get(COMPLETE_TAG) == "true" == parent.data.tags.get(REPORTED_TAG)
    runs = child_runs(uri)
    assert len(runs) == 2 and {run.info.status for run in runs} == {"FINISHED"}
