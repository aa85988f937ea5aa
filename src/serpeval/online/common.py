"""Small helpers shared by the online packages (interleaving, clicks, logs): name lookup with
"did you mean", probability arrays, duplicate rows, the last click of an impression."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from serpeval.core.errors import OptionError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

T = TypeVar("T")


def lookup(kind: str, name: str, table: Mapping[str, T]) -> T:
    """``table[name]`` ignoring case, ``-`` vs ``_`` and spaces; unknown names get "did you mean"."""
    if not isinstance(name, str):
        raise OptionError(f"{kind} must be a name (str); got {type(name).__name__}.")
    key = normalize_name(name)
    folded = {normalize_name(k): v for k, v in table.items()}
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(key, list(folded), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise OptionError(
        f"unknown {kind} {name!r}.{hint} Known: {', '.join(sorted(table))}."
    )


def normalize_name(name: str) -> str:
    """``Team-Draft`` -> ``team_draft``."""
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def probabilities(values: ArrayLike, what: str) -> NDArray[np.float64]:
    """``values`` as a float array, every entry in [0, 1] (else :class:`OptionError`)."""
    arr = np.asarray(values, dtype=np.float64)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        where = np.argwhere(bad)[0]
        at = f" at index {tuple(int(i) for i in where)}" if arr.ndim else ""
        raise OptionError(
            f"{what} must be probabilities in [0, 1]; found {float(arr[tuple(where)])!r}{at}."
        )
    return arr


def first_duplicate_row(codes: NDArray[np.int64]) -> int | None:
    """The first row of ``codes[n, k]`` holding a code (>= 0; -1 is padding) twice, else None."""
    ordered = np.sort(codes, axis=1)
    dup = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1)
    return int(np.flatnonzero(dup)[0]) if dup.any() else None


def last_click(clicks: NDArray[np.bool_]) -> NDArray[np.int64]:
    """0-based slot of the last click of every impression (slot-major clicks), -1 if none."""
    k = clicks.shape[0]
    rev = clicks[::-1]
    return np.where(rev.any(axis=0), k - 1 - np.argmax(rev, axis=0), -1)
