"""``gate --groups``: "no segment regresses" - the gate's rule applied in every group.

For every group with at least ``min_queries`` queries and every measure, the gate's
one-sided test (:mod:`serpeval.comparison.gate`) runs on the group's queries, with the
margin of the group (an absolute drop as given; a relative drop of the group's own
baseline mean). The candidate passes when every tested (group, measure) passes. Groups
with fewer queries are not gated; they are listed.

The correction across the (group x measure) tests (``correction="auto"``, the default):

- ``non-inferiority``: every group must *show* non-inferiority. That is an
  intersection-union test (Berger 1982): the chance of passing a candidate that is worse
  than the margin in some group is at most ``alpha`` without any correction; a
  correction only makes the gate stricter. ``auto`` applies none; ``holm``/``bh``/
  ``bonferroni`` may be asked for (a stricter gate).
- ``no-significant-drop``: the gate fails when *any* group shows a drop, a union of tests,
  so without a correction a harmless candidate fails more often as groups are added.
  ``auto`` applies Holm over the (group x measure) tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_count, check_level
from serpeval.core.errors import OptionError
from serpeval.core.tabular import Tabular

if TYPE_CHECKING:
    from serpeval.comparison.gate import MaxDrop
    from serpeval.comparison.segments import Groups
    from serpeval.evaluation.results import Results
    from serpeval.measures import Measure
    from serpeval.stats.validation import Alternative

__all__ = ["GroupCheck", "GroupGate", "gate_groups"]


@dataclass(frozen=True)
class GroupCheck:
    """The decision on one (group, measure); ``gated`` False for a group below the minimum
    (then ``passed`` is True and the p-values NaN)."""

    group: str
    measure: str
    queries: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    margin: float
    p_value: float
    p_value_corrected: float
    gated: bool
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        """All fields."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class GroupGate(Tabular):
    """What :func:`gate_groups` returns."""

    passed: bool
    grouping: str
    rule: str
    correction: str
    alpha: float
    min_queries: int
    checks: tuple[GroupCheck, ...]
    unknown: tuple[str, ...]
    ungrouped: tuple[str, ...]
    note: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict per (group, measure)."""
        return [c.to_dict() for c in self.checks]

    def notes(self) -> list[str]:
        """The rule, the correction, the groups left ungated and the unmatched queries."""
        from serpeval.comparison.results import CORRECTION_NAMES

        how = {"non-inferiority": "non-inferior", "no-significant-drop": "not significantly worse"}[self.rule]
        notes = [f"groups ({self.grouping}): the candidate must be {how} in every group with at least "
                 f"{self.min_queries} queries; {CORRECTION_NAMES.get(self.correction, self.correction)} "
                 "correction over the (group x measure) tests"
                 + (" (an intersection-union test keeps the error at alpha without one)"
                    if self.rule == "non-inferiority" and self.correction == "none" else "")]
        small = sorted({(c.group, c.queries) for c in self.checks if not c.gated})
        if small:
            notes.append(f"not gated (fewer than {self.min_queries} queries): "
                         + ", ".join(f"{g} ({n})" for g, n in small))
        failed = sorted({c.group for c in self.checks if c.gated and not c.passed})
        if failed:
            notes.append(f"FAILED in {len(failed)} group(s): {', '.join(failed)}")
        if self.note:
            notes.append(f"caution: {self.note}")
        if self.unknown:
            notes.append(f"{len(self.unknown)} queries in the groups were not compared")
        if self.ungrouped:
            notes.append(f"{len(self.ungrouped)} compared queries are in no group")
        return notes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        from serpeval.core.strict_json import json_ready

        return json_ready({"passed": self.passed, "grouping": self.grouping, "rule": self.rule,
                           "correction": self.correction, "alpha": self.alpha,
                           "min_queries": self.min_queries, "checks": self.to_dicts(),
                           "unknown_queries": len(self.unknown), "ungrouped_queries": len(self.ungrouped),
                           "notes": self.notes()})

    def _html_caption(self) -> str:
        return f"gate by {self.grouping}: {'pass' if self.passed else 'fail'}"


def gate_groups(results: Results, groups: Groups, measures: Iterable[str | Measure] | None = None, *,
                max_drop: float | str | MaxDrop = 0.01, relative: bool = False, alpha: float = 0.05,
                rule: str = "non-inferiority", test: str = "t", min_queries: int = 10,
                correction: str = "auto", n_resamples: int = 10_000, rng: RngLike = None,
                strict: bool = False) -> GroupGate:
    """The gate in every group with at least ``min_queries`` queries (run 0 baseline, run 1
    candidate); see the module docstring for the correction."""
    from serpeval.comparison.gate import RULES, parse_max_drop
    from serpeval.comparison.paired import align_queries, canonical_test, paired_test
    from serpeval.measures import parse_measures
    from serpeval.stats.multiplicity import adjust, canonical_correction

    test = canonical_test(test)
    if rule not in RULES:
        raise OptionError(f"rule must be one of {', '.join(RULES)}; got {rule!r}.")
    alpha = check_level(alpha, upper=0.5)
    drop = parse_max_drop(max_drop, relative)
    min_queries = check_count(min_queries, "min_queries")
    if min_queries < 2:
        raise OptionError(f"min_queries must be at least 2 (a paired test needs 2 queries); got {min_queries}.")
    if correction == "auto":
        correction = "none" if rule == "non-inferiority" else "holm"
    correction = canonical_correction(correction)
    measures_ = results.measures if measures is None else parse_measures(measures)
    query_ids, values, _ = align_queries(results, strict=strict)
    values = values[:, [results.measures.index(m) for m in measures_]]
    matrix, counts = groups.membership(query_ids)
    generator = as_generator(rng)
    orient = np.array([1.0 if m.spec.higher_is_better else -1.0 for m in measures_])
    alternative: Alternative = "greater" if rule == "non-inferiority" else "less"
    found: list[tuple[str, Measure, int, float, float, float, float]] = []
    for k, group in enumerate(groups.order):
        members = matrix[:, k]
        n = int(members.sum())
        bases = [m.aggregate(values[0, j, members]) if n else float("nan") for j, m in enumerate(measures_)]
        cands = [m.aggregate(values[1, j, members]) if n else float("nan") for j, m in enumerate(measures_)]
        margins = [drop.margin(b) if n else float("nan") for b in bases]
        ps = np.full(len(measures_), np.nan)
        if n >= min_queries:
            # All measures of a group in one call: a resampling test draws the same resamples
            # for each, so a measure's p-value does not depend on the others gated with it.
            per_query = np.array([n if m.spec.aggregate == "sum" else 1.0 for m in measures_])
            gain = (values[1][:, members] - values[0][:, members]) * orient[:, None]
            shifted = gain + (np.array(margins) / per_query)[:, None]
            tested = paired_test(test, shifted, alternative=alternative, confidence=1 - alpha,
                                 n_resamples=n_resamples, rng=generator)
            ps = np.atleast_1d(np.asarray(tested.p_value, dtype=np.float64))
        found.extend((group, m, n, bases[j], cands[j], margins[j], float(ps[j])) for j, m in enumerate(measures_))
    p_all = np.array([f[-1] for f in found])
    gated = np.isfinite(p_all)
    corrected = np.full_like(p_all, np.nan)
    if gated.any():
        corrected[gated] = adjust(p_all[gated], correction)
    checks = []
    for (group, m, n, base, cand, margin, p), pc, is_gated in zip(found, corrected, gated, strict=True):
        ok = bool(pc <= alpha) if rule == "non-inferiority" else bool(pc > alpha)
        checks.append(GroupCheck(group, str(m), n, base, cand, (cand - base) * (1 if m.spec.higher_is_better else -1),
                                 margin, p, float(pc), bool(is_gated), ok if is_gated else True))
    if not gated.any():
        raise OptionError(f"no group of {groups.name} has {min_queries} or more compared queries; "
                          "lower the minimum (--group-min-queries) or use coarser groups.")
    return GroupGate(all(c.passed for c in checks), groups.name, rule, correction, float(alpha), min_queries,
                     tuple(checks), tuple(counts["unknown"]), tuple(counts["ungrouped"]), groups.note)
