"""Quepid's default scorers: ``Quepid_P@k`` (``P@10``) and ``Quepid_nDCG@k`` (``nDCG@10``).

Transcribed from o19s/quepid at commit f80322f3acb12cde69493b6bd9fda1ac08eb0d60 (2026-08-20):
``db/scorers/p@10.js`` and ``db/scorers/ndcg@10.js`` (the latter last changed in 0e92b094b934,
"Use *all* rated documents for ideal DCG computation. (#1242)", 2025-02-25, Quepid 8.1), run
by ``app/assets/javascripts/factories/ScorerFactory.js`` (``runCode``: ``eachDoc`` visits
the returned docs among the first k, ``hasDocRating``/``docRating`` read the rating of the
doc at a position, ``eachDocWithRating`` visits ``bestDocs``, every rated doc of the query,
from ``ratingsStoreSvc.bestDocs()``). The scorers fix k = 10 (the ``// @Rank`` line); here
k is the cutoff.

Quepid's ``NDCG_CUT@10`` (``db/scorers/ndcg_cut@10.js``, added in 8.2.0 to give back the
pre-8.1 behaviour) cuts the ideal at k: it is serpeval's ``nDCG(gain=exp)@k``. A negative
qrels grade is "judged but unusable" in serpeval (trec_eval's convention), so these kernels
count it as rating 0; Quepid's scales start at 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.segments import weighted_bincount
from serpeval.measures._common import safe_divide
from serpeval.measures.spec import MeasureSpec
from serpeval.measures.srw import PEER_FAMILY, exp_gains

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = ["NDCG_SPEC", "P_SPEC", "quepid_ndcg", "quepid_precision"]

SOURCE = "o19s/quepid at commit f80322f3acb12cde69493b6bd9fda1ac08eb0d60 (2026-08-20)"


def quepid_precision(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """Quepid_P@k = (rated docs with rating > 0 in the top k) / min(k, returned).

    Quepid's ``p@10.js``: ``eachDoc`` over the first k positions counts each returned doc in
    ``total`` and each one rated above 0 in ``count``; the score is ``count / total``, 0 when
    nothing is returned. Unlike serpeval's P@k (trec_eval's, dividing by k) a short list is
    not penalised: 3 returned, 2 relevant gives 0.667 at k = 10, not 0.2. The same as
    ``SRW_P(rounding=False)@k``; Quepid does not round in the browser (its server-side runner,
    ``lib/javascript_scorer.rb``, rounds to 2 decimals values printed with 2 or more).
    Edge cases: 0 when nothing is retrieved or no judgment of the query is above 0.
    """
    top = (r.position < cutoff) & (r.grades > 0)
    hits = r.total(np.ones(len(r.grades)), top)
    return safe_divide(hits, np.minimum(r.n_ret, cutoff))


def quepid_ndcg(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """Quepid_nDCG@k = DCG of the top k / DCG of *every* rated doc, sorted by rating descending.

    Quepid's ``ndcg@10.js`` (8.1 and later): gain 2^rating - 1 (an unrated or missing
    position counts 0), discount ``Math.log2(i + 2)`` at 0-based position i, numerator over
    the first k positions, denominator ``DCG(ideal, ideal.length)`` over all rated docs of
    the query (the ideal list is not cut at k). Edge cases: 0 when that denominator is 0 (no
    rating above 0); grades from 1024 on, where the JavaScript doubles overflow (NaN), give
    the exact ratio (gains scaled by a power of two, ``srw.exp_gains``). Difference from
    serpeval's ``nDCG(gain=exp)@k`` (trec_eval's ``ndcg_cut``, Quepid's ``NDCG_CUT@10``): the
    ideal there is cut at k, so here a query with more than k relevant docs cannot reach 1,
    even ranked perfectly; the value grows with k (the denominator does not change) and
    equals ``nDCG(gain=exp)`` without a cutoff once k reaches the number of docs retrieved.
    """
    top = r.position < cutoff
    seg = r.segment[top]
    dcg = weighted_bincount(seg, exp_gains(r, r.grades[top], seg) / np.log2(r.position[top] + 2.0), r.n_queries)
    ideal = weighted_bincount(r.ideal_segment, exp_gains(r, r.ideal_grades, r.ideal_segment)
                              / np.log2(r.ideal_position + 2.0), r.n_queries)
    return safe_divide(dcg, ideal)


_COMMON = {
    "cutoff": "required",
    "family": PEER_FAMILY,
    "use_when": "reproducing, or reconciling with, the scores of Quepid's default scorers",
    "unjudged": "counted as rating 0 (Quepid's missing_rating = 0)",
}

P_SPEC = MeasureSpec(
    name="Quepid_P",
    summary="Quepid's P@10 scorer: rated > 0 in the top k / min(k, returned)",
    kernel=quepid_precision,
    aliases=("Quepid_Precision",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference=SOURCE + ", db/scorers/p@10.js",
    user_model="scans the docs returned in the top k; a short list is not penalised",
    grades="binary",
    **_COMMON,  # type: ignore[arg-type]
)

NDCG_SPEC = MeasureSpec(
    name="Quepid_nDCG",
    summary="Quepid's nDCG@10 scorer (8.1+): DCG of the top k over the DCG of all rated docs (ideal not cut at k)",
    kernel=quepid_ndcg,
    aliases=("Quepid_NDCG",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves", "cutoff_monotone"}),
    reference=SOURCE + ", db/scorers/ndcg@10.js (0e92b094b934, #1242)",
    user_model="graded gains discounted by log2 of the rank, against every rated doc",
    grades="graded",
    **_COMMON,  # type: ignore[arg-type]
)
