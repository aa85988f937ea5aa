"""Exact per-query building blocks shared by the trec_eval measure kernels.

trec_eval computes every value with a sequential C loop per topic. To print the same 4
decimals *and* to equal pytrec_eval's doubles bit for bit, the kernels here reproduce the
order of every floating-point operation, while still working on all queries at once:

* :func:`prefix_sums` - running sums within each query, added left to right exactly as a
  C loop does (a flat ``cumsum`` minus the previous queries' total is off in the last bits);
* :func:`suffix_max` - the maximum at or after each element within its query (interpolated
  precision), exact;
* :func:`powers` - ``1, p, p*p, ...`` by repeated multiplication, as ``cur_p *= p`` does;
* :func:`at_depth` - a per-query running value read at depth ``k`` (clamped to the
  length), so that a measure at nine cutoffs sums once, not nine times;
* :class:`Picked` (:func:`relevant_docs`, :func:`judged_docs`, ...) - the ranked docs
  that satisfy a condition, with counts in the top k read by binary search: measures touch
  the relevant docs, not the whole ranking;
* :func:`memo` - anything computed once per rankings and shared by every measure.

Per-query totals use ``numpy.bincount`` with weights, which adds in index order (the same
order as the C loop), so they need nothing special.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core import native
from serpeval.core.segments import take_segments

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = [
    "Picked",
    "at_depth",
    "c_round",
    "c_trunc",
    "ideal_log2",
    "judged_docs",
    "memo",
    "nonrelevant_docs",
    "picked",
    "positive_docs",
    "powers",
    "prefix_sums",
    "rank_log2",
    "relevant_docs",
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
    if native.available():  # the same additions in the same order, one compiled loop
        return native.prefix_sums(values, offsets)
    out = np.empty_like(values)
    lengths = np.diff(offsets)
    n_segments = len(lengths)
    if values.size == 0:
        return out
    if lengths.min() == lengths.max():
        width = int(lengths[0])
        return np.cumsum(values.reshape(n_segments, width), axis=1).reshape(-1)
    longest = int(lengths.max())
    if longest <= max(64, values.size // 1000):
        return _prefix_sums_by_position(values, offsets, lengths)
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


def _prefix_sums_by_position(values: NDArray[np.float64], offsets: NDArray[np.int64],
                             lengths: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`prefix_sums` one position at a time: step j adds element j of every segment
    longer than j to the running sum before it (``out[j] = out[j-1] + v[j]``, the C loop's
    order; IEEE addition is commutative). One NumPy step per position of the longest
    segment, each over the segments still going: for many short segments (a million
    queries of ten results) no padding, no scatter."""
    out = values.copy()
    longer = lengths > 1
    at, left = offsets[:-1][longer] + 1, lengths[longer] - 1
    while at.size:
        out[at] += out[at - 1]
        left -= 1
        going = left > 0
        if not going.all():
            at, left = at[going], left[going]
        at += 1
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


def memo(r: Rankings, key: Hashable, make: Callable[[], Any]) -> Any:
    """``make()``, computed once per rankings under ``key`` and shared by every measure."""
    if key not in r._memo:
        r._memo[key] = make()
    return r._memo[key]


