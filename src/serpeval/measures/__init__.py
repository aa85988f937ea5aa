"""Evaluation measures: one file per family, registered here in output order.

Adding a measure is one file (a :class:`MeasureSpec` and a pure kernel) plus one line in
:data:`REGISTRY`. The grammar, ``serpeval measures``, the reports and the registry-wide
property tests all read the registry.
"""

from __future__ import annotations

from serpeval.measures import (
    average_precision,
    bpref,
    counts,
    err,
    infap,
    judged,
    ndcg,
    precision,
    r_precision,
    recall,
    reciprocal_rank,
    set_measures,
    success,
)
from serpeval.measures._registry import Registry
from serpeval.measures._spec import Measure, MeasureSpec, Param

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
    set_measures.SET_P,
    set_measures.SET_R,
    set_measures.SET_F,
    counts.NUM_RET,
    counts.NUM_REL,
    counts.NUM_REL_RET,
])


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure name in any supported dialect (see :mod:`serpeval.measures._registry`)."""
    return REGISTRY.parse(text)


def parse_measures(texts: str | Measure | list[str | Measure] | tuple[str | Measure, ...]) -> tuple[Measure, ...]:
    """Parse one name or several, keeping order and dropping repeats."""
    if isinstance(texts, (str, Measure)):
        texts = [texts]
    return REGISTRY.parse_many(texts)
