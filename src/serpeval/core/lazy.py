"""Lazy public indexes: a package lists ``{name: module}`` and each name is imported on first use.

``import serpeval`` (and ``serpeval.online``, ``serpeval.report``, ...) stays light: the heavy
modules load only when one of their names is asked for (PEP 562 module ``__getattr__``).

Moves keep old import paths working for one release: :func:`lazy_index` serves ``moved``
names from their new modules with a :class:`DeprecationWarning`, and :func:`alias_module`
makes an old module path the new module itself (same object) with the same warning.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["alias_module", "lazy_index"]


def lazy_index(
    package: str, table: Mapping[str, str], *, moved: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps a public name to its module.

    A name is imported from its module on first access and then stored in the package, so
    later lookups are plain attribute reads; an unknown name is the usual AttributeError.
    ``moved`` maps names that left ``package`` to their new module: each access warns
    (:class:`DeprecationWarning`, naming the new module) and returns the same object; they
    are not listed by ``__dir__`` and never stored, so every use warns.
    """
    moved = moved or {}

    def __getattr__(name: str) -> Any:
        if name in moved:
            warnings.warn(
                f"{package}.{name} moved to {moved[name]}.{name}; the old name is removed in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(moved[name]), name)
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def alias_module(old: str, new: str) -> None:
    """Make module path ``old`` the module ``new`` (for one release after a move).

    Called at the top of the shim left at the old path: it warns (:class:`DeprecationWarning`)
    and puts ``new`` in ``sys.modules`` under ``old``, so ``import old`` and
    ``from old import name`` return the very objects of ``new`` (private names and
    monkeypatching included).
    """
    warnings.warn(f"{old} moved to {new}; the old path is removed in the next release", DeprecationWarning,
                  stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
