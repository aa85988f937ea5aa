"""The textbook formulas as plain functions, for a list of grades rather than files.

They use the log2(rank + 1) discount and, by default, linear gain g: the gain of trec_eval
and of the ``nDCG`` measure, so ``ndcg(grades, ideal)`` equals that measure on the same query.
For the exponential gain 2^g - 1 of Burges et al. pass ``gain="exp"``. Every function returns
a plain Python ``float``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.errors import InvalidParameterError

if TYPE_CHECKING:
    from serpeval.measures._common import Gain

__all__ = ["dcg", "ndcg", "reciprocal_rank"]


def _grades(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise InvalidParameterError(f"{name} must be a flat sequence of grades; got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise InvalidParameterError(f"{name} must hold finite numbers; got {list(values)!r}.")
    return array


def _check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise InvalidParameterError(f"k must be an integer >= 1 or None; got {k!r}.")


_EXP_HEADROOM = 960.0


def _gain(grades: np.ndarray, gain: Gain, shift: float = 0.0) -> np.ndarray:
    """gain(g), divided by 2^shift (exact: a power of two); shift 0 gives 2^g - 1 itself."""
    positive = np.maximum(grades, 0.0)
    if gain == "exp":
        return np.exp2(positive - shift) - np.exp2(-shift)
    if gain == "linear":
        return positive
    raise InvalidParameterError(f"gain must be 'exp' or 'linear'; got {gain!r}.")


def _shift(gain: Gain, *grades: np.ndarray) -> float:
    """The power of two that keeps exp gains finite: 2^g - 1 is beyond float64 from g = 1024,
    so grades above 960 are divided by 2^(highest - 960); 0 otherwise (no change at all)."""
    highest = max((float(g.max()) for g in grades if g.size), default=0.0)
    return max(0.0, highest - _EXP_HEADROOM) if gain == "exp" else 0.0


def _scaled_dcg(g: np.ndarray, gain: Gain, shift: float) -> float:
    return float(np.sum(_gain(g, gain, shift) / np.log2(np.arange(2, len(g) + 2))))


def dcg(grades: Sequence[float], k: int | None = 10, gain: Gain = "linear") -> float:
    """DCG@k = sum_{i=1..k} gain(g_i) / log2(i + 1) of grades in rank order.

    Args:
        grades: relevance grades of the ranked docs, best rank first.
        k: cutoff (``None``: the whole list).
        gain: ``"linear"`` (g, the default: trec_eval and the ``DCG`` measure) or ``"exp"``
            (2^g - 1).

    Examples:
        >>> round(dcg([3, 2, 3, 0, 1, 2], k=6), 4)  # 3/1 + 2/1.585 + 3/2 + 0 + 1/2.585 + 2/2.807
        6.8611
        >>> round(dcg([3, 2, 3, 0, 1, 2], k=6, gain="exp"), 4)  # 7/1 + 3/1.585 + 7/2 + 0 + 1/2.585 + 3/2.807
        13.8483
    """
    _check_k(k)
    g = _grades(grades, "grades")[:k]
    shift = _shift(gain, g)
    with np.errstate(over="ignore"):
        value = float(np.ldexp(_scaled_dcg(g, gain, shift), int(shift))) if shift else _scaled_dcg(g, gain, 0.0)
    if not np.isfinite(value):
        raise InvalidParameterError(
            f"the DCG of these grades is beyond float64: the highest is {float(g.max())!r} and 2^g - 1 is "
            "beyond float64 from g = 1024. ndcg() is exact for any grade; for dcg() use gain='linear'."
        )
    return value


def ndcg(
    grades: Sequence[float], ideal_grades: Sequence[float], k: int | None = 10, gain: Gain = "linear"
) -> float:
    """nDCG@k = DCG@k(grades) / DCG@k(ideal), the ideal being ``ideal_grades`` sorted descending.

    ``ideal_grades`` should hold the grades of *all* judged docs of the query, retrieved or
    not (otherwise a ranking that misses relevant docs can score 1). Returns 0 when the
    ideal DCG is 0 (no doc with positive gain). ``gain="linear"`` (g, the default, as the
    ``nDCG`` measure and trec_eval) or ``"exp"`` (2^g - 1); any grade works with ``"exp"``:
    above 960 both DCGs are divided by one power of two, which cancels exactly.

    Examples:
        >>> ndcg([0, 1], [1, 0], k=2)  # 1/log2(3) / 1
        0.6309297535714575
        >>> round(ndcg([3, 2, 0], [3, 3, 2, 1]), 4)  # (3 + 2/1.585) / (3 + 3/1.585 + 2/2 + 1/2.322)
        0.674
        >>> round(ndcg([3, 2, 0], [3, 3, 2, 1], gain="exp"), 4)  # (7 + 3/1.585) / (7 + 7/1.585 + 3/2 + 1/2.322)
        0.6663
        >>> ndcg([0, 0], [0, 0])
        0.0
    """
    _check_k(k)
    ideal = np.sort(_grades(ideal_grades, "ideal_grades"))[::-1][:k]
    ranked = _grades(grades, "grades")[:k]
    shift = _shift(gain, ideal, ranked)  # one scale for both: it cancels in the ratio
    best = _scaled_dcg(ideal, gain, shift)
    return 0.0 if best == 0.0 else _scaled_dcg(ranked, gain, shift) / best


def reciprocal_rank(flags: Sequence[bool | int | float], k: int | None = None) -> float:
    """1 / rank of the first relevant (truthy) flag within the top k; 0 if there is none.

    Examples:
        >>> reciprocal_rank([0, 0, 0, 0, 1])
        0.2
    """
    _check_k(k)
    hits = np.flatnonzero(np.asarray(flags, dtype=bool)[:k])
    return 0.0 if hits.size == 0 else 1.0 / (int(hits[0]) + 1.0)
