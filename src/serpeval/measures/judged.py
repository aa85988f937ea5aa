"""Judged@k: how much of the top k has a relevance judgment (the hole rate's complement)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import safe_divide
from serpeval.measures._segments import picked
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
    summary="fraction of the top k (of the retrieved docs when fewer) that is judged",
    kernel=judged,
    cutoff="optional",
    properties=frozenset({"bounded"}),
    reference="Sakai & Kando, IR 2008 (condensed lists); ir_measures Judged@k",
    notes="ir_measures' definition (no padding; any qrels entry is judged); it breaks score ties by "
          "doc id ascending (serpeval: descending), which matters only for a tie across rank k.",
)
