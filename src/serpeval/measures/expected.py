"""Exact expectations over every order of each tie group (the ``expected`` tie policy).

Under ``ties="expected"`` a measure's value for a query is its mean over every order of the
docs inside each tie group (docs of the query with equal scores), every order equally
likely. Nothing is sampled; each measure has one of three exact methods, stated by
``serpeval measures NAME`` (:func:`method`):

* **closed form** (vectorized over all queries; McSherry and Najork, ECIR 2008). The key
  fact: the order inside an earlier tie group does not change its grade counts, so a doc
  of group G (first position s, size n, 0-based) lies at each position s..s+n-1 with
  probability 1/n, and the docs of G above it are a uniform random subset of G's other
  docs. Hence:

  - sums over ranks of w(rank) * h(grade) (P@k, R@k, Rprec, DCG/nDCG of any gain, RBP):
    E = sum over docs d of h(g_d) * mean of w over d's group's positions (w = 0 below k);
    P@k's expected hits: sum over relevant docs of clip((k - s) / n, 0, 1), and the same
    count of another set of docs gives Hits@k, RelP@k, Judged@k, Graded@k and Unjudged@k;
  - AP: a relevant doc of G at position s+j has 1 + R_before + X relevant docs at or
    above it, E[X | j] = j (r_G - 1) / (n - 1) (r_G relevant in G, R_before above G), so
    E[AP] = (1/R) sum over relevant d of (1/n) sum_j (1 + R_before + j (r_G-1)/(n-1)) / (s+j+1);
  - RR and Success@k: only the first group holding a relevant doc matters; the first of
    its r relevant docs is at offset j with probability C(n-1-j, r-1) / C(n, r), so
    E[RR] = sum_j C(n-1-j, r-1)/C(n, r) / (s+j+1) and
    E[Success@k] = 1 - C(n-(k-s), r)/C(n, r) for a group cut by k;
  - ERR: products over the docs above a group do not depend on their order, and within
    the group a recurrence gives the mean product over subsets of each size (:func:`_err`);
  - bpref: a relevant doc's order among its group's judged non-relevant docs is uniform,
    so the count above it is uniform over a range (:func:`_bpref`).

* **order-free**: the measure does not depend on the order of the ranked docs (set
  measures, counts; and Hits, Judged and NCG without a cutoff, :data:`ORDER_FREE_WHOLE`);
  its value under any order is the expectation.

* **enumeration by group**: for the other measures that are a sum over ranked docs of a
  term depending on the doc's rank, grade and the grades above it (infAP, RprecMult,
  RBPResid: :data:`ADDITIVE`; those of its names with a closed form use it), a group's arrangement changes only its own
  docs' terms, so each group is enumerated alone, the others as ranked.
* **enumeration**: for every other measure (the gain-profile and C/W/L measures...) each
  query's tie groups are expanded into every distinct arrangement of their grades
  (arrangements of a multiset are equally likely: each stands for the same number of
  orders), the measure's own kernel runs once on all of them, and each query takes the
  mean of its arrangements. Exact, but the number of arrangements grows
  quickly (a group of 20 docs, 10 relevant: 184,756); above :data:`MAX_ARRANGEMENTS` per
  query, or :data:`MAX_EXPANDED` ranked docs in all, the evaluation is refused with a line
  naming the query, never approximated. With a cutoff k only the groups starting above k
  are arranged (a measure at k reads the top k). It loops over the tied queries in Python.

The diversity measures read subtopic pairs per document, not grades, and are refused
under ``expected``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import InvalidParameterError
from serpeval.core.segments import take_segments, weighted_bincount
from serpeval.measures._common import safe_divide
from serpeval.measures._segments import (
    Picked,
    judged_docs,
    memo,
    nonrelevant_docs,
    picked,
    positive_docs,
    prefix_sums,
    relevant_docs,
)
from serpeval.measures.gains import apply_gains, exp_shift, parse_gain_table
from serpeval.measures.ndcg import gain_docs, scaled_ideal_dcg, unscale
from serpeval.measures.rbp import normalized_gains, rbp
from serpeval.ranking import NONPOOL, Rankings

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray

    from serpeval.measures.spec import Measure
    from serpeval.ranking import Rankings

__all__ = ["MAX_ARRANGEMENTS", "MAX_EXPANDED", "ORDER_FREE_WHOLE", "TieGroups", "expected_values", "method",
           "tie_groups_of"]

MAX_ARRANGEMENTS = 50_000
"""The most distinct grade arrangements of one query the enumeration method expands."""
MAX_EXPANDED = 20_000_000
"""The most ranked docs, over all expanded arrangements, the enumeration method builds."""


# ----------------------------------------------------------------------------- groups


@dataclass(frozen=True, eq=False)
class TieGroups:
    """The tie groups of a :class:`~serpeval.ranking.Rankings` under ``expected``.

    Per ranked doc: ``start`` (0-based position of its group's first doc in its query),
    ``size`` (its group's size) and ``group`` (its group's index). Per group: ``first``
    (flat index of its first doc), ``sizes``, ``segment`` (its query) and ``starts``.
    """

    start: NDArray[np.int64]
    size: NDArray[np.int64]
    group: NDArray[np.int64]
    first: NDArray[np.int64]
    sizes: NDArray[np.int64]
    segment: NDArray[np.int64]
    starts: NDArray[np.int64]


def tie_groups_of(r: Rankings) -> TieGroups:
    """The tie groups of ``r`` (memoised); every doc its own group when ``r`` has no tie ids."""
    def make() -> TieGroups:
        n = len(r.grades)
        new = np.ones(n, dtype=bool)
        if n > 1:
            ids = r.tie_ids
            new[1:] = (r.segment[1:] != r.segment[:-1])
            if ids is not None:
                new[1:] |= ids[1:] != ids[:-1]
            else:
                new[1:] = True
        first = np.flatnonzero(new)
        sizes = np.diff(np.append(first, n))
        group = np.cumsum(new, dtype=np.int64) - 1
        segment = r.segment[first] if n else np.zeros(0, dtype=np.int64)
        starts = r.position[first] if n else np.zeros(0, dtype=np.int64)
        return TieGroups(starts[group], sizes[group], group, first, sizes, segment, starts)

    return memo(r, "tie_groups", make)


@dataclass(frozen=True, eq=False)
class _Placed:
    """Some ranked docs (a :class:`~serpeval.measures._segments.Picked` set: relevant docs,
    docs with a gain) and their tie groups, found by binary search in ``Rankings.tie_ids``
    (so the work is the size of the set, not of the ranking): ``start`` (0-based position of
    the group's first doc), ``size``, ``first`` (flat index of the group's first doc)."""

    docs: Picked
    start: NDArray[np.int64]
    size: NDArray[np.int64]
    first: NDArray[np.int64]

    @property
    def end(self) -> NDArray[np.int64]:
        return self.start + self.size

    def in_group(self) -> NDArray[np.int64]:
        """Per doc: how many docs of the set share its tie group (itself included)."""
        ids = self._ids()
        return np.searchsorted(ids, ids, side="right") - np.searchsorted(ids, ids, side="left")

    def _ids(self) -> NDArray[np.int64]:
        return self.first  # the first doc's flat index identifies the group (increasing)


@dataclass(frozen=True, eq=False)
class _TiedRows:
    """The ranked docs inside tie groups of two or more (flat indices, increasing; a few
    percent of a run), each with its group's first flat index and size: built in one pass
    over the tie ids, then every lookup searches this short list, not the whole ranking."""

    rows: NDArray[np.int64]
    first: NDArray[np.int64]
    size: NDArray[np.int64]


def _tied_rows(r: Rankings) -> _TiedRows:
    def make() -> _TiedRows:
        ids = r.tie_ids
        if ids is None or len(ids) < 2:
            z = np.zeros(0, dtype=np.int64)
            return _TiedRows(z, z, z)
        same = ids[1:] == ids[:-1]
        inside = np.zeros(len(ids), dtype=bool)
        inside[1:] = same
        inside[:-1] |= same
        rows = np.flatnonzero(inside)
        own = ids[rows]
        new = np.ones(len(rows), dtype=bool)
        new[1:] = own[1:] != own[:-1]
        starts = np.flatnonzero(new)
        sizes = np.diff(np.append(starts, len(rows)))
        group = np.cumsum(new) - 1
        return _TiedRows(rows, rows[starts][group], sizes[group])

    return memo(r, "tied_rows", make)


def _placed(r: Rankings, docs: Picked) -> _Placed:
    """``docs`` with their tie groups (memoised per picked set: the relevant docs and the
    docs with a gain are often the same set)."""
    def make() -> _Placed:
        tied = _tied_rows(r)
        first = docs.index.copy()
        size = np.ones(len(first), dtype=np.int64)
        at = np.searchsorted(tied.rows, docs.index)
        hit = at < len(tied.rows)
        hit[hit] = tied.rows[at[hit]] == docs.index[hit]
        first[hit] = tied.first[at[hit]]
        size[hit] = tied.size[at[hit]]
        return _Placed(docs, first - r.offsets[docs.segment], size, first)

    return memo(r, ("tie_placed", id(docs)), make)


def _relevant(r: Rankings, rel: int) -> _Placed:
    return _placed(r, relevant_docs(r, rel))


def _share_in_top(p: _Placed, k: NDArray[np.int64] | int | None) -> NDArray[np.float64]:
    """Per doc: the probability that it ranks in the top ``k`` (per query when an array): a
    doc is at each position of its group with probability 1/size: clip((k - start)/size, 0, 1)."""
    if k is None:
        return np.ones(len(p.start))
    kk = np.asarray(k, dtype=np.int64)
    if kk.ndim:
        kk = kk[p.docs.segment]
    return np.clip((kk - p.start) / p.size, 0.0, 1.0)


def expected_hits(r: Rankings, rel: int, k: NDArray[np.int64] | int | None) -> NDArray[np.float64]:
    """Per query: the expected number of relevant docs (grade >= rel) in the top ``k``."""
    p = _relevant(r, rel)
    return weighted_bincount(p.docs.segment, _share_in_top(p, k), r.n_queries)


# ----------------------------------------------------------------------------- closed forms


def _precision(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    return expected_hits(r, rel, cutoff) / float(cutoff)


def _recall(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    return safe_divide(expected_hits(r, rel, cutoff), r.num_rel(rel))


def _rprec(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    num_rel = r.num_rel(rel)
    return safe_divide(expected_hits(r, rel, num_rel), num_rel)


def _harmonic(n: int) -> NDArray[np.float64]:
    """H[x] = sum over positions p < x of 1 / (p + 1), for x = 0..n."""
    out = np.zeros(n + 1)
    np.cumsum(1.0 / np.arange(1, n + 1, dtype=np.float64), out=out[1:])
    return out


def _average_precision(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """E[AP]: per relevant doc of group G (start s, size n, r_G relevant, R_before above G),
    (1/n) [(1 + R_before) A + (r_G - 1)/(n - 1) B], A = sum_j 1/(s+j+1), B = sum_j j/(s+j+1)
    over the offsets j with s + j < k."""
    p = _relevant(r, rel)
    s, n = p.start, p.size
    before = p.docs.count_above(p.first, p.docs.segment)  # relevant docs above the group
    top = s + n if cutoff is None else np.minimum(s + n, cutoff)
    top = np.maximum(top, s)
    h = _harmonic(int(top.max(initial=0)) + 1)
    a = h[top] - h[s]  # sum over kept offsets of 1/(s+j+1)
    b = (top - s) - (s + 1.0) * a  # sum over kept offsets of j/(s+j+1)
    frac = np.divide(p.in_group() - 1.0, n - 1.0, out=np.zeros(len(s)), where=n > 1)
    value = ((1.0 + before) * a + frac * b) / n
    return safe_divide(weighted_bincount(p.docs.segment, value, r.n_queries), r.num_rel(rel))


def _first_relevant_group(r: Rankings, rel: int
                          ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Per query with a relevant ranked doc: the query, its first relevant group's start s,
    size n and number of relevant docs c."""
    p = _relevant(r, rel)
    has = np.flatnonzero(p.docs.count > 0)
    at = p.docs.offsets[:-1][has]  # the first relevant doc of each such query
    return has, p.start[at], p.size[at], p.in_group()[at]


def _log_choose(n: NDArray[np.float64], c: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.special import gammaln

    return gammaln(n + 1.0) - gammaln(c + 1.0) - gammaln(n - c + 1.0)


def _reciprocal_rank(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """E[RR] = sum_j P(first relevant of the group at offset j) / (s + j + 1), with
    P = C(n-1-j, c-1) / C(n, c), over the offsets j with s + j < k."""
    q, s, n, c = _first_relevant_group(r, rel)
    out = np.zeros(r.n_queries)
    if q.size == 0:
        return out
    plain = n == 1  # no tie: 1 / rank
    keep = plain if cutoff is None else plain & (s < cutoff)
    out[q[keep]] = 1.0 / (s[keep] + 1.0)
    tied = np.flatnonzero(~plain)
    if tied.size == 0:
        return out
    q, s, n, c = q[tied], s[tied], n[tied], c[tied]
    span = n - c + 1  # the first relevant cannot be lower than offset n - c
    row = np.repeat(np.arange(len(q)), span)
    j = np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span)
    nn, cc = n[row].astype(np.float64), c[row].astype(np.float64)
    prob = np.exp(_log_choose(nn - 1.0 - j, cc - 1.0) - _log_choose(nn, cc))
    pos = s[row] + j
    inside = np.ones(len(j), dtype=bool) if cutoff is None else pos < cutoff
    out += weighted_bincount(q[row[inside]], prob[inside] / (pos[inside] + 1.0), r.n_queries)
    return out


def _success(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """E[Success@k] = P(the first relevant is in the top k) = 1 - C(n - (k - s), c) / C(n, c)
    for the first relevant group (start s, size n, c relevant); 1 when it ends by k, 0 when
    it starts after."""
    q, s, n, c = _first_relevant_group(r, rel)
    out = np.zeros(r.n_queries)
    if q.size == 0:
        return out
    if cutoff is None:
        out[q] = 1.0
        return out
    inside = np.clip(cutoff - s, 0, n)  # the group's positions within the top k
    rest = (n - inside).astype(np.float64)
    cf = c.astype(np.float64)
    miss = np.where(rest >= cf, np.exp(_log_choose(np.maximum(rest, cf), cf) - _log_choose(n.astype(np.float64), cf)),
                    0.0)
    out[q] = 1.0 - np.where(inside == 0, 1.0, miss)
    return out


def _discount_table(n: int) -> NDArray[np.float64]:
    """W[x] = sum over positions p < x of 1 / log2(p + 2), for x = 0..n."""
    out = np.zeros(n + 1)
    np.cumsum(1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0), out=out[1:])
    return out


def _scaled_dcg(r: Rankings, cutoff: int | None, gain: Any, gains: str) -> NDArray[np.float64]:
    """E[DCG@k] divided by the query's 2^shift (as ``ndcg.dcg_at``): every doc's gain times
    the mean discount over its group's positions in the top k."""

    table = parse_gain_table(gains) if gains else {}
    p = _placed(r, gain_docs(r, gain, gains))
    shift = memo(r, ("exp_shift", gain, gains), lambda: exp_shift(r, gain, table))
    scale = None if shift is None else shift[p.docs.segment]
    value = apply_gains(r.grades[p.docs.index], gain, table, scale)
    s, n = p.start, p.size
    top = s + n if cutoff is None else np.minimum(s + n, cutoff)
    top = np.maximum(top, s)
    w = memo(r, ("tie_discounts", int(top.max(initial=0)) + 1),
             lambda: _discount_table(int(top.max(initial=0)) + 1))
    return weighted_bincount(p.docs.segment, value * ((w[top] - w[s]) / n), r.n_queries)


def _dcg(r: Rankings, *, cutoff: int | None, gain: Any, gains: str = "") -> NDArray[np.float64]:
    return unscale(r, _scaled_dcg(r, cutoff, gain, gains), gain, gains, "DCG")


def _ndcg(r: Rankings, *, cutoff: int | None, gain: Any, gains: str = "") -> NDArray[np.float64]:
    return safe_divide(_scaled_dcg(r, cutoff, gain, gains), scaled_ideal_dcg(r, cutoff, gain, gains))


def _mean_power(p: float, s: NDArray[np.int64], n: NDArray[np.int64]) -> NDArray[np.float64]:
    """The mean of p^pos over the positions s..s+n-1: p^s (1 - p^n) / (n (1 - p)); 1 for
    p = 1, and for p = 0 only position 0 weighs (0^0 = 1)."""
    if p == 1.0:
        return np.ones(len(s))
    if p == 0.0:
        return (s == 0) / n
    return np.power(p, s) * (1.0 - np.power(p, n)) / (n * (1.0 - p))


def _rbp(r: Rankings, *, cutoff: None, p: float, gains: str, scale: str = "trec", min_grade: int = 1
         ) -> NDArray[np.float64]:
    """E[RBP] = (1 - p) * sum over docs d of gain_d * mean of p^pos over d's group's
    positions (the gains as :func:`serpeval.measures.rbp.rbp` gives them: they depend on
    grades and the query's judgments, not on the order)."""

    table = parse_gain_table(gains) if gains else {}
    if scale != "trec":
        if table:  # the kernel's own refusal
            return rbp(r, cutoff=cutoff, p=p, gains=gains, scale=scale, min_grade=min_grade)
        docs = relevant_docs(r, min_grade)
        value = r.grades[docs.index].astype(np.float64) if scale == "grade" else np.ones(len(docs.index))
    else:
        docs = picked(r, "all", lambda: np.ones(len(r.grades), dtype=bool)) if table else positive_docs(r)
        value = normalized_gains(r, table, docs)
    placed = _placed(r, docs)
    weight = _mean_power(p, placed.start, placed.size)
    return (1.0 - p) * weighted_bincount(docs.segment, value * weight, r.n_queries)


def _err(r: Rankings, *, cutoff: int | None, max_grade: int) -> NDArray[np.float64]:
    """E[ERR@k]: a doc d of group G (start s, size n) with stop probability R_d is reached
    through every doc above G (the product P of their 1 - R, whatever their order) and
    through the docs of G above it, a uniform random j-subset of G's other docs when d is
    at offset j (probability 1/n). So E = sum_d R_d P (1/n) sum_{j: s+j<k} f_j / (s+j+1),
    f_j the mean over j-subsets of G minus d of the product of their 1 - R, computed by the
    recurrence f_j' = ((m+1-j) f_j + j x f_{j-1}) / (m+1) as G's other docs are added one by
    one (an average of products in [0, 1]: no large numbers)."""

    def stops() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        g = np.clip(r.grades, 0, max_grade).astype(np.float64)
        stop = (np.exp2(g) - 1.0) / 2.0**max_grade
        log_continue = np.log1p(-stop)
        return stop, np.exp(prefix_sums(log_continue, r.offsets) - log_continue)  # reach of each doc

    stop, reach = memo(r, ("err_stops", max_grade), stops)
    p = _placed(r, positive_docs(r))
    keep = np.ones(len(p.start), dtype=bool) if cutoff is None else p.start < cutoff
    idx, s, n, first, seg = p.docs.index[keep], p.start[keep], p.size[keep], p.first[keep], p.docs.segment[keep]
    top = n if cutoff is None else np.minimum(n, cutoff - s)  # offsets j < top fall in the top k
    h = np.zeros(len(idx))
    single = n == 1
    h[single] = 1.0 / (s[single] + 1.0)
    tied = np.flatnonzero(~single)
    if tied.size:
        order = tied[np.argsort(-n[tied], kind="stable")]  # longest groups first: the active ones lead
        width = int(top[order].max())
        f = np.zeros((len(order), width))
        f[:, 0] = 1.0
        m = np.zeros(len(order))
        j = np.arange(1, width, dtype=np.float64)
        sizes = n[order]
        for t in range(int(sizes[0])):  # the t-th doc of every group still going, one step each
            going = int(np.searchsorted(-sizes, -t, side="left"))  # groups with more than t docs
            rows = np.arange(going)
            item = first[order[:going]] + t
            add = item != idx[order[:going]]  # every doc of the group but d itself
            rows, item = rows[add], item[add]
            x = 1.0 - stop[item]
            mm = m[rows][:, None] + 1.0
            f[rows, 1:] = ((mm - j) * f[rows, 1:] + j * x[:, None] * f[rows, :-1]) / mm
            m[rows] += 1.0
        offsets = np.arange(width, dtype=np.float64)
        inside = offsets[None, :] < top[order][:, None]
        h[order] = np.where(inside, f / (s[order][:, None] + offsets[None, :] + 1.0), 0.0).sum(axis=1)
    value = stop[idx] * reach[first] * h / n
    return weighted_bincount(seg, value, r.n_queries)


def _bpref(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """E[bpref]: for a relevant doc d of group G, its order among G's K judged non-relevant
    docs is uniform, so the non-relevant docs above it are a + X with X uniform on 0..K (a:
    those above G). Its term 1 - min(a + X, R)/min(N, R) (1 when a + X = 0) has the mean
    1 - (S(a+K) - S(a-1)) / ((K+1) min(N, R)), S(t) = sum_{v<=t} min(v, R)."""

    p = _relevant(r, rel)
    seg = p.docs.segment
    nonrel = nonrelevant_docs(r, rel)
    a = nonrel.count_above(p.first, seg).astype(np.float64)
    k = nonrel.count_above(p.first + p.size, seg).astype(np.float64) - a
    num_rel = r.num_rel(rel).astype(np.float64)
    big_r = num_rel[seg]
    den = np.minimum(r.num_nonrel(rel)[seg], big_r).astype(np.float64)

    def partial(t: NDArray[np.float64]) -> NDArray[np.float64]:  # sum over v = 0..t of min(v, R)
        t = np.maximum(t, -1.0)
        low = np.minimum(t, big_r)
        return low * (low + 1.0) / 2.0 + np.maximum(t - big_r, 0.0) * big_r

    lost = np.divide(partial(a + k) - partial(a - 1.0), (k + 1.0) * den, out=np.zeros(len(seg)), where=den > 0)
    total = np.bincount(seg, weights=1.0 - lost, minlength=r.n_queries)
    return safe_divide(total, num_rel)


def _expected_in_top(r: Rankings, docs: Picked, k: int | None) -> NDArray[np.float64]:
    """Per query: the expected number of ``docs`` in the top ``k`` (all retrieved when None)."""
    p = _placed(r, docs)
    return weighted_bincount(p.docs.segment, _share_in_top(p, k), r.n_queries)


def _hits(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """E[Hits@k]: the expected relevant docs in the top k (P@k's numerator)."""
    return expected_hits(r, rel, cutoff)


def _relative_precision(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    """E[RelP@k] = E[relevant in the top k] / min(k, R) (the denominator does not depend on the order)."""
    return safe_divide(expected_hits(r, rel, cutoff), np.minimum(cutoff, r.num_rel(rel)).astype(np.float64))


def _judged(r: Rankings, *, cutoff: int | None) -> NDArray[np.float64]:
    """E[Judged@k] = E[docs in the qrels in the top k] / min(k, retrieved)."""
    listed = picked(r, "in_qrels", lambda: r.grades != NONPOOL)  # the kernel's own set
    depth = r.n_ret if cutoff is None else np.minimum(r.n_ret, cutoff)
    return safe_divide(_expected_in_top(r, listed, cutoff), depth)


def _graded(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """E[Graded@k] = E[docs with a grade >= 0 in the top k] / k."""
    return _expected_in_top(r, judged_docs(r), cutoff) / float(cutoff)


def _unjudged(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """E[Unjudged@k] = E[docs not in the qrels or with a negative grade in the top k] / k."""
    return _expected_in_top(r, picked(r, "ungraded", lambda: r.grades < 0), cutoff) / float(cutoff)


CLOSED_FORMS: dict[str, Callable[..., NDArray[np.float64]]] = {
    "P": _precision,
    "R": _recall,
    "Rprec": _rprec,
    "AP": _average_precision,
    "GMAP": _average_precision,  # AP per query, a geometric mean over queries
    "RR": _reciprocal_rank,
    "Success": _success,
    "DCG": _dcg,
    "nDCG": _ndcg,
    "RBP": _rbp,
    "ERR": _err,
    "Bpref": _bpref,
    "GMBpref": _bpref,  # bpref per query, a geometric mean over queries
    # counts of a set of docs in the top k: the expectation is linear, each doc in the top k
    # with probability clip((k - s)/n, 0, 1) (these were enumerated group by group before)
    "Hits": _hits,
    "RelP": _relative_precision,
    "Judged": _judged,
    "Graded": _graded,
    "Unjudged": _unjudged,
}
"""Measures (by canonical family name) whose expectation has a closed form here."""

ORDER_FREE = frozenset({
    "SetP", "SetR", "SetF", "SetRelP", "SetAP", "Utility", "NumRet", "NumRel", "NumRelRet",
    "NumNonrelJudgedRet", "NumQ", "IDCG",
})
"""Measures (canonical family names) that do not depend on the order of the ranked docs
(and take no cutoff): any order gives the expectation. A name not registered is ignored."""


ORDER_FREE_WHOLE = frozenset({"Hits", "Judged", "NCG"})
"""Measures (canonical family names) whose cutoff is optional and that, without one, read the
whole ranking as a set: the relevant docs retrieved (Hits = NumRelRet), the share of the
retrieved docs in the qrels (Judged), the gain retrieved over all judged gain (NCG). Without
a cutoff any order gives the expectation; with one they are enumerated."""


def _order_free(spec_name: str, cutoff: int | None) -> bool:
    if cutoff is None and spec_name in ORDER_FREE_WHOLE:
        return True
    return spec_name in ORDER_FREE and (cutoff is None or spec_name == "IDCG")


def method(spec: Any) -> str:
    """How ``ties="expected"`` computes ``spec``'s measure (one line for ``serpeval measures``)."""
    if spec.subtopics:
        return ("refused: the diversity measures read subtopics per document, not grades; "
                "use another tie policy")
    if spec.name in CLOSED_FORMS:
        return "exact, closed form over each tie group (McSherry & Najork 2008), vectorized"
    if spec.name in ORDER_FREE:
        return "exact: the measure does not depend on the order of the ranked docs"
    whole = ("without a cutoff exact as it is (the whole ranking read as a set does not depend on the "
             "order); with one, " if spec.name in ORDER_FREE_WHOLE else "")
    limits = (f"refused above {MAX_ARRANGEMENTS:,} arrangements per query or {MAX_EXPANDED:,} ranked docs "
              "in all")
    if spec.name in ADDITIVE:
        return (f"{whole or 'exact, '}by enumerating the grade arrangements of each tie group on its own (a sum of "
                f"per-doc terms: groups add up; {limits})")
    return (f"{whole or 'exact, '}by enumerating every distinct grade arrangement of each query's tie groups "
            f"({limits})")


# ----------------------------------------------------------------------------- enumeration


@lru_cache(maxsize=4096)
def _arrangements(grades: tuple[int, ...]) -> NDArray[np.int64]:
    """Every distinct order of a multiset of grades, one per row (``grades`` sorted)."""
    values, counts = np.unique(np.array(grades), return_counts=True)  # int64, or float64 (fractional grades)
    n = len(grades)
    rows: list[list[int]] = []

    def place(prefix: list[int], left: list[int]) -> None:
        if len(prefix) == n:
            rows.append(prefix.copy())
            return
        for i, c in enumerate(left):
            if c:
                left[i] -= 1
                prefix.append(values[i].item())
                place(prefix, left)
                prefix.pop()
                left[i] += 1

    place([], [int(c) for c in counts])
    return np.array(rows, dtype=values.dtype).reshape(len(rows), n)


def _log_arrangements(r: Rankings, t: TieGroups, kept: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per query: log of the number of distinct grade arrangements of its ``kept`` tie groups."""
    from scipy.special import gammaln

    log_fact_sizes = weighted_bincount(t.segment[kept], gammaln(t.sizes[kept] + 1.0), r.n_queries)
    # counts of each (group, grade) pair
    docs = kept[t.group]
    keys = np.stack([t.group[docs], r.grades[docs]])
    _, counts = np.unique(keys, axis=1, return_counts=True) if docs.any() else (None, np.zeros(0))
    pair_groups = np.unique(keys, axis=1)[0].astype(np.int64) if docs.any() else np.zeros(0, dtype=np.int64)
    log_fact_counts = weighted_bincount(t.segment[pair_groups], gammaln(counts + 1.0), r.n_queries)
    return log_fact_sizes - log_fact_counts


def _enumerate(measure: Measure, r: Rankings, params: dict[str, Any]) -> NDArray[np.float64]:
    """The mean of the measure's own kernel over every distinct grade arrangement of each
    query's tie groups (see the module docstring)."""

    t = tie_groups_of(r)
    # With a cutoff k only the groups that start above k are arranged: a measure at k reads
    # the top k (the brute-force tests check this for every registered measure).
    kept = (t.sizes > 1) if measure.cutoff is None else (t.sizes > 1) & (t.starts < measure.cutoff)
    log_count = _log_arrangements(r, t, kept)
    count = np.rint(np.exp(log_count)).astype(np.int64)
    too_many = np.flatnonzero(log_count > math.log(MAX_ARRANGEMENTS) + 1e-9)
    if too_many.size:
        q = int(too_many[np.argmax(log_count[too_many])])
        raise InvalidParameterError(
            f"ties='expected': {measure} has no closed form and query {str(r.query_ids[q])!r} has "
            f"about {math.exp(log_count[q]):.3g} distinct orders of its tied grades ({too_many.size} "
            f"quer{'y' if too_many.size == 1 else 'ies'} above {MAX_ARRANGEMENTS:,}), too many to enumerate "
            "exactly; use another tie policy for this measure, or a measure with a closed form "
            "(serpeval measures NAME says which)."
        )
    expanded = int(np.dot(count, r.n_ret))
    if expanded > MAX_EXPANDED:
        raise InvalidParameterError(
            f"ties='expected': {measure} would expand to {expanded:,} ranked docs over every order of the "
            f"tie groups (at most {MAX_EXPANDED:,}); use another tie policy for this measure."
        )
    copy_of = np.repeat(np.arange(r.n_queries), count)  # the query of every arrangement
    offsets, flat = take_segments(r.offsets, copy_of)
    grades = r.grades[flat]
    ideal_offsets, ideal_flat = take_segments(r.ideal_offsets, copy_of)
    tied_groups = np.flatnonzero(kept)
    if tied_groups.size:
        copy_start = np.concatenate([[0], np.cumsum(count)[:-1]])
        by_query: dict[int, list[int]] = {}
        for g in tied_groups.tolist():
            by_query.setdefault(int(t.segment[g]), []).append(g)
        for q, groups in by_query.items():  # Python over the tied queries: the fallback path
            options = [_arrangements(tuple(sorted(r.grades[t.first[g]: t.first[g] + t.sizes[g]].tolist())))
                       for g in groups]
            picks = np.array(list(itertools.product(*[range(len(o)) for o in options])), dtype=np.int64)
            base = offsets[copy_start[q]: copy_start[q] + count[q]]
            for which, (g, o) in enumerate(zip(groups, options, strict=True)):
                at = base[:, None] + int(t.starts[g]) + np.arange(int(t.sizes[g]))
                grades[at] = o[picks[:, which]]
    copies = Rankings(r.query_ids[copy_of], offsets, grades, ideal_offsets, r.ideal_grades[ideal_flat],
                      r.coverage)
    values = np.asarray(measure.spec.kernel(copies, cutoff=measure.cutoff, **params), dtype=np.float64)
    return weighted_bincount(copy_of, values, r.n_queries) / np.maximum(count, 1)


def _group_log_arrangements(r: Rankings, t: TieGroups, kept: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per group: log of the number of distinct grade arrangements (0 where not ``kept``)."""
    from scipy.special import gammaln

    out = np.zeros(len(t.sizes))
    out[kept] = gammaln(t.sizes[kept] + 1.0)
    docs = kept[t.group]
    if docs.any():
        keys = np.stack([t.group[docs], r.grades[docs]])
        pairs, counts = np.unique(keys, axis=1, return_counts=True)
        out -= np.bincount(pairs[0].astype(np.int64), weights=gammaln(counts + 1.0), minlength=len(t.sizes))
    return out


def _enumerate_by_group(measure: Measure, r: Rankings, params: dict[str, Any]) -> NDArray[np.float64]:
    """For a measure that is a sum over ranked docs of a term depending on the doc's rank,
    its grade and the grades above it (in any order), plus order-free normalisations
    (:data:`ADDITIVE`): a group's arrangement changes only its own docs' terms, so
    E = M(base) + sum over groups G of (mean over G's arrangements, the others as ranked, of
    M - M(base)). The arrangements of each group are enumerated alone: their sum, not their
    product, per query."""

    t = tie_groups_of(r)
    kept = (t.sizes > 1) if measure.cutoff is None else (t.sizes > 1) & (t.starts < measure.cutoff)
    log_a = _group_log_arrangements(r, t, kept)
    per_group = np.where(kept, np.rint(np.exp(log_a)), 0).astype(np.int64)
    count = 1 + np.bincount(t.segment, weights=per_group, minlength=r.n_queries).astype(np.int64)
    worst = int(np.argmax(count)) if len(count) else 0
    if len(count) and count[worst] > MAX_ARRANGEMENTS:
        raise InvalidParameterError(
            f"ties='expected': {measure} would need {int(count[worst]):,} orders of the tie groups of query "
            f"{str(r.query_ids[worst])!r} (at most {MAX_ARRANGEMENTS:,}), too many to enumerate exactly; use "
            "another tie policy for this measure."
        )
    if int(np.dot(count, r.n_ret)) > MAX_EXPANDED:
        raise InvalidParameterError(
            f"ties='expected': {measure} would expand to {int(np.dot(count, r.n_ret)):,} ranked docs (at most "
            f"{MAX_EXPANDED:,}); use another tie policy for this measure."
        )
    copy_of = np.repeat(np.arange(r.n_queries), count)
    offsets, flat = take_segments(r.offsets, copy_of)
    grades = r.grades[flat]
    ideal_offsets, ideal_flat = take_segments(r.ideal_offsets, copy_of)
    copy_start = np.concatenate([[0], np.cumsum(count)[:-1]])
    weight = np.zeros(len(copy_of))
    groups_in = np.bincount(t.segment[kept], minlength=r.n_queries)
    weight[copy_start] = 1.0 - groups_in  # the base ranking, once per query
    next_copy = copy_start + 1
    for g in np.flatnonzero(kept).tolist():  # Python over the tied groups: the fallback path
        q = int(t.segment[g])
        options = _arrangements(tuple(sorted(r.grades[t.first[g]: t.first[g] + t.sizes[g]].tolist())))
        at = int(next_copy[q])
        rows = offsets[at: at + len(options)]
        grades[rows[:, None] + int(t.starts[g]) + np.arange(int(t.sizes[g]))] = options
        weight[at: at + len(options)] = 1.0 / len(options)
        next_copy[q] += len(options)
    copies = Rankings(r.query_ids[copy_of], offsets, grades, ideal_offsets, r.ideal_grades[ideal_flat],
                      r.coverage)
    values = np.asarray(measure.spec.kernel(copies, cutoff=measure.cutoff, **params), dtype=np.float64)
    return weighted_bincount(copy_of, values * weight, r.n_queries)


ADDITIVE = frozenset({"infAP", "Judged", "Graded", "Unjudged", "Hits", "RelP", "RprecMult", "RBPResid"})
"""Measures (canonical family names) that are a sum over ranked docs of a term depending on the
doc's rank, its grade and the grades above it (not their order), over order-free
normalisations: their groups are enumerated one at a time (:func:`_enumerate_by_group`)."""


# ----------------------------------------------------------------------------- dispatch


def expected_values(measure: Measure, r: Rankings, params: dict[str, Any]) -> NDArray[np.float64]:
    """Per-query expectation of ``measure`` over every order of each tie group of ``r``
    (``params`` without ``judged_only``, already applied to ``r``)."""
    spec = measure.spec
    if spec.subtopics:
        raise InvalidParameterError(
            f"ties='expected' is not available for {measure}: the diversity measures read subtopics per "
            "document, not grades; use ties=trec_eval, optimistic, pessimistic for it."
        )
    if r.tie_ids is None or _order_free(spec.name, measure.cutoff):
        return np.asarray(spec.kernel(r, cutoff=measure.cutoff, **params), dtype=np.float64)
    closed = CLOSED_FORMS.get(spec.name)
    if closed is not None:
        return np.asarray(closed(r, cutoff=measure.cutoff, **params), dtype=np.float64)
    if spec.name in ADDITIVE:
        return _enumerate_by_group(measure, r, params)
    return _enumerate(measure, r, params)
