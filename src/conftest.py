"""Doctests of the library (``python -m pytest --doctest-modules src/serpeval``): a module that
imports an optional dependency at module level is not collected where that dependency is not
installed (its examples run where it is). The deprecated aliases left at moved modules' old
paths (``core.lazy.alias_module``) are not collected: importing one warns by design."""

from __future__ import annotations

import importlib
from pathlib import Path

# serpeval subpackage -> the optional package (extra) its modules import at module level
_NEEDS = {"spark": "pyspark"}


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path.suffix == ".py" and "alias_module(__name__" in collection_path.read_text(encoding="utf-8"):
        return True
    parts = collection_path.parts
    if "serpeval" not in parts:
        return None
    below = parts[parts.index("serpeval") + 1:]
    needed = _NEEDS.get(below[0]) if below else None
    if needed is None:
        return None
    try:
        importlib.import_module(needed)
    except ImportError:
        return True
    return None
