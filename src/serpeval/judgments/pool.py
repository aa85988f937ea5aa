"""Pooling: which (query, document) pairs to judge next, from the runs to be compared.

Methods (``method=``), all over the runs' rankings cut at ``depth`` when it is given:

* ``depth`` - depth-k pooling (TREC): every document some run ranks in its top ``depth``.
  Ordered (and cut by a budget) by its best rank over the runs, then by how many runs
  retrieve it.
* ``rrf`` - reciprocal-rank fusion priority: ``w(q, d) = sum over runs of 1 / (rrf_k + rank)``
  (Cormack, Clarke & Buettcher 2009; ``rrf_k`` = 60). The documents with the largest fused
  weight are judged first.
* ``rbp`` - RBP weight priority: ``w(q, d) = sum over runs of (1 - p) p^(rank - 1)``, the
  weight the document carries in the runs' rank-biased precision (Moffat, Webber & Zobel
  2007, "Strategic system comparisons via targeted relevance judgments"; ``p`` = 0.8).
* ``mtf`` - move-to-front (Cormack, Palmer & Clarke 1998, "Efficient construction of large
  test collections"), adaptive: per query every run has a priority (0 at the start); the run
  with the highest priority (ties to the run given first) gives its next unseen document;
  a relevant judgment (grade >= ``rel``) keeps that run in front, a non-relevant one lowers
  its priority by 1 and the run of highest priority takes over. A document already seen
  for the query (from another run) is skipped at no cost; a document judged in ``qrels`` is
  replayed at no cost (its grade moves the priorities as if MTF had asked for it), so
  running ``mtf`` again after each batch of judgments continues where it stopped. A document
  nobody judged yet is asked for; with an ``oracle`` (simulation) its grade comes from the
  oracle, otherwise it is pending and assumed relevant (MTF stays on that run until a
  judgment says otherwise), which with ``per_query=1`` is exactly Cormack's one-at-a-time
  procedure.

Budgets: ``per_query`` caps each query's new documents, ``budget`` the total (the highest
priorities over all queries win; for ``mtf`` the total is split evenly over the queries,
the remainder going to the first queries in byte order). Documents judged in ``qrels``
(grade >= 0) are never asked again; negative grades (trec_eval's "pooled but unjudged",
what an unfilled judging list holds) are asked again. Ties in priority are broken by a
hash of (query id, doc id, ``seed``): the same inputs and seed give the same pool whatever
the order of the lines in the files (``mtf`` needs no seed: its choices follow the judgments,
and runs of equal priority are taken in the order given).

Vectorized: the runs are ranked in one sort (:func:`serpeval.judgments.stacked.stack_runs`),
weights are bincounts, and the selection is one sort; ``mtf`` steps all queries at once
(a loop over steps, not over queries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import pyarrow as pa

from serpeval.core.checks import check_count
from serpeval.core.data import Qrels
from serpeval.core.errors import OptionError
from serpeval.core.fingerprints import fingerprint
from serpeval.core.id_codes import codes_in
from serpeval.core.segments import weighted_bincount
from serpeval.core.tabular import Tabular
from serpeval.judgments.stacked import Stacked, qrels_grades, sort_by, stack_runs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from serpeval.core.data import Run

__all__ = ["METHODS", "Pool", "pool"]

Method = Literal["depth", "rrf", "rbp", "mtf"]
METHODS: tuple[Method, ...] = get_args(Method)

_MIX = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True, eq=False)
class Pool(Tabular):
    """The documents to judge next, one row per (query, document), by query then priority.

    Attributes:
        method: ``depth``, ``rrf``, ``rbp`` or ``mtf``.
        settings: the options used (depth, budgets, parameters, seed).
        run_names: the pooled runs.
        query_ids: ``str[n]`` per row.
        doc_ids: ``str[n]`` per row.
        order: ``int64[n]`` 1-based position in its query's list (judge in this order).
        best_rank: ``int64[n]`` the best rank any run gives the document.
        runs: ``int64[n]`` how many runs retrieve it (within ``depth``).
        weight: ``float64[n]`` the fused weight (``rrf``, ``rbp``); NaN for ``depth``, ``mtf``.
        grades: ``int64[n]`` the oracle's grades when simulated (0 where the oracle has
            none), else -1 ("to judge").
        n_queries: queries in the runs.
        candidates: distinct (query, document) pairs the runs retrieve (within ``depth``).
        already_judged: candidates skipped because ``qrels`` judge them.
        oracle_unjudged: pooled documents the oracle has no grade for (graded 0).
        simulated: whether an oracle graded the pool.
        oracle_queries_left_out: run queries the oracle judges nothing for (not pooled when
            simulating: there is no assessor to simulate for them).
    """

    method: str
    settings: dict[str, Any]
    run_names: tuple[str, ...]
    query_ids: NDArray[Any]
    doc_ids: NDArray[Any]
    order: NDArray[np.int64]
    best_rank: NDArray[np.int64]
    runs: NDArray[np.int64]
    weight: NDArray[np.float64]
    grades: NDArray[np.int64]
    n_queries: int
    candidates: int
    already_judged: int
    oracle_unjudged: int = 0
    simulated: bool = False
    oracle_queries_left_out: int = 0

    def __len__(self) -> int:
        return len(self.doc_ids)

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per pooled document: ``query_id, doc_id, order, best_rank, runs, weight``
        (and ``relevance`` when simulated)."""
        rows = []
        weights = [None if np.isnan(w) else w for w in self.weight.tolist()]
        for i, (q, d, o, b, n, w) in enumerate(zip(self.query_ids.tolist(), self.doc_ids.tolist(),
                                                   self.order.tolist(), self.best_rank.tolist(),
                                                   self.runs.tolist(), weights, strict=True)):
            row: dict[str, Any] = {"query_id": q, "doc_id": d, "order": o, "best_rank": b, "runs": n,
                                   "weight": w}
            if self.simulated:
                row["relevance"] = int(self.grades[i])
            rows.append(row)
        return rows

    def _columns(self) -> tuple[str, ...]:
        """The columns of :meth:`to_dicts` when nothing is left to judge (an empty frame keeps them)."""
        return ("query_id", "doc_id", "order", "best_rank", "runs", "weight",
                *(("relevance",) if self.simulated else ()))

    def summary(self) -> dict[str, Any]:
        """The counts a reader needs: method, queries, candidates, skipped, pooled, per query."""
        sizes = np.diff(np.flatnonzero(np.r_[True, self.order[1:] == 1, True])) \
            if len(self) else np.zeros(0, dtype=np.int64)  # rows are by query, order restarts at 1
        out: dict[str, Any] = {
            "method": self.method,
            "runs": len(self.run_names),
            "queries": self.n_queries,
            "candidates": self.candidates,
            "already judged (skipped)": self.already_judged,
            "pooled": len(self),
            "queries with docs to judge": len(sizes),
            "docs per query (min)": int(sizes.min()) if len(sizes) else 0,
            "docs per query (mean)": float(sizes.mean()) if len(sizes) else 0.0,
            "docs per query (max)": int(sizes.max()) if len(sizes) else 0,
        }
        if self.simulated:
            out["relevant found (oracle)"] = int(np.count_nonzero(self.grades >= self.settings["rel"]))
            out["not in the oracle (graded 0)"] = self.oracle_unjudged
            out["queries the oracle lacks (left out)"] = self.oracle_queries_left_out
        return out

    def to_qrels(self) -> Qrels:
        """The pool as qrels: the oracle's grades when simulated, else -1 (to judge)."""
        return Qrels(pa.array(self.query_ids.tolist(), pa.string()), pa.array(self.doc_ids.tolist(), pa.string()),
                     self.grades, source=f"<pool {self.method}>")

    def _html_caption(self) -> str:
        return f"Pool ({self.method}, {len(self)} documents)"


