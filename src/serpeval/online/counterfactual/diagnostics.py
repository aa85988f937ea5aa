"""Support diagnostics, computed before any estimate, and the refusal rule.

For each candidate and estimator:

- ``support``: the share of C's top-k (document, position) pairs, over the log's impressions,
  that the logging design could have shown there (probability > 0); for ``pbm_ips``, the
  share the design could show at any position; for the interleaved comparison, the
  probability that the pair (C, A) shows a top k the design could have shown
  (:func:`interleaved_support`: the pair draws from C's whole list, so a document C ranks
  below k can still take a top-k place);
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
3. the impressions on C's queries come from fewer than :data:`MIN_UNITS` users (every
   interval clusters on users: with one, it is undefined);
4. support is 0 (none of C's documents could have been shown where C puts them);
5. support below :data:`MIN_SUPPORT` for an estimator that relies on the design alone (the
   estimate would silently miss the clicks on the rest); the doubly robust estimator
   continues with a warning (its click model fills the gap, with that model's bias);
6. ``ess`` below :data:`MIN_ESS` (C's lists were rarely shown, or the log is too small:
   the interval cannot be trusted);
7. ``largest_weight_share`` above :data:`MAX_WEIGHT_SHARE` (one impression decides).

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

__all__ = ["MAX_WEIGHT_SHARE", "MIN_ESS", "MIN_SUPPORT", "MIN_UNITS", "Diagnostics", "diagnose",
           "interleaved_support", "refusal", "support_shares"]

#: Smallest effective sample size of the importance weights for an estimate.
MIN_ESS = 300.0
#: Smallest share of C's top-k places the logging design could have filled.
MIN_SUPPORT = 0.95
#: Largest share of the total weight one impression may carry.
MAX_WEIGHT_SHARE = 0.01
#: Fewest randomisation units (users) for an interval clustered on them.
MIN_UNITS = 2


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
    share of C's top-k entries that the logging design supports.

    Under probabilistic interleaving every document of positive weight can be drawn at any
    position above the number of such documents (each slot draws from all unplaced ones), so
    P(d at j) > 0 exactly when d has weight and j < that number: no position marginals (whose
    exact programme is limited in size) are needed. Under an A/B split the marginals are the
    arms' indicators."""
    n_ctx, k = lists.shape
    j = np.broadcast_to(np.arange(k), lists.shape)
    rows = np.broadcast_to(np.arange(n_ctx)[:, None], lists.shape)
    valid = (lists >= 0) & answered[:, None]
    if ctx.log.design == "probabilistic":
        w = ctx.model.context_weights()  # [n_ctx, r, width]
        live: NDArray[np.bool_] = np.asarray((w > 0).any(axis=1))  # [n_ctx, width]
        width = live.shape[1]
        inside = valid & (lists < width)
        code = np.where(inside, lists, 0)
        anywhere = inside & live[rows, code]
        at_position = anywhere & (j < live.sum(axis=1)[:, None])
    else:
        m = ctx.model.marginals()  # [n_ctx, width, k]
        width = m.shape[1]
        inside = valid & (lists < width)
        code = np.where(inside, lists, 0)
        at_position = inside & (m[rows, code, j] > 0)
        anywhere = inside & (m.sum(axis=2)[rows, code] > 0)
    union = valid & (lists < ctx.model.union[:, None])
    counts = np.bincount(ctx.log.context, minlength=n_ctx).astype(np.float64)
    total = float(counts @ valid.sum(axis=1))
    if total == 0:
        return {"position": 0.0, "anywhere": 0.0, "union": 0.0}
    return {name: float(counts @ arr.sum(axis=1)) / total
            for name, arr in (("position", at_position), ("anywhere", anywhere), ("union", union))}


