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
* :func:`relevant_running` - the running count of relevant docs, computed once per
  rankings and relevance threshold.

Per-query totals use ``numpy.bincount`` with weights, which adds in index order (the same
order as the C loop), so they need nothing special.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval._arrays import take_segments

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = [
    "at_rank",
    "c_round",
    "c_trunc",
    "powers",
    "prefix_sums",
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
    """``[1, p, p*p, ...]`` (``n + 1`` entries) by repeated multiplication, as C's ``cur_p *= p``."""
    out = np.empty(n + 1)
    out[0] = 1.0
    if n:
        out[1:] = np.multiply.accumulate(np.full(n, p, dtype=np.float64))
    return out


def at_rank(r: Rankings, prefix: NDArray[np.float64] | NDArray[np.int64], k: int | NDArray[np.int64]
            ) -> NDArray[np.float64]:
    """Per query: ``prefix`` at rank ``min(k, n_ret)`` (1-based); 0 where that rank is 0.

    ``prefix`` holds a running value per ranked doc (a count or a sum in rank order), so
    this is the value over the top ``k`` docs, a shorter ranking counting as padded.
    """
    depth = np.minimum(k, r.n_ret)
    out = np.zeros(r.n_queries, dtype=np.float64)
    has = depth > 0
    out[has] = prefix[(r.offsets[:-1] + depth - 1)[has]]
    return out


def relevant_running(r: Rankings, rel: int) -> NDArray[np.int64]:
    """For each ranked doc: relevant docs (grade >= rel) at or above it (memoised)."""
    key = ("relevant_running", rel)
    if key not in r._memo:
        r._memo[key] = r.running_count(r.grades >= rel)
    return r._memo[key]


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
