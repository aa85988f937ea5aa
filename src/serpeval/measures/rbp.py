"""Rank-biased precision (Moffat & Zobel 2008) and its residual (trec_eval 10.0)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.core.errors import InvalidParameterError
from serpeval.core.segments import weighted_bincount
from serpeval.measures._segments import Picked, judged_docs, picked, positive_docs, powers, relevant_docs
from serpeval.measures.gains import GAINS, apply_gains, format_gain_table, parse_gain_table, trec_gain_pairs
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

PERSISTENCE = Param(
    "p", float, 0.9,
    "persistence: the probability of looking at the next doc (0.9 is close to P@10, "
    "0.95-0.98 closer to AP)",
    minimum=0.0, maximum=1.0,
)


def normalized_gains(r: Rankings, table: dict[int, float], docs: Picked) -> NDArray[np.float64]:
    """Gain of each of ``docs``, rescaled per query to [0, 1] as trec_eval's ``m_rbp.c`` does.

    A query's gain table holds its grades 0..G (G = its highest grade >= 0, gain = grade)
    and the listed ``table`` entries. With lo = min(0, table gains) and hi = max(0, table
    gains), when lo < 0 or hi > 1 every gain becomes (gain - lo) / (hi - lo): grades 0..4
    give grade/4, binary grades stay 0/1. Docs whose grade is not in the table (unjudged,
    unless listed) have gain 0.
    """
    # The highest grade of each query: the first of its judgments, sorted descending.
    top = np.full(r.n_queries, -1, dtype=r.ideal_grades.dtype)  # float64 for fractional grades
    has = np.diff(r.ideal_offsets) > 0
    top[has] = np.maximum(r.ideal_grades[r.ideal_offsets[:-1][has]], -1)
    listed = np.array(sorted(table.values()), dtype=np.float64)
    lo = np.full(r.n_queries, min(0.0, listed.min(initial=0.0)))
    hi = np.full(r.n_queries, max(0.0, listed.max(initial=0.0)))
    # The highest grade 0..G that keeps its own gain (is not listed): G itself unless the
    # table lists it, else the first unlisted grade below a run of listed ones (worked out
    # once per listed grade: the table is short, the queries many). A fractional top grade
    # (no table lists it) keeps its own gain. Vectorized: with fractional grades nearly every
    # query has a top grade of its own.
    free = top.astype(np.float64)  # -1 where the query has no grade >= 0
    keys = np.array(sorted(k for k in table if k >= 0), dtype=np.float64)
    if keys.size:
        below = np.empty(keys.size)
        for i, key in enumerate(keys.tolist()):  # over the table, not the queries
            step = int(key)
            while step >= 0 and step in table:
                step -= 1
            below[i] = step
        at = np.minimum(np.searchsorted(keys, free), keys.size - 1)
        hit = keys[at] == free
        free[hit] = below[at[hit]]
    keeps = free >= 0
    hi[keeps] = np.maximum(hi[keeps], free[keeps])
    grades = r.grades[docs.index]
    gain = apply_gains(grades, "linear", table)
    in_table = (grades >= 0) & (grades <= top[docs.segment])
    for grade in table:
        in_table |= grades == grade
    gain[~in_table] = 0.0
    rescale = ((lo < 0) | (hi > 1))[docs.segment] & in_table
    seg = docs.segment[rescale]
    gain[rescale] = (gain[rescale] - lo[seg]) / (hi[seg] - lo[seg])
    return gain


RBP_SCALE = Param(
    "scale", str, "trec",
    "trec: the grades rescaled per query to [0, 1] (trec_eval); binary: 1 for a grade >= min_grade "
    "(ir_measures' RBP(rel=k)); grade: the grade itself for grades >= min_grade (ranx's rbp)",
    choices=("trec", "binary", "grade"),
)
MIN_GRADE = Param(
    "min_grade", int, 1,
    "with scale=binary or scale=grade: the lowest grade that gains (ir_measures' rel, ranx's -lN)",
    minimum=0, maximum=GRADE_LIMIT,
)


def rbp(r: Rankings, *, cutoff: None, p: float, gains: str, scale: str = "trec", min_grade: int = 1
        ) -> NDArray[np.float64]:
    """RBP = (1 - p) * sum over ranks i >= 1 of gain_i * p^(i-1).

    The expected rate of gain of a user who looks at the next doc with probability p.
    Gains are rescaled per query to [0, 1] (:func:`normalized_gains`; grades 0..4 give
    grade/4); unjudged docs give 0, and their weight is what ``RBPResid`` reports. With
    ``scale=binary`` the gain is 1 for a grade >= ``min_grade`` (ir_measures' ``RBP(rel=k)``);
    with ``scale=grade`` it is the grade itself for grades >= ``min_grade`` (ranx's ``rbp.95``,
    whose values exceed 1 on graded qrels). ``gains`` tables go with ``scale=trec`` only.
    p^(i-1) is computed by repeated multiplication, as trec_eval does. trec_eval 10.0 reads
    two uninitialised variables in this rescaling, so ``-m rbp`` alone can print different
    numbers than inside ``-m all_trec``; this is the definition those all_trec outputs follow
    (min = max = 0 before looking at the gains).
    """
    table = parse_gain_table(gains) if gains else {}
    if scale != "trec":
        if table:
            raise InvalidParameterError(
                f"RBP: a gains table goes with scale=trec, not scale={scale}; give one of them."
            )
        docs = relevant_docs(r, min_grade)
        weight = powers(p, int(r.n_ret.max(initial=0)))[docs.position]
        value = r.grades[docs.index].astype(np.float64) if scale == "grade" else np.ones(len(docs.index))
        return (1.0 - p) * weighted_bincount(docs.segment, value * weight, r.n_queries)
    # Without a table only positive grades have a gain; a table can give any doc one.
    docs = picked(r, "all", lambda: np.ones(len(r.grades), dtype=bool)) if table \
        else positive_docs(r)
    weight = powers(p, int(r.n_ret.max(initial=0)))[docs.position]
    total = weighted_bincount(docs.segment, normalized_gains(r, table, docs) * weight, r.n_queries)
    return (1.0 - p) * total


def rbp_residual(r: Rankings, *, cutoff: None, p: float) -> NDArray[np.float64]:
    """RBPResid = p^n + (1 - p) * sum over unjudged docs at rank i of p^(i-1), n = docs retrieved.

    The most RBP could still grow if every unjudged retrieved doc (not in the qrels, or a
    negative grade) and everything past the end of the ranking had gain 1. Edge cases: 0
    when no retrieved doc is unjudged (trec_eval then drops the p^n tail too).
    """
    width = int(r.n_ret.max(initial=0))
    table = powers(p, width)
    any_unjudged = judged_docs(r).count < r.n_ret
    if r.n_queries > 1 and width * r.n_queries <= 2 * len(r.grades):
        # Rank by rank across all queries: row j holds p^j where the doc at rank j+1 is
        # unjudged; adding the rows in order is the C loop's order for every query. Not for
        # one query: NumPy sums a (width, 1) matrix down its contiguous column pairwise, not
        # row after row, and the last bits would depend on how many queries are evaluated
        # together (one at a time in a streamed piece); bincount adds in rank order.
        if r.n_ret.min(initial=0) == width:  # all rankings equally deep: a reshape
            unjudged = (r.grades.reshape(r.n_queries, width) < 0).T
        else:
            unjudged = np.zeros((width, r.n_queries), dtype=bool)
            unjudged[r.position, r.segment] = r.grades < 0
        total = np.add.reduce(np.where(unjudged, table[:width, None], 0.0), axis=0)
    else:  # very uneven depths: a padded matrix would be mostly empty
        unjudged_flat = r.grades < 0
        total = np.bincount(r.segment[unjudged_flat], weights=table[r.position[unjudged_flat]],
                            minlength=r.n_queries)
    return np.where(any_unjudged, table[r.n_ret] + (1 - p) * total, 0.0)


def _trec_rbp(text: str) -> dict[str, object]:
    table, named = trec_gain_pairs(text, extra=("p",))
    params: dict[str, object] = {}
    if "p" in named:
        params["p"] = named["p"]
    if table:
        params["gains"] = format_gain_table(table)
    return params


def _trec_p(text: str) -> dict[str, object]:
    _, named = trec_gain_pairs(text, extra=("p",))
    return {"p": named["p"]} if "p" in named else {}


SPEC = MeasureSpec(
    name="RBP",
    summary="rank-biased precision: expected gain rate of a user continuing with probability p",
    kernel=rbp,
    params=(PERSISTENCE, GAINS, RBP_SCALE, MIN_GRADE),
    trec=("rbp",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference="Moffat & Zobel, TOIS 2008; trec_eval 10.0 m_rbp.c",
    trec_params=_trec_rbp,
    notes="ir_measures' RBP defaults to p=0.8 (serpeval and trec_eval: 0.9; an ir_measures object keeps "
          "its p) and needs rel=k: binary gains, RBP(scale=binary,min_grade=k) here; it computes it with "
          "cwl_eval. ranx's rbp.95 is RBP(p=0.95,scale=grade): the grades, not rescaled.",
    family="Persistence and goal (C/W/L)",
    user_model="continues to the next rank with probability p (patience), stops otherwise",
    grades="graded",
    use_when="open-ended browsing with a tunable patience; report with RBPResid under incomplete judgments",
    unjudged="counted as zero gain; RBPResid says how much they could add",
    ir_measures=("RBP",),
)

RESID_SPEC = MeasureSpec(
    name="RBPResid",
    summary="RBP residual: how much RBP could still grow from unjudged docs and the unseen tail",
    kernel=rbp_residual,
    params=(PERSISTENCE,),
    trec=("rbp_resid",),
    higher_is_better=False,
    properties=frozenset({"bounded"}),
    reference="Moffat & Zobel, TOIS 2008; trec_eval 10.0 m_rbp_resid.c",
    trec_params=_trec_p,
    family="Persistence and goal (C/W/L)",
    user_model="RBP's reader, counting what unjudged documents and the unseen tail could add",
    grades="none",
    use_when="the uncertainty of RBP under incomplete judgments",
    unjudged="the measured quantity: their RBP weight is the residual",
)
