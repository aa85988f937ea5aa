"""Judged@k: how much of the top k has a relevance judgment (the hole rate's complement)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import safe_divide
from serpeval.measures._segments import judged_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def judged(r: Rankings, *, cutoff: int | None) -> NDArray[np.float64]:
    """Judged@k = (docs in the top k with a grade >= 0 in the qrels) / min(k, docs retrieved).

    ir_measures' definition: a ranking shorter than k is not padded, so a run that retrieves
    7 docs, all judged, has Judged@10 = 7/7 = 1. Without a cutoff, the whole ranking. Docs
    outside the qrels and docs with a negative grade (pooled but unjudged, trec_eval's rule)
    are unjudged. Edge cases: 0 when nothing is retrieved.
    """
    depth = r.n_ret if cutoff is None else np.minimum(r.n_ret, cutoff)
    return safe_divide(judged_docs(r).count_in_top(cutoff), depth)


SPEC = MeasureSpec(
    name="Judged",
    summary="fraction of the top k (of the retrieved docs when fewer) that is judged",
    kernel=judged,
    cutoff="optional",
    properties=frozenset({"bounded"}),
    reference="Sakai & Kando, IR 2008 (condensed lists); ir_measures Judged@k",
    notes="ir_measures counts a doc with a negative grade as judged (serpeval: unjudged, trec_eval's "
          "rule) and breaks score ties by doc id ascending (serpeval: descending).",
)
