"""Sample-ratio mismatch: are the units split between variants as the design said?

A chi-square goodness-of-fit test of the unit counts against the planned shares
(Fabijan et al., KDD 2019). With counts ``o_i`` and expected ``e_i = N w_i``:

    chi2 = sum_i (o_i - e_i)^2 / e_i,   df = k - 1,   p = P(chi2_{k-1} > chi2)

A mismatch (p below a strict threshold, 0.001 by default) means the assignment, logging
or filtering is broken, and every effect estimate of the experiment is suspect: serpeval
warns loudly (:class:`SampleRatioMismatchWarning`) and says so in every report.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from serpeval.core.errors import OptionError, SerpevalWarning, StatsError

__all__ = ["SRMCheck", "SampleRatioMismatchWarning", "srm_check"]


class SampleRatioMismatchWarning(SerpevalWarning):
    """The units are not split between variants as planned: results are not trustworthy."""


@dataclass(frozen=True)
class SRMCheck:
    """Result of :func:`srm_check`."""

    variants: tuple[str, ...]
    observed: tuple[int, ...]
    expected: tuple[float, ...]
    statistic: float
    p_value: float
    threshold: float

    @property
    def mismatch(self) -> bool:
        """True when the split is significantly off (``p_value < threshold``)."""
        return self.p_value < self.threshold

    def message(self) -> str:
        """One line: the verdict with the counts."""
        counts = ", ".join(
            f"{v} {o:,} (expected {e:,.0f})"
            for v, o, e in zip(self.variants, self.observed, self.expected, strict=True)
        )
        if self.mismatch:
            return (
                f"SAMPLE RATIO MISMATCH: units per variant {counts}; chi2 = {self.statistic:.2f}, "
                f"p = {self.p_value:.2e} < {self.threshold:g}. The assignment or the logging is "
                "broken; do not trust the effects below until the cause is found."
            )
        return f"sample ratio OK: {counts}; chi2 = {self.statistic:.2f}, p = {self.p_value:.3g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, with ``mismatch``."""
        return {
            "variants": list(self.variants),
            "observed": list(self.observed),
            "expected": list(self.expected),
            "statistic": self.statistic,
            "p_value": self.p_value,
            "threshold": self.threshold,
            "mismatch": self.mismatch,
        }


def srm_check(
    counts: Mapping[str, int],
    expected: Mapping[str, float] | Sequence[float] | None = None,
    *,
    threshold: float = 0.001,
    warn: bool = True,
) -> SRMCheck:
    """Chi-square test of ``counts`` (units per variant) against the planned shares.

    Args:
        counts: ``{variant: units}``.
        expected: planned shares per variant (any positive weights, normalised), as a
            mapping or in the order of ``counts``; default: equal split.
        threshold: p-value below which the split is a mismatch.
        warn: emit :class:`SampleRatioMismatchWarning` on a mismatch.

    Examples:
        >>> srm_check({"control": 5000, "treatment": 5000}).p_value
        1.0
        >>> # (5200-5000)^2/5000 * 2 = 16, P(chi2_1 > 16) = 6.3e-05
        >>> round(srm_check({"c": 5200, "t": 4800}, warn=False).statistic, 6)
        16.0
    """
    from scipy import stats

    names = tuple(counts)
    if len(names) < 2:
        raise StatsError(f"a sample-ratio check needs at least two variants; got {list(names)}.")
    observed = tuple(int(counts[v]) for v in names)
    if isinstance(expected, Mapping):
        missing = [v for v in names if v not in expected]
        if missing:
            raise OptionError(
                f"planned split has no share for variant(s) {missing}; it names {list(expected)}."
            )
        unseen = [v for v in expected if v not in counts]
        if unseen:
            raise OptionError(
                f"planned split names variant(s) {unseen} that have no units (variants with "
                f"units: {list(names)}): a misspelt name, or an arm that lost all its units."
            )
        weights = [float(expected[v]) for v in names]
    elif expected is None:
        weights = [1.0] * len(names)
    else:
        weights = [float(w) for w in expected]
        if len(weights) != len(names):
            raise OptionError(
                f"planned split has {len(weights)} shares for {len(names)} variants "
                f"({', '.join(names)})."
            )
    if any(not w > 0 for w in weights):
        raise OptionError(f"planned shares must be positive; got {weights}.")
    total = sum(observed)
    exp = tuple(total * w / sum(weights) for w in weights)
    statistic, p_value = stats.chisquare(observed, exp)
    check = SRMCheck(names, observed, exp, float(statistic), float(p_value), threshold)
    if warn and check.mismatch:
        warnings.warn(check.message(), SampleRatioMismatchWarning, stacklevel=2)
    return check
