"""The simulated world: two rankers' top k on a set of queries, with every shown
document's true grade; built from judgments and runs, or generated with a controlled gap.

:func:`make_world` takes the judgments as the users' truth (or a separate truth mapping),
ranks each run with serpeval's one ranking rule and gives every query's documents small
local codes shared by both rankings. :func:`synthetic_pair` generates judgments and two runs
whose mean nDCG@k differ by a chosen relative gap.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator, check_count
from serpeval.core.errors import MissingQueriesWarning, NothingEvaluatedError, OptionError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import NDArray

    from serpeval.core.data import Qrels, Run

__all__ = ["World", "make_world", "synthetic_pair"]


@dataclass(frozen=True, eq=False)
class World:
    """Two rankers' top k on a set of queries, with the true grade of every shown document.

    Attributes:
        query_ids: the simulated queries (judged, and retrieved by both runs).
        a, b: ``int64[Q, k]`` local document codes of each ranking (-1: the run retrieved
            fewer than k documents); a document both runs return has the same code.
        grades: ``int64[Q, 2k]`` true grade of each local code (-1: unused code).
        ndcg_a, ndcg_b: per-query offline nDCG@k from the judgments.
        names: display names of A and B.
        truth: where the true grades came from.
        skipped: queries left out, by reason (never silently).
        scale: the truth's highest grade + 1 over all its judgments (None: unknown; then the
            shown documents' grades set :attr:`levels`).
    """

    query_ids: list[str]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    grades: NDArray[np.int64]
    ndcg_a: NDArray[np.float64]
    ndcg_b: NDArray[np.float64]
    names: tuple[str, str]
    truth: str
    skipped: dict[str, int] = field(default_factory=dict)
    scale: int | None = None

    @property
    def k(self) -> int:
        return self.a.shape[1]

    @property
    def levels(self) -> int:
        """Relevance levels of the truth: its highest grade + 1 (at least 2), over all its
        judgments, not only the documents the two top k show, so that a grade means the same
        to the simulated users whether or not a document of the top grade is shown (grades
        0..2 shown of a 0..3 scale are the 4-level table's, not the 3-level one's)."""
        return max(2, int(self.grades.max(initial=0)) + 1, self.scale or 0)


def _top_k(run: Run, k: int) -> tuple[list[str], NDArray[np.object_]]:
    """Query ids (byte order) and their top-k doc ids ``[Q, k]`` (None-padded), ranked by
    serpeval's one ranking rule (:func:`serpeval.ranking.rank_order`)."""
    from serpeval.core.id_codes import factorize
    from serpeval.ranking import rank_order

    order = rank_order(run)
    codes, names = factorize(run.query_ids.take(order))
    counts = np.bincount(codes, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(len(order)) - starts[codes]
    keep = position < k
    docs = np.full((len(names), k), None, dtype=object)
    docs[codes[keep], position[keep]] = np.array(run.doc_ids.take(order).to_pylist(), dtype=object)[keep]
    return names, docs


def make_world(qrels: Any, run_a: Any, run_b: Any, *, k: int = 10,
               truth: Mapping[str, Mapping[str, int]] | None = None) -> World:
    """Build the :class:`World` from judgments and two runs (paths, dicts, Qrels/Run...).

    ``truth`` (``{qid: {doc: grade}}``, e.g. a demo collection's ``true_grades``) replaces
    the judgments as the users' relevance when given; the offline nDCG@k always comes from
    the judgments. Negative and missing grades count as 0.
    """
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.io import as_qrels, as_run

    check_count(k, "k")
    judgments = as_qrels(qrels)
    ra, rb = as_run(run_a), as_run(run_b)
    if ra.name == rb.name:
        rb = rb.renamed(f"{rb.name} (B)")
    qa, docs_a = _top_k(ra, k)
    qb, docs_b = _top_k(rb, k)
    judged = set(judgments.query_ids.to_pylist())
    common = sorted(judged & set(qa) & set(qb))
    skipped = {"judged but missing from run A": len(judged - set(qa)),
               "judged but missing from run B": len(judged - set(qb)),
               "retrieved but not judged": len((set(qa) | set(qb)) - judged)}
    if not common:
        raise NothingEvaluatedError(
            f"{ra.source}, {rb.source}: no query is judged and retrieved by both runs, so nothing "
            f"can be simulated: the qrels ({judgments.source}) judge {len(judged):,} queries, run "
            f"A answers {len(judged & set(qa)):,} of them and run B {len(judged & set(qb)):,}. "
            "Check that the runs and the qrels belong to the same collection.")
    ia = {q: i for i, q in enumerate(qa)}
    ib = {q: i for i, q in enumerate(qb)}
    da = docs_a[[ia[q] for q in common]]
    db = docs_b[[ib[q] for q in common]]
    a, b, union = _local_codes(da, db)
    grades = _truth_grades(common, union, judgments if truth is None else truth)
    with warnings.catch_warnings():  # queries missing from a run are counted in `skipped`
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = evaluate(judgments, {ra.name: ra, rb.name: rb}, [f"nDCG@{k}"])
    per_a, per_b = res.per_query(ra.name, f"nDCG@{k}"), res.per_query(rb.name, f"nDCG@{k}")
    return World(
        query_ids=common, a=a, b=b, grades=grades,
        ndcg_a=np.array([per_a[q] for q in common]), ndcg_b=np.array([per_b[q] for q in common]),
        names=(ra.name, rb.name), truth="true grades" if truth is not None else "judgments",
        skipped={key: v for key, v in skipped.items() if v},
        scale=_scale(judgments if truth is None else truth),
    )


def _scale(truth: Any) -> int:
    """The truth's highest grade + 1 (negative grades count as 0): its number of levels."""
    from serpeval.core.data import Qrels

    if isinstance(truth, Qrels):
        grades = np.asarray(truth.relevance)
        top = int(grades.max()) if grades.size else 0
    else:
        top = max((int(g) for docs in truth.values() for g in docs.values()), default=0)
    return max(top, 0) + 1


def _local_codes(
    da: NDArray[np.object_], db: NDArray[np.object_],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.object_]]:
    """Per query: A's docs get codes 0..k-1, B's docs A's code when shared, else k + j."""
    k = da.shape[1]
    valid_a, valid_b = _not_none(da), _not_none(db)
    a = np.where(valid_a, np.arange(k), -1)
    same = (db[:, :, None] == da[:, None, :]) & valid_b[:, :, None] & valid_a[:, None, :]
    b = np.where(same.any(axis=2), same.argmax(axis=2), k + np.arange(k))
    b = np.where(valid_b, b, -1)
    # numpy's stub for where() rejects None as a value; object arrays take it elementwise.
    union = np.concatenate([da, np.where(same.any(axis=2), None, db)], axis=1)  # type: ignore[call-overload]
    return a.astype(np.int64), b.astype(np.int64), union


