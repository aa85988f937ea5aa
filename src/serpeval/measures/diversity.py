"""Diversity (intent-aware) measures, exact to NIST's ndeval (TREC Web 2009-2014).

alpha-nDCG, alpha-DCG, ERR-IA, nERR-IA, NRBP, nNRBP, MAP-IA (AP_IA), P-IA and subtopic
recall, computed from subtopic qrels (``qid subtopic docid rel``) as ndeval 4.5 computes
them (read from ``ndeval.c`` as pyndeval 0.0.8 ships it, and checked against pyndeval on
generated collections: ``tests/measures/test_diversity.py``). Names are ir_measures'
(``alpha_nDCG@20``, ``ERR_IA@20``, ``AP_IA``, ``StRecall@20``), with ndeval's
(``alpha-nDCG@20``, ``ERR-IA@20``, ``MAP-IA``, ``strec@20``) as aliases.

ndeval's conventions, all kept (``docs/diversity.md`` has them with examples):

* **Binary judgments per subtopic**: a document is relevant to a subtopic when its grade
  is >= ``rel`` (default 1); grades 0 and below are not relevant (ndeval reads grades >= 0
  and counts anything above 1 as 1).
* **Gain with novelty**: a document's gain at rank i is the sum, over the subtopics it is
  relevant to, of (1 - alpha)^c, c the number of documents above it relevant to the same
  subtopic. The sum is taken in the order subtopics first appear in the qrels.
* **The subtopics of a query** are those with at least one relevant judgment ("actual
  subtopics", A). A query whose judgments are all 0 (none with a relevant document) is
  evaluated and scores 0 on every measure; ndeval prints ``nan`` for its nNRBP, serpeval 0.
* **Ideal ranking**: greedy, as ndeval builds it: at each rank the judged document with the
  largest gain given the documents already placed, ties to the greatest doc id in byte
  order. It is an approximation (the exact ideal is NP-hard), and the normalised measures
  divide by it, so a run can score above 1 (rarely).
* **"Ideal ideal" normalisation** of alpha-DCG and ERR-IA: divided by the value of a
  ranking whose every document is relevant to all A subtopics,
  sum_i A (1 - alpha)^i d(i). At k = 1 ndeval does not divide (its loop starts at rank
  2), so alpha-DCG@1 and ERR-IA@1 are the raw gain of the first document (up to A).
* **Cutoffs**: ndeval computes ranks 1-20 only (pyndeval refuses k > 20); serpeval takes the
  same formulas to any k up to 10,000. NRBP, nNRBP and MAP-IA use the whole ranking.
* Values are computed with the same floating-point operations in the same order as
  ndeval's C code, so they equal ndeval's to the last bit in practice and always to its
  printed precision (6 decimals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.core.errors import InvalidParameterError
from serpeval.core.segments import weighted_bincount
from serpeval.measures._segments import powers
from serpeval.measures.spec import MeasureSpec, Param
from serpeval.measures.subtopic_ranking import SubtopicRankings, subtopics_of

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = ["SPECS"]

MAX_DEPTH = 10_000
"""The largest cutoff of the diversity measures (ndeval's is 20)."""

ALPHA = Param("alpha", float, 0.5, "redundancy intolerance: each earlier document relevant to a subtopic "
              "multiplies its gain by 1 - alpha (ndeval -alpha)", minimum=0.0, maximum=1.0)
BETA = Param("beta", float, 0.5, "patience: the weight of rank i is beta^(i-1) (ndeval -beta)",
             minimum=0.0, maximum=1.0)
REL = Param("rel", int, 1, "minimum grade relevant to a subtopic (inclusive; pyndeval's relevance_level, "
            "ndeval's 1)", minimum=0, maximum=GRADE_LIMIT)
REFERENCE_NDEVAL = "NIST ndeval 4.5 (TREC Web track), as wrapped by pyndeval"


# ----------------------------------------------------------------------------- shared parts


@dataclass(frozen=True)
class _Relevant:
    """The relevant (ranked document, subtopic) pairs of a rankings at one ``rel`` level."""

    query: NDArray[np.int64]
    position: NDArray[np.int64]
    subtopic: NDArray[np.int64]
    novelty: NDArray[np.int64]  # earlier relevant documents of the same (query, subtopic)
    n_subtopics: NDArray[np.int64]  # A: actual subtopics per query
    group_key: NDArray[np.int64]  # sorted (query, subtopic) keys with a relevant judgment
    group_relevant: NDArray[np.int64]  # relevant documents of each key (ndeval's nrelSub)


def _relevant(s: SubtopicRankings, rel: int) -> _Relevant:
    key = ("relevant", rel)
    if key in s._memo:
        return s._memo[key]
    width = max(s.n_subtopics, 1)
    mask = s.pair_grade >= rel
    q, pos, sub = s.pair_query[mask], s.pair_position[mask], s.pair_subtopic[mask]
    by_subtopic = np.lexsort((pos, sub, q))
    k = q[by_subtopic] * width + sub[by_subtopic]
    n = len(k)
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if n else np.zeros(0, dtype=np.int64)
    first = np.zeros(n, dtype=np.int64)
    first[starts] = starts
    novelty = np.empty(n, dtype=np.int64)
    novelty[by_subtopic] = np.arange(n) - np.maximum.accumulate(first) if n else first
    judged = s.judged_grade >= rel
    group_key, group_relevant = np.unique(s.judged_query[judged] * width + s.judged_subtopic[judged],
                                          return_counts=True)
    n_subtopics = np.bincount(group_key // width, minlength=s.n_queries).astype(np.int64)
    out = _Relevant(q, pos, sub, novelty, n_subtopics, group_key, group_relevant.astype(np.int64))
    s._memo[key] = out
    return out


def _check_depth(k: int, name: str) -> None:
    if k > MAX_DEPTH:
        raise InvalidParameterError(
            f"Invalid measure '{name}@{k}': diversity measures take cutoffs up to {MAX_DEPTH:,} "
            "(ndeval's own stop at 20)."
        )


_DISCOUNTS: list[float] = []


def _discounts(n: int) -> NDArray[np.float64]:
    """ndeval's ``discount(i)`` = log(2) / log(i + 2) for ranks i = 0..n-1 (C's ``log``)."""
    while len(_DISCOUNTS) < n:
        i = len(_DISCOUNTS)
        _DISCOUNTS.append(math.log(2.0) / math.log(i + 2.0))
    return np.array(_DISCOUNTS[:n])


def _run_gains(s: SubtopicRankings, rel: int, alpha: float, width: int) -> NDArray[np.float64]:
    """``[query, rank]``: the run's novelty-discounted gain at ranks 0..width-1."""
    r = _relevant(s, rel)
    top = r.position < width
    table = powers(1.0 - alpha, int(r.novelty.max(initial=0)))
    flat = r.query[top] * width + r.position[top]
    # bincount adds in pair order (query, rank, subtopic): ndeval's order within a document.
    return weighted_bincount(flat, table[r.novelty[top]], s.n_queries * width).reshape(s.n_queries, width)


@dataclass(frozen=True)
class _Candidates:
    """The judged documents with a relevant subtopic, by query and doc id descending (the
    greedy ideal ranking's candidates), and their (document, subtopic) pairs."""

    pair_candidate: NDArray[np.int64]  # the candidate of each relevant judgment
    pair_slot: NDArray[np.int64]  # its (query, subtopic) slot
    n: int
    per_query: NDArray[np.int64]
    queries: NDArray[np.int64]  # queries with a candidate
    starts: NDArray[np.int64]  # their first candidate


def _candidates(s: SubtopicRankings, rel: int) -> _Candidates:
    key = ("candidates", rel)
    if key in s._memo:
        return s._memo[key]
    judged = s.judged_grade >= rel
    q, sub, doc = s.judged_query[judged], s.judged_subtopic[judged], s.judged_doc[judged]
    order = np.lexsort((sub, -doc, q))  # by query, doc id descending: the first best wins
    q, sub, doc = q[order], sub[order], doc[order]
    new_doc = np.r_[True, (q[1:] != q[:-1]) | (doc[1:] != doc[:-1])] if len(q) else np.zeros(0, dtype=bool)
    cand_query = q[new_doc]
    per_query = np.bincount(cand_query, minlength=s.n_queries).astype(np.int64)
    queries = np.flatnonzero(per_query)
    _, slot = np.unique(q * max(s.n_subtopics, 1) + sub, return_inverse=True)
    out = _Candidates(np.cumsum(new_doc) - 1, slot.astype(np.int64), int(new_doc.sum()), per_query, queries,
                      np.searchsorted(cand_query, queries))
    s._memo[key] = out
    return out


def _ideal_gains(s: SubtopicRankings, rel: int, alpha: float, width: int) -> NDArray[np.float64]:
    """``[query, rank]``: the gains of ndeval's greedy ideal ranking at ranks 0..width-1.

    At each rank, every query places its unplaced judged document with the largest gain
    (ties: greatest doc id in byte order), then multiplies the gain of that document's
    subtopics by 1 - alpha. A loop over ranks, vectorized over all queries. Documents with
    no relevant subtopic always gain 0 and are left out: they change no value.
    """
    key = ("ideal", rel, alpha)
    cached = s._memo.get(key)
    if cached is not None and cached.shape[1] >= width:
        return cached[:, :width]
    c = _candidates(s, rel)
    gain = np.ones(int(c.pair_slot.max(initial=-1)) + 1)
    keep = 1.0 - alpha
    out = np.zeros((s.n_queries, width))
    # The working set: unplaced candidates (by query, doc id descending) and their pairs. Placed
    # candidates score -1 until the set is compacted (when a quarter of it is placed), so that
    # later ranks touch only what is left; compaction keeps every order, hence every sum.
    cand_query = np.repeat(c.queries, c.per_query[c.queries])
    pair_candidate, pair_slot = c.pair_candidate, c.pair_slot
    placed = np.zeros(c.n, dtype=bool)
    n_placed = 0
    queries, starts, sizes = c.queries, c.starts, c.per_query[c.queries]
    for rank in range(min(width, int(c.per_query.max(initial=0)))):
        if n_placed * 4 >= len(placed):
            alive = ~placed
            renumber = np.cumsum(alive) - 1
            kept = alive[pair_candidate]
            pair_candidate, pair_slot = renumber[pair_candidate[kept]], pair_slot[kept]
            cand_query = cand_query[alive]
            placed = np.zeros(len(cand_query), dtype=bool)
            n_placed = 0
            if not len(cand_query):
                break
            starts = np.flatnonzero(np.r_[True, cand_query[1:] != cand_query[:-1]])
            queries = cand_query[starts]
            sizes = np.diff(np.r_[starts, len(cand_query)])
        n = len(placed)
        score = weighted_bincount(pair_candidate, gain[pair_slot], n)  # ndeval's sum, subtopic order
        score[placed] = -1.0
        best = np.maximum.reduceat(score, starts)
        is_best = score == np.repeat(best, sizes)
        winner = np.minimum.reduceat(np.where(is_best, np.arange(n), n), starts)
        left = best >= 0
        out[queries[left], rank] = best[left]
        now = np.zeros(n, dtype=bool)
        now[winner[left]] = True
        placed |= now
        n_placed += int(left.sum())
        gain[pair_slot[now[pair_candidate]]] *= keep
    s._memo[key] = out
    return out


def _normalised(gains: NDArray[np.float64], n_subtopics: NDArray[np.int64], alpha: float, k: int,
                kind: str) -> NDArray[np.float64]:
    """ndeval's cumulative alpha-DCG (``kind="dcg"``) or ERR-IA (``"err"``) at rank k over its
    "ideal ideal" (A subtopics at every rank), undivided at k = 1 as ndeval leaves it.

    ``gains`` may be narrower than k: ranks past it gain 0.
    """
    width = gains.shape[1]
    if kind == "dcg":
        raw = gains * _discounts(width)
    else:
        raw = gains / (np.arange(width) + 1.0)
    total = np.cumsum(raw, axis=1)[:, min(k, width) - 1] if width else np.zeros(len(gains))
    out = np.zeros(len(gains))
    has = n_subtopics > 0
    if k == 1:
        out[has] = total[has]
        return out
    levels, which = np.unique(n_subtopics[has], return_inverse=True)
    steps = np.full((len(levels), k), 1.0 - alpha)
    steps[:, 0] = levels
    ideal_ideal = np.multiply.accumulate(steps, axis=1)  # A, A(1-a), A(1-a)(1-a), ... as C multiplies
    ideal_ideal = ideal_ideal * _discounts(k) if kind == "dcg" else ideal_ideal / (np.arange(k) + 1.0)
    out[has] = total[has] / np.cumsum(ideal_ideal, axis=1)[:, -1][which]
    return out


def _widths(s: SubtopicRankings, k: int) -> int:
    return min(k, int(s.n_ret.max(initial=0)))


def _ideal_width(s: SubtopicRankings, rel: int, k: int) -> int:
    """How deep the greedy ideal ranking must go for rank k: at most the most relevant
    documents of a query (past them every gain is 0)."""
    return min(k, int(_candidates(s, rel).per_query.max(initial=0)))


def _dcg_family(r: Rankings, name: str, k: int | None, rel: int, alpha: float, kind: str,
                normalise: bool) -> NDArray[np.float64]:
    assert k is not None  # the spec requires a cutoff
    _check_depth(k, name)
    s = subtopics_of(r, f"{name}@{k}")
    a = _relevant(s, rel).n_subtopics
    run = _normalised(_run_gains(s, rel, alpha, _widths(s, k)), a, alpha, k, kind)
    if not normalise:
        return run
    # ndeval's renormalize: only where the run's alpha-DCG is not 0 (ERR-IA included).
    run_dcg = run if kind == "dcg" else _normalised(_run_gains(s, rel, alpha, _widths(s, k)), a, alpha, k, "dcg")
    ideal = _normalised(_ideal_gains(s, rel, alpha, _ideal_width(s, rel, k)), a, alpha, k, kind)
    out = np.zeros(len(run))
    has = run_dcg != 0
    out[has] = run[has] / ideal[has]
    return out


# ----------------------------------------------------------------------------- kernels


def alpha_ndcg(r: Rankings, *, cutoff: int | None, alpha: float, rel: int) -> NDArray[np.float64]:
    """alpha-nDCG@k = alpha-DCG@k / alpha-DCG@k of the greedy ideal ranking (Clarke et al. 2008).

    alpha-DCG@k = sum over ranks i = 1..k of G_i / log2(i + 1), where
    G_i = sum over the subtopics s the document at rank i is relevant to of (1 - alpha)^c(s, i),
    c(s, i) the number of documents above rank i relevant to s. The ideal ranking is ndeval's
    greedy one over all judged documents of the query (retrieved or not). 0 for a query with
    no relevant judgment, and wherever the run's alpha-DCG@k is 0.

    Hand-worked (alpha = 0.5): subtopics s1, s2; document a is relevant to s1 and s2, b to s2,
    c to s1. Run a, b, x: G = 2, 0.5, 0 -> DCG@3 = 2/1 + 0.5/log2(3) = 2.31546. Ideal (greedy):
    a (gain 2), then b and c tie at 0.5 -> c (greater id), then b (0.5) -> IDCG@3 =
    2 + 0.5/log2(3) + 0.5/2 = 2.56546. alpha-nDCG@3 = 2.31546 / 2.56546 = 0.90255.
    """
    return _dcg_family(r, "alpha_nDCG", cutoff, rel, alpha, "dcg", normalise=True)


def alpha_dcg(r: Rankings, *, cutoff: int | None, alpha: float, rel: int) -> NDArray[np.float64]:
    """ndeval's alpha-DCG@k: sum_{i<=k} G_i / log2(i + 1) divided by its "ideal ideal"
    sum_{i<=k} A (1 - alpha)^(i-1) / log2(i + 1) (A = the query's subtopics with a relevant
    document); G_i as for alpha-nDCG. At k = 1 ndeval leaves it undivided (G_1, up to A).
    0 for a query with no relevant judgment."""
    return _dcg_family(r, "alpha_DCG", cutoff, rel, alpha, "dcg", normalise=False)


def err_ia(r: Rankings, *, cutoff: int | None, alpha: float, rel: int) -> NDArray[np.float64]:
    """ndeval's ERR-IA@k: sum_{i<=k} G_i / i over the "ideal ideal" sum_{i<=k} A (1 - alpha)^(i-1) / i,
    (Chapelle et al. 2009 with binary grades, collection-independent normalisation; ndeval
    discounts redundancy with the same alpha as alpha-nDCG, 0.5 by default, as ir_measures
    fixes it); G_i as for alpha-nDCG. At k = 1 ndeval leaves it undivided (G_1)."""
    return _dcg_family(r, "ERR_IA", cutoff, rel, alpha, "err", normalise=False)


def nerr_ia(r: Rankings, *, cutoff: int | None, alpha: float, rel: int) -> NDArray[np.float64]:
    """nERR-IA@k = ERR-IA@k / ERR-IA@k of the greedy ideal ranking (ndeval's collection-dependent
    normalisation); 0 where the run's alpha-DCG@k is 0 or the query has no relevant judgment."""
    return _dcg_family(r, "nERR_IA", cutoff, rel, alpha, "err", normalise=True)


def _nrbp_total(gains_at: NDArray[np.float64], query: NDArray[np.int64], position: NDArray[np.int64],
                beta: float, n_q: int) -> NDArray[np.float64]:
    """Per query: sum over ranks i (0-based) of gain_i * beta^i, in rank order."""
    decay = powers(beta, int(position.max(initial=0)))
    return weighted_bincount(query, gains_at * decay[position], n_q)


def _nrbp(r: Rankings, name: str, rel: int, alpha: float, beta: float, normalise: bool) -> NDArray[np.float64]:
    s = subtopics_of(r, name)
    rr = _relevant(s, rel)
    table = powers(1.0 - alpha, int(rr.novelty.max(initial=0)))
    width = int(s.n_ret.max(initial=0)) + 1
    doc_key = rr.query * width + rr.position  # pairs are sorted by (query, rank, subtopic)
    new_doc = np.r_[True, doc_key[1:] != doc_key[:-1]] if len(doc_key) else np.zeros(0, dtype=bool)
    doc_gain = weighted_bincount(np.cumsum(new_doc) - 1, table[rr.novelty], int(new_doc.sum()))
    total = _nrbp_total(doc_gain, rr.query[new_doc], rr.position[new_doc], beta, s.n_queries)
    a = rr.n_subtopics
    has = a > 0
    factor = np.zeros(len(a))
    factor[has] = (1 - (1 - alpha) * beta) / a[has]
    run = total * factor
    if not normalise:
        return run
    ideal_gain = _ideal_gains(s, rel, alpha, _ideal_width(s, rel, MAX_DEPTH * 1000))
    q, pos = np.nonzero(ideal_gain)
    ideal = _nrbp_total(ideal_gain[q, pos], q, pos, beta, s.n_queries) * factor
    out = np.zeros(len(a))
    out[has] = run[has] / ideal[has]
    return out


def nrbp(r: Rankings, *, cutoff: int | None, alpha: float, beta: float, rel: int) -> NDArray[np.float64]:
    """NRBP = (1 - (1 - alpha) beta) / A * sum over ranks i of G_i beta^(i-1) (Clarke, Kolla &
    Vechtomova, ICTIR 2009; ndeval's collection-independent normalisation), over the whole
    ranking; G_i as for alpha-nDCG, A the query's subtopics with a relevant document. 0 for
    a query with no relevant judgment."""
    return _nrbp(r, "NRBP", rel, alpha, beta, normalise=False)


def nnrbp(r: Rankings, *, cutoff: int | None, alpha: float, beta: float, rel: int) -> NDArray[np.float64]:
    """nNRBP = NRBP / NRBP of the greedy ideal ranking (all its judged documents). 0 for a
    query with no relevant judgment (ndeval divides 0 by 0 there and prints nan)."""
    return _nrbp(r, "nNRBP", rel, alpha, beta, normalise=True)


def ap_ia(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """MAP-IA = (1 / A) sum over subtopics s of AP_s, AP_s = (1 / R_s) sum over the ranks i of
    documents relevant to s of (relevant-to-s documents at ranks <= i) / i, R_s the documents
    judged relevant to s (retrieved or not), over the whole ranking (ndeval's MAP-IA; Agrawal
    et al., WSDM 2009). 0 for a query with no relevant judgment."""
    s = subtopics_of(r, "AP_IA")
    rr = _relevant(s, rel)
    width = max(s.n_subtopics, 1)
    order = np.lexsort((rr.position, rr.subtopic, rr.query))
    key = (rr.query * width + rr.subtopic)[order]
    term = (rr.novelty[order] + 1) / (rr.position[order] + 1.0)
    groups, inverse = np.unique(key, return_inverse=True)
    per_subtopic = weighted_bincount(inverse, term, len(groups))  # in rank order, as C adds
    relevant = rr.group_relevant[np.searchsorted(rr.group_key, groups)]
    total = weighted_bincount(groups // width, per_subtopic / relevant, s.n_queries)  # subtopic order
    a = rr.n_subtopics
    out = np.zeros(len(a))
    has = a > 0
    out[has] = total[has] / a[has]
    return out


def p_ia(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """P-IA@k = (1 / A) sum over subtopics s of P_s@k = (relevant (document, subtopic) pairs
    in the top k) / (k A); ranks past the end of the run count as not relevant (ndeval's
    intent-aware precision). 0 for a query with no relevant judgment."""
    assert cutoff is not None
    _check_depth(cutoff, "P_IA")
    rr = _relevant(subtopics_of(r, f"P_IA@{cutoff}"), rel)
    count = np.bincount(rr.query[rr.position < cutoff], minlength=r.n_queries)
    a = rr.n_subtopics
    out = np.zeros(len(a))
    has = a > 0
    out[has] = count[has] / (cutoff * a[has]).astype(np.float64)
    return out


def st_recall(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """S-recall@k = (subtopics with a relevant document in the top k) / A (Zhai, Cohen &
    Lafferty, SIGIR 2003; ndeval's strec). 0 for a query with no relevant judgment."""
    assert cutoff is not None
    _check_depth(cutoff, "StRecall")
    rr = _relevant(subtopics_of(r, f"StRecall@{cutoff}"), rel)
    covered = np.bincount(rr.query[(rr.position < cutoff) & (rr.novelty == 0)], minlength=r.n_queries)
    a = rr.n_subtopics
    out = np.zeros(len(a))
    has = a > 0
    out[has] = covered[has] / a[has].astype(np.float64)
    return out


# ----------------------------------------------------------------------------- specs

_CUT = frozenset({"no_relevant_is_zero"})

ALPHA_NDCG = MeasureSpec(
    name="alpha_nDCG",
    summary="alpha-nDCG: novelty-discounted DCG over ndeval's greedy ideal (subtopic qrels)",
    kernel=alpha_ndcg, params=(ALPHA, REL), cutoff="required",
    aliases=("alpha-nDCG", "α_nDCG", "α-nDCG"), bounds=None, properties=_CUT, subtopics=True,
    reference="Clarke et al., SIGIR 2008; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="reads down the list; a subtopic seen again is worth (1 - alpha) less each time",
    grades="graded",
    use_when="ambiguous or multi-faceted queries: reward covering new subtopics early (TREC Web diversity)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("alpha_nDCG",),
)
ALPHA_DCG = MeasureSpec(
    name="alpha_DCG",
    summary="alpha-DCG over ndeval's 'ideal ideal' (A subtopics at every rank; subtopic qrels)",
    kernel=alpha_dcg, params=(ALPHA, REL), cutoff="required",
    aliases=("alpha-DCG", "α_DCG", "α-DCG"), bounds=None, properties=_CUT, subtopics=True,
    reference="Clarke et al., SIGIR 2008; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="alpha-nDCG's reader, unnormalised",
    grades="graded",
    use_when="diagnostics: alpha-nDCG's numerator over ndeval's ideal ideal",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
ERR_IA = MeasureSpec(
    name="ERR_IA",
    summary="intent-aware ERR, ndeval's 'ideal ideal' normalisation (subtopic qrels)",
    kernel=err_ia, params=(ALPHA, REL), cutoff="required", aliases=("ERR-IA",), bounds=None,
    properties=_CUT, subtopics=True,
    reference="Chapelle et al., CIKM 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="a cascade user per intent, averaged over intents",
    grades="binary",
    use_when="diversity with a cascade user (ndeval's ERR-IA)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("ERR_IA",),
)
NERR_IA = MeasureSpec(
    name="nERR_IA",
    summary="intent-aware ERR over ndeval's greedy ideal ranking (subtopic qrels)",
    kernel=nerr_ia, params=(ALPHA, REL), cutoff="required", aliases=("nERR-IA",), bounds=None,
    properties=_CUT, subtopics=True,
    reference="Chapelle et al., CIKM 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="ERR-IA's reader, normalised by the greedy ideal",
    grades="binary",
    use_when="diversity with a cascade user, normalised",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("nERR_IA",),
)
NRBP = MeasureSpec(
    name="NRBP",
    summary="novelty- and rank-biased precision over the whole ranking (subtopic qrels)",
    kernel=nrbp, params=(ALPHA, BETA, REL), bounds=(0.0, 1.0), properties=_CUT, subtopics=True,
    reference="Clarke, Kolla & Vechtomova, ICTIR 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="RBP's patient user with novelty discount alpha",
    grades="binary",
    use_when="diversity with a persistence user (ndeval's NRBP)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NRBP",),
)
NNRBP = MeasureSpec(
    name="nNRBP",
    summary="NRBP over NRBP of ndeval's greedy ideal ranking (subtopic qrels)",
    kernel=nnrbp, params=(ALPHA, BETA, REL), bounds=None, properties=_CUT, subtopics=True,
    reference="Clarke, Kolla & Vechtomova, ICTIR 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="NRBP's reader, normalised by the greedy ideal",
    grades="binary",
    use_when="diversity with a persistence user, normalised",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("nNRBP",),
)
AP_IA = MeasureSpec(
    name="AP_IA",
    summary="intent-aware average precision: mean over subtopics of AP per subtopic (subtopic qrels)",
    kernel=ap_ia, params=(REL,), aliases=("MAP_IA", "MAP-IA"), bounds=(0.0, 1.0), properties=_CUT,
    subtopics=True, reference="Agrawal et al., WSDM 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="AP's reader per subtopic, averaged over subtopics",
    grades="binary",
    use_when="intent-aware ranking quality (Agrawal et al.)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("AP_IA",),
)
P_IA = MeasureSpec(
    name="P_IA",
    summary="intent-aware precision@k: relevant (doc, subtopic) pairs in the top k over k x subtopics",
    kernel=p_ia, params=(REL,), cutoff="required", aliases=("P-IA",), bounds=(0.0, 1.0),
    properties=_CUT, subtopics=True,
    reference="Agrawal et al., WSDM 2009; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="P@k's reader per subtopic, averaged over subtopics",
    grades="binary",
    use_when="intent-aware precision of a page",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("P_IA",),
)
ST_RECALL = MeasureSpec(
    name="StRecall",
    summary="subtopic recall@k: share of the query's subtopics covered in the top k (subtopic qrels)",
    kernel=st_recall, params=(REL,), cutoff="required", aliases=("strec", "S_recall", "S-recall"),
    bounds=(0.0, 1.0), properties=frozenset({"no_relevant_is_zero", "bounded"}), subtopics=True,
    reference="Zhai, Cohen & Lafferty, SIGIR 2003; " + REFERENCE_NDEVAL,
    family="Diversity (subtopic qrels)",
    user_model="counts the subtopics covered in the top k",
    grades="binary",
    use_when="how many facets of the query a page covers",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("StRecall",),
)

SPECS = (ALPHA_NDCG, ALPHA_DCG, ERR_IA, NERR_IA, NRBP, NNRBP, AP_IA, P_IA, ST_RECALL)
