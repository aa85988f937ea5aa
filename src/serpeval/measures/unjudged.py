"""Unjudged@k: the share of the top k without a usable judgment (trec_eval 10.0's ``unj``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._segments import judged_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def unjudged(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """Unjudged@k = (docs in the top k not in the qrels or with a negative grade) / k.

    A "red flag" measure: high values at small k mean the run is poorly covered by the
    judgments, so its other scores are unreliable. A ranking shorter than k counts as padded
    with *judged* non-relevant docs (trec_eval: "assumed irrelevant (not unjudged)"), so a
    run retrieving 15 docs of which 4 are unjudged has Unjudged@20 = 4/20. A negative grade
    (what ``serpeval pool`` writes for a row still to judge) is unjudged. The other coverage
    measures (:mod:`serpeval.measures.judged`): ``Graded@k + Unjudged@k = min(k, retrieved) / k``;
    ``Judged@k`` (ir_measures) counts a negative grade as judged.
    """
    in_top = np.minimum(cutoff, r.n_ret)
    return (in_top - judged_docs(r).count_in_top(cutoff)) / float(cutoff)


SPEC = MeasureSpec(
    name="Unjudged",
    summary="fraction of the top k that is unjudged (not in the qrels, or a negative grade)",
    kernel=unjudged,
    cutoff="required",
    trec_cut=("unj",),
    higher_is_better=False,
    properties=frozenset({"bounded"}),
    reference="trec_eval 10.0 m_unjudged.c",
    family="Judgment coverage",
    user_model="none: a property of the run and the qrels",
    grades="none",
    use_when="spotting runs whose top k is poorly judged (trec_eval's unj)",
    unjudged="the measured quantity: the share of the top k not in the qrels (or pooled-unjudged)",
)
