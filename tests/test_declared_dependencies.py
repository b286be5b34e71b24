"""Every third-party package the project's code imports (function-level imports included) is
declared in pyproject.toml, in the base dependencies or an extra; analysis/ and xlt_schema/
import only the base, so that `pip install .` (no torch, no Ray) runs the reports; and
constraints.txt pins every declared distribution at a version inside its declared range."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PROJECT = "xlt-sweeps"
FIRST_PARTY = ("xlt_core", "sweeps", "analysis", "xlt_schema", "benchmarks")
# An analysis-only install (`pip install .`) holds these packages' code and the base only.
BASE_ONLY = ("analysis", "xlt_schema")


def imports_of(package: str) -> dict[str, list[str]]:
    """Top-level names of the absolute imports in `package`'s modules, each with where
    (`path:line`) it is imported; relative imports are the package's own."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            for name in names:
                found.setdefault(name.split(".")[0], []).append(where)
    return found


def third_party(imports: dict[str, list[str]]) -> dict[str, list[str]]:
    return {
        name: where
        for name, where in imports.items()
        if name not in sys.stdlib_module_names and name not in FIRST_PARTY
    }


def requirements() -> dict[str, list[Requirement]]:
    """pyproject.toml's requirements: "base" and each extra, the project's own left out."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = {"base": project["dependencies"], **project["optional-dependencies"]}
    return {
        group: [r for r in map(Requirement, listed) if canonicalize_name(r.name) != PROJECT]
        for group, listed in groups.items()
    }


def declared(groups: list[str] | None = None) -> set[str]:
    """The canonical names of the distributions declared in `groups` (default: all)."""
    return {
        canonicalize_name(requirement.name)
        for group, listed in requirements().items()
        if groups is None or group in groups
        for requirement in listed
    }


def undeclared(packages: tuple[str, ...], allowed: set[str]) -> list[str]:
    """`path:line imports NAME (...)` for each third-party import of `packages` that no
    distribution in `allowed` provides."""
    providers = packages_distributions()
    problems = []
    for package in packages:
        for name, where in sorted(third_party(imports_of(package)).items()):
            distributions = {canonicalize_name(d) for d in providers.get(name, [])}
            if not distributions & allowed:
                found = ", ".join(sorted(distributions)) or "no installed distribution"
                problems.append(f"{where[0]} imports {name} ({found})")
    return problems


def test_every_imported_package_is_declared():
    problems = undeclared(FIRST_PARTY, declared())
    assert not problems, "declared neither in dependencies nor an extra: " + "; ".join(problems)


def test_analysis_imports_only_the_base():
    problems = undeclared(BASE_ONLY, declared(["base"]))
    assert not problems, "not in the base dependencies: " + "; ".join(problems)
    for package in BASE_ONLY:
        for name, where in imports_of(package).items():
            # sweeps/, xlt_core/ and benchmarks/ need torch or Ray (the `sweeps` extra).
            assert name not in set(FIRST_PARTY) - set(BASE_ONLY), f"{where[0]} imports {name}"


def test_dev_extra_installs_every_other_extra():
    """`make install` installs `.[dev]`: every extra, so the lock covers them all."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    own = [
        Requirement(r) for r in extras["dev"] if canonicalize_name(Requirement(r).name) == PROJECT
    ]
    assert len(own) == 1 and own[0].extras == set(extras) - {"dev"}


def pins() -> dict[str, str]:
    """constraints.txt as {canonical name: exact version}; any other line fails the test."""
    pinned = {}
    for number, line in enumerate((REPO / "constraints.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, separator, version = line.partition("==")
        assert separator and version.strip(), f"constraints.txt:{number}: not NAME==VERSION"
        assert "+" not in version, f"constraints.txt:{number}: a local version label ({line})"
        pinned[canonicalize_name(name.strip())] = version.strip()
    return pinned


def test_constraints_pin_every_declared_distribution_inside_its_range():
    pinned = pins()
    for group, listed in requirements().items():
        for requirement in listed:
            name = canonicalize_name(requirement.name)
            assert name in pinned, f"constraints.txt does not pin {name} ({group})"
            assert requirement.specifier.contains(pinned[name], prereleases=True), (
                f"constraints.txt pins {name}=={pinned[name]} outside {requirement} ({group})"
            )


def test_every_declared_range_has_a_floor_and_a_ceiling():
    for group, listed in requirements().items():
        for requirement in listed:
            operators = {spec.operator for spec in requirement.specifier}
            bounded = bool(operators & {">=", ">"}) and bool(operators & {"<", "<="})
            wildcard = any(
                s.operator == "==" and s.version.endswith(".*") for s in requirement.specifier
            )
            assert bounded or wildcard, f"{requirement} ({group}): no floor and ceiling"


def test_missing_eflomal_names_the_adjust_extra(monkeypatch):
    from xlt_core.data.word_alignment import eflomal_links

    monkeypatch.setitem(sys.modules, "eflomal", None)  # `import eflomal` fails as if absent
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'xlt-sweeps\[adjust\]'"):
        eflomal_links([["a"]], [["b"]])


def test_every_install_command_uses_the_lock():
    """`make install` and the cluster's setup install the versions constraints.txt pins."""
    makefile = (REPO / "Makefile").read_text().splitlines()
    cluster = yaml.safe_load((REPO / "ray_cluster.yaml").read_text())
    commands = [line.strip() for line in makefile if "$(PY) -m pip install" in line]
    commands += [
        command
        for key in ("setup_commands", "head_setup_commands", "worker_setup_commands")
        for command in cluster.get(key, [])
        if "pip install" in command
    ]
    assert len(commands) >= 5
    for command in commands:
        assert re.search(r"-c (\S*/)?(constraints\.txt|\$\(CONSTRAINTS\))", command), command
