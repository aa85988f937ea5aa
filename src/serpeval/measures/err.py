"""Expected reciprocal rank (ERR), the cascade-model graded measure."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import within
from serpeval.measures._segments import prefix_sums
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

MAX_GRADE = Param(
    "max_grade", int, 4,
    "grade of a perfect doc; stop probability R(g) = (2^g - 1) / 2^max_grade (gdeval: 4); "
    "at most 53, so that R stays below 1 in float64",
    minimum=1, maximum=53,
)


def err(r: Rankings, *, cutoff: int | None, max_grade: int) -> NDArray[np.float64]:
    """ERR@k = sum over ranks i <= k of R_i / i * prod_{j < i} (1 - R_j).

    R_i = (2^g_i - 1) / 2^max_grade is the probability that a user stops at a doc of grade
    g_i (Chapelle et al., CIKM 2009; gdeval.pl with max_grade = 4). Grades above max_grade
    count as max_grade; grades <= 0 and unjudged docs give R = 0.
    """
    g = np.clip(r.grades, 0, max_grade).astype(np.float64)
    stop = (np.exp2(g) - 1.0) / 2.0**max_grade
    # log of the probability of reaching each rank: sum of log(1 - R) over the ranks above.
    log_continue = np.log1p(-stop)
    reach = np.exp(prefix_sums(log_continue, r.offsets) - log_continue)
    contribution = stop * reach / (r.position + 1.0)
    return r.total(contribution, within(r, cutoff))


SPEC = MeasureSpec(
    name="ERR",
    summary="expected reciprocal rank: cascade user stopping at grade g with prob (2^g-1)/2^max",
    kernel=err,
    params=(MAX_GRADE,),
    cutoff="optional",
    bounds=(0.0, 1.0),
    properties=frozenset({"bounded", "no_relevant_is_zero", "cutoff_monotone"}),
    reference="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; gdeval.pl",
    family="Cascade",
    user_model="cascade: stops at rank i with a probability that grows with the grade",
    grades="graded",
    use_when="graded navigational search: a highly relevant document early satisfies the user",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("ERR",),
)
