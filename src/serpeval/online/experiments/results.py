"""What the A/B analyses return: frozen records with ``to_dicts()`` (every renderer uses it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from serpeval.core.tabular import Tabular
from serpeval.online.logs.features import Exclusions
from serpeval.stats.effects import NO_VARIANCE, Effect
from serpeval.stats.srm import SRMCheck
from serpeval.stats.validation import confidence_label

__all__ = ["ABResults", "MetricComparison", "PowerPlan", "SequentialResults"]

_EFFECT_FIELDS = ("effect", "ci_lower", "ci_upper", "rel_effect", "rel_ci_lower", "rel_ci_upper")

#: The verdict of a comparison without a test (the standard error of the difference is 0).
NO_TEST = "no test: no variance"


@dataclass(frozen=True)
class MetricComparison:
    """One metric, one treatment against the control."""

    metric: str
    control: str
    treatment: str
    test: str
    units_control: int
    units_treatment: int
    estimate: Effect
    p_value_adjusted: float
    alpha: float
    higher_is_better: bool
    variance_reduction: float | None = None

    @property
    def tested(self) -> bool:
        """Whether there is a test: not when the standard error of the difference is 0 (no
        variance in either arm), where the p-values and the interval are NaN."""
        return math.isfinite(float(self.estimate.p_value))

    @property
    def significant(self) -> bool:
        """Adjusted p-value below alpha."""
        return self.p_value_adjusted < self.alpha

    @property
    def verdict(self) -> str:
        """``better``, ``worse``, ``no significant difference`` or, without a test,
        ``no test: no variance`` for the treatment."""
        if not self.tested:
            return NO_TEST
        if not self.significant:
            return "no significant difference"
        up = self.estimate.effect > 0
        return "better" if up == self.higher_is_better else "worse"

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        row: dict[str, Any] = {
            "metric": self.metric,
            "control": self.control,
            "treatment": self.treatment,
            "units_control": self.units_control,
            "units_treatment": self.units_treatment,
            "value_control": float(e.control),
            "value_treatment": float(e.treatment),
            **{name: float(getattr(e, name)) for name in _EFFECT_FIELDS},
            "p_value": float(e.p_value),
            "p_value_adjusted": float(self.p_value_adjusted),
            "significant": self.significant,
            "verdict": self.verdict,
            "test": self.test,
        }
        if self.variance_reduction is not None:
            row["variance_reduction"] = float(self.variance_reduction)
        return row

    def null_reasons(self) -> dict[str, str]:
        """Why fields of :meth:`to_dict` are not finite numbers (the JSON report writes them as
        null with this reason). The relative effect divides by the control value and its
        interval works on the log scale, so a zero control (or treatment) value leaves them
        undefined."""
        row = self.to_dict()
        why_not: dict[str, str] = {}
        if not self.tested:   # no variance: no p-value and no interval, absolute or relative
            keys = ("ci_lower", "ci_upper", "rel_ci_lower", "rel_ci_upper", "p_value", "p_value_adjusted")
            why_not = {k: NO_VARIANCE for k in keys if not math.isfinite(row[k])}
        elif float(self.estimate.se) == 0:  # a pooled test, but no interval (0 of n against n of n)
            why_not = {k: "the standard error of the difference is 0 (every unit of each arm alike), so "
                          "there is no interval; the test uses the pooled share"
                       for k in ("ci_lower", "ci_upper") if not math.isfinite(row[k])}
        bad = [k for k in _EFFECT_FIELDS[3:] if not math.isfinite(row[k]) and k not in why_not]
        if not bad:
            return why_not
        if row["value_control"] == 0:
            why = "the control value is 0: an effect relative to it is undefined"
        elif row["value_treatment"] == 0:
            why = "the treatment value is 0: the relative interval (log scale) is undefined"
        else:
            why = "the relative effect is undefined for these values"
        return {**why_not, **dict.fromkeys(bad, why)}


@dataclass(frozen=True, eq=False)
class ABResults(Tabular):
    """The analysis of one A/B experiment (:func:`~serpeval.online.experiments.analyze_ab`).

    Attributes:
        experiment: its name; source and backend: where and how it was read.
        comparisons: one per (metric, treatment), in the order asked.
        variants: ``{variant: {"units": .., "impressions": ..}}``.
        srm: the sample-ratio check; exclusions: every row left out and why.
        alpha, correction: significance level and multiple-testing correction (across
            all metrics and treatments of this analysis).
        cuped: whether a pre-period covariate was used.
        notes: sentences a reader must see next to the numbers.
    """

    experiment: str
    source: str
    backend: str
    unit: str
    comparisons: tuple[MetricComparison, ...]
    variants: dict[str, dict[str, int]]
    srm: SRMCheck
    exclusions: Exclusions
    alpha: float
    correction: str
    cuped: bool
    notes: tuple[str, ...] = ()

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per (metric, treatment): values, effects with CIs, p-values, verdict."""
        return [c.to_dict() for c in self.comparisons]

    def variant_rows(self) -> list[dict[str, Any]]:
        """One row per variant: units and impressions."""
        return [{"variant": v, **counts} for v, counts in self.variants.items()]

    def rules(self) -> list[str]:
        """Plain statements of the methods used (for report footers)."""
        return [
            f"unit of randomisation and analysis: {self.unit}; ratio metrics use the delta method "
            "on per-unit sums (Deng et al. 2018), per-unit means Welch's t-test",
            f"{confidence_label(1 - self.alpha)} confidence intervals; relative intervals from the "
            "delta method on the log scale",
            f"multiple testing: {self.correction} over {self._family()}",
            "CUPED with the pre-period value of each metric"
            if self.cuped
            else "no variance reduction",
            "sample-ratio mismatch: chi-square test of units per variant, threshold "
            f"p < {self.srm.threshold:g}",
        ]

    def _family(self) -> str:
        """The comparisons the correction ran over: those with a test."""
        tested = sum(c.tested for c in self.comparisons)
        if tested == len(self.comparisons):
            return f"{tested} comparison(s)"
        return (f"the {tested} comparison(s) with a test ({len(self.comparisons) - tested} of "
                f"{len(self.comparisons)} without one: no variance)")

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready: a value that is not a finite number (a relative effect over
        a zero control) is None, with the reason under ``null_reasons`` (:mod:`serpeval.core.strict_json`)."""
        from serpeval.core.strict_json import json_ready

        return json_ready({
            "experiment": self.experiment,
            "source": self.source,
            "backend": self.backend,
            "unit": self.unit,
            "alpha": self.alpha,
            "correction": self.correction,
            "cuped": self.cuped,
            "results": [
                {**c.to_dict(), **({"null_reasons": why} if (why := c.null_reasons()) else {})}
                for c in self.comparisons
            ],
            "variants": self.variant_rows(),
            "srm": self.srm.to_dict(),
            "exclusions": self.exclusions.to_dict(),
            "notes": list(self.notes),
            "rules": self.rules(),
        })

    def __repr__(self) -> str:
        return (
            f"ABResults({self.experiment!r}: {len(self.comparisons)} comparison(s), "
            f"{sum(v['units'] for v in self.variants.values()):,} units)"
        )


@dataclass(frozen=True, eq=False)
class SequentialResults(Tabular):
    """Always-valid monitoring of one metric over looks (:func:`~serpeval.online.experiments.monitor_ab`)."""

    experiment: str
    metric: str
    control: str
    rows: tuple[dict[str, Any], ...]
    alpha: float
    tuning_n: float
    notes: tuple[str, ...] = field(default=())

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per (look, treatment)."""
        return [dict(r) for r in self.rows]

    def first_decision(self, treatment: str | None = None) -> dict[str, Any] | None:
        """The first look at which the always-valid p-value fell below alpha, if any."""
        for row in self.rows:
            if (treatment is None or row["treatment"] == treatment) and row[
                "always_valid_p"
            ] < self.alpha:
                return dict(row)
        return None


@dataclass(frozen=True, eq=False)
class PowerPlan(Tabular):
    """Sample sizes and detectable effects per metric (:func:`~serpeval.online.experiments.plan_ab`)."""

    rows: tuple[dict[str, Any], ...]
    alpha: float
    power: float
    notes: tuple[str, ...] = ()

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per metric."""
        return [dict(r) for r in self.rows]
