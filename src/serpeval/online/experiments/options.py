"""The A/B design: the options of :func:`analyze_ab`, :func:`analyze_ab_segments`,
:func:`plan_ab`, :func:`monitor_ab` and :func:`analyze_ab_triggered` on one object.

An :class:`ABDesign` says what an experiment measures and how it is read and tested; the
analyses take ``(logs, experiment, design)``. One design serves every analysis of an
experiment: each reads the fields it needs (listed in its docstring) and ignores the
others, so ``plan_ab(pilot, design=d)`` before the launch and ``analyze_ab(logs, design=d)``
after it test the same metrics at the same level. The old keywords
(``analyze_ab(logs, alpha=0.01)``) map onto the fields for one release
(:func:`serpeval.core.options.resolve`).

>>> from dataclasses import replace
>>> d = ABDesign(metrics=("ctr", "abandonment"), alpha=0.01)
>>> d.metrics, replace(d, correction="BH").correction
(('ctr', 'abandonment'), 'bh')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from serpeval.core.checks import check_level
from serpeval.core.errors import OptionError
from serpeval.core.options import resolve, set_field
from serpeval.online.logs.features import Duplicates
from serpeval.online.logs.metrics import ABMetric, get_metric
from serpeval.online.logs.schema import LogSchema
from serpeval.online.logs.sources import BACKENDS
from serpeval.stats.multiplicity import canonical_correction

__all__ = ["ABDesign"]


@dataclass(frozen=True)
class ABDesign:
    """What an A/B experiment measures and how it is read and tested (module docstring).

    Every field is checked when the design is built (:class:`OptionError` with the
    field's name) and stored in its canonical form (a metric list as a tuple, a correction
    alias as its name), so two designs that mean the same compare equal.
    """

    metrics: tuple[str | ABMetric, ...] | None = None
    """Metric names from :data:`~serpeval.online.logs.metrics.METRICS` or :class:`ABMetric`
    objects (None: ctr, abandonment, clicks_at_1, mrr; ``monitor_ab``: ctr, and it follows
    exactly one). A single name is read as a one-metric tuple."""

    control: str | None = None
    """The control arm (None: ``control`` if present, else the first variant name)."""

    variants: tuple[str, ...] | None = None
    """Arms that must be present: one without units is an error (``analyze_ab``)."""

    split: Mapping[str, float] | tuple[float, ...] | None = None
    """Planned share of each variant for the sample-ratio check (None: equal shares)."""

    alpha: float = 0.05
    """Significance level, in (0, 1): of the corrected p-values, the intervals and the
    power analysis."""

    correction: str = "holm"
    """Multiple-testing correction over all (metric, treatment) comparisons: ``holm``,
    ``bonferroni``, ``bh`` or ``none`` (aliases in any case accepted, stored canonical)."""

    use_t: bool = False
    """Welch's t (instead of z) for the ratio metrics too."""

    cuped: bool | None = None
    """CUPED with the pre-period log: True requires one, False ignores one, None uses one
    when there is one (``analyze_ab`` and ``plan_ab``)."""

    srm_threshold: float = 0.001
    """p-value below which the observed split counts as a sample-ratio mismatch, in (0, 1)."""

    duplicates: Duplicates = "error"
    """Rows with a repeated impression id: ``error`` (refuse), ``exclude`` (drop and count)
    or ``unchecked``."""

    long_click_seconds: float = 30.0
    """Dwell (seconds, >= 0) from which a click is a long click (``long_click_rate``)."""

    backend: str = "duckdb"
    """Engine for paths and in-memory tables: ``duckdb`` or ``spark`` (any case; an ibis
    table or Spark DataFrame brings its own)."""

    schema: LogSchema | None = None
    """The log's column names (None: the default :class:`LogSchema`)."""

    def __post_init__(self) -> None:
        metrics = self.metrics
        if metrics is not None:
            if isinstance(metrics, (str, ABMetric)):
                metrics = (metrics,)
            elif not isinstance(metrics, Sequence):
                raise OptionError(f"metrics must be a metric name or a list of them; got {metrics!r}.")
            metrics = tuple(metrics)
            if not metrics:
                raise OptionError("choose at least one metric.")
            for m in metrics:
                get_metric(m)                                  # "did you mean" on a typo
            set_field(self, "metrics", metrics)
        if self.control is not None and not isinstance(self.control, str):
            raise OptionError(f"control must be a variant name; got {self.control!r}.")
        if self.variants is not None:
            names = (self.variants,) if isinstance(self.variants, str) else tuple(self.variants)
            set_field(self, "variants", names)
        if self.split is not None and not isinstance(self.split, Mapping):
            set_field(self, "split", tuple(self.split))
        set_field(self, "alpha", check_level(self.alpha))
        set_field(self, "correction", canonical_correction(self.correction))
        set_field(self, "use_t", bool(self.use_t))
        if self.cuped is not None:
            set_field(self, "cuped", bool(self.cuped))
        set_field(self, "srm_threshold", check_level(self.srm_threshold, "srm_threshold", example=0.001))
        if self.duplicates not in get_args(Duplicates):
            raise OptionError(f"duplicates must be one of {', '.join(get_args(Duplicates))}; got {self.duplicates!r}.")
        seconds = self.long_click_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or seconds < 0:
            raise OptionError(f"long_click_seconds must be a number of seconds >= 0; got {seconds!r}.")
        if not isinstance(self.backend, str) or self.backend.lower() not in (*BACKENDS, "pyspark"):
            raise OptionError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}.")
        if self.schema is not None and not isinstance(self.schema, LogSchema):
            raise OptionError(f"schema must be a LogSchema; got {type(self.schema).__name__}.")

    def options(self) -> dict[str, Any]:
        """The fields as a dict (what a report records)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def resolve_design(design: ABDesign | None, experiment: Any, keywords: Mapping[str, Any], where: str, *,
                   allowed: Sequence[str] | None = None, renamed: Mapping[str, Any] | None = None) -> ABDesign:
    """The design of one call (:func:`serpeval.core.options.resolve`), and a design passed
    in the experiment's place refused (``analyze_ab(logs, design)`` reads it as a name)."""
    if isinstance(experiment, ABDesign):
        raise TypeError(f"{where}(logs, experiment, design): the design was given as the experiment's name; "
                        f"pass {where}(logs, design=design) (or the experiment's name, then the design).")
    return resolve(ABDesign, design, keywords, where, allowed=allowed, renamed=renamed)


#: The fields each analysis reads (and so the old keywords it accepts).
ANALYZE_FIELDS = tuple(ABDesign.__dataclass_fields__)
SEGMENT_FIELDS = ("metrics", "control", "alpha", "correction", "use_t", "duplicates", "long_click_seconds",
                  "backend", "schema")
PLAN_FIELDS = ("metrics", "alpha", "control", "cuped", "duplicates", "long_click_seconds", "backend", "schema")
MONITOR_FIELDS = ("control", "alpha", "use_t", "duplicates", "long_click_seconds", "backend", "schema")
