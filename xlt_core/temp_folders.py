"""Private temporary folders that a process killed abnormally does not leave behind for
good. `tempfile.TemporaryDirectory` deletes its folder when the block ends, or from its
finaliser; a trial worker SIGKILLed (by Ray, the kernel's out-of-memory killer, a lost
node) runs neither, and its checkpoint copies stayed in the temporary directory (15 MB each
for the tiny model, ~2 GB at mBERT size). Each folder here is named after its owner's pid
(`xlt-ckpt-<pid>-<random>`), and making one removes the folders of the same kind, this
user's, whose owner no longer runs."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def owned_temporary_directory(prefix: str) -> tempfile.TemporaryDirectory:
    """A `TemporaryDirectory` named `<prefix><pid>-...`, made after removing the ones of
    `prefix` whose owning process has died."""
    remove_orphans(prefix)
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-")


def remove_orphans(prefix: str) -> list[Path]:
    """Remove this user's `<prefix><pid>-*` folders in the temporary directory whose process
    `pid` is not running; the folders removed."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        owner = folder.name[len(prefix) :].split("-", 1)[0]
        if not owner.isdigit() or _running(int(owner)):
            continue
        try:
            status = folder.lstat()
        except OSError:
            continue  # removed meanwhile
        if folder.is_symlink() or not folder.is_dir() or status.st_uid != os.getuid():
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