def pool(
    runs: Sequence[Run | Any],
    *,
    method: Method = "depth",
    depth: int | None = None,
    budget: int | None = None,
    per_query: int | None = None,
    qrels: Qrels | Any | None = None,
    oracle: Qrels | Any | None = None,
    rrf_k: float = 60.0,
    rbp_p: float = 0.8,
    rel: int = 1,
    seed: int = 0,
) -> Pool:
    """The documents of ``runs`` to judge next (see the module docstring for the methods).

    Args:
        runs: the runs to pool (paths, :class:`Run` objects, anything ``as_run`` reads).
        method: ``depth``, ``rrf``, ``rbp`` or ``mtf``.
        depth: cut every ranking at this depth first (required for ``depth``).
        budget: at most this many documents in all.
        per_query: at most this many documents per query.
        qrels: judgments made so far: judged documents are skipped (``mtf`` replays them).
        oracle: simulate the assessor: the pool is graded from these qrels (0 where they
            have no grade), and ``mtf`` adapts to those grades; queries the oracle judges
            nothing for are left out (counted).
        rrf_k: the constant of reciprocal-rank fusion (> 0).
        rbp_p: the persistence of the RBP weight, in (0, 1).
        rel: the grade that counts as relevant for ``mtf`` (and the summary).
        seed: breaks ties in priority (a seed >= 0).

    Raises:
        OptionError: an unknown method, a missing depth or budget, parameters out of range.
        DuplicateError: a run retrieves a document twice for one query (file:line).
    """
    from serpeval.io import as_qrels, as_run

    if method not in METHODS:
        raise OptionError(f"method must be one of {', '.join(METHODS)}; got {method!r}.")
    depth = None if depth is None else check_count(depth, "depth")
    budget = None if budget is None else check_count(budget, "budget")
    per_query = None if per_query is None else check_count(per_query, "per_query")
    seed = check_count(seed, "seed", minimum=0)
    if method == "depth" and depth is None:
        raise OptionError("depth pooling needs a depth: --depth K (e.g. --depth 10).")
    if method != "depth" and budget is None and per_query is None:
        raise OptionError(f"{method} pooling needs a budget: --budget N (in all) or --per-query N.")
    if not (isinstance(rrf_k, (int, float)) and rrf_k > 0 and np.isfinite(rrf_k)):
        raise OptionError(f"rrf_k must be a positive number; got {rrf_k!r}.")
    if not (isinstance(rbp_p, (int, float)) and 0.0 < rbp_p < 1.0):
        raise OptionError(f"rbp_p must be a number strictly between 0 and 1; got {rbp_p!r}.")

    run_objects = [as_run(r) for r in runs]
    stacked = stack_runs(run_objects, depth)
    known = qrels_grades(stacked, as_qrels(qrels).as_grades("int")) if qrels is not None else \
        np.full(stacked.n_pairs, -1, dtype=np.int64)
    truth = None
    simulated_queries = np.ones(stacked.n_queries, dtype=bool)
    if oracle is not None:
        oracle = as_qrels(oracle).as_grades("int")  # written as integer grades: a fraction is refused
        truth = qrels_grades(stacked, oracle)
        # A query the oracle never judged cannot be simulated: it is left out (and counted).
        codes, _ = codes_in(oracle.query_ids, stacked.query_ids)
        simulated_queries[:] = False
        simulated_queries[codes[codes >= 0]] = True
    judged = known >= 0
    tie = _tie_keys(stacked, seed)
    settings = {"depth": depth, "budget": budget, "per_query": per_query, "seed": seed, "rel": rel,
                "qrels": getattr(qrels, "source", qrels) if qrels is not None else None,
                "oracle": getattr(oracle, "source", oracle) if oracle is not None else None}
    best = np.full(stacked.n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, stacked.pair, stacked.rank)
    n_runs = np.bincount(stacked.pair, minlength=stacked.n_pairs).astype(np.int64)
    weight = np.full(stacked.n_pairs, np.nan)
    if method == "mtf":
        picked = _move_to_front(stacked, known, truth, budget, per_query, rel, simulated_queries)
    else:
        if method == "depth":
            primary = -best.astype(np.float64)
            secondary = n_runs.astype(np.float64)
        else:
            if method == "rrf":
                settings["rrf_k"] = rrf_k
                contribution = 1.0 / (rrf_k + stacked.rank)
            else:
                settings["rbp_p"] = rbp_p
                contribution = (1.0 - rbp_p) * rbp_p ** (stacked.rank - 1.0)
            weight = weighted_bincount(stacked.pair, contribution.astype(np.float64), stacked.n_pairs)
            primary, secondary = weight, -best.astype(np.float64)
        open_ = ~judged & simulated_queries[stacked.pair_query]
        picked = _select(stacked, open_, primary, secondary, tie, budget, per_query)
    grades = np.full(len(picked), -1, dtype=np.int64)
    oracle_unjudged = 0
    if truth is not None:
        found = truth[picked]
        oracle_unjudged = int(np.count_nonzero(found < 0))
        grades = np.maximum(found, 0)
    query_of = stacked.pair_query[picked]
    starts = np.searchsorted(query_of, np.arange(stacked.n_queries))
    order = np.arange(len(picked), dtype=np.int64) - starts[query_of] + 1
    query_text = stacked.query_ids.take(pa.array(query_of, pa.int64())).to_numpy(zero_copy_only=False)
    doc_text = stacked.pair_doc.take(pa.array(picked, pa.int64())).to_numpy()
    return Pool(method, settings, stacked.run_names, query_text, doc_text, order, best[picked],
                n_runs[picked], weight[picked], grades, stacked.n_queries, stacked.n_pairs,
                int(np.count_nonzero(judged)), oracle_unjudged, truth is not None,
                int(np.count_nonzero(~simulated_queries)))


