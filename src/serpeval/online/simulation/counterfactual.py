"""Simulated randomised logs for counterfactual evaluation, and the truth to check them against.

A :class:`Pool` holds, per query, the documents of several rankers' top k with their true
grades. :func:`simulate_log` shows a probabilistic interleaving (or an A/B split) of two of
them to simulated users (a click model of :mod:`serpeval.online.clicks`, a per-user logit
shift ``N(0, user_sd)``) and returns the :class:`~serpeval.online.counterfactual.log.
CounterfactualLog` with every coin recorded; :func:`log_table` writes it in the documented log
fields (docs/explanation/counterfactual-logs.md) with exact ``propensity`` and
``position_propensities``. :func:`true_value` is a ranker's exact expected clicks (or CTR)
from the click model (Gauss-Hermite quadrature over the user shift); :func:`true_interleaved`
the expected probabilistic-interleaving outcome of a pair by a large on-policy simulation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator, check_count
from serpeval.core.errors import OptionError

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

    from serpeval.online.counterfactual.log import CounterfactualLog

__all__ = ["Pool", "by_grade", "log_table", "perturbed", "pool_from_runs", "simulate_log", "synthetic_pool",
           "true_interleaved", "true_value"]


@dataclass(frozen=True, eq=False)
class Pool:
    """Queries, their documents (the union of the rankers' top k) with true grades, and the
    rankers as codes into each query's documents (``-1``: a shorter list).

    Attributes:
        queries: query ids; ``docs[q]``: the query's document ids; ``grades[q, d]``: the true
            grade of code d (``-1``: unused); ``rankers[name]``: ``int64[Q, k]`` codes;
            ``popularity``: P(query) of a search.
    """

    queries: list[str]
    docs: list[list[str]]
    grades: NDArray[np.int64]
    rankers: dict[str, NDArray[np.int64]]
    popularity: NDArray[np.float64]
    k: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def levels(self) -> int:
        return max(2, int(self.grades.max(initial=0)) + 1)

    def lists(self, name: str) -> dict[str, list[str]]:
        """Ranker ``name``'s top k as ``{query: [doc ids]}`` (a candidate for the estimators)."""
        codes = self.rankers[name]
        return {q: [self.docs[i][c] for c in codes[i] if c >= 0] for i, q in enumerate(self.queries)}

    def with_ranker(self, name: str, codes: NDArray[np.int64]) -> Pool:
        """A copy with one more ranker (codes into the existing documents)."""
        if codes.shape != (len(self.queries), self.k):
            raise OptionError(f"ranker {name!r} needs codes of shape {(len(self.queries), self.k)}; got {codes.shape}.")
        return Pool(self.queries, self.docs, self.grades, {**self.rankers, name: codes}, self.popularity, self.k,
                    self.skipped)


def _pool(queries: list[str], per_ranker: Mapping[str, list[list[str]]], grade_of: Any, k: int,
          popularity: NDArray[np.float64] | None = None, skipped: dict[str, int] | None = None) -> Pool:
    docs: list[list[str]] = []
    rankers = {name: np.full((len(queries), k), -1, dtype=np.int64) for name in per_ranker}
    for i, _ in enumerate(queries):  # building the world, once
        union: dict[str, int] = {}
        for name, lists in per_ranker.items():
            for j, d in enumerate(lists[i][:k]):
                rankers[name][i, j] = union.setdefault(d, len(union))
        docs.append(list(union))
    width = max(len(d) for d in docs)
    grades = np.full((len(queries), width), -1, dtype=np.int64)
    for i, q in enumerate(queries):
        grades[i, :len(docs[i])] = [max(0, int(grade_of(q, d))) for d in docs[i]]
    pop = np.full(len(queries), 1.0 / len(queries)) if popularity is None else popularity / popularity.sum()
    return Pool(queries, docs, grades, rankers, pop, k, skipped or {})


def pool_from_runs(qrels: Any, runs: Mapping[str, Any], *, k: int = 10, levels: int | None = None) -> Pool:
    """A :class:`Pool` from judgments (the users' truth; unjudged = 0, grades clipped to
    ``levels - 1``) and named runs, on the queries judged and answered by every run (the
    others counted in ``skipped``)."""
    from serpeval.io import as_qrels
    from serpeval.online.counterfactual.api import top_k_lists

    check_count(k, "k")
    judgments = as_qrels(qrels)
    tops = {name: top_k_lists(run, k) for name, run in runs.items()}
    judged = set(judgments.query_ids.to_pylist())
    answered = set.intersection(*[set(t) for t in tops.values()]) if tops else set()
    queries = sorted(judged & answered)
    if not queries:
        raise OptionError("no query is judged and answered by every run; check the runs belong to the qrels.")
    table = dict(zip(zip(judgments.query_ids.to_pylist(), judgments.doc_ids.to_pylist(), strict=True),
                     np.asarray(judgments.relevance).tolist(), strict=True))
    top = (levels - 1) if levels else None

    def grade(q: str, d: str) -> int:
        g = int(table.get((q, d), 0))
        return g if top is None else min(g, top)

    skipped = {"judged but not answered by every run": len(judged) - len(queries),
               "answered by every run but not judged": len(answered - judged)}
    return _pool(queries, {n: [t[q] for q in queries] for n, t in tops.items()}, grade, k, skipped=skipped)


def synthetic_pool(n_queries: int = 100, *, k: int = 10, pool_size: int = 30, levels: int = 5,
                   noises: Mapping[str, float] | None = None, rng: int | np.random.Generator | None = 0) -> Pool:
    """Generated queries: ``pool_size`` documents each (grades with P(g) ∝ 2^-g), rankers
    ordering the pool by ``grade + N(0, noise)`` (default A 1.5, B 1.0)."""
    generator = as_generator(rng)
    noises = dict(noises or {"A": 1.5, "B": 1.0})
    p = 0.5 ** np.arange(levels)
    grades = generator.choice(levels, size=(n_queries, pool_size), p=p / p.sum())
    queries = [f"q{i:04d}" for i in range(n_queries)]
    per: dict[str, list[list[str]]] = {}
    for name, noise in noises.items():
        order = np.argsort(-(grades + generator.normal(0, noise, grades.shape)), axis=1, kind="stable")[:, :k]
        per[name] = [[f"d{i}_{c}" for c in row] for i, row in enumerate(order)]
    table = {(queries[i], f"d{i}_{c}"): int(grades[i, c]) for i in range(n_queries) for c in range(pool_size)}
    return _pool(queries, per, lambda q, d: table[(q, d)], k)


def _local(pool: Pool, logging: tuple[str, ...]) -> tuple[list[list[str]], list[list[list[int]]], NDArray[np.int64]]:
    """Per query: the logging union's doc ids, the logging rankings as local codes, and the
    pool code of each local code (``[Q, width]``)."""
    docs: list[list[str]] = []
    rankings: list[list[list[int]]] = []
    width = 0
    maps: list[list[int]] = []
    for i in range(len(pool.queries)):  # building the world, once
        union: dict[int, int] = {}
        ranks = []
        for name in logging:
            row = [int(c) for c in pool.rankers[name][i] if c >= 0]
            ranks.append([union.setdefault(c, len(union)) for c in row])
        rankings.append(ranks)
        maps.append(list(union))
        docs.append([pool.docs[i][c] for c in union])
        width = max(width, len(union))
    to_pool = np.full((len(pool.queries), width), -1, dtype=np.int64)
    for i, m in enumerate(maps):
        to_pool[i, :len(m)] = m
    return docs, rankings, to_pool


def simulate_log(pool: Pool, n_impressions: int, click_model: Any = "navigational", *,
                 logging: tuple[str, str] = ("A", "B"), design: str = "probabilistic", tau: float = 3.0,
                 shares: tuple[float, ...] = (0.5, 0.5), impressions_per_user: float = 5.0,
                 user_sd: float = 0.0, rng: int | np.random.Generator | None = None) -> CounterfactualLog:
    """A randomised log of ``n_impressions`` searches (module docstring): a probabilistic
    interleaving of the ``logging`` rankers (``tau``), or an A/B split of them with traffic
    ``shares`` (one positive share per arm, normalised to sum 1: the split drawn is the split
    the log records)."""
    from serpeval.online.counterfactual.log import CounterfactualLog
    from serpeval.online.counterfactual.logging_model import padded
    from serpeval.online.interleaving.probabilistic import interleave_batch, softmax_weights

    check_count(n_impressions, "n_impressions")
    model = _model(click_model, pool)
    generator = as_generator(rng)
    docs, rankings, to_pool = _local(pool, logging)
    query = generator.choice(len(pool.queries), size=n_impressions, p=pool.popularity)
    n_users = max(1, round(n_impressions / impressions_per_user))
    user = generator.integers(0, n_users, n_impressions)
    shift = generator.normal(0.0, user_sd, n_users)[user] if user_sd > 0 else None
    k = pool.k
    codes = [padded([r[s] for r in rankings], k) for s in range(len(logging))]
    if design == "probabilistic":
        width = to_pool.shape[1]
        w = softmax_weights(codes, width, tau)
        shown = np.empty((n_impressions, k), dtype=np.int64)
        for start in range(0, n_impressions, 100_000):
            stop = start + 100_000
            shown[start:stop] = interleave_batch(w[query[start:stop]], k, generator)[0]
        extra: dict[str, Any] = {"tau": tau}
    elif design == "ab":
        p = np.asarray(shares, dtype=np.float64)
        if p.shape != (len(logging),) or not np.all(np.isfinite(p) & (p > 0)):
            raise OptionError(f"shares must be one positive traffic share per logging arm ({len(logging)}); "
                              f"got {shares!r}.")
        p = p / p.sum()  # the split drawn is the split recorded: the log's propensities are exact
        arm = generator.choice(len(logging), size=n_impressions, p=p)
        shown = np.stack(codes)[arm, query]
        extra = {"shares": tuple(float(s) for s in p)}
    else:
        raise OptionError(f"design must be 'probabilistic' or 'ab'; got {design!r}.")
    pool_codes = np.where(shown >= 0, to_pool[query[:, None], np.maximum(shown, 0)], -1)
    grades = np.where(pool_codes >= 0, pool.grades[query[:, None], np.maximum(pool_codes, 0)], -1)
    clicks = model.sample(grades, generator, shift=shift)
    return CounterfactualLog.from_arrays(design, list(pool.queries), docs, rankings, query, user, shown, clicks,
                                         source=f"<simulated {design} log of {'/'.join(logging)}>", **extra)


def _model(click_model: Any, pool: Pool) -> Any:
    if isinstance(click_model, str):
        from serpeval.online.clicks import click_model as build

        return build(click_model, levels=pool.levels)
    return click_model


def true_value(pool: Pool, ranker: str, click_model: Any = "navigational", *, metric: str = "clicks",
               user_sd: float = 0.0, nodes: int = 40, k: int | None = None) -> float:
    """Exact expected clicks on the top ``k`` per search (``ctr``: P(a click there)) of
    ``ranker`` (default k: the pool's)."""
    model = _model(click_model, pool)
    codes = pool.rankers[ranker][:, :k]
    grades = np.where(codes >= 0, np.take_along_axis(pool.grades, np.maximum(codes, 0), axis=1), -1)
    x, w = (np.zeros(1), np.ones(1)) if user_sd <= 0 else np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    total = 0.0
    for xi, wi in zip(x, w, strict=True):  # quadrature nodes
        shift = np.full(len(grades), xi * user_sd)
        if metric == "clicks":
            per_query = model.click_probabilities(grades, shift=shift).sum(axis=1)
        elif metric == "ctr":
            per_query = 1.0 - model.click_count_distribution(grades, shift=shift)[:, 0]
        else:
            raise OptionError(f"unknown metric {metric!r}; expected clicks or ctr.")
        total += wi * float(pool.popularity @ per_query)
    return total


def true_interleaved(pool: Pool, first: str, second: str, click_model: Any = "navigational", *,
                     n_impressions: int = 1_000_000, tau: float = 3.0, user_sd: float = 0.0,
                     k: int | None = None, rng: int | np.random.Generator | None = 0) -> tuple[float, float]:
    """``(mean, standard error)`` of the probabilistic-interleaving outcome of ``first``
    against ``second`` (marginalised credit over the top ``k`` slots), by an on-policy
    simulation."""
    from serpeval.online.counterfactual.estimators import marginalised_outcome
    from serpeval.online.counterfactual.logging_model import slots_under

    log = simulate_log(pool, n_impressions, click_model, logging=(first, second), tau=tau, user_sd=user_sd,
                       impressions_per_user=1.0, rng=rng)
    from serpeval.online.counterfactual.logging_model import LoggingModel

    model = LoggingModel(log)
    slots, _ = slots_under(model.context_weights(), log.context, log.shown[:, :k])
    o = marginalised_outcome(slots, log.clicks[:, :k])
    return float(o.mean()), float(o.std(ddof=1) / np.sqrt(len(o)))


def log_table(log: CounterfactualLog, *, experiment: str = "counterfactual-sim",
              marginals: bool = True) -> pa.Table:
    """The log in the documented fields (docs/explanation/counterfactual-logs.md): one row per
    impression with ``shown``, ``clicks`` (1-based), ``logging_design``, ``logging_rankings``,
    ``tau`` / ``arm_shares``, and the exact ``propensity``, ``prefix_propensities`` and
    ``position_propensities``."""
    import pyarrow as pa

    from serpeval.online.counterfactual.logging_model import LoggingModel

    model = LoggingModel(log)
    prefix = model.prefix()
    n, k = log.shown.shape
    ctx = log.context
    doc_table = np.full((len(log.contexts), model.width), None, dtype=object)
    for c, docs in enumerate(log.context_docs):  # one per context
        doc_table[c, :len(docs)] = docs
    valid = log.shown >= 0
    shown_ids = doc_table[np.broadcast_to(ctx[:, None], log.shown.shape)[valid], log.shown[valid]]
    lengths = valid.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    rankings_ids = [[[log.context_docs[c][d] for d in r] for r in log.context_rankings[c]]
                    for c in range(len(log.contexts))]
    rank_col = pa.array(rankings_ids, pa.list_(pa.list_(pa.string()))).take(pa.array(ctx))
    row, col = np.nonzero(log.clicks)
    click_offsets = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=n))]).astype(np.int32)
    columns: dict[str, Any] = {
        "impression_id": np.arange(n, dtype=np.int64),
        "experiment": pa.array([experiment] * n, pa.string()).dictionary_encode(),
        "user_id": log.unit,
        "query_id": pa.array(log.contexts, pa.string()).take(pa.array(ctx)),
        "shown": pa.ListArray.from_arrays(pa.array(offsets), pa.array(shown_ids.tolist(), pa.string())),
        "n_shown": lengths.astype(np.int32),
        "clicks": pa.ListArray.from_arrays(pa.array(click_offsets), pa.array((col + 1).astype(np.int32))),
        "logging_design": pa.array([log.design] * n, pa.string()).dictionary_encode(),
        "logging_rankings": rank_col,
    }
    if log.design == "probabilistic":
        columns["tau"] = np.full(n, log.tau)
    else:
        columns["arm_shares"] = pa.array([list(log.shares or ())] * n, pa.list_(pa.float64()))
    columns["propensity"] = prefix[np.arange(n), np.maximum(lengths - 1, 0)]
    columns["prefix_propensities"] = _list_column(prefix, valid)
    if marginals:
        from serpeval.online.interleaving.probabilistic import MAX_MARGINAL_DOCS

        if log.design == "probabilistic" and int(model.union.max(initial=0)) > MAX_MARGINAL_DOCS:
            raise OptionError(f"position_propensities need the exact position marginals, computed for at most "
                              f"{MAX_MARGINAL_DOCS} logged documents per query; this log has up to "
                              f"{int(model.union.max())}: pass marginals=False (the column is optional).")
        m = model.marginals()
        j = np.broadcast_to(np.arange(k), log.shown.shape)
        pos = np.where(valid, m[np.broadcast_to(ctx[:, None], log.shown.shape), np.maximum(log.shown, 0), j], 0.0)
        columns["position_propensities"] = _list_column(pos, valid)
    return pa.table(columns)


