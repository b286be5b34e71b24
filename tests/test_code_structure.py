"""The code's structure over the project's packages (`PACKAGES`): the import graph has no
circle, no module imports another module's private (`_name`) name, no function is longer
than MAX_FUNCTION_LINES lines (declarative tables are module-level data, not functions), no
class longer than MAX_CLASS_LINES lines, no analysis module outside its reading layer
(`ANALYSIS_READING_LAYER`) imports mlflow, and no experiment script imports another (what
scripts share lives in `sweeps/families/`).

Read from the source with `ast`, importing nothing of the project, so it runs without
torch. Every `import` / `from ... import` statement counts, wherever it stands (a
function-level import still makes a circle, only a later one). The checker itself is tested
on small module trees under tmp_path, so that a check that could never fail would show."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

PACKAGES = ("xlt_core", "xlt_schema", "sweeps", "analysis", "benchmarks")
MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 150


def project_root() -> Path:
    """The directory holding pyproject.toml, above this test wherever it lies in tests/."""
    return next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())


def declared_reading_layer() -> tuple[str, ...]:
    """`READING_LAYER` of analysis/__init__.py, read with `ast`: the analysis modules that read
    or write the tracking store; the others (selection, sanity, power, statistics, the
    report's sections ...) compute on frames and arrays, without a tracking server."""
    tree = ast.parse((project_root() / "analysis" / "__init__.py").read_text(encoding="utf-8"))
    return next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "READING_LAYER"
    )


ANALYSIS_READING_LAYER = declared_reading_layer()


def find_modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages under `root`."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imported(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name of a `from` statement in module `name` (relative ones
    resolved against its package)."""
    if not node.level:
        return node.module
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str | None]]:
    """(project module, name imported from it or None) of every import statement of a
    module; `from package import submodule` imports the submodule."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                prefixes = (".".join(parts[:n]) for n in range(len(parts), 0, -1))
                found += [(m, None) for m in prefixes if m in modules][:1]
        elif isinstance(node, ast.ImportFrom):
            source = _imported(name, path, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.append((f"{source}.{alias.name}", None))
                elif source in modules:
                    found.append((source, alias.name))
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (itself left out)."""
    return {
        name: {target for target, _ in imports(name, path, modules) if target != name}
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def private_imports(modules: dict[str, Path]) -> list[str]:
    """`importer: from module import _name` for each private name taken from another module."""
    return [
        f"{name}: from {source} import {imported}"
        for name, path in modules.items()
        for source, imported in imports(name, path, modules)
        if imported
        and imported.startswith("_")
        and not imported.startswith("__")
        and source != name
    ]


def long_definitions(modules: dict[str, Path], kinds: tuple, limit: int) -> list[str]:
    """`path:line name (n lines)` of each definition of `kinds` (ast node types) longer than
    `limit` lines, nested ones included."""
    found = []
    for path in modules.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, kinds):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{path}:{node.lineno} {node.name} ({lines} lines)")
    return found


def long_functions(modules: dict[str, Path], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Each function or method longer than `limit` lines (`long_definitions`)."""
    return long_definitions(modules, (ast.FunctionDef, ast.AsyncFunctionDef), limit)


def long_classes(modules: dict[str, Path], limit: int = MAX_CLASS_LINES) -> list[str]:
    """Each class longer than `limit` lines (`long_definitions`)."""
    return long_definitions(modules, (ast.ClassDef,), limit)


def mlflow_imports(
    modules: dict[str, Path], package: str = "analysis", allowed=ANALYSIS_READING_LAYER
) -> list[str]:
    """`module: mlflow.x` for each import of mlflow (or a submodule) by a module of `package`
    outside `allowed`, wherever the statement stands (a type hint's import counts too)."""
    found = []
    for name, path in modules.items():
        if name.split(".")[0] != package or name in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module]
            else:
                continue
            found += [
                f"{name}: {target}"
                for target in targets
                if target == "mlflow" or target.startswith("mlflow.")
            ]
    return found


def is_experiment_script(path: Path) -> bool:
    """An experiment script runs itself: its module ends in `if __name__ == "__main__":` that
    calls `main(sys.modules[__name__])` (sweeps/cli.py's entry point)."""
    return any(
        isinstance(node, ast.If)
        and ast.unparse(node.test) == "__name__ == '__main__'"
        and "main(sys.modules[__name__])" in ast.unparse(node)
        for node in ast.parse(path.read_text(encoding="utf-8")).body
    )


