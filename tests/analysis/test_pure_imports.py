"""Only the reading layer touches MLflow: every other module of ``analysis/`` (the compute
modules: statistics, selection, verdicts, the report's sections, the renderers) imports
without loading mlflow. The compute modules are every module under ``analysis/`` but
``analysis.READING_LAYER``, so a new module is checked without editing this test."""

import subprocess
import sys
from pathlib import Path

import pytest

import analysis

REPO_ROOT = Path(__file__).resolve().parents[2]


def analysis_modules() -> list[str]:
    """The dotted name of every module under ``analysis/`` (a package by its ``__init__``)."""
    paths = sorted((REPO_ROOT / "analysis").rglob("*.py"))
    names = (".".join(path.relative_to(REPO_ROOT).with_suffix("").parts) for path in paths)
    return [name.removesuffix(".__init__") for name in names]


def compute_modules() -> list[str]:
    """Every module under ``analysis/`` outside the reading layer."""
    return [name for name in analysis_modules() if name not in analysis.READING_LAYER]


def loads_mlflow(modules: list[str]) -> bool:
    """Whether importing ``modules`` in a fresh interpreter loads mlflow."""
    code = f"import sys, {', '.join(modules)}; print('mlflow' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return completed.stdout.strip() == "True"


def test_the_reading_layer_names_modules_that_exist():
    assert set(analysis.READING_LAYER) <= set(analysis_modules())
    assert {"analysis.select", "analysis.sections.papers"} <= set(compute_modules())


@pytest.mark.slow  # a fresh interpreter (the project's rule for `slow`)
def test_no_compute_module_loads_mlflow():
    modules = compute_modules()
    if loads_mlflow(modules):  # one interpreter for all; one each only to name the culprits
        culprits = [module for module in modules if loads_mlflow([module])]
        raise AssertionError(f"importing these modules loads mlflow: {', '.join(culprits)}")
