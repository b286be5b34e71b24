"""The disk a sweep writes to: refused before Ray starts when it cannot be written or has
less free space than a trial needs (`check_storage`), and a full disk met later turned into
one line (`StorageFull`) instead of thousands of lines of tracebacks.

What a trial needs (`trial_bytes`), kept simple: its checkpoint holds the model's fp32
weights, AdamW's two moments and the best weights so far (16 bytes per parameter), and Tune
writes the next checkpoint before it deletes the last (twice that); plus RESERVE for Tune's
state, the trial's result files and MLflow's files. A model whose shape is unknown (a hub
model that is not in `sweeps.spec.model_shapes.MODEL_SHAPES`) counts the reserve only.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import tempfile
from pathlib import Path

from sweeps.spec.model_shapes import model_shape
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError

CHECKPOINT_BYTES_PER_PARAM = 2 * 16
RESERVE_BYTES = 16 * 2**20
# How a full disk reads where the OSError itself is gone: SQLite's message (through
# SQLAlchemy and MLflow) and an OSError printed into a Ray or Tune error's text.
DISK_FULL_TEXTS = ("No space left on device", "database or disk is full", "[Errno 28]")
# A folder with less free space than this after an error: the disk filled up.
FULL_BELOW_BYTES = 2**20


class StorageFull(Exception):
    """The disk filled up during the sweep (errno ENOSPC): the message is the one line the
    command prints; the sweep's state is resumable once space is freed."""


def trial_bytes(trials: list[TrialConfig]) -> int:
    """The free bytes one trial of `trials` needs at most (the module docstring)."""
    params = [shape.params for shape in map(model_shape, trials) if shape is not None]
    return CHECKPOINT_BYTES_PER_PARAM * max(params, default=0) + RESERVE_BYTES


def check_storage(trials: list[TrialConfig], storage_path: str, working_dir: Path) -> None:
    """Refuse (ConfigError, one line naming the folder) a storage path or working folder
    that cannot be written or has less free space than `trial_bytes`. A remote storage path
    (s3://...) is left to Ray."""
    needed = trial_bytes(trials)
    places = [("working folder", working_dir)]
    if "://" not in storage_path:
        places.append(("--storage-path", Path(storage_path)))
    for what, folder in places:
        _check_writable(what, folder)
        free = shutil.disk_usage(folder).free
        if free < needed:
            raise ConfigError(
                what,
                str(folder.resolve()),
                f"a folder with at least {needed:,} bytes free (a trial's checkpoints and "
                f"files); it has {free:,}: free some space or choose another folder",
            )


def _check_writable(what: str, folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise ConfigError(
            what,
            str(folder.absolute()),
            f"a folder this process can write ({error.strerror or error})",
        ) from None


def is_disk_full(error: BaseException | None) -> bool:
    """Whether `error`, or an error it was raised from or during, is a full disk."""
    return disk_full_text(error) is not None


def disk_full_text(error: BaseException | None) -> str | None:
    """The line that says the disk is full (`[Errno 28] No space left on device: 'path'`)
    in `error` or an error it was raised from or during (a Ray error's text holds the
    trial's whole traceback); None when none says so."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            return str(error)
        lines = [
            line for line in str(error).splitlines() if any(t in line for t in DISK_FULL_TEXTS)
        ]
        if lines:
            return lines[-1].strip()
        error = error.__cause__ or error.__context__
    return None


def full_disk_error(error: BaseException, folders: list[Path]) -> OSError | None:
    """`error` as the full disk it stands for, or None: an ENOSPC error when `error` says the
    disk is full, or when one of `folders` (where the failed code wrote) has less than
    FULL_BELOW_BYTES free. The second, because some writers report a full disk without its
    errno: torch.save raises `RuntimeError: [enforce fail at inline_container.cc:672] .
    unexpected pos 64 vs 0` (met on a filesystem filled mid-sweep)."""
    if is_disk_full(error):
        return error if isinstance(error, OSError) else _enospc(disk_full_text(error))
    for folder in folders:
        try:
            if shutil.disk_usage(folder).free < FULL_BELOW_BYTES:
                return _enospc(str(folder))
        except OSError:
            continue
    return None


def _enospc(where: str | None) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), where)


class QuietDiskFull(logging.Filter):
    """A record whose error is a full disk logged in one line (its message's first and the
    full disk's), without its traceback: each failed trial's was some 60 lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = disk_full_text(record.exc_info[1]) if record.exc_info else None
        if text is not None:
            first = record.getMessage().strip().splitlines()[0].rstrip(": ")
            record.msg, record.args = f"{first}: {text}", ()
            record.exc_info, record.exc_text = None, None
        return True


# The loggers that print a full disk's traceback: Tune's for a failed trial and for its
# state's copy to the storage path, MLflow's for a SQLite store's failed write.
DISK_FULL_LOGGERS = (
    "ray.tune.execution.tune_controller",
    "ray.tune.execution.experiment_state",
    "mlflow.store.db.utils",
)
QUIET_DISK_FULL = QuietDiskFull()


def log_disk_full_quietly() -> None:
    """From now on (a trial worker's life), DISK_FULL_LOGGERS log a full disk in one line."""
    for name in DISK_FULL_LOGGERS:
        logging.getLogger(name).addFilter(QUIET_DISK_FULL)  # once: a filter is added once


@contextlib.contextmanager
def quiet_disk_full():
    """While the block runs, DISK_FULL_LOGGERS log a full disk in one line (QuietDiskFull)."""
    log_disk_full_quietly()
    try:
        yield
    finally:
        for name in DISK_FULL_LOGGERS:
            logging.getLogger(name).removeFilter(QUIET_DISK_FULL)
