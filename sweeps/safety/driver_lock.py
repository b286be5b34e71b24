"""One writer per sweep: the driver holds an exclusive lock on (tracking store, experiment)
for its whole life, taken before Ray starts or any run is touched. A second driver of the
same experiment on the same store (a new sweep or `--resume`) is refused at once, naming the
holder (pid, host, start time), instead of training the same trials and deleting the first
driver's checkpoints.

The lock is the OS's (`fcntl.flock` on a lock file): it goes with the process that holds
it, so a driver killed with SIGKILL leaves no stale lock. The file itself stays (removing a
lock file while another process opens it would let two drivers hold two files) and says who
holds it. Where it lives:

- a SQLite store: beside the database, `<db>.sweep-<hash>.lock` (hash of the experiment and
  the store), so every driver on the machine (any user who can write the store) meets it;
- any other store (an MLflow server, a database server): this user's
  `$XDG_CACHE_HOME/xlt-sweeps/locks` (default `~/.cache/...`, mode 0700), keyed by a hash
  of the redacted URI and the experiment. That covers drivers of one user on one machine;
  drivers on different machines (or of different users) against one server are not seen.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
from pathlib import Path

from xlt_core.errors import ConfigError
from xlt_schema.lock_file import UnsafeLockFile, open_lock_file
from xlt_schema.tracking_store import redact

LOCKS_FOLDER = ("xlt-sweeps", "locks")
# How long a refused driver waits for the holder's details: the holder writes them just
# after taking the lock, so an empty file is a driver in its first milliseconds.
HOLDER_WAIT_S = 2.0


class SweepLockError(ConfigError):
    """The sweep's lock cannot be taken: another driver holds it, or its file is not a plain
    file this user can open. A ConfigError, so the command line exits 2 with this one line."""

    def __init__(self, path: Path, message: str):
        self.field, self.value, self.allowed = "lock file", str(path), message
        ValueError.__init__(self, message)


def lock_path(tracking_uri: str, experiment: str) -> Path:
    """Where the lock of `experiment` on `tracking_uri` lives (see the module's docstring)."""
    if tracking_uri.startswith("sqlite:///"):
        # Keyed by the file itself: two spellings of its path are one store.
        database = Path(tracking_uri.removeprefix("sqlite:///").split("?", 1)[0]).resolve()
        return database.parent / f"{database.name}.sweep-{_digest(database, experiment)}.lock"
    return _user_locks_folder() / f"sweep-{_digest(redact(tracking_uri), experiment)}.lock"


def _digest(store, experiment: str) -> str:
    return hashlib.sha256(f"{store}\n{experiment}".encode()).hexdigest()[:16]


@contextlib.contextmanager
def hold(tracking_uri: str, experiment: str):
    """Hold the sweep's lock while the block runs (yields the lock file's path); raises
    SweepLockError at once when another driver holds it."""
    path = lock_path(tracking_uri, experiment)
    descriptor = _open_lock_file(path)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(path)
            raise SweepLockError(
                path,
                f"experiment {experiment} at {redact(tracking_uri)} is being run by another "
                f"driver ({holder}); wait for it to end, or stop it first; its lock: {path}",
            ) from None
        _write_holder(descriptor)
        try:
            yield path
        finally:
            os.ftruncate(descriptor, 0)  # released: no holder to name any more
    finally:
        os.close(descriptor)  # releases the lock (as the process's death does)


def _open_lock_file(path: Path) -> int:
    """The lock file's descriptor: a symlink planted there is not followed, a FIFO or other
    non-file refused (`xlt_schema.lock_file`), and a hard link to another file refused too
    (writing the holder's details would overwrite that file)."""
    try:
        lock = open_lock_file(path)
    except UnsafeLockFile as error:
        raise SweepLockError(path, f"the sweep's {error}") from None
    except OSError as error:
        raise SweepLockError(
            path, f"cannot open the sweep's lock file {path}: {error.strerror}"
        ) from None
    descriptor = os.dup(lock.fileno())  # the text file object is not used beyond this
    lock.close()
    if os.fstat(descriptor).st_nlink != 1:
        os.close(descriptor)
        raise SweepLockError(
            path, f"the sweep's lock file {path} has other names (a hard link); remove it"
        )
    return descriptor


def _write_holder(descriptor: int) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, json.dumps(holder).encode(), 0)


def _read_holder(path: Path) -> str:
    """`pid 123 on host, started ...` as the holder wrote it (waiting briefly for a holder
    that has just taken the lock), else what is known."""
    deadline = time.monotonic() + HOLDER_WAIT_S
    reader = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        while True:
            text = os.pread(reader, 4096, 0)
            if text or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    finally:
        os.close(reader)
    try:
        holder = json.loads(text)
        return f"pid {holder['pid']} on {holder['host']}, started {holder['started']}"
    except (ValueError, TypeError, KeyError):
        return "a driver that has not written its pid yet"


def _user_locks_folder() -> Path:
    """This user's private folder of lock files (made 0700)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(cache, *LOCKS_FOLDER)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    except OSError as error:
        raise SweepLockError(
            folder, f"cannot make the folder of sweep lock files {folder}: {error.strerror}"
        ) from None
    return folder
