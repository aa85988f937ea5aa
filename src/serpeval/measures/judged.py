"""Judged@k: how much of the top k has a relevance judgment (the hole rate's complement)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.measures._segments import judged_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def judged(r: Rankings, *, cutoff: int) -> NDArray[np.float64]:
    """Judged@k = (docs in the top k with a grade >= 0 in the qrels) / k.

    Docs outside the qrels and docs with a negative grade (pooled but unjudged) are
    unjudged. Like P@k, a ranking shorter than k is padded, so the missing ranks count as
    unjudged: Judged@k = 1 - trec_eval's ``unj_k`` - (missing ranks / k).
    """
    return judged_docs(r).count_in_top(cutoff) / float(cutoff)


SPEC = MeasureSpec(
    name="Judged",
    summary="fraction of the top k that is judged (low values make other measures unreliable)",
    kernel=judged,
    cutoff="required",
    properties=frozenset({"bounded"}),
    reference="Sakai & Kando, IR 2008 (condensed lists); ir_measures Judged@k",
)