def _tie_keys(stacked: Stacked, seed: int) -> NDArray[np.uint64]:
    """A seeded hash of every pair's (query id, doc id): ties in priority break by it, so the
    pool does not depend on the order of the files or their lines."""
    salt = np.random.default_rng(seed).integers(0, 2**63, dtype=np.uint64)
    query_prints = fingerprint(pa.chunked_array([stacked.query_ids]))[stacked.pair_query]
    h = fingerprint(stacked.pair_doc) ^ (query_prints * _MIX) ^ salt
    h *= _MIX
    h ^= h >> np.uint64(29)
    return h


def _select(stacked: Stacked, open_: NDArray[np.bool_], primary: NDArray[np.float64],
            secondary: NDArray[np.float64], tie: NDArray[np.uint64], budget: int | None,
            per_query: int | None) -> NDArray[np.int64]:
    """The pairs to judge (``open_`` ones, best priority first), by query then priority."""
    candidates = np.flatnonzero(open_)
    q = stacked.pair_query[candidates]
    ranked = candidates[sort_by((q, "ascending"), (primary[candidates], "descending"),
                                (secondary[candidates], "descending"), (tie[candidates], "ascending"))]
    if per_query is not None:
        q = stacked.pair_query[ranked]
        starts = np.searchsorted(q, np.arange(stacked.n_queries))
        ranked = ranked[np.arange(len(ranked)) - starts[q] < per_query]
    if budget is not None and len(ranked) > budget:
        best_first = sort_by((primary[ranked], "descending"), (secondary[ranked], "descending"),
                             (tie[ranked], "ascending"))
        keep = np.zeros(len(ranked), dtype=bool)
        keep[best_first[:budget]] = True
        ranked = ranked[keep]  # still by query, then priority
    return ranked