def script_imports(modules: dict[str, Path]) -> list[str]:
    """`script: other_script` for each experiment script that imports another, wherever the
    statement stands: a script reads alone, and changing one changes no other sweep."""
    scripts = {name for name, path in modules.items() if is_experiment_script(path)}
    return [
        f"{name}: {target}"
        for name in sorted(scripts)
        for target, _ in imports(name, modules[name], modules)
        if target in scripts and target != name
    ]


# --- the project ----------------------------------------------------------------------


def test_the_project_modules_are_found():
    modules = find_modules(project_root())
    assert {"xlt_core.config", "sweeps.cli", "analysis.report", "xlt_schema"} <= set(modules)


def test_the_import_graph_has_no_circle():
    found = circles(import_graph(find_modules(project_root())))
    assert not found, "import circles (each a set of modules that import one another):\n" + (
        "\n".join(" <-> ".join(circle) for circle in found)
    )


def test_no_module_imports_another_modules_private_name():
    found = private_imports(find_modules(project_root()))
    assert not found, "imports of another module's private name:\n" + "\n".join(found)


def test_only_the_analysis_reading_layer_imports_mlflow():
    modules = find_modules(project_root())
    assert set(ANALYSIS_READING_LAYER) <= set(modules), "a reading-layer module was renamed"
    found = mlflow_imports(modules)
    assert not found, (
        "analysis modules outside ANALYSIS_READING_LAYER that import mlflow (read the store in "
        "a reading-layer module and pass frames and arrays):\n" + "\n".join(found)
    )


def test_no_experiment_script_imports_another():
    modules = find_modules(project_root())
    scripts = {name for name, path in modules.items() if is_experiment_script(path)}
    assert {"sweeps.ear_xnli", "sweeps.robust_pawsx", "sweeps.adjust_xsr"} <= scripts
    assert "sweeps.cli" not in scripts
    found = script_imports(modules)
    assert not found, (
        "experiment scripts that import another (share through sweeps/families/ instead):\n"
        + "\n".join(found)
    )


def test_no_function_is_longer_than_the_limit():
    found = long_functions(find_modules(project_root()))
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(found)


def test_no_class_is_longer_than_the_limit():
    found = long_classes(find_modules(project_root()))
    assert not found, f"classes over {MAX_CLASS_LINES} lines:\n" + "\n".join(found)


# --- the checker, on module trees written for it ---------------------------------------


def write_tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return find_modules(root, ("pkg",))


CLEAN = {
    "pkg/__init__.py": "",
    "pkg/base.py": "VALUE = 1\n_HIDDEN = 2\n",
    "pkg/sub/__init__.py": "from pkg.sub import leaf\n",
    "pkg/sub/leaf.py": "from .. import base\nfrom pkg.base import VALUE, __doc__\n",
    "pkg/user.py": """\
        import pkg.sub.leaf
        from pkg.sub import leaf as _leaf  # a private alias of a public module is fine


        def uses():
            from pkg.base import VALUE
            return VALUE
        """,
}


def test_a_clean_tree_passes_every_check(tmp_path):
    modules = write_tree(tmp_path, CLEAN)
    assert set(modules) == {"pkg", "pkg.base", "pkg.sub", "pkg.sub.leaf", "pkg.user"}
    graph = import_graph(modules)
    assert graph["pkg.sub.leaf"] == {"pkg.base"}  # `from .. import base`: the module
    assert graph["pkg.user"] == {"pkg.sub.leaf", "pkg.base"}
    assert circles(graph) == []
    assert private_imports(modules) == []
    assert long_functions(modules) == []
    assert long_classes(modules) == []
    assert mlflow_imports(modules, "pkg", allowed=()) == []
    assert script_imports(modules) == []


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    modules = write_tree(
        tmp_path,
        CLEAN
        | {
            "pkg/base.py": """\
                def late():
                    from pkg.user import uses  # the circle waits for this call
                    return uses
                """
        },
    )
    # pkg.base -> pkg.user -> pkg.base, and pkg.user -> pkg.sub.leaf -> pkg.base
    assert circles(import_graph(modules)) == [["pkg.base", "pkg.sub.leaf", "pkg.user"]]


def test_a_circle_through_a_package_and_a_relative_import_is_found(tmp_path):
    modules = write_tree(tmp_path, CLEAN | {"pkg/base.py": "from .sub import something\n"})
    # pkg.base -> pkg.sub (its __init__) -> pkg.sub.leaf -> pkg.base
    assert circles(import_graph(modules)) == [["pkg.base", "pkg.sub", "pkg.sub.leaf"]]


