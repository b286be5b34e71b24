"""The release files agree: one version in pyproject.toml, CHANGELOG.md and CITATION.cff; a
licence compatible with the shipped synonym table's MIT; the three papers cited."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def project_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_changelog_and_citation_carry_the_projects_version():
    releases = re.findall(r"^## (\d+\.\d+\.\d+) ", (ROOT / "CHANGELOG.md").read_text(), re.M)
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert releases, "CHANGELOG.md names no release"
    assert releases[0] == project_version()
    assert str(citation["version"]) == project_version()


def test_the_licence_is_mit_like_the_shipped_synonym_table():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text())["license"] == "MIT"


def test_the_citation_file_cites_the_three_papers():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    firsts = {ref["authors"][0]["family-names"]: ref["year"] for ref in citation["references"]}
    assert firsts == {"Huang": 2021, "Ding": 2022, "Efimov": 2023}
