"""bpref: binary preference, robust to incomplete judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, safe_divide
from serpeval.measures._segments import memo, nonrelevant_docs, relevant_docs

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

from serpeval.measures.spec import MeasureSpec


def bpref(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """bpref = (1/R) * sum over retrieved relevant docs d of (1 - min(n_d, R) / min(N, R)).

    n_d is the number of judged non-relevant docs (0 <= grade < rel) ranked above d, N the
    number of judged non-relevant docs of the query (retrieved or not), R the number of
    relevant ones. Unjudged docs (not in the qrels, or negative grade) are skipped. A term
    with n_d = 0 is 1 (this also avoids 0/0 when N = 0). 0 when R = 0.
    Buckley & Voorhees, SIGIR 2004; trec_eval ``m_bpref.c``.
    """
    return memo(r, ("bpref", rel), lambda: _bpref(r, rel)).copy()  # shared with GMBpref


def _bpref(r: Rankings, rel: int) -> NDArray[np.float64]:
    docs = relevant_docs(r, rel)
    num_rel = r.num_rel(rel).astype(np.float64)
    seg = docs.segment
    nonrel_above = nonrelevant_docs(r, rel).count_above(docs.index, seg).astype(np.float64)
    R = num_rel[seg]
    denominator = np.minimum(r.num_nonrel(rel)[seg], R)
    term = np.ones(len(seg))
    above = nonrel_above > 0
    term[above] = 1.0 - np.minimum(nonrel_above[above], R[above]) / denominator[above]
    total = np.bincount(seg, weights=term, minlength=r.n_queries)
    return safe_divide(total, num_rel)


SPEC = MeasureSpec(
    name="Bpref",
    summary="binary preference: how often retrieved relevant docs rank above judged non-relevant ones",
    kernel=bpref,
    params=(REL,),
    trec=("bpref",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Buckley & Voorhees, SIGIR 2004; trec_eval m_bpref.c",
    family="Incomplete judgments",
    user_model="compares relevant documents with the judged non-relevant ones above them",
    grades="binary",
    use_when="incomplete judgments: unjudged documents neither help nor hurt",
    unjudged="ignored: only judged non-relevant documents above a relevant one count",
    ir_measures=("Bpref",),
)
