"""The store-creation lock (`mlflow.db.lock`, sweeps/records/tracking.prepare_store) never follows a
planted symlink: the sweep is refused in one line and the link's target keeps its bytes."""

import os

import pytest

from sweeps.records.tracking import prepare_store
from xlt_core.errors import ConfigError
from xlt_schema.lock_file import UnsafeLockFile, open_lock_file


def test_a_planted_lock_symlink_is_refused_and_its_target_kept(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("the user's data\n")
    store = tmp_path / "store" / "mlflow.db"
    store.parent.mkdir()
    os.symlink(target, f"{store}.lock")
    with pytest.raises(ConfigError) as refused:
        prepare_store(f"sqlite:///{store}")
    message = str(refused.value)
    assert "\n" not in message
    assert f"{store}.lock is a symlink (to {target})" in message
    assert message.startswith("invalid setting --tracking-uri=")
    assert target.read_text() == "the user's data\n"
    assert not store.exists()  # refused before MLflow made the store


def test_a_lock_file_is_created_private_and_an_existing_one_not_emptied(tmp_path):
    path = tmp_path / "a.lock"
    with open_lock_file(path):
        pass
    assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600
    path.write_text("pid 12\n")
    with open_lock_file(path):
        pass
    assert path.read_text() == "pid 12\n"


def test_a_fifo_or_a_folder_at_the_lock_path_is_refused_without_blocking(tmp_path):
    fifo, folder = tmp_path / "f.lock", tmp_path / "d.lock"
    os.mkfifo(fifo)
    folder.mkdir()
    with pytest.raises(UnsafeLockFile, match="is not a plain file"):
        open_lock_file(fifo)
    with pytest.raises(OSError):  # EISDIR: a folder cannot be opened for writing
        open_lock_file(folder)
