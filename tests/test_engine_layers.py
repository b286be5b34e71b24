"""The sweep engine's folders are layers that import downwards only (docs/design.md,
"Layout"): the frozen spec and the trial contract (`sweeps/spec`) at the bottom; `planning`
pure on the spec (plans, checks, costs: no Ray, no MLflow); `records` and `safety` on the
spec alone; `running` on top of them all. The scripts, `cli.py`, `cluster.py`, `families/`
and `drills/` stand above the folders, which import none of them.

Read with `ast` (tests/test_code_structure.py's import reader, every import statement
wherever it stands), so a function-level import counts as much as one at the top. The checker
is tested on a small tree with a planted upward import."""

from __future__ import annotations

import ast
from pathlib import Path

from test_code_structure import find_modules, imports, project_root, write_tree

# Folder -> the folders its modules may import (each its own). A `sweeps` module in none of
# these folders is above them all.
ENGINE_LAYERS = {
    "sweeps.spec": ("sweeps.spec",),
    "sweeps.planning": ("sweeps.spec", "sweeps.planning"),
    "sweeps.records": ("sweeps.spec", "sweeps.records"),
    "sweeps.safety": ("sweeps.spec", "sweeps.safety"),
    "sweeps.running": (
        "sweeps.spec",
        "sweeps.planning",
        "sweeps.records",
        "sweeps.safety",
        "sweeps.running",
    ),
}
# What planning may not import, wherever the import stands: a dry run, a check or a cost
# starts no Ray and opens no tracking store.
NOT_IN_PLANNING = ("ray", "mlflow", "optuna")
# Packages below the engine: they import nothing of it.
BELOW_THE_ENGINE = ("xlt_core", "xlt_schema")


def folder_of(module: str, layers) -> str | None:
    return next((f for f in layers if module == f or module.startswith(f + ".")), None)


def upward_imports(modules: dict[str, Path], layers: dict, top: str) -> list[str]:
    """`module -> imported` for each import of a `top` module (the engine's package) by a
    layered module that its folder may not import."""
    found = []
    for name, path in modules.items():
        folder = folder_of(name, layers)
        if folder is None:
            continue
        for target, _ in imports(name, path, modules):
            if target.split(".")[0] != top:
                continue
            if folder_of(target, layers) not in layers[folder]:
                found.append(f"{name} -> {target}")
    return sorted(set(found))


def library_imports(modules: dict[str, Path], folder: str, libraries: tuple) -> list[str]:
    """`module -> library` for each import of one of `libraries` by a module of `folder`."""
    found = []
    for name, path in modules.items():
        if folder_of(name, (folder,)) is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            found += [f"{name} -> {n}" for n in names if n.split(".")[0] in libraries]
    return sorted(found)


def engine_imports_below(modules: dict[str, Path]) -> list[str]:
    return sorted(
        f"{name} -> {target}"
        for name, path in modules.items()
        if name.split(".")[0] in BELOW_THE_ENGINE
        for target, _ in imports(name, path, modules)
        if target.split(".")[0] not in BELOW_THE_ENGINE
    )


def test_every_engine_folder_imports_downwards_only():
    modules = find_modules(project_root())
    assert all(folder in modules for folder in ENGINE_LAYERS)
    assert upward_imports(modules, ENGINE_LAYERS, "sweeps") == []


def test_planning_imports_no_ray_mlflow_or_optuna():
    modules = find_modules(project_root())
    assert library_imports(modules, "sweeps.planning", NOT_IN_PLANNING) == []


def test_the_packages_below_the_engine_import_nothing_above_them():
    assert engine_imports_below(find_modules(project_root())) == []


TREE = {
    "pkg/__init__.py": "",
    "pkg/top.py": "from pkg.high import run\nfrom pkg.low.spec import SPEC\n",
    "pkg/low/__init__.py": "",
    "pkg/low/spec.py": "SPEC = 1\n",
    "pkg/high/__init__.py": "from pkg.low.spec import SPEC\n",
    "pkg/high/run.py": """\
        from pkg.low import spec


        def run():
            from pkg.high import helper
            return helper, spec
        """,
    "pkg/high/helper.py": "",
}
LAYERS = {"pkg.low": ("pkg.low",), "pkg.high": ("pkg.low", "pkg.high")}


def test_a_tree_that_imports_downwards_passes(tmp_path):
    assert upward_imports(write_tree(tmp_path, TREE), LAYERS, "pkg") == []


def test_a_planted_upward_import_is_found(tmp_path):
    planted = TREE | {
        "pkg/low/spec.py": "SPEC = 1\n\n\ndef plan():\n    from pkg.high import run\n"
    }
    found = upward_imports(write_tree(tmp_path, planted), LAYERS, "pkg")
    assert found == ["pkg.low.spec -> pkg.high.run"]


def test_an_import_of_the_top_from_a_folder_is_found(tmp_path):
    planted = TREE | {"pkg/high/helper.py": "import pkg.top\n"}
    assert upward_imports(write_tree(tmp_path, planted), LAYERS, "pkg") == [
        "pkg.high.helper -> pkg.top"
    ]


def test_a_planted_library_import_in_a_pure_folder_is_found(tmp_path):
    planted = TREE | {"pkg/low/spec.py": "def plan():\n    from ray import tune\n"}
    modules = write_tree(tmp_path, planted)
    assert library_imports(modules, "pkg.low", ("ray",)) == ["pkg.low.spec -> ray"]
    assert library_imports(modules, "pkg.high", ("ray",)) == []
