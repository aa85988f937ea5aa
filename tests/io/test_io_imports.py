"""The io readers import each other at the top, never inside functions, and borrow no
private names (issue 28 item 5: the io <-> io/subtopics.py loop; the groups reader's Parquet
read and the streaming run reader's line splitting are io/reading.py's, no longer private
names of tables.py and trec.py)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

IO = Path(__file__).resolve().parents[2] / "src" / "serpeval" / "io"
READERS = ("__init__.py", "groups.py", "reading.py", "subtopics.py", "tables.py", "trec.py", "trec_stream.py")


def _serpeval_imports(tree: ast.AST) -> list[tuple[ast.ImportFrom, bool]]:
    """Every ``from serpeval... import`` with whether it sits inside a function."""
    found: list[tuple[ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and (child.module or "").startswith("serpeval"):
                found.append((child, in_function))
            visit(child, inside)

    visit(tree, False)
    return found


@pytest.mark.parametrize("name", READERS)
def test_readers_import_serpeval_io_at_the_top_only(name: str) -> None:
    tree = ast.parse((IO / name).read_text(encoding="utf-8"))
    inside = [f"line {node.lineno}: from {node.module}" for node, in_function in _serpeval_imports(tree)
              if in_function and (node.module or "").startswith("serpeval.io")]
    assert not inside, f"{name} imports serpeval.io inside functions: {inside}"


@pytest.mark.parametrize("name", READERS)
def test_readers_borrow_no_private_names(name: str) -> None:
    tree = ast.parse((IO / name).read_text(encoding="utf-8"))
    borrowed = [f"line {node.lineno}: {alias.name} from {node.module}" for node, _ in _serpeval_imports(tree)
                for alias in node.names if alias.name.startswith("_")]
    assert not borrowed, f"{name} borrows private names: {borrowed}"


@pytest.mark.parametrize("module", ["serpeval.io.subtopics", "serpeval.io.reading", "serpeval.io.trec",
                                    "serpeval.io.tables", "serpeval.io.groups", "serpeval.io.trec_stream"])
def test_each_reader_imports_first_on_its_own(module: str) -> None:
    """Imported first in a fresh interpreter, no reader meets a half-initialised package."""
    done = subprocess.run([sys.executable, "-c", f"import {module}; import serpeval.io; "
                           "serpeval.io.read_subtopic_qrels; serpeval.io.read_qrels"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
