"""Parameters and small kernel helpers shared by several measures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._segments import relevant_docs
from serpeval.measures._spec import Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

REL = Param(
    "rel", int, 1,
    "minimum grade that counts as relevant (inclusive); trec_eval's -l",
    minimum=0,
)
GAIN = Param(
    "gain", str, "linear",
    "gain of a grade g: linear = g (trec_eval), exp = 2^g - 1 (Burges, gdeval)",
    choices=("linear", "exp"),
)


def within(r: Rankings, cutoff: int | None) -> NDArray[np.bool_]:
    """Mask of ranked docs at rank <= cutoff (all of them when cutoff is None)."""
    if cutoff is None:
        return np.ones(len(r.grades), dtype=bool)
    return r.position < cutoff


def relevant(r: Rankings, rel: int) -> NDArray[np.bool_]:
    """Mask of ranked docs judged relevant (grade >= rel; unjudged docs never are)."""
    return r.grades >= rel


def hits(r: Rankings, rel: int, cutoff: int | NDArray[np.int64] | None) -> NDArray[np.int64]:
    """Per query: relevant docs retrieved at rank <= cutoff (per query when an array; all
    retrieved when None), counted by binary search in the relevant docs' ranks."""
    return relevant_docs(r, rel).count_in_top(cutoff)


def safe_divide(num: NDArray[np.float64], den: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """``num / den`` with 0 where ``den`` is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den != 0)
    return out


def gains(grades: NDArray[np.int64], gain: str) -> NDArray[np.float64]:
    """Gain of each grade; grades <= 0 (and unjudged -1/-2) give 0."""
    g = np.maximum(grades, 0).astype(np.float64)
    if gain == "exp":
        return np.exp2(g) - 1.0
    return g


def discounted(gain: NDArray[np.float64], position: NDArray[np.int64]) -> NDArray[np.float64]:
    """``gain / log2(rank + 1)`` for 0-based positions (rank = position + 1), as trec_eval divides."""
    return gain / np.log2(position + 2.0)
