"""C/W/L measures as cwl_eval defines them: INST, INSQ, BPM and the NERR family.

A C/W/L measure is the expected gain per doc a user examines, sum_i W(i) g_i, where the
user goes on from rank i with probability C(i) and W(i) = prod_{j<i} C(j) / sum_k prod_{j<k}
C(j). These follow cwl_eval, which ir_measures calls for them: gains scaled to [0, 1] as
SDCG's (``min_rel``, ``max_rel``), and every ranking cut or padded with gain 0 to exactly
:data:`DEPTH` ranks, over which W is normalised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures.sdcg import MAX_REL, MIN_REL, scaled_gains
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

DEPTH = 1000
"""The ranks a C/W/L measure looks at: cwl_eval's ``max_n`` (ir_measures leaves it at 1000)."""

_BLOCK = 1024  # queries per padded block: 1024 x 1000 float64 = 8 MB per array

GOAL = Param("T", float, 1.0, "the gain the user wants (in units of a fully relevant doc)",
             minimum=1e-6, maximum=1e6)
PATIENCE = Param("p", float, 0.9, "the probability of going on past a doc of no gain (ir_measures: 0.9)",
                 minimum=0.0, maximum=1.0)


def _weighted_gain(r: Rankings, min_rel: int, max_rel: int, continuation) -> NDArray[np.float64]:
    """sum_i W(i) g_i per query, with C from ``continuation(ranks, gains)`` on padded blocks."""
    gains = scaled_gains(r, min_rel, max_rel)
    keep = r.position < DEPTH
    out = np.zeros(r.n_queries)
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)
    for start in range(0, r.n_queries, _BLOCK):
        stop = min(start + _BLOCK, r.n_queries)
        mine = keep & (r.segment >= start) & (r.segment < stop)
        g = np.zeros((stop - start, DEPTH))
        g[r.segment[mine] - start, r.position[mine]] = gains[mine]
        c = continuation(ranks, g)
        reach = np.ones_like(g)
        reach[:, 1:] = np.cumprod(c[:, :-1], axis=1)
        first = 1.0 / reach.sum(axis=1)
        out[start:stop] = np.einsum("qi,qi->q", reach * first[:, None], g)
    return out