def _move_to_front(stacked: Stacked, known: NDArray[np.int64], truth: NDArray[np.int64] | None,
                   budget: int | None, per_query: int | None, rel: int,
                   simulated: NDArray[np.bool_]) -> NDArray[np.int64]:
    """The pairs MTF asks for, by query then the order asked (see the module docstring).

    All queries step together: each step, every active query looks at the next document of
    its front run. The loop runs once per step (at most the longest query's entries).
    """
    nq, nr = stacked.n_queries, stacked.n_runs
    allowance = np.full(nq, np.iinfo(np.int64).max, dtype=np.int64)
    if per_query is not None:
        allowance[:] = per_query
    if budget is not None:  # split evenly over the queries that can be pooled
        which = np.flatnonzero(simulated)
        share = np.zeros(nq, dtype=np.int64)
        share[which] = budget // max(len(which), 1)
        share[which[: budget % max(len(which), 1)]] += 1
        allowance = np.minimum(allowance, share)
    allowance[~simulated] = 0
    seg_start = stacked.offsets[:-1].reshape(nq, nr)
    seg_len = stacked.lengths()
    pointer = np.zeros((nq, nr), dtype=np.int64)
    # Integer priorities; among equal ones the run given first wins (a fraction below 1).
    tiebreak = np.broadcast_to(-np.arange(nr) / (2.0 * nr), (nq, nr))
    priority = np.where(seg_len > 0, 0.0, -np.inf)
    seen = np.zeros(stacked.n_pairs, dtype=bool)
    grade = known.copy()
    asked_pair: list[NDArray[np.int64]] = []
    asked_step: list[NDArray[np.int64]] = []
    active = np.flatnonzero((allowance > 0) & np.isfinite(priority).any(axis=1))
    step = 0
    while active.size:
        front = np.argmax(priority[active] + tiebreak[active], axis=1)
        position = pointer[active, front]
        exhausted = position >= seg_len[active, front]
        priority[active[exhausted], front[exhausted]] = -np.inf
        go = ~exhausted
        q, r = active[go], front[go]
        entry = seg_start[q, r] + pointer[q, r]
        pointer[q, r] += 1
        pair = stacked.pair[entry]
        fresh = ~seen[pair]
        q, r, pair = q[fresh], r[fresh], pair[fresh]
        seen[pair] = True
        ask = grade[pair] < 0
        if ask.any():
            asked_pair.append(pair[ask])
            asked_step.append(np.full(int(ask.sum()), step, dtype=np.int64))
            allowance[q[ask]] -= 1
            grade[pair[ask]] = np.maximum(truth[pair[ask]], 0) if truth is not None else rel
        bad = grade[pair] < rel
        priority[q[bad], r[bad]] -= 1.0
        step += 1
        active = active[(allowance[active] > 0) & np.isfinite(priority[active]).any(axis=1)]
    if not asked_pair:
        return np.zeros(0, dtype=np.int64)
    pairs = np.concatenate(asked_pair)
    steps = np.concatenate(asked_step)
    return pairs[np.lexsort((steps, stacked.pair_query[pairs]))]
