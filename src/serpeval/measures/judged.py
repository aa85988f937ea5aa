"""Judged@k and Graded@k: how much of the top k has a relevance judgment.

Three measures describe the coverage of a top k, one meaning each (``Unjudged@k`` lives in
:mod:`serpeval.measures.unjudged`); they differ in the denominator and in how a negative grade
(trec_eval's "pooled but unjudged", what ``serpeval pool`` writes for a row still to judge)
counts:

============  ==================================================  ==================  ===============
measure       numerator (documents in the top k ...)              denominator         negative grade
============  ==================================================  ==================  ===============
Judged@k      listed in the qrels, any grade (ir_measures)        min(k, retrieved)   judged
Unjudged@k    not in the qrels, or a negative grade (trec_eval)   k                   unjudged
Graded@k      with a grade >= 0                                   k                   not graded
============  ==================================================  ==================  ===============

So ``Graded@k + Unjudged@k = min(k, retrieved) / k``: every rank of the top k holds a graded
document, an unjudged one, or nothing (a ranking shorter than k). ``Graded@k`` is what
``serpeval judged`` reports: the share of the k ranks a judgment backs, which judging the
missing documents raises and a partly filled judging list does not inflate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import safe_divide
from serpeval.measures._segments import judged_docs, picked
from serpeval.measures.spec import MeasureSpec
from serpeval.ranking import NONPOOL

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def judged(r: Rankings, *, cutoff: int | None) -> NDArray[np.float64]:
    """Judged@k = (docs in the top k that are in the qrels) / min(k, docs retrieved).

    ir_measures' definition: a ranking shorter than k is not padded, so a run that retrieves
    7 docs, all judged, has Judged@10 = 7/7 = 1; and a doc is judged when the qrels list it,
    whatever its grade (a negative grade too, which trec_eval's ``unj`` and serpeval's
    other measures treat as pooled but unjudged). Without a cutoff, the whole ranking.
    Edge cases: 0 when nothing is retrieved.
    """
    depth = r.n_ret if cutoff is None else np.minimum(r.n_ret, cutoff)
    listed = picked(r, "in_qrels", lambda: r.grades != NONPOOL)
    return safe_divide(listed.count_in_top(cutoff), depth)


SPEC = MeasureSpec(
    name="Judged",
    summary="fraction of the top k (of the retrieved docs when fewer) listed in the qrels, any "
            "grade (ir_measures; a negative grade counts as judged)",
    kernel=judged,
    cutoff="optional",
    properties=frozenset({"bounded"}),
    reference="Sakai & Kando, IR 2008 (condensed lists); ir_measures Judged@k",
    notes="ir_measures' definition (no padding; any qrels entry is judged); it breaks score ties by "
          "doc id ascending (serpeval: descending), which matters only for a tie across rank k.",
    family="Judgment coverage",
    user_model="none: a property of the run and the qrels",
    grades="none",
    use_when="checking that a run is judged deeply enough for its scores to mean something",
    unjudged="the measured quantity: the share of the top k present in the qrels",
    ir_measures=("Judged",),
)


def graded(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """Graded@k = (docs in the top k with a grade >= 0) / k.

    A document not in the qrels, or with a negative grade (pooled but unjudged: a judging
    list not filled in yet), is not graded, and neither is an empty rank of a ranking shorter
    than k: a run retrieving 7 docs, all graded, has Graded@10 = 7/10. The complement within
    the retrieved ranks is ``Unjudged@k``: ``Graded@k + Unjudged@k = min(k, retrieved) / k``.
    Edge cases: 0 when nothing is retrieved.
    """
    return judged_docs(r).count_in_top(cutoff) / float(cutoff)


GRADED_SPEC = MeasureSpec(
    name="Graded",
    summary="fraction of the k ranks holding a doc with a grade >= 0 (empty ranks and negative "
            "grades are not graded); serpeval judged's share",
    kernel=graded,
    cutoff="required",
    properties=frozenset({"bounded"}),
    reference="serpeval: Graded@k + Unjudged@k (trec_eval unj) = min(k, retrieved) / k",
    notes="not in ir_measures or trec_eval; ir_measures' Judged@k divides by min(k, retrieved) and "
          "counts a negative grade as judged.",
    family="Judgment coverage",
    user_model="none: a property of the run and the qrels",
    grades="none",
    use_when="judgment coverage over exactly k ranks (empty ranks count as not graded)",
    unjudged="the measured quantity: the share of the k ranks with a grade >= 0",
)
