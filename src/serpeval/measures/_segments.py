"""Exact per-query building blocks shared by the trec_eval measure kernels.

trec_eval computes every value with a sequential C loop per topic. To print the same 4
decimals *and* to equal pytrec_eval's doubles bit for bit, the kernels here reproduce the
order of every floating-point operation, while still working on all queries at once:

* :func:`prefix_sums` - running sums within each query, added left to right exactly as a
  C loop does (a flat ``cumsum`` minus the previous queries' total is off in the last bits);
* :func:`suffix_max` - the maximum at or after each element within its query (interpolated
  precision), exact;
* :func:`powers` - ``1, p, p*p, ...`` by repeated multiplication, as ``cur_p *= p`` does;
* :func:`at_rank` - a per-query prefix value read at rank ``k`` (clamped to the ranking's
  length), so that a measure at nine cutoffs costs one pass over the documents, not nine;
* :func:`relevant_running`, :func:`rank_log2`, :func:`memo` - arrays computed once per
  rankings (the running count of relevant docs, log2(rank + 1), any keyed prefix), so the
  measures of one evaluation share them.

Per-query totals use ``numpy.bincount`` with weights, which adds in index order (the same
order as the C loop), so they need nothing special.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval._arrays import take_segments

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = [
    "at_depth",
    "at_rank",
    "c_round",
    "c_trunc",
    "ideal_log2",
    "memo",
    "nonrelevant_running",
    "powers",
    "prefix_sums",
    "rank_log2",
    "relevant_running",
    "suffix_max",
]


def prefix_sums(values: NDArray[np.float64], offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """Running sums of ``values`` within each segment ``offsets[i]:offsets[i+1]``.

    Element j of a segment holds ``((0 + v_0) + v_1) + ... + v_j``, computed in that order.
    Segments are padded into rectangles of similar lengths (lengths grouped by powers of
    two, so padding at most doubles the work) and summed along rows with ``cumsum``, which
    accumulates sequentially.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty_like(values)
    lengths = np.diff(offsets)
    n_segments = len(lengths)
    if values.size == 0:
        return out
    if lengths.min() == lengths.max():
        width = int(lengths[0])
        return np.cumsum(values.reshape(n_segments, width), axis=1).reshape(-1)
    group = np.zeros(n_segments, dtype=np.int64)
    nonempty = lengths > 0
    group[nonempty] = np.ceil(np.log2(lengths[nonempty])).astype(np.int64)
    for g in np.unique(group[nonempty]):
        which = np.flatnonzero(nonempty & (group == g))
        sub_offsets, index = take_segments(offsets, which)
        sub_lengths = lengths[which]
        rows = np.repeat(np.arange(len(which)), sub_lengths)
        cols = np.arange(len(index)) - sub_offsets[:-1][rows]
        block = np.zeros((len(which), int(sub_lengths.max())))
        block[rows, cols] = values[index]
        np.cumsum(block, axis=1, out=block)
        out[index] = block[rows, cols]
    return out


def suffix_max(values: NDArray[np.float64], segment: NDArray[np.int64]) -> NDArray[np.float64]:
    """For each element, the maximum of its segment's values at or after it (exact).

    ``segment`` must be non-decreasing. The values are replaced by their ranks among the
    distinct values, so that a running maximum over the reversed array can carry the
    segment in the high digits of an integer key without rounding anything.
    """
    if values.size == 0:
        return np.asarray(values, dtype=np.float64).copy()
    distinct, code = np.unique(values, return_inverse=True)
    width = np.int64(len(distinct))
    block = (segment[-1] - segment)[::-1].astype(np.int64) * width
    running = np.maximum.accumulate(block + code[::-1].astype(np.int64))
    return distinct[(running - block)[::-1]]


def powers(p: float, n: int) -> NDArray[np.float64]:
    """``[1, p, p*p, ...]`` (``n + 1`` entries), multiplied out as C's ``cur_p *= p`` does."""
    out = np.empty(n + 1)
    out[0] = 1.0
    if n:
        out[1:] = np.multiply.accumulate(np.full(n, p, dtype=np.float64))
    return out


def at_depth(prefix: NDArray[Any], offsets: NDArray[np.int64], k: int | NDArray[np.int64] | None
             ) -> NDArray[Any]:
    """Per segment: ``prefix`` at position ``min(k, length)`` (1-based; all when ``k`` is
    None); 0 where that position is 0. ``prefix`` keeps its dtype (counts stay integers)."""
    lengths = np.diff(offsets)
    depth = lengths if k is None else np.minimum(k, lengths)
    out = np.zeros(len(lengths), dtype=prefix.dtype)
    has = depth > 0
    out[has] = prefix[(offsets[:-1] + depth - 1)[has]]
    return out


def at_rank(r: Rankings, prefix: NDArray[Any], k: int | NDArray[np.int64] | None) -> NDArray[Any]:
    """Per query: ``prefix`` (a running count or sum in rank order) over the top ``k`` docs,
    a shorter ranking counting as padded; the whole ranking when ``k`` is None."""
    return at_depth(prefix, r.offsets, k)


def memo(r: Rankings, key: Hashable, make: Callable[[], Any]) -> Any:
    """``make()``, computed once per rankings under ``key`` and shared by every measure."""
    if key not in r._memo:
        r._memo[key] = make()
    return r._memo[key]


def relevant_running(r: Rankings, rel: int) -> NDArray[np.int64]:
    """For each ranked doc: relevant docs (grade >= rel) at or above it (memoised)."""
    return memo(r, ("relevant_running", rel), lambda: r.running_count(r.grades >= rel))


def nonrelevant_running(r: Rankings, rel: int) -> NDArray[np.int64]:
    """For each ranked doc: judged non-relevant docs (0 <= grade < rel) at or above it."""
    return memo(r, ("nonrelevant_running", rel),
                lambda: r.running_count((r.grades >= 0) & (r.grades < rel)))


def rank_log2(r: Rankings) -> NDArray[np.float64]:
    """``log2(rank + 1)`` of every ranked doc (rank 1-based), the DCG discount (memoised)."""
    return memo(r, "rank_log2", lambda: np.log2(r.position + 2.0))


def ideal_log2(r: Rankings) -> NDArray[np.float64]:
    """``log2(position + 1)`` of every judgment in the ideal rankings (memoised)."""
    return memo(r, "ideal_log2", lambda: np.log2(r.ideal_position + 2.0))


def c_round(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """C's ``lround``: to the nearest integer, halves away from zero (Python rounds to even).

    ``floor(|x| + 0.5)`` would be wrong for 0.49999999999999994 (the sum rounds up to 1), so
    the fraction is compared instead; it is exact for ``|x| < 2**52``.
    """
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    rounded = whole + (magnitude - whole >= 0.5)
    return (np.sign(x) * rounded).astype(np.int64)


def c_trunc(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """C's ``(long) x``: towards zero."""
    return np.trunc(x).astype(np.int64)
