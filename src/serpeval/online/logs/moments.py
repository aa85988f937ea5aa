"""Per-unit aggregation in the engine, and the per-group moments the statistics run on.

Two nested aggregations, one ibis expression, one query:

1. impressions -> units: ``GROUP BY unit`` sums the features of each unit's impressions
   (a unit seen in two variants is flagged ``mixed`` and left out, counted);
2. units -> groups: ``GROUP BY variant`` (plus experiment or look, when asked) gives
   ``n``, the mean of every per-unit variable, its sample variance and the sample
   covariances the metrics need.

Only those few numbers per group come back to Python, as a :class:`Moments`.
Everything downstream (delta method, CUPED, tests, power) reads :class:`Moments`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.online.logs.sources import collect_sorted

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Moments", "fetch_moments", "unit_table"]


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, eq=False)
class Moments:
    """Sufficient statistics of per-unit variables for ``g`` groups (arrays of length g).

    Attributes:
        n: units per group.
        means: ``{variable: mean}``.
        covs: ``{(a, b): sample covariance}`` with ``a <= b``; ``(a, a)`` is the variance
            (denominator ``n - 1``).
    """

    n: NDArray[np.float64]
    means: dict[str, NDArray[np.float64]]
    covs: dict[tuple[str, str], NDArray[np.float64]]

    def mean(self, name: str | None) -> Any:
        """Mean of a variable; the constant 1 for ``None`` (a per-unit mean's denominator)."""
        return 1.0 if name is None else self.means[name]

    def cov(self, a: str | None, b: str | None) -> Any:
        """Sample covariance; 0 when either side is the constant ``None``."""
        if a is None or b is None:
            return 0.0
        return self.covs[_key(a, b)]

    def ratio(self, numer: str, denom: str | None) -> Any:
        """``mean(Y) / mean(X)``: the metric's value per group."""
        return self.mean(numer) / self.mean(denom)

    def ratio_var(self, numer: str, denom: str | None) -> Any:
        """Per-unit variance of the ratio by the delta method.

        With R = mu_Y / mu_X:
        ``(var Y - 2 R cov(Y, X) + R^2 var X) / mu_X^2``; Var(R-hat) is this over ``n``.
        """
        r = self.ratio(numer, denom)
        mx = self.mean(denom)
        return (
            self.cov(numer, numer)
            - 2.0 * r * self.cov(numer, denom)
            + r * r * self.cov(denom, denom)
        ) / (mx * mx)

    def ratio_cov(self, n1: str, d1: str | None, n2: str, d2: str | None) -> Any:
        """Per-unit covariance of two ratios by the delta method.

        ``(cov(Y1,Y2) - R2 cov(Y1,X2) - R1 cov(X1,Y2) + R1 R2 cov(X1,X2)) / (mu_X1 mu_X2)``.
        """
        r1, r2 = self.ratio(n1, d1), self.ratio(n2, d2)
        return (
            self.cov(n1, n2)
            - r2 * self.cov(n1, d2)
            - r1 * self.cov(d1, n2)
            + r1 * r2 * self.cov(d1, d2)
        ) / (self.mean(d1) * self.mean(d2))

    def take(self, index: Any) -> Moments:
        """The groups at ``index`` (an int, slice, mask or index array)."""
        return Moments(
            self.n[index],
            {k: v[index] for k, v in self.means.items()},
            {k: v[index] for k, v in self.covs.items()},
        )

    def pool(self, other: Moments) -> Moments:
        """The moments of the union of two groups (exact, not approximate).

        ``n = n1 + n2``, ``mean = (n1 m1 + n2 m2) / n`` and
        ``cov = ((n1 - 1) c1 + (n2 - 1) c2 + n1 n2 / n (m1a - m2a)(m1b - m2b)) / (n - 1)``.
        """
        n1, n2 = self.n, other.n
        n = n1 + n2
        means = {k: (n1 * v + n2 * other.means[k]) / n for k, v in self.means.items()}
        covs = {}
        for (a, b), c1 in self.covs.items():
            shift = (self.means[a] - other.means[a]) * (self.means[b] - other.means[b])
            covs[(a, b)] = ((n1 - 1) * c1 + (n2 - 1) * other.covs[(a, b)] + n1 * n2 / n * shift) / (
                n - 1
            )
        return Moments(n, means, covs)


def unit_table(
    features: Any,
    columns: set[str],
    pre: Any = None,
    pre_columns: set[str] | None = None,
    keys: Sequence[str] = (),
) -> Any:
    """One row per unit: its variant, ``mixed`` flag and sums (lazy ibis table).

    ``pre``: per-impression features of a pre-period; their unit sums join as ``pre_<col>``
    (0 for units with no pre-period impression). ``keys``: more grouping columns (e.g.
    ``look``) that split a unit's impressions.
    """
    from serpeval.online.logs.metrics import unit_sums

    needed = set(columns) | ({"clicks", "impressions"} if "user_ctr" in columns else set())
    grouped = features.group_by(["unit", *keys]).aggregate(
        variant=features.variant.min(),
        mixed=features.variant.min() != features.variant.max(),
        **unit_sums(features, needed),
    )
    if "user_ctr" in columns:
        grouped = grouped.mutate(user_ctr=grouped.clicks / grouped.impressions)
    if pre is not None and pre_columns:
        pre_needed = set(pre_columns) | (
            {"clicks", "impressions"} if "user_ctr" in pre_columns else set()
        )
        pre_units = pre.group_by(pre_unit="unit").aggregate(
            **{f"pre_{k}": v for k, v in unit_sums(pre, pre_needed).items()}
        )
        if "user_ctr" in pre_columns:
            pre_units = pre_units.mutate(
                pre_user_ctr=pre_units.pre_clicks / pre_units.pre_impressions
            )
        grouped = grouped.left_join(pre_units, grouped.unit == pre_units.pre_unit)
        grouped = grouped.mutate(
            **{f"pre_{c}": grouped[f"pre_{c}"].fill_null(0) for c in pre_columns}
        ).drop("pre_unit")
    return grouped


def fetch_moments(
    units: Any,
    variables: Iterable[str],
    pairs: Iterable[tuple[str, str]],
    by: Sequence[str] = ("variant",),
) -> tuple[list[dict[str, Any]], Moments, dict[str, Any]]:
    """Run ``GROUP BY by, mixed`` over ``units``; return the group keys, their Moments and the
    totals of the ``mixed`` units (``units``, ``rows``: their impressions).

    Groups come back sorted by their keys, so every engine returns them in the same order.
    """
    variables = sorted(set(variables))
    pairs = sorted({_key(a, b) for a, b in pairs} | {(v, v) for v in variables})
    aggs: dict[str, Any] = {"n": units.count(), "rows": units.impressions.sum()}
    for v in variables:
        aggs[f"mean__{v}"] = units[v].mean()
    for a, b in pairs:
        aggs[f"cov__{a}__{b}"] = (
            units[a].var(how="sample") if a == b else units[a].cov(units[b], how="sample")
        )
    table = collect_sorted(units.group_by([*by, "mixed"]).aggregate(**aggs), [*by, "mixed"])
    mixed_mask = np.asarray(table.column("mixed").to_numpy(zero_copy_only=False), dtype=bool)
    n = np.asarray(table.column("n").to_numpy(zero_copy_only=False), dtype=np.float64)
    rows = np.asarray(table.column("rows").to_numpy(zero_copy_only=False), dtype=np.float64)
    mixed = {"units": int(n[mixed_mask].sum()), "rows": int(rows[mixed_mask].sum())}
    keep = ~mixed_mask

    def column(name: str) -> NDArray[np.float64]:
        values = table.column(name).to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float64)[keep]

    moments = Moments(
        n=n[keep],
        means={v: column(f"mean__{v}") for v in variables},
        covs={(a, b): np.nan_to_num(column(f"cov__{a}__{b}"), nan=0.0) for a, b in pairs},
    )
    keys = [{k: table.column(k)[i].as_py() for k in by} for i in np.flatnonzero(keep)]
    return keys, moments, mixed
