"""Evaluation measures: one file per family, registered here in output order.

Adding a measure is one file (a :class:`MeasureSpec` and a pure kernel) plus one line in
:data:`REGISTRY`. The grammar, ``serpeval measures``, the reports and the registry-wide
property tests all read the registry.

Layer: measures. May import ranking, io and core; measure kernels read ranked arrays, never
files (an import-linter contract).
"""

from __future__ import annotations

from collections.abc import Iterable

from serpeval.measures import (
    average_precision,
    bpref,
    compat,
    counts,
    cwl,
    diversity,
    err,
    expected,
    gain_measures,
    geometric,
    infap,
    interpolated,
    judged,
    ncg,
    ndcg,
    ndcg_averaged,
    precision,
    propensity,
    quepid,
    r_precision,
    rbp,
    recall,
    reciprocal_rank,
    relative_precision,
    rprec_mult,
    sdcg,
    set_measures,
    srw,
    success,
    unjudged,
    utility,
    yaap,
)
from serpeval.measures._registry import Registry
from serpeval.measures.spec import EXPECTED, Measure, MeasureSpec, Param

__all__ = ["REGISTRY", "Measure", "MeasureSpec", "Param", "parse_measure", "parse_measures"]

REGISTRY = Registry([
    precision.SPEC,
    recall.SPEC,
    average_precision.SPEC,
    reciprocal_rank.SPEC,
    ndcg.SPEC,
    ndcg.DCG_SPEC,
    r_precision.SPEC,
    bpref.SPEC,
    infap.SPEC,
    success.SPEC,
    err.SPEC,
    judged.SPEC,
    judged.GRADED_SPEC,
    set_measures.SET_P,
    set_measures.SET_R,
    set_measures.SET_F,
    counts.NUM_RET,
    counts.NUM_REL,
    counts.NUM_REL_RET,
    # trec_eval's remaining measures (all_trec, dcg/ideal_dcg, yaap)
    geometric.GMAP_SPEC,
    geometric.GM_BPREF_SPEC,
    interpolated.SPEC,
    interpolated.AVG_SPEC,
    rprec_mult.SPEC,
    relative_precision.SPEC,
    relative_precision.SET_SPEC,
    set_measures.SET_AP,
    utility.SPEC,
    gain_measures.BIN_G_SPEC,
    gain_measures.G_SPEC,
    ndcg.IDCG_SPEC,
    ndcg_averaged.REL_SPEC,
    ndcg_averaged.R_SPEC,
    rbp.SPEC,
    rbp.RESID_SPEC,
    unjudged.SPEC,
    yaap.SPEC,
    counts.NUM_NONREL_JUDGED_RET,
    # ir_measures' and ranx's measures that trec_eval lacks
    counts.NUM_Q,
    counts.HITS,
    set_measures.F_AT,
    sdcg.SPEC,
    compat.SPEC,
    cwl.INST_SPEC,
    cwl.INSQ_SPEC,
    cwl.BPM_SPEC,
    cwl.NERR8_SPEC,
    cwl.NERR9_SPEC,
    cwl.NERR10_SPEC,
    cwl.NERR11_SPEC,
    ncg.SPEC,
    propensity.SPEC,
    propensity.DCG_SPEC,
    # the peer tools' own definitions (OpenSearch SRW, Quepid), transcribed from their code
    srw.P_SPEC,
    srw.AP_SPEC,
    srw.NDCG_SPEC,
    quepid.P_SPEC,
    quepid.NDCG_SPEC,
    # diversity measures (subtopic qrels), exact to NIST's ndeval
    *diversity.SPECS,
])


EXPECTED.append(expected.expected_values)  # ties="expected" (Measure.compute reads it)


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure name in any supported dialect (see :mod:`serpeval.measures._registry`)."""
    return REGISTRY.parse(text)


def parse_measures(texts: str | Measure | Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse one name or several, keeping order and dropping repeats."""
    if isinstance(texts, (str, Measure)):
        texts = [texts]
    return REGISTRY.parse_many(texts)
