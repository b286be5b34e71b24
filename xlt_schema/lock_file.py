"""Lock files that a planted link cannot turn against another file.

`open("x.lock", "w")` follows a symlink at that path and empties its target: anyone who can
write the store's folder could make a sweep wipe a file of the user's. A lock file here is
opened without following a link (`O_NOFOLLOW`) and without truncating, and must be a plain
file. Standard library only, like the rest of `xlt_schema`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO


class UnsafeLockFile(OSError):
    """The lock path is a symlink or not a plain file; the message names it."""


def open_lock_file(path: str | Path) -> IO[str]:
    """`path` opened for writing (created 0600 if missing, never truncated) to hold a
    `fcntl.flock`; UnsafeLockFile when it is a symlink or not a plain file."""
    # O_NONBLOCK: a FIFO planted there fails at once (ENXIO) instead of blocking the open.
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        descriptor = os.open(path, flags, 0o600)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeLockFile(
                f"lock file {path} is a symlink (to {os.readlink(path)}); remove it: a lock "
                "file must be a plain file"
            ) from None
        if error.errno == errno.ENXIO:
            raise UnsafeLockFile(f"lock file {path} is not a plain file; remove it") from None
        raise
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise UnsafeLockFile(f"lock file {path} is not a plain file; remove it")
    return os.fdopen(descriptor, "w")