def _not_none(values: NDArray[np.object_]) -> NDArray[np.bool_]:
    """Elementwise ``value != None`` of an object array of doc ids (padding slots hold None)."""
    # numpy's ufunc stubs reject None as an operand; object arrays compare it elementwise.
    return np.not_equal(values, None)  # type: ignore[call-overload]


def _truth_grades(queries: list[str], union: NDArray[np.object_], truth: Any) -> NDArray[np.int64]:
    """Grade of every local code: looked up in the qrels (or a truth dict), 0 if absent."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.core.data import Qrels

    if isinstance(truth, Qrels):
        t_q, t_d, t_g = truth.query_ids, truth.doc_ids, truth.relevance
    else:
        rows = [(str(q), str(d), int(g)) for q, docs in truth.items() for d, g in docs.items()]
        t_q = pa.array([r[0] for r in rows], pa.string())
        t_d = pa.array([r[1] for r in rows], pa.string())
        t_g = np.array([r[2] for r in rows], dtype=np.int64)
    sep = "\x1f"
    truth_keys = pc.binary_join_element_wise(t_q, t_d, sep)
    present = _not_none(union)
    qs = np.repeat(np.array(queries, dtype=object), union.shape[1]).reshape(union.shape)
    cell_keys = pc.binary_join_element_wise(pa.array(qs[present].tolist(), pa.string()),
                                            pa.array(union[present].tolist(), pa.string()), sep)
    where = pc.index_in(cell_keys, value_set=truth_keys).to_numpy(zero_copy_only=False)
    found = ~np.isnan(where.astype(np.float64))
    g = np.zeros(len(where), dtype=np.int64)
    g[found] = np.asarray(t_g)[where[found].astype(np.int64)]
    out = np.full(union.shape, -1, dtype=np.int64)
    out[present] = np.maximum(g, 0)  # negative (pooled but unjudged) counts as not relevant
    return out



def synthetic_pair(gap: float = 0.01, *, n_queries: int = 200, docs_per_query: int = 50,
                   levels: int = 5, k: int = 10, rng: int | np.random.Generator | None = 0,
                   ) -> tuple[Qrels, Run, Run]:
    """Generated judgments and two runs whose mean nDCG@k differ by ``gap`` (relative).

    Every document is judged (grades 0..levels-1, skewed to non-relevant). The ``baseline``
    run scores ``grade + noise``; the ``candidate`` scores ``(1 + λ) grade + noise`` with the
    same noise, and λ is found by bisection so that ``nDCG_candidate / nDCG_baseline - 1`` is
    as close to ``gap`` as the sample allows (the achieved gap is in the candidate's name).
    Negative gaps make the candidate worse. Returns ``(qrels, baseline, candidate)``.
    """
    import pyarrow as pa

    from serpeval.core.data import Qrels, Run
    from serpeval.evaluation.evaluate import evaluate

    if not np.isfinite(gap) or gap <= -1:
        raise OptionError(f"gap must be a finite relative difference > -1 (e.g. 0.01); got {gap!r}.")
    generator = as_generator(rng)
    check_count(n_queries, "n_queries")
    check_count(docs_per_query, "docs_per_query", minimum=k)
    probs = np.array([0.6, 0.2, 0.1, 0.06, 0.04][:levels]) if levels <= 5 else np.full(levels, 1 / levels)
    probs = probs / probs.sum()
    grades = generator.choice(levels, size=(n_queries, docs_per_query), p=probs)
    noise = generator.standard_normal((n_queries, docs_per_query)) * 1.5
    qids = np.repeat([f"q{i + 1:04d}" for i in range(n_queries)], docs_per_query).tolist()
    dids = [f"d{i:06d}" for i in range(n_queries * docs_per_query)]
    qrels = Qrels(pa.array(qids), pa.array(dids), grades.ravel(), source="<synthetic qrels>")

    def run(weight: float, name: str) -> Run:
        return Run(pa.array(qids), pa.array(dids), (weight * grades + noise).ravel(), name=name)

    base = run(1.0, "baseline")
    base_ndcg = evaluate(qrels, base, [f"nDCG@{k}"]).aggregate("baseline", f"nDCG@{k}")

    def relative(lam: float) -> float:
        cand = run(1.0 + lam, "candidate")
        return evaluate(qrels, cand, [f"nDCG@{k}"]).aggregate("candidate", f"nDCG@{k}") / base_ndcg - 1

    lo, hi = (0.0, 2.0) if gap >= 0 else (-0.99, 0.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        if (relative(mid) < gap) == (gap >= 0):
            lo, hi = (mid, hi) if gap >= 0 else (lo, mid)
        else:
            lo, hi = (lo, mid) if gap >= 0 else (mid, hi)
    lam = (lo + hi) / 2
    achieved = relative(lam)
    return qrels, base, run(1.0 + lam, f"candidate ({achieved:+.2%} nDCG@{k})")