def interleaved_support(ctx: Context, lists: NDArray[np.int64], against: int, k: int,
                        answered: NDArray[np.bool_]) -> float:
    """The interleaved comparison's support: the impression-weighted probability that the pair
    (C, ``against``) would show a top k the logging design could have shown (no document
    outside the logging rankings), i.e. the expected importance weight.

    The pair draws from C's whole list (``lists[n_ctx, depth]``), not only its top k, so any of
    C's documents outside the logging union can take a top-k place. Until the first such draw
    only logged documents are placed, so merging C's outside documents into one pseudo-document
    (their summed weight, per ranker) keeps P(an outside document in the top k) exact: the
    pseudo-document's position marginals (:func:`~serpeval.online.interleaving.probabilistic.
    position_marginals`) over the first k slots. Above that programme's size a bound is used
    (slot j's draw of an outside document, with the j heaviest logged documents of each ranker
    already placed: never below the exact value). Contexts where C has no outside document have
    support 1 and cost nothing."""
    from serpeval.online.interleaving.probabilistic import MAX_MARGINAL_DOCS, position_marginals

    model = ctx.model
    union = model.union
    n_ctx = len(union)
    outside = (lists >= union[:, None]) & answered[:, None]
    per_ctx = np.ones(n_ctx)
    need = np.flatnonzero(outside.any(axis=1))
    if len(need):
        width = max(model.width, int(lists.max(initial=0)) + 1)
        w = model.context_weights([lists[need], model.rankings[against][need]], width=width)  # [m, 2, width]
        logged = np.arange(width)[None, :] < union[need][:, None]  # [m, width]
        out_w = np.where(logged[:, None, :], 0.0, w).sum(axis=2)  # [m, 2]
        merged = np.concatenate([np.where(logged[:, None, :], w, 0.0), out_w[:, :, None]], axis=2)
        for i, c in enumerate(need):  # only contexts where C shows an unloggable document
            live = int(((merged[i] > 0).any(axis=0)).sum())
            if live <= MAX_MARGINAL_DOCS:
                p_out = float(position_marginals(merged[i], k)[-1, :k].sum())
            else:
                heaviest = -np.sort(-merged[i, :, :-1], axis=1)[:, :max(k - 1, 0)]
                heaviest = np.pad(heaviest, ((0, 0), (0, max(k - 1, 0) - heaviest.shape[1])))  # [2, k-1]
                placed = np.concatenate([np.zeros((2, 1)), np.cumsum(heaviest, axis=1)], axis=1)  # [2, k]
                remaining = np.maximum(merged[i].sum(axis=1)[:, None] - placed, 1e-300)
                p_out = float(np.minimum((out_w[i][:, None] / remaining).mean(axis=0), 1.0).sum())
            per_ctx[c] = max(0.0, 1.0 - min(p_out, 1.0))
    counts = np.bincount(ctx.log.context, minlength=n_ctx).astype(np.float64) * answered
    total = float(counts.sum())
    return 0.0 if total == 0 else float(counts @ per_ctx) / total


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


def refusal(spec: EstimatorSpec, diag: Diagnostics, *, clicks: int, answered: int,
            units: int = MIN_UNITS) -> tuple[str | None, str | None]:
    """``(reason to refuse, warning)`` by the rule of the module docstring (``units``: the
    users behind the impressions on the candidate's queries)."""
    if clicks == 0:
        return "the log has no clicks: every estimate would be 0 with no information", None
    if answered == 0:
        return "the candidate ranks none of the log's queries", None
    if units < MIN_UNITS:
        return (f"the impressions on the candidate's queries come from {units} user{'' if units == 1 else 's'}; "
                f"the intervals cluster on users and need at least {MIN_UNITS}"), None
    if diag.support == 0:
        return "none of the candidate's top-k documents could have been shown where it puts them", None
    warning = None
    if diag.support < MIN_SUPPORT:
        what = ("of the top-k lists the candidate's interleaving with the logging ranker would show" if spec.comparison
                else "of the candidate's top-k places")
        text = (f"only {diag.support:.0%} {what} could have been shown by the logging design "
                f"(threshold {MIN_SUPPORT:.0%})")
        if not spec.model_based or spec.name == "pbm_ips":
            return text + ": the estimate would miss the clicks on the rest", None
        warning = text + "; the fitted click model fills the rest (its bias applies)"
    elif diag.support < 1.0:
        warning = (f"{1 - diag.support:.1%} of the top-k lists the candidate's interleaving would show were never "
                   "loggable" if spec.comparison else
                   f"{1 - diag.support:.1%} of the candidate's top-k places were never loggable")
    if diag.ess < MIN_ESS:
        why = ("the log is too small" if diag.matched == diag.impressions and diag.impressions < MIN_ESS
               else "the candidate's lists were rarely shown")
        return (f"effective sample size {diag.ess:.0f} < {MIN_ESS:.0f}: {why} ({diag.matched:,} of "
                f"{diag.impressions:,} impressions match)"), None
    if diag.largest_weight_share > MAX_WEIGHT_SHARE:
        return (f"one impression carries {diag.largest_weight_share:.1%} of the weight (threshold "
                f"{MAX_WEIGHT_SHARE:.0%})"), None
    return None, warning
