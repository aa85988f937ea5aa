"""Small helpers shared by the online modules: RNG coercion, option checks, name lookup."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.stats._checks import as_generator

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

T = TypeVar("T")

#: A NumPy Generator from a seed >= 0, a Generator (used as is) or None (fresh entropy).
as_rng = as_generator


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


def positive_int(value: Any, what: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (else :class:`OptionError`)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise OptionError(f"{what} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def first_duplicate_row(codes: NDArray[np.int64]) -> int | None:
    """The first row of ``codes[n, k]`` holding a code (>= 0; -1 is padding) twice, else None."""
    ordered = np.sort(codes, axis=1)
    dup = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1)
    return int(np.flatnonzero(dup)[0]) if dup.any() else None
