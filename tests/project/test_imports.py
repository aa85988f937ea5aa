"""Imports sit at the top of a module unless they cost something there (issue 28 item 4).

A function-level import keeps a module's import light: NumPy, SciPy or DuckDB loaded only by
the call that needs them, a command's help without its computation, an optional extra asked
for only where it is used. An import inside a function whose module is loaded anyway when its
own module is imported saves nothing and hides a dependency; it belongs at the top. The check
is static: the modules that importing a serpeval module loads are the closure of the top-level
imports of it and of its packages (``if TYPE_CHECKING:`` blocks and the lazy indexes'
``__getattr__`` left out), and an import guarded inside the function (``try``, ``if``,
``with``) is a deliberate choice left alone."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: set[str]) -> list[str]:
    """The modules an import statement loads (``from package import submodule`` loads both)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    source = _absolute(node, module, is_package)
    return [source, *(f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in modules)]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _top_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level_imports(node.body)


def _function_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports in a function's own flow: not under a ``try``, ``if`` or ``with`` inside it."""
    def visit(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, True)
            elif in_function and isinstance(child, (ast.Try, ast.If, ast.With, ast.Match)):
                continue
            elif in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            else:
                yield from visit(child, in_function)

    yield from visit(tree, False)


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def needless_function_imports() -> list[str]:
    """``path:line: module`` for each function-level import of a module already loaded."""
    paths = {_module_name(path): path for path in (SRC / "serpeval").rglob("*.py")}
    modules = set(paths)
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in paths.items()}
    direct = {name: {target for node in _top_level_imports(tree.body)
                     for target in _targets(node, name, paths[name].name == "__init__.py", modules)}
              for name, tree in trees.items()}

    def closure(name: str) -> set[str]:
        loaded: set[str] = set()
        todo = [name, *_parents(name)]
        while todo:
            current = todo.pop()
            if current in loaded:
                continue
            loaded.add(current)
            if current in direct:
                todo.extend(direct[current])
                todo.extend(p for target in direct[current] for p in _parents(target))
        return loaded

    found = []
    for name, tree in trees.items():
        loaded = closure(name)
        for node in _function_imports(tree):
            targets = _targets(node, name, paths[name].name == "__init__.py", modules)
            if all(target in loaded for target in targets):
                found.append(f"{paths[name].relative_to(ROOT)}:{node.lineno}: {', '.join(targets)}")
    return sorted(found)


def test_no_function_imports_a_module_its_own_module_already_loads() -> None:
    found = needless_function_imports()
    assert found == [], ("imports inside functions of modules that importing their own module loads "
                         f"anyway; move them to the top: {found}")


def test_the_check_finds_such_an_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: a function importing ``json`` that its module imports at the
    top, and one importing a sibling that its package's ``__init__`` imports (by absolute and by
    relative name), are found; a guarded import and a module nothing loads are not."""
    package = tmp_path / "serpeval"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from serpeval.sub import light\n")
    (package / "sub" / "light.py").write_text("import json\n")
    (package / "sub" / "heavy.py").write_text("X = 1\n")
    (package / "sub" / "user.py").write_text(
        "import json\n\n\n"
        "def f():\n    import json\n    from serpeval.sub import light\n"
        "    from serpeval.sub import heavy\n    try:\n        import csv\n    except ImportError:\n        pass\n"
        "    return json, light, heavy\n\n\n"
        "def g():\n    from . import light\n    from .heavy import X\n    return light, X\n")
    monkeypatch.setitem(globals(), "SRC", tmp_path)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert needless_function_imports() == ["serpeval/sub/user.py:16: serpeval.sub, serpeval.sub.light",
                                           "serpeval/sub/user.py:5: json",
                                           "serpeval/sub/user.py:6: serpeval.sub, serpeval.sub.light"]
