"""The README's code map names only what exists: every file path and every dotted name
(`package.module.function`, `module.Class.method`) in its `text` block is found in the
repository's source, read with `ast` (nothing is imported, so no torch or Ray)."""

import ast
import re

from sweep_helpers import REPO

PACKAGES = ("xlt_core", "sweeps", "analysis", "xlt_schema")
NAME = re.compile(r"\b((?:%s)(?:\.[A-Za-z_]\w*)+|[\w/]+\.py)\b" % "|".join(PACKAGES))


def code_map() -> str:
    match = re.search(r"## Code map.*?```text\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert match, "README.md has no `## Code map` section with a ```text block"
    return match.group(1)


def _defines(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement of `body` that binds `name` (a def, a class, an assignment, an import)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [node.name]
        elif isinstance(node, ast.Assign):
            bound = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound = [node.target.id]
        elif isinstance(node, ast.ImportFrom):
            bound = [alias.asname or alias.name for alias in node.names]
        else:
            continue
        if name in bound:
            return node
    return None


def exists(dotted: str) -> bool:
    """`a.b.c`: the longest prefix that is a module or package, then the rest defined in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        module = next(
            (p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None
        )
        if module is None:
            continue
        body = ast.parse(module.read_text()).body
        for attr in parts[cut:]:
            node = _defines(body, attr)
            if node is None:
                return False
            body = getattr(node, "body", [])
        return True
    return False


def test_the_code_map_names_only_what_exists():
    names = set(NAME.findall(code_map()))
    assert len(names) > 15, names  # the pattern still finds the map's names
    missing = sorted(name for name in names if not (REPO / name).is_file() and not exists(name))
    assert not missing, f"README code map names what does not exist: {missing}"


def test_the_check_finds_a_missing_name():
    assert exists("sweeps.cli.main") and exists("xlt_core.config.TrialConfig.from_dict")
    assert not exists("sweeps.cli.no_such_function")
    assert not exists("xlt_core.no_such_module.main")