def inst(r: Rankings, *, cutoff: None, T: float, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """INST = sum_{i<=1000} W(i) g_i with C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2,
    T_i = T - (g_1 + ... + g_i): the user goes on longer while less gain than T has been seen.

    Edge cases: 0 when no doc in the top 1000 has a gain. (Bailey, Moffat, Scholer & Thomas,
    SIGIR 2015.)
    """
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        left = T - np.cumsum(g, axis=1)
        return ((ranks + T + left - 1.0) / (ranks + T + left)) ** 2.0

    return _weighted_gain(r, min_rel, max_rel, continuation)


def insq(r: Rankings, *, cutoff: None, T: float, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """INSQ = sum_{i<=1000} W(i) g_i with C(i) = ((i + 2T - 1) / (i + 2T))^2, whatever the gains.

    Edge cases: 0 when no doc in the top 1000 has a gain. (Moffat, Scholer & Thomas, ADCS 2012.)
    """
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        c = ((ranks + 2.0 * T - 1.0) / (ranks + 2.0 * T)) ** 2.0
        return np.broadcast_to(c, g.shape)

    return _weighted_gain(r, min_rel, max_rel, continuation)


def bpm(r: Rankings, *, cutoff: int, T: float, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """BPM@K (static Bejeweled Player Model) = sum_i W(i) g_i with C(i) = 1 while the gain seen
    through rank i is below T and i < K, then 0: the user stops at T units of gain or K docs.

    Edge cases: 0 when no doc in the top K has a gain. (Zhang et al., SIGIR 2017.)
    """
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        return ((np.cumsum(g, axis=1) < T) & (ranks < cutoff)).astype(np.float64)

    return _weighted_gain(r, min_rel, max_rel, continuation)


def nerr8(r: Rankings, *, cutoff: int, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """NERR8@k = sum_i W(i) g_i with C(i) = 1 - g_i for i < k, 0 from k on (ERR's stopping on
    gain, truncated at k; Azzopardi, Moffat & Mackenzie, ICTIR 2021, eq. 8)."""
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(ranks < cutoff, 1.0 - g, 0.0)

    return _weighted_gain(r, min_rel, max_rel, continuation)


def nerr9(r: Rankings, *, cutoff: int, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """NERR9@k: C(i) = (i / (i + 1)) (1 - g_i) for i < k, 0 from k on (eq. 9: ERR's stopping and
    a reciprocal-rank discount)."""
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(ranks < cutoff, (ranks / (ranks + 1.0)) * (1.0 - g), 0.0)

    return _weighted_gain(r, min_rel, max_rel, continuation)


def nerr10(r: Rankings, *, cutoff: None, p: float, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """NERR10: C(i) = p (1 - g_i) (eq. 10: ERR's stopping with RBP's patience p)."""
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        return p * (1.0 - g)

    return _weighted_gain(r, min_rel, max_rel, continuation)


def nerr11(r: Rankings, *, cutoff: None, T: float, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """NERR11: C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i) (eq. 11: ERR's stopping with INSQ's
    goal T)."""
    def continuation(ranks: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        return (((ranks + 2.0 * T - 1.0) / (ranks + 2.0 * T)) ** 2.0) * (1.0 - g)

    return _weighted_gain(r, min_rel, max_rel, continuation)


_NOTES = ("ir_measures requires max_rel (serpeval: 1, binary) and computes it with cwl_eval; "
          "cwl_eval's W is normalised over exactly 1000 ranks.")

INST_SPEC = MeasureSpec(
    name="INST",
    summary="C/W/L expected gain rate of a user who wants T units of gain (goes on while short of T)",
    kernel=inst,
    params=(GOAL, MIN_REL, MAX_REL),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="Bailey, Moffat, Scholer & Thomas, SIGIR 2015; cwl_eval INST",
    notes=_NOTES,
    family="Persistence and goal (C/W/L)",
    user_model="goes on while short of T units of gain (adaptive C/W/L)",
    grades="graded",
    use_when="users with a goal: the expected gain rate of a user who wants T relevant documents",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("INST",),
)

INSQ_SPEC = MeasureSpec(
    name="INSQ",
    summary="C/W/L expected gain rate with continuation ((i + 2T - 1) / (i + 2T))^2",
    kernel=insq,
    params=(GOAL, MIN_REL, MAX_REL),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference="Moffat, Scholer & Thomas, ADCS 2012; cwl_eval INSQ",
    notes=_NOTES,
    family="Persistence and goal (C/W/L)",
    user_model="continuation ((i + 2T - 1) / (i + 2T))^2 (C/W/L)",
    grades="graded",
    use_when="a goal-driven user whose patience does not depend on what was found",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("INSQ",),
)

BPM_SPEC = MeasureSpec(
    name="BPM",
    summary="static Bejeweled Player Model: stops at T units of gain or K docs (BPM@K)",
    kernel=bpm,
    params=(GOAL, MIN_REL, MAX_REL),
    cutoff="required",
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="Zhang, Liu, Li, Zhang, Xu & Ma, SIGIR 2017; cwl_eval BPM-Static",
    notes=_NOTES,
    family="Persistence and goal (C/W/L)",
    user_model="stops after T units of gain or K documents, whichever first",
    grades="graded",
    use_when="a user with both a gain goal and a cost budget",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("BPM",),
)

_NERR = "Azzopardi, Moffat & Mackenzie, ICTIR 2021; cwl_eval NERR"
NERR8_SPEC = MeasureSpec(
    name="NERR8", summary="C/W/L form of ERR: stop on gain, truncated at k (eq. 8)", kernel=nerr8,
    params=(MIN_REL, MAX_REL), cutoff="required", properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference=_NERR + " eq. 8", notes=_NOTES,
    family="Cascade",
    user_model="stops on gain (ERR's cascade), truncated at k",
    grades="graded",
    use_when="ERR in the C/W/L framework (eq. 8)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NERR8",),
)
NERR9_SPEC = MeasureSpec(
    name="NERR9", summary="C/W/L form of ERR: stop on gain, rank discount, truncated at k (eq. 9)",
    kernel=nerr9, params=(MIN_REL, MAX_REL), cutoff="required",
    properties=frozenset({"bounded", "no_relevant_is_zero"}), reference=_NERR + " eq. 9", notes=_NOTES,
    family="Cascade",
    user_model="stops on gain with a rank discount, truncated at k",
    grades="graded",
    use_when="ERR in the C/W/L framework (eq. 9)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NERR9",),
)
NERR10_SPEC = MeasureSpec(
    name="NERR10", summary="C/W/L form of ERR: stop on gain, RBP patience p (eq. 10)", kernel=nerr10,
    params=(PATIENCE, MIN_REL, MAX_REL), properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference=_NERR + " eq. 10", notes=_NOTES,
    family="Cascade",
    user_model="stops on gain, with RBP's patience p",
    grades="graded",
    use_when="ERR in the C/W/L framework (eq. 10)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NERR10",),
)
NERR11_SPEC = MeasureSpec(
    name="NERR11", summary="C/W/L form of ERR: stop on gain, INSQ's goal T (eq. 11)", kernel=nerr11,
    params=(GOAL, MIN_REL, MAX_REL), properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference=_NERR + " eq. 11", notes=_NOTES,
    family="Cascade",
    user_model="stops on gain, with INSQ's goal T",
    grades="graded",
    use_when="ERR in the C/W/L framework (eq. 11)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NERR11",),
)