@dataclass(frozen=True, eq=False)
class Picked:
    """The ranked docs that satisfy a condition (relevant, judged, positive gain...), in
    rank order, with their query and rank: what most measures need, at the size of the
    condition rather than of the ranking (relevant docs are a few percent of a run).

    Attributes:
        index: flat indices of the picked docs in ``Rankings.grades`` (increasing).
        segment: the query of each picked doc.
        position: the 0-based rank of each picked doc.
        offsets: ``int64[n_queries + 1]``: query q's picked docs are ``offsets[q]:offsets[q+1]``.
        width: one more than the deepest rank of the rankings (a cap for cutoffs).
    """

    index: NDArray[np.int64]
    segment: NDArray[np.int64]
    position: NDArray[np.int64]
    offsets: NDArray[np.int64]
    width: int

    @classmethod
    def of(cls, r: Rankings, mask: NDArray[np.bool_]) -> Picked:
        """The docs of ``r`` where ``mask`` holds."""
        index = np.flatnonzero(mask)
        if native.available():  # one merge of the two sorted lists
            segment, offsets = native.locate(index, r.offsets)
        else:
            segment = np.searchsorted(r.offsets, index, side="right") - 1
            offsets = np.searchsorted(index, r.offsets).astype(np.int64)
        position = index - r.offsets[segment]
        return cls(index, segment, position, offsets, int(r.n_ret.max(initial=0)) + 1)

    @property
    def count(self) -> NDArray[np.int64]:
        """Picked docs per query."""
        return np.diff(self.offsets)

    @property
    def nth(self) -> NDArray[np.int64]:
        """1-based order of each picked doc among its query's picked docs."""
        return np.arange(1, len(self.index) + 1) - self.offsets[:-1][self.segment]

    def count_in_top(self, k: int | NDArray[np.int64] | None,
                     queries: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        """Per query (or for each of ``queries``): picked docs ranked in the top ``k``
        (all of them when ``k`` is None)."""
        q = np.arange(len(self.offsets) - 1) if queries is None else queries
        if k is None:
            return self.count[q]
        keys = self.segment * self.width + self.position
        cap = np.minimum(np.broadcast_to(np.asarray(k, dtype=np.int64), q.shape), self.width)
        return np.searchsorted(keys, q * self.width + cap) - self.offsets[q]

    def count_above(self, index: NDArray[np.int64], segment: NDArray[np.int64]) -> NDArray[np.int64]:
        """For docs at flat ``index`` (of query ``segment``): picked docs ranked above them."""
        return np.searchsorted(self.index, index) - self.offsets[segment]

    def value_at(self, running: NDArray[np.float64], counts: NDArray[np.int64],
                 queries: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """``running`` (a value per picked doc, e.g. a running sum) at each query's
        ``counts``-th picked doc; 0 where ``counts`` is 0."""
        starts = self.offsets[:-1] if queries is None else self.offsets[queries]
        out = np.zeros(len(starts))
        has = counts > 0
        out[has] = running[(starts + counts - 1)[has]]
        return out


def picked(r: Rankings, key: Hashable, mask: Callable[[], NDArray[np.bool_]]) -> Picked:
    """The memoised :class:`Picked` docs of ``mask()`` under ``key``."""
    return memo(r, ("picked", key), lambda: Picked.of(r, mask()))


def relevant_docs(r: Rankings, rel: int) -> Picked:
    """The relevant ranked docs (grade >= rel)."""
    return picked(r, ("relevant", rel), lambda: r.grades >= rel)


def positive_docs(r: Rankings) -> Picked:
    """The ranked docs with a positive grade, the docs a linear or exp gain is not 0 for:
    grade >= 1 for integer grades (the same memo as ``relevant_docs(r, 1)``), grade > 0 for
    fractional ones (a grade of 0.5 has gain 0.5)."""
    if r.grades.dtype.kind != "f":
        return relevant_docs(r, 1)
    return picked(r, "positive", lambda: r.grades > 0)


def judged_docs(r: Rankings) -> Picked:
    """The ranked docs with a judgment (grade >= 0)."""
    return picked(r, "judged", lambda: r.grades >= 0)


def nonrelevant_docs(r: Rankings, rel: int) -> Picked:
    """The ranked docs judged non-relevant (0 <= grade < rel)."""
    return picked(r, ("nonrelevant", rel), lambda: (r.grades >= 0) & (r.grades < rel))


def ideal_log2(r: Rankings) -> NDArray[np.float64]:
    """:func:`rank_log2` of every judgment's position in the ideal rankings (memoised)."""
    return memo(r, "ideal_log2", lambda: rank_log2(r.ideal_position))


def rank_log2(position: NDArray[np.int64]) -> NDArray[np.float64]:
    """``log2(rank + 1)`` for 0-based positions (rank = position + 1), DCG's discount.

    Positions are small integers repeated millions of times, so ``np.log2`` runs once per
    distinct position (a table up to the deepest) and the values are gathered: the same
    doubles, without a temporary of the input's size.
    """
    if position.size == 0:
        return np.zeros(0, dtype=np.float64)
    table = np.log2(np.arange(int(position.max()) + 1, dtype=np.float64) + 2.0)
    return table[position]


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
