"""Per-document propensities for the propensity-scored measures (``psP@k``, ``psnDCG@k``).

A text file of ``doc_id propensity`` lines (any whitespace between; blank lines and ``#``
comments skipped), or a ``{doc_id: propensity}`` mapping. A propensity is a probability in
(0, 1]; the measures check that (a 0 would weigh its document infinitely). Errors name
``path:line``.

Layer: io. Imports core only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from serpeval.core.errors import DuplicateError, EmptyInputError, ParseError
from serpeval.io.inputs import open_input

__all__ = ["as_propensities", "read_propensities"]


def read_propensities(source: str | Path) -> dict[str, float]:
    """``{doc_id: propensity}`` from a ``doc_id propensity`` text file (``.gz`` decompressed).

    Raises:
        ParseError: a line without exactly two fields or whose second is not a number (path:line).
        DuplicateError: a document listed twice.
        EmptyInputError: no data lines.
    """
    opened = open_input(source)
    label = opened.label
    out: dict[str, float] = {}
    first: dict[str, int] = {}
    for number, line in enumerate(opened.read().decode("utf-8", "replace").splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            raise ParseError(f"{label}:{number}: expected 2 columns (doc_id propensity), found {len(fields)}: "
                             f"{line[:120]!r}.")
        try:
            value = float(fields[1])
        except ValueError:
            raise ParseError(f"{label}:{number}: expected a propensity (a number in (0, 1]) in column 2, found "
                             f"{fields[1]!r}.") from None
        if fields[0] in out:
            raise DuplicateError(f"{label}:{number}: document {fields[0]!r} is listed twice (first at line "
                                 f"{first[fields[0]]}). Keep one propensity per document.")
        out[fields[0]] = value
        first[fields[0]] = number
    if not out:
        raise EmptyInputError(f"{label}: no propensities; expected lines 'doc_id propensity'.")
    return out


def as_propensities(obj: Any) -> tuple[dict[str, float] | None, str]:
    """A path or a mapping as ``({doc_id: propensity}, label for messages)``; None stays None."""
    if obj is None:
        return None, "<propensities>"
    if isinstance(obj, (str, Path)):
        return read_propensities(obj), str(obj)
    if isinstance(obj, Mapping):
        return {str(k): v for k, v in obj.items()}, "<propensities>"
    raise ParseError(f"propensities: expected a path or a {{doc_id: propensity}} mapping, found {type(obj).__name__}.")