def _list_column(values: NDArray[np.float64], valid: NDArray[np.bool_]) -> pa.ListArray:
    import pyarrow as pa

    offsets = np.concatenate([[0], np.cumsum(valid.sum(axis=1))]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values[valid]))


def perturbed(pool: Pool, base: str, name: str, *, swaps: int = 1, rng: int | np.random.Generator | None = 0) -> Pool:
    """``pool`` with ranker ``name``: ``base`` with ``swaps`` random adjacent swaps in each
    query's list (vectorized over queries, one step per swap)."""
    generator = as_generator(rng)
    codes = pool.rankers[base].copy()
    rows = np.arange(len(codes))
    lengths = (codes >= 0).sum(axis=1)
    for _ in range(swaps):
        at = np.minimum((generator.random(len(codes)) * np.maximum(lengths - 1, 1)).astype(np.int64),
                        np.maximum(lengths - 2, 0))
        ok = lengths >= 2
        first, second = codes[rows, at].copy(), codes[rows, at + 1].copy()
        codes[rows[ok], at[ok]] = second[ok]
        codes[rows[ok], at[ok] + 1] = first[ok]
    return pool.with_ranker(name, codes)


def by_grade(pool: Pool, among: tuple[str, ...], name: str, *, noise: float = 0.5,
             rng: int | np.random.Generator | None = 0) -> Pool:
    """``pool`` with ranker ``name``: the documents of the ``among`` rankers' lists re-ranked
    by ``grade + N(0, noise)`` (a candidate inside their union: full support)."""
    generator = as_generator(rng)
    in_union = np.zeros(pool.grades.shape, dtype=bool)
    for r in among:
        codes = pool.rankers[r]
        rows = np.broadcast_to(np.arange(len(codes))[:, None], codes.shape)
        in_union[rows[codes >= 0], codes[codes >= 0]] = True
    score = np.where(in_union, pool.grades + generator.normal(0.0, noise, pool.grades.shape), -np.inf)
    order = np.argsort(-score, axis=1, kind="stable")[:, :pool.k]
    order = np.where(np.take_along_axis(in_union, order, axis=1), order, -1)
    return pool.with_ranker(name, order.astype(np.int64))
