"""A trial's private temporary folders (checkpoint copies, `xlt-ckpt-*`, `xlt-checkpoints-*`)
left by a process killed abnormally are removed by the next one made (issue 41): a SIGKILLed
owner runs no finaliser."""

import os
import subprocess
import sys
import tempfile

import pytest
from conftest import scaled_timeout

from xlt_core.reporting import ListReporter
from xlt_core.temp_folders import owned_temporary_directory, remove_orphans

MAKE_AND_DIE = (
    "import os, sys\n"
    "from xlt_core.temp_folders import owned_temporary_directory\n"
    "folder = owned_temporary_directory(sys.argv[1])\n"
    "open(os.path.join(folder.name, 'checkpoint.pt'), 'wb').write(bytes(1024))\n"
    "print(folder.name, flush=True)\n"
    "os.kill(os.getpid(), 9)\n"
)


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The temporary directory, as the trials see it, in this test's own folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["xlt-ckpt-", "xlt-checkpoints-"])
def test_the_folder_of_a_killed_process_goes_with_the_next_one_made(prefix, temp_dir):
    killed = subprocess.run(
        [sys.executable, "-c", MAKE_AND_DIE, prefix],
        env={**os.environ, "TMPDIR": str(temp_dir)},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),
    )
    assert killed.returncode == -9, killed.stderr
    left = temp_dir / os.path.basename(killed.stdout.strip())
    assert left.is_dir() and left.name.startswith(prefix)  # SIGKILL: no finaliser ran
    if prefix == "xlt-checkpoints-":
        with ListReporter():  # what python -m xlt_core makes for each trial
            assert not left.exists()
    else:
        with owned_temporary_directory(prefix) as mine:  # a trial's next checkpoint
            assert not left.exists() and os.path.isdir(mine)
    assert list(temp_dir.iterdir()) == []  # and its own folder is gone once done


def test_folders_of_running_processes_and_other_names_are_kept(temp_dir):
    live = temp_dir / f"xlt-ckpt-{os.getpid()}-abc"
    other = temp_dir / "xlt-ckpt-notapid-abc"
    unrelated = temp_dir / "xlt-ckpts-1-abc"  # another prefix
    for folder in (live, other, unrelated):
        folder.mkdir()
    assert remove_orphans("xlt-ckpt-") == []
    assert live.is_dir() and other.is_dir() and unrelated.is_dir()
