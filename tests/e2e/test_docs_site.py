"""The documentation site builds with mkdocs in strict mode: a broken link, a missing anchor
or a page missing from `nav` fails the build, and so this test."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled_timeout
from sweep_helpers import REPO

MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MKDOCS, "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),
    )


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    built = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "usage" / "index.html").is_file()


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / "usage.md", "a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    built = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "no-such-page.md" in built.stderr