def test_an_import_of_another_modules_private_name_is_found(tmp_path):
    modules = write_tree(tmp_path, CLEAN | {"pkg/other.py": "from .base import VALUE, _HIDDEN\n"})
    assert private_imports(modules) == ["pkg.other: from pkg.base import _HIDDEN"]


def test_an_mlflow_import_outside_the_reading_layer_is_found(tmp_path):
    modules = write_tree(
        tmp_path,
        CLEAN
        | {
            "pkg/reader.py": "import mlflow\nfrom mlflow import MlflowClient\n",
            "pkg/compute.py": """\
                import mlflowish  # another package whose name starts the same


                def typed():
                    from mlflow.entities import Run  # for a type hint only: still found
                    return Run
                """,
            "pkg/sub/leaf.py": "import os, mlflow.tracking\n",
        },
    )
    found = mlflow_imports(modules, "pkg", allowed=("pkg.reader",))
    assert sorted(found) == ["pkg.compute: mlflow.entities", "pkg.sub.leaf: mlflow.tracking"]


SCRIPT = """\
    import sys

    from pkg.base import VALUE
    {imports}

    if __name__ == "__main__":
        sys.exit(main(sys.modules[__name__]))
    """


def test_an_experiment_script_that_imports_another_is_found(tmp_path):
    modules = write_tree(
        tmp_path,
        CLEAN
        | {
            "pkg/first.py": SCRIPT.format(imports=""),
            "pkg/second.py": SCRIPT.format(imports="from pkg import first, user"),
            "pkg/third.py": SCRIPT.format(imports="from pkg.second import POINTS"),
            # Runs itself, but not as an experiment: importing it is fine.
            "pkg/tool.py": 'if __name__ == "__main__":\n    print(1)\n',
            "pkg/fourth.py": SCRIPT.format(imports="import pkg.tool"),
        },
    )
    assert script_imports(modules) == ["pkg.second: pkg.first", "pkg.third: pkg.second"]


def test_a_function_over_the_limit_is_found_and_one_at_the_limit_is_not(tmp_path):
    def function(name: str, lines: int) -> str:
        return f"def {name}():\n" + "    x = 1\n" * (lines - 2) + "    return x\n"

    tables = "TABLE = (\n" + "    1,\n" * 80 + ")\n"  # module-level data is no function
    modules = write_tree(
        tmp_path,
        CLEAN
        | {
            "pkg/long.py": function("sixty", 60) + "\n\n" + function("sixty_one", 61) + tables,
            "pkg/methods.py": "class A:\n" + textwrap.indent(function("method", 62), "    "),
        },
    )
    found = sorted(line.split(" ", 1)[1] for line in long_functions(modules))
    assert found == ["method (62 lines)", "sixty_one (61 lines)"]


def test_a_class_over_the_limit_is_found_and_one_at_the_limit_is_not(tmp_path):
    def class_of(name: str, lines: int) -> str:
        return f"class {name}:\n" + "    x = 1\n" * (lines - 1)

    modules = write_tree(
        tmp_path,
        CLEAN
        | {
            "pkg/classes.py": class_of("At", 150) + "\n\n" + class_of("Over", 151),
            "pkg/nested.py": "def f():\n" + textwrap.indent(class_of("Inner", 152), "    "),
        },
    )
    found = sorted(line.split(" ", 1)[1] for line in long_classes(modules))
    assert found == ["Inner (152 lines)", "Over (151 lines)"]


# Where a test module may live: beside the package it tests, end to end, or (project-wide
# checks such as this one) at the top of tests/.
TEST_FOLDERS = (*PACKAGES, "e2e")


def misplaced_tests(tests: Path) -> list[str]:
    """Test modules outside the folders that mirror the packages (TEST_FOLDERS)."""
    return [
        str(path.relative_to(tests))
        for path in sorted(tests.rglob("test_*.py"))
        if path.parent != tests and path.relative_to(tests).parts[0] not in TEST_FOLDERS
    ]


def test_tests_mirror_the_packages():
    tests = project_root() / "tests"
    assert not misplaced_tests(tests), f"tests outside {TEST_FOLDERS}: {misplaced_tests(tests)}"
    assert {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"} <= set(
        TEST_FOLDERS
    )


def test_the_placement_check_sees_a_misplaced_test(tmp_path):
    for relative in ("test_top.py", "sweeps/test_a.py", "e2e/test_b.py", "misc/test_c.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    assert misplaced_tests(tmp_path) == ["misc/test_c.py"]
