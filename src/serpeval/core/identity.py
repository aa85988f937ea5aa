"""The files one command reads, by identity, so that none of them is written over.

A file's identity is its ``(st_dev, st_ino)``: every spelling of it (``./run.txt``, an
absolute path, a symbolic link, a hard link) has the same one, and a name does not. Inside a
:func:`reading_scope` (the command line opens one around each command), every input is noted
here: the files named on the command line (noted by the CLI before any work), and every regular
file opened by :func:`serpeval.io.inputs.open_input` or the streaming TREC reader (noted as it
is opened, the safety net for an input no option names). Standard input counts when it is a
regular file (``< qrels.txt``). The writers of :mod:`serpeval.io.outputs` ask :func:`input_named`
before they replace a file and refuse one that is an input.

Outside a scope nothing is noted: a program that reads a file with the API and then writes to
it is free to. Threads (the read-ahead of the next run) note into the same scope.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["identity", "input_named", "note_input", "note_stat", "reading_scope"]

Identity = tuple[int, int]

_lock = threading.Lock()
_scopes: list[dict[Identity, str]] = []


def identity(path: str | Path) -> Identity | None:
    """``(st_dev, st_ino)`` of the file ``path`` names (links followed), or None when there is
    none (missing, unreadable folder, a name no file system takes)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


@contextlib.contextmanager
def reading_scope() -> Iterator[None]:
    """Note the inputs opened inside (one command); forget them at the end."""
    with _lock:
        _scopes.append({})
    try:
        yield
    finally:
        with _lock:
            _scopes.pop()


def note_stat(info: os.stat_result, label: str) -> None:
    """Note an opened input from its ``fstat`` (regular files only: a pipe or a device is no
    file that an output could replace). Nothing happens outside a scope."""
    if not stat.S_ISREG(info.st_mode):
        return
    with _lock:
        if _scopes:
            _scopes[-1].setdefault((info.st_dev, info.st_ino), label)


def note_input(path: str | Path, label: str | None = None) -> None:
    """Note the regular file at ``path`` (``-``: standard input) as an input, if there is one."""
    try:
        info = os.fstat(0) if str(path) == "-" else os.stat(path)
    except (OSError, ValueError):
        return
    note_stat(info, label or ("<stdin>" if str(path) == "-" else str(path)))


def input_named(path: str | Path) -> str | None:
    """The label of the input that ``path`` is (by identity), or None."""
    key = identity(path)
    if key is None:
        return None
    with _lock:
        return _scopes[-1].get(key) if _scopes else None
