"""How two runs differ, without judgments: overlap@k, rank-biased overlap, Kendall's tau.

Per query, with ``A`` and ``B`` the two rankings (cut at ``depth`` when given), ``X_d`` the
number of documents the top ``d`` of both share (a list shorter than ``d`` contributes all it
has), ``s <= l`` the two lengths and ``w_d = p^d / d``:

* **overlap@k** = ``X_k / k``.
* **RBO** (Webber, Moffat & Zobel 2010, "A similarity measure for indefinite rankings",
  TOIS 28(4)) of the infinite rankings of which ``A`` and ``B`` are prefixes is bounded by
  ``RBO_min <= RBO <= RBO_min + RBO_res`` and estimated by ``RBO_ext``:

  - ``RBO_min = (1-p)/p * (sum_{d<=l} (X_d - X_l) w_d - X_l ln(1-p))`` (eq. 11; unseen
    documents never match);
  - ``RBO_res``: what the unseen documents can add at most: ``(1-p)/p * sum_d
    (Xmax_d - X_d) w_d`` with ``Xmax_d = X_d`` for ``d <= s``, ``min(d, X_d + d - s)`` for
    ``s < d <= l`` and ``min(d, X_l + 2d - s - l)`` beyond ``l`` (every unseen document
    matches; eqs. 13 and 30), summed in closed form past ``f = s + l - X_l`` where
    ``Xmax_d = d``;
  - ``RBO_ext = (1-p)/p * (sum_{d<=l} X_d w_d + sum_{s<d<=l} X_s (d-s)/(s d) p^d)
    + ((X_l - X_s)/l + X_s/s) p^l`` (eq. 32; the agreement seen at the end continues).

  Edge cases: two empty rankings are identical (min = ext = 1, res = 0); one empty ranking
  shares nothing (min = ext = 0, res = 1).
* **Kendall's tau** on the documents both rankings hold: ``(C - D) / (n (n-1) / 2)`` over
  their ``n`` shared documents, ranks being distinct (tau-a = tau-b); NaN for ``n < 2``.
* **Changed documents** at ``k``: those in ``B``'s top k and not ``A``'s (entered) and the
  reverse (left); with qrels, how many of them nobody judged.

**Queries** (``missing=``): by default (``"skip"``) the diff is over the queries **both** runs
answer; a query only one run answers is left out, and counted and named (``only_a``,
``only_b``, the notes): scored as an empty ranking it would add overlap 0 and RBO 0 and pull
every mean down (two identical runs with half their queries one-sided would show RBO 0.5).
``"zero"`` keeps every query of either run, a one-sided query being an empty ranking on the
other side (overlap 0, RBO_min = RBO_ext = 0, RBO_res = 1, its documents all entered or left),
as ``evaluate``'s ``missing="zero"`` scores an absent query 0.

Vectorized: both runs ranked in one sort, ``X_d`` is a bincount and a cumulative sum over flat
per-query segments, tau counts concordant pairs over chunks of queries.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from serpeval.core.checks import check_count
from serpeval.core.errors import InputError, OptionError
from serpeval.core.tabular import Tabular
from serpeval.judgments.stacked import qrels_grades, sort_by, stack_runs

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["MISSING_RULES", "RunDiff", "diff_runs", "rbo_from_overlaps"]

#: How a query only one run answers is treated (see the module docstring).
MISSING_RULES = ("skip", "zero")
#: One-sided queries named in the notes (all of them are in ``RunDiff.only_a`` / ``only_b``).
_EXAMPLES = 5

#: Pairs of shared documents compared per chunk of queries in Kendall's tau.
_PAIR_CHUNK = 1 << 22


@dataclass(frozen=True, eq=False)
class RunDiff(Tabular):
    """Per-query differences between run ``a`` and run ``b`` (see the module docstring).

    Attributes:
        a, b: the runs' names (``b`` is the candidate: "entered" means entered ``b``'s top k).
        k: the depth of overlap@k and of the changed documents.
        p: RBO's persistence.
        depth: the depth both runs were cut at (None: whole rankings).
        query_ids: the queries compared, in byte order: those both runs answer (``missing``
            ``"skip"``) or every query of either run (``"zero"``).
        n_a, n_b: ranking lengths.
        overlap, rbo_min, rbo_res, rbo_ext, tau: per query.
        shared: documents both rankings hold.
        entered, left: documents that entered / left the top k.
        entered_unjudged, left_unjudged: of those, how many the qrels do not judge (None
            without qrels).
        unjudged: the changed, unjudged documents: ``(query_id, doc_id, "entered"|"left")``.
        qrels: the qrels' source, when given.
        only_a, only_b: queries only ``a`` / only ``b`` answers (byte order), whatever the rule.
        missing: the rule for them: ``"skip"`` (left out) or ``"zero"`` (empty rankings).
    """

    a: str
    b: str
    k: int
    p: float
    depth: int | None
    query_ids: NDArray[Any]
    n_a: NDArray[np.int64]
    n_b: NDArray[np.int64]
    overlap: NDArray[np.float64]
    rbo_min: NDArray[np.float64]
    rbo_res: NDArray[np.float64]
    rbo_ext: NDArray[np.float64]
    tau: NDArray[np.float64]
    shared: NDArray[np.int64]
    entered: NDArray[np.int64]
    left: NDArray[np.int64]
    entered_unjudged: NDArray[np.int64] | None = None
    left_unjudged: NDArray[np.int64] | None = None
    unjudged: tuple[tuple[str, str, str], ...] = ()
    qrels: str | None = None
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    missing: str = "skip"

    def to_dicts(self, per_query: bool = True) -> list[dict[str, Any]]:
        """One row per query (``per_query``), or one row of means."""
        if not per_query:
            return [self.summary()]
        k = self.k
        rows = []
        for i, q in enumerate(self.query_ids.tolist()):
            row: dict[str, Any] = {
                "query_id": q, f"overlap@{k}": float(self.overlap[i]),
                "RBO_min": float(self.rbo_min[i]), "RBO_res": float(self.rbo_res[i]),
                "RBO_ext": float(self.rbo_ext[i]), "tau": _none_if_nan(self.tau[i]),
                "shared": int(self.shared[i]), "entered": int(self.entered[i]), "left": int(self.left[i]),
            }
            if self.entered_unjudged is not None and self.left_unjudged is not None:
                row["entered unjudged"] = int(self.entered_unjudged[i])
                row["left unjudged"] = int(self.left_unjudged[i])
            rows.append(row)
        return rows

    def summary(self) -> dict[str, Any]:
        """Means over queries (tau over the queries where it is defined) and totals."""
        tau = self.tau[~np.isnan(self.tau)]
        out: dict[str, Any] = {
            "a": self.a, "b": self.b, "queries": len(self.query_ids),
            f"overlap@{self.k}": _mean(self.overlap), "RBO_min": _mean(self.rbo_min),
            "RBO_res": _mean(self.rbo_res), "RBO_ext": _mean(self.rbo_ext),
            "tau": float(tau.mean()) if len(tau) else None,
            "entered": int(self.entered.sum()), "left": int(self.left.sum()),
            "queries only in A": len(self.only_a), "queries only in B": len(self.only_b),
        }
        if self.entered_unjudged is not None and self.left_unjudged is not None:
            out["entered unjudged"] = int(self.entered_unjudged.sum())
            out["left unjudged"] = int(self.left_unjudged.sum())
        return out

    def notes(self) -> list[str]:
        """Which queries were compared, and the one-sided ones (count and the first few)."""
        if not (self.only_a or self.only_b):
            return [f"{len(self.query_ids)} queries, all answered by both runs"]
        sides = [f"only in {side}: {len(ids)} ({_examples(ids)})"
                 for side, ids in (("A", self.only_a), ("B", self.only_b)) if ids]
        if self.missing == "skip":
            return [f"compared on the {len(self.query_ids)} queries both runs answer; left out, "
                    + "; ".join(sides) + " (--missing zero scores them as empty rankings)"]
        return [f"all {len(self.query_ids)} queries of either run; scored as empty rankings on the "
                "other side (overlap 0, RBO 0), which lowers every mean: " + "; ".join(sides)]

    def most_changed(self, n: int = 10) -> list[dict[str, Any]]:
        """The ``n`` queries with the lowest RBO_ext (ties by lower overlap, then query id)."""
        rows = self.to_dicts()
        order = np.lexsort((np.arange(len(rows)), self.overlap, self.rbo_ext))
        return [rows[i] for i in order[:n]]

    def to_json_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "k": self.k, "p": self.p, "depth": self.depth,
                "qrels": self.qrels, "missing": self.missing, "only_a": list(self.only_a),
                "only_b": list(self.only_b), "notes": self.notes(),
                "summary": self.summary(), "per_query": self.to_dicts(),
                "unjudged": [{"query_id": q, "doc_id": d, "change": c} for q, d, c in self.unjudged]}

    def _html_caption(self) -> str:
        return f"{self.a} vs {self.b}"


def _mean(values: NDArray[np.float64]) -> float | None:
    return float(values.mean()) if len(values) else None


def _examples(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:_EXAMPLES])
    return shown + (f", ... {len(ids) - _EXAMPLES} more" if len(ids) > _EXAMPLES else "")


def _none_if_nan(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def diff_runs(run_a: Any, run_b: Any, *, k: int | None = None, p: float = 0.9, depth: int | None = None,
              qrels: Any | None = None, missing: str = "skip") -> RunDiff:
    """Compare two runs query by query without judgments (see the module docstring).

    Args:
        run_a: the first run (the baseline).
        run_b: the second run (the candidate).
        k: depth of overlap@k and of the changed documents (default 10, or ``depth`` when
            that is smaller; a ``k`` deeper than ``depth`` is refused).
        p: RBO persistence in (0, 1) (0.9 puts 86% of the weight on the top 10).
        depth: cut both rankings at this depth first (None: whole rankings).
        qrels: when given, the changed documents nobody judged are counted and listed.
        missing: a query only one run answers: ``"skip"`` (default: left out, counted in
            ``only_a`` / ``only_b``) or ``"zero"`` (an empty ranking on the other side).

    Raises:
        OptionError: ``k`` or ``depth`` not a positive integer, ``k > depth``, ``p`` outside (0, 1),
            ``missing`` not one of :data:`MISSING_RULES`.
        InputError: with ``missing="skip"``, the runs share no query.
        DuplicateError: a run retrieves a document twice for one query (file:line).
    """
    from serpeval.io import as_qrels, as_run

    depth = None if depth is None else check_count(depth, "depth")
    k = min(10, depth or 10) if k is None else check_count(k, "k")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p < 1.0:
        raise OptionError(f"p must be a number strictly between 0 and 1 (e.g. 0.9); got {p!r}.")
    if depth is not None and k > depth:
        raise OptionError(f"k ({k}) is deeper than depth ({depth}): rankings cut at {depth} share at most "
                          f"{depth} of their top {k}, so identical runs would show overlap@{k} = {depth / k:g}; "
                          f"use k <= {depth} (-k {depth}) or a deeper depth.")
    if missing not in MISSING_RULES:
        raise OptionError(f"missing must be one of {', '.join(MISSING_RULES)} (what to do with a query only "
                          f"one run answers); got {missing!r}.")
    a, b = as_run(run_a), as_run(run_b)
    if a.name == b.name:
        b = b.renamed(b.name + " (b)")
    stacked = stack_runs([a, b], depth)
    nq = stacked.n_queries
    lengths = stacked.lengths()
    n_a, n_b = lengths[:, 0], lengths[:, 1]
    rank_a = np.zeros(stacked.n_pairs, dtype=np.int64)
    rank_b = np.zeros(stacked.n_pairs, dtype=np.int64)
    in_a = stacked.run == 0
    rank_a[stacked.pair[in_a]] = stacked.rank[in_a]
    rank_b[stacked.pair[~in_a]] = stacked.rank[~in_a]
    both = (rank_a > 0) & (rank_b > 0)
    pq = stacked.pair_query
    shared = np.bincount(pq[both], minlength=nq).astype(np.int64)
    top_a = (rank_a > 0) & (rank_a <= k)
    top_b = (rank_b > 0) & (rank_b <= k)
    overlap = np.bincount(pq[top_a & top_b], minlength=nq) / float(k)
    entered_mask = top_b & ~top_a
    left_mask = top_a & ~top_b
    entered = np.bincount(pq[entered_mask], minlength=nq).astype(np.int64)
    left = np.bincount(pq[left_mask], minlength=nq).astype(np.int64)
    rbo_min, rbo_res, rbo_ext = rbo_from_overlaps(np.maximum(rank_a, rank_b)[both], pq[both], n_a, n_b, p)
    tau = _kendall_tau(pq[both], rank_a[both], rank_b[both], nq)
    entered_unjudged = left_unjudged = None
    unjudged: tuple[tuple[str, str, str], ...] = ()
    source = None
    if qrels is not None:
        q = as_qrels(qrels)
        source = q.source
        open_ = qrels_grades(stacked, q) < 0
        entered_unjudged = np.bincount(pq[entered_mask & open_], minlength=nq).astype(np.int64)
        left_unjudged = np.bincount(pq[left_mask & open_], minlength=nq).astype(np.int64)
        changed = np.flatnonzero((entered_mask | left_mask) & open_)
        changed = changed[np.lexsort((~entered_mask[changed], pq[changed]))]
        qids = stacked.query_ids.take(pa.array(pq[changed], pa.int64())).to_pylist()
        docs = stacked.pair_doc.take(pa.array(changed, pa.int64())).to_pylist()
        kinds = np.where(entered_mask[changed], "entered", "left").tolist()
        unjudged = tuple(zip(qids, docs, kinds, strict=True))
    query_ids = stacked.query_ids.to_numpy(zero_copy_only=False)
    only_a = tuple(query_ids[(n_a > 0) & (n_b == 0)].tolist())
    only_b = tuple(query_ids[(n_b > 0) & (n_a == 0)].tolist())
    keep = np.ones(nq, dtype=bool) if missing == "zero" else (n_a > 0) & (n_b > 0)
    if not keep.any():
        raise InputError(f"{a.name} and {b.name} answer no query in common ({a.name}: {len(only_a)} queries, e.g. "
                         f"{_examples(only_a)}; {b.name}: {len(only_b)}, e.g. {_examples(only_b)}); check that "
                         "they are runs of the same topics with the same query ids.")
    if qrels is not None and not keep.all():
        kept_ids = set(query_ids[keep].tolist())
        unjudged = tuple(u for u in unjudged if u[0] in kept_ids)
    return RunDiff(a.name, b.name, k, float(p), depth, query_ids[keep], n_a[keep].astype(np.int64),
                   n_b[keep].astype(np.int64), overlap[keep], rbo_min[keep], rbo_res[keep], rbo_ext[keep],
                   tau[keep], shared[keep], entered[keep], left[keep],
                   None if entered_unjudged is None else entered_unjudged[keep],
                   None if left_unjudged is None else left_unjudged[keep], unjudged, source, only_a, only_b,
                   missing)


def rbo_from_overlaps(depth_of_match: NDArray[np.int64], query: NDArray[np.int64], n_a: NDArray[np.int64],
                      n_b: NDArray[np.int64], p: float
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """RBO_min, RBO_res and RBO_ext per query (formulas in the module docstring).

    Args:
        depth_of_match: for every document both rankings hold, ``max(rank in A, rank in B)``
            (1-based): the depth from which it counts in ``X_d``.
        query: the query index of each of those documents.
        n_a, n_b: the ranking lengths per query.
        p: the persistence.
    """
    nq = len(n_a)
    s = np.minimum(n_a, n_b).astype(np.int64)
    big = np.maximum(n_a, n_b).astype(np.int64)
    x_l = np.bincount(query, minlength=nq).astype(np.int64)
    f = s + big - x_l  # from here on every deeper document could match: Xmax_d = d
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(f, out=offsets[1:])
    total = int(offsets[-1])
    seg = np.repeat(np.arange(nq), f)
    d = np.arange(total, dtype=np.int64) - offsets[:-1][seg] + 1
    events = np.bincount(offsets[:-1][query] + depth_of_match - 1, minlength=total)[:total]
    running = np.cumsum(events)
    before = np.concatenate([[0], running])[offsets[:-1]]
    x = (running - before[seg]).astype(np.float64)  # X_d, equal to X_l past l
    w = np.exp(d * np.log(p)) / d
    scale = (1.0 - p) / p
    s_e, l_e, xl_e = s[seg], big[seg], x_l[seg].astype(np.float64)
    within_l = d <= l_e

    def per_query(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(seg, weights=values, minlength=nq)  # type: ignore[return-value]

    log_term = -np.log1p(-p)
    rbo_min = scale * (per_query(np.where(within_l, (x - xl_e) * w, 0.0)) + x_l * log_term)
    # X_s, the overlap when the shorter ranking ends (0 when it is empty).
    at_s = (d == s_e) & (s_e > 0)
    x_s = np.zeros(nq)
    x_s[seg[at_s]] = x[at_s]
    xs_e = x_s[seg]
    tail_weight = np.where((d > s_e) & within_l & (s_e > 0),
                           xs_e * (d - s_e) / np.maximum(s_e, 1) * np.exp(d * np.log(p)) / d, 0.0)
    ext_head = scale * per_query(np.where(within_l, x * w, 0.0) + tail_weight)
    p_l = np.exp(big * np.log(p))
    with np.errstate(divide="ignore", invalid="ignore"):
        last = np.where(s > 0, (x_l - x_s) / np.maximum(big, 1) + x_s / np.maximum(s, 1), 0.0)
    rbo_ext = ext_head + last * p_l
    x_max = np.where(d <= s_e, x,
                     np.where(within_l, np.minimum(d, x + d - s_e), np.minimum(d, xl_e + 2 * d - s_e - l_e)))
    head = scale * per_query((x_max - x) * w)
    p_f = np.exp(f * np.log(p))
    rbo_res = head + p_f - scale * x_l * (log_term - per_query(w))
    empty = big == 0  # both rankings empty: identical
    rbo_min[empty], rbo_ext[empty], rbo_res[empty] = 1.0, 1.0, 0.0
    return rbo_min, np.maximum(rbo_res, 0.0), rbo_ext


def _kendall_tau(query: NDArray[np.int64], rank_a: NDArray[np.int64], rank_b: NDArray[np.int64],
                 nq: int) -> NDArray[np.float64]:
    """Kendall's tau between the A and B ranks of the shared documents of every query."""
    order = sort_by((query, "ascending"), (rank_a, "ascending"))
    query, rank_b = query[order], rank_b[order]
    n = np.bincount(query, minlength=nq).astype(np.int64)
    starts = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(n, out=starts[1:])
    pairs_per_query = n * (n - 1) // 2
    concordance = np.zeros(nq)
    # Chunks of whole queries, each with at most _PAIR_CHUNK pairs (one query may exceed it).
    bounds = np.searchsorted(np.cumsum(pairs_per_query), np.arange(0, pairs_per_query.sum() + 1, _PAIR_CHUNK),
                             side="right")
    edges = np.unique(np.concatenate([[0], bounds, [nq]]))
    for lo, hi in itertools.pairwise(edges):
        first, last = starts[lo], starts[hi]
        if last - first < 2:
            continue
        items = np.arange(first, last)
        later = starts[1:][query[items]] - items - 1  # how many later items share the query
        i = np.repeat(items, later)
        group_start = np.concatenate([[0], np.cumsum(later)[:-1]])
        j = i + 1 + (np.arange(len(i)) - np.repeat(group_start, later))
        sign = np.sign(rank_b[j] - rank_b[i]).astype(np.float64)  # A order is i < j
        concordance += np.bincount(query[i], weights=sign, minlength=nq)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n >= 2, concordance / np.maximum(pairs_per_query, 1), np.nan)
