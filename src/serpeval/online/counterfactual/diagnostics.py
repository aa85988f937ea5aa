"""Support diagnostics, computed before any estimate, and the refusal rule.

For each candidate and estimator:

- ``support``: the share of C's top-k (document, position) pairs, over the log's impressions,
  that the logging design could have shown there (probability > 0); for the interleaved
  comparison, the share of C's top-k documents among the logging rankings' documents (the
  pair (C, A) may place them anywhere); for ``pbm_ips``, the share the design could show at
  any position;
- ``ess``: Kish's effective sample size of the importance weights
  (:func:`serpeval.stats.importance.effective_sample_size`); for an estimator that weights
  positions separately (independent and cascade IPS, doubly robust), the smallest over C's
  positions (a cascade estimator is as weak as its deepest position's prefix weight);
- ``largest_weight_share``: the largest single weight over the sum of weights (same column);
- ``matched``: impressions with a non-zero weight (same column);
- ``mean_weight``: the mean weight (same column; about 1 where the support is full).

**Refusal rule** (one line instead of a number), checked in this order:

1. the log has no clicks;
2. C ranks none of the log's queries;
3. support is 0 (none of C's documents could have been shown where C puts them);
4. support below :data:`MIN_SUPPORT` for an estimator that relies on the design alone (the
   estimate would silently miss the clicks on the rest); the doubly robust estimator
   continues with a warning (its click model fills the gap, with that model's bias);
5. ``ess`` below :data:`MIN_ESS` (C's lists were rarely shown: the interval cannot be
   trusted);
6. ``largest_weight_share`` above :data:`MAX_WEIGHT_SHARE` (one impression decides).

The thresholds were chosen with the coverage bench (bench/bench_counterfactual.py): with an
effective sample size of 300-700 and one impression holding 2-3% of the weight, the normal
intervals of the interleaved comparison covered the truth only 75-85% of the time (the
weights' long tail is not yet sampled); the coverage table in bench/results/counterfactual.md
is measured with the thresholds below.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.stats.importance import effective_sample_size

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.online.counterfactual.estimators import Context, EstimatorSpec

__all__ = ["MAX_WEIGHT_SHARE", "MIN_ESS", "MIN_SUPPORT", "Diagnostics", "diagnose", "refusal", "support_shares"]

#: Smallest effective sample size of the importance weights for an estimate.
MIN_ESS = 300.0
#: Smallest share of C's top-k places the logging design could have filled.
MIN_SUPPORT = 0.95
#: Largest share of the total weight one impression may carry.
MAX_WEIGHT_SHARE = 0.01


@dataclass(frozen=True)
class Diagnostics:
    """Support diagnostics of one candidate under one estimator (module docstring)."""

    impressions: int
    matched: int
    ess: float
    largest_weight_share: float
    support: float
    mean_weight: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def support_shares(ctx: Context, lists: NDArray[np.int64], answered: NDArray[np.bool_]
                   ) -> dict[str, float]:
    """Per kind of support (``position``, ``anywhere``, ``union``), the impression-weighted
    share of C's top-k entries that the logging design supports."""
    m = ctx.model.marginals()  # [n_ctx, width, k]
    n_ctx, width, k = m.shape
    valid = (lists >= 0) & answered[:, None]
    inside = valid & (lists < width)
    code = np.where(inside, lists, 0)
    j = np.broadcast_to(np.arange(k), lists.shape)
    rows = np.broadcast_to(np.arange(n_ctx)[:, None], lists.shape)
    at_position = inside & (m[rows, code, j] > 0)
    anywhere = inside & (m.sum(axis=2)[rows, code] > 0)
    union = valid & (lists < ctx.model.union[:, None])
    counts = np.bincount(ctx.log.context, minlength=n_ctx).astype(np.float64)
    total = float(counts @ valid.sum(axis=1))
    if total == 0:
        return {"position": 0.0, "anywhere": 0.0, "union": 0.0}
    return {name: float(counts @ arr.sum(axis=1)) / total
            for name, arr in (("position", at_position), ("anywhere", anywhere), ("union", union))}


def diagnose(weight: NDArray[np.float64], support: float) -> Diagnostics:
    """:class:`Diagnostics` of importance weights ``[n, p]`` (one column per separately
    weighted position): the worst column's (smallest ESS) figures."""
    w = weight.reshape(len(weight), -1) if weight.size else np.zeros((len(weight), 1))
    if w.shape[1] == 0 or len(w) == 0:
        return Diagnostics(len(w), 0, 0.0, 1.0, support, 0.0)
    sums, squares = w.sum(axis=0), np.einsum("ij,ij->j", w, w)
    ess = np.divide(sums ** 2, squares, out=np.zeros(len(sums)), where=squares > 0)  # Kish's, per column
    worst = int(np.argmin(ess))
    col = np.ascontiguousarray(w[:, worst])
    total = float(col.sum())
    return Diagnostics(
        impressions=len(col), matched=int((col > 0).sum()), ess=effective_sample_size(col),
        largest_weight_share=float(col.max(initial=0.0)) / total if total > 0 else 1.0,
        support=support, mean_weight=total / len(col))


def refusal(spec: EstimatorSpec, diag: Diagnostics, *, clicks: int, answered: int) -> tuple[str | None, str | None]:
    """``(reason to refuse, warning)`` by the rule of the module docstring."""
    if clicks == 0:
        return "the log has no clicks: every estimate would be 0 with no information", None
    if answered == 0:
        return "the candidate ranks none of the log's queries", None
    if diag.support == 0:
        return "none of the candidate's top-k documents could have been shown where it puts them", None
    warning = None
    if diag.support < MIN_SUPPORT:
        text = (f"only {diag.support:.0%} of the candidate's top-k places could have been shown by the "
                f"logging design (threshold {MIN_SUPPORT:.0%})")
        if not spec.model_based or spec.name == "pbm_ips":
            return text + ": the estimate would miss the clicks on the rest", None
        warning = text + "; the fitted click model fills the rest (its bias applies)"
    elif diag.support < 1.0:
        warning = f"{1 - diag.support:.1%} of the candidate's top-k places were never loggable"
    if diag.ess < MIN_ESS:
        return (f"effective sample size {diag.ess:.0f} < {MIN_ESS:.0f}: the candidate's lists were "
                f"rarely shown ({diag.matched:,} of {diag.impressions:,} impressions match)"), None
    if diag.largest_weight_share > MAX_WEIGHT_SHARE:
        return (f"one impression carries {diag.largest_weight_share:.1%} of the weight (threshold "
                f"{MAX_WEIGHT_SHARE:.0%})"), None
    return None, warning
