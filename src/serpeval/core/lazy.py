"""Lazy public indexes: a package lists ``{name: module}`` and each name is imported on first use.

``import serpeval`` (and ``serpeval.online``, ``serpeval.report``, ...) stays light: the heavy
modules load only when one of their names is asked for (PEP 562 module ``__getattr__``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_index"]


def lazy_index(package: str, table: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps a public name to its module.

    A name is imported from its module on first access and then stored in the package, so
    later lookups are plain attribute reads; an unknown name is the usual AttributeError.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
