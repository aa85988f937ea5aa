"""Off-policy estimators of a candidate ranker C from a randomised log, as per-impression terms.

Notation (0-based positions j < k): impression i shows list L_i with clicks c_ij; C_i is C's
top k for the impression's query; μ is the logging design (probabilistic interleaving or an
A/B split, exact: :mod:`.logging_model`). The *metric* is ``clicks`` (expected clicks on the
top k per query; position reward ``R_ij = c_ij``) or ``ctr`` (share of queries with a click;
``R_ij`` = 1 at the first click). Every estimator is a mean over impressions of a term
``x_i`` (self-normalised ones: ``Σ x_i / Σ y_i``), so one cluster-robust interval over users
serves all (:mod:`serpeval.stats.importance`).

=================  ===========================================================  ======================
name               term x_i                                                     unbiased when
=================  ===========================================================  ======================
``ips``            ``[L_i = C_i] / μ(L_i) · Σ_j R_ij``  (standard slate IPS)      always (full support)
``snips``          the same, divided by ``Σ [L_i = C_i] / μ(L_i)``               consistent (ratio)
``iips``           ``Σ_j [L_ij = C_ij] / μ(L_ij at j) · R_ij`` (independent IPS)  click at j depends on
                                                                                the document at j only
                                                                                (``clicks`` metric)
``cascade_ips``    ``Σ_j [L_i,≤j = C_i,≤j] / μ(L_i,≤j) · R_ij`` (reward-         reward at j depends on
                   interaction IPS, McInerney et al. 2020)                      the prefix only (cascade)
``pbm_ips``        ``Σ_j c_ij θ_{r_C(L_ij)} / (θ_j π(L_ij))``: position-based     PBM with the true θ
                   IPS, θ the examination of a PBM fitted on the log, π(d) the  (the fitted θ adds the
                   logging probability that d is shown at all                   model's error; ``clicks``)
``pseudo_inverse`` ``Σ_j R_ij · (Γ⁺ q_C)[j, L_ij]``: Γ the logging design's exact    the reward is additive
                   second moments of the slate indicator, q_C the indicator of   over (position, document)
                   C's list (Swaminathan et al., NeurIPS 2017)                   pairs (position-based
                                                                                clicks; ``clicks``)
``dr``             ``Q̂_0 + Σ_j w_ij (R_ij + Q̂_{j+1} - Q̂_j)``, w_ij the cascade  as ``cascade_ips``, for
                   weights, Q̂_j = Σ_{l≥j} of a fitted DBN's click probabilities any fitted model; the
                   on C's list (cascade doubly robust, Kiyohara et al. 2022)    model fills what the log
                                                                                cannot support
``interleaved``    ``P_{C,A}(L_i) / μ(L_i) · o_i``: the probabilistic-           clicks depend on the
                   interleaving comparison of C against logging ranker A,       list only (Hofmann,
                   o_i the marginalised outcome E[sign(h_C - h_A)] under the    Whiteson & de Rijke,
                   pair (C, A) (Hofmann, Whiteson & de Rijke, CIKM 2012)        CIKM 2012)
=================  ===========================================================  ======================

A document that C shows but the logging design could not show at that place contributes
nothing to the design-based terms: their estimate then misses its clicks (counted in the
support share; :mod:`.diagnostics` refuses below a threshold).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import OptionError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.online.counterfactual.log import CounterfactualLog
    from serpeval.online.counterfactual.logging_model import LoggingModel

__all__ = ["ESTIMATORS", "METRICS", "EstimatorSpec", "Terms", "position_rewards"]

#: The click metrics a candidate is estimated on.
METRICS = ("clicks", "ctr")
#: EM settings of the fitted click models.
EM_ITERATIONS = 40
EM_TOL = 1e-5


@dataclass(frozen=True)
class EstimatorSpec:
    """One estimator: its label, what makes it unbiased, whether it leans on a fitted model,
    and the metrics it applies to."""

    name: str
    label: str
    assumption: str
    model_based: bool = False
    metrics: tuple[str, ...] = METRICS
    self_normalised: bool = False
    comparison: bool = False


ESTIMATORS: dict[str, EstimatorSpec] = {s.name: s for s in (
    EstimatorSpec("interleaved", "interleaved comparison (importance sampling)",
                  "clicks depend on the shown list only", comparison=True),
    EstimatorSpec("ips", "IPS (standard slate)", "none beyond the logged propensities"),
    EstimatorSpec("snips", "self-normalised IPS", "none (consistent; a ratio)", self_normalised=True),
    EstimatorSpec("iips", "independent (position-wise) IPS", "a click depends only on the document at its position",
                  metrics=("clicks",)),
    EstimatorSpec("cascade_ips", "cascade (reward-interaction) IPS",
                  "the reward at j depends only on the list above j"),
    EstimatorSpec("pseudo_inverse", "pseudo-inverse slate estimator",
                  "the reward is a sum over (position, document) pairs (position-based clicks)",
                  metrics=("clicks",)),
    EstimatorSpec("pbm_ips", "position-based IPS (fitted PBM examination)",
                  "position-based clicks, examination from a PBM fitted on the log", model_based=True,
                  metrics=("clicks",)),
    EstimatorSpec("dr", "cascade doubly robust (fitted DBN)",
                  "the reward at j depends only on the list above j; the DBN fills unsupported places",
                  model_based=True),
)}


@dataclass(frozen=True, eq=False)
class Terms:
    """Per-impression terms of one estimator for one list policy.

    ``value = Σ x / Σ y`` (``y`` is 1 per impression unless self-normalised); ``weight`` is
    ``[n, p]``: the importance weights the diagnostics read, one column per position the
    estimator weights separately (one column for a whole-list weight); the diagnostics take
    the worst column (a cascade estimator is as weak as its deepest position).
    """

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    weight: NDArray[np.float64]


def position_rewards(clicks: NDArray[np.bool_], metric: str) -> NDArray[np.float64]:
    """``R[n, k]``: per-position reward: the clicks, or 1 at the first click (``ctr``)."""
    if metric == "clicks":
        return clicks.astype(np.float64)
    if metric == "ctr":
        first = np.cumsum(clicks, axis=1) == 1
        return (first & clicks).astype(np.float64)
    raise OptionError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}.")


class Context:
    """What every estimator of one log shares (computed once per log)."""

    def __init__(self, log: CounterfactualLog, model: LoggingModel, metric: str) -> None:
        self.log = log
        self.model = model
        self.metric = metric
        self.rewards = position_rewards(log.clicks, metric)
        self.prefix = model.prefix()  # μ(L_i,≤j)
        self._fits: dict[str, Any] = {}

    # ------------------------------------------------------------- lazily shared pieces
    def position_marginal(self) -> NDArray[np.float64]:
        """``μ(L_ij at j)`` of the shown documents, ``[n, k]`` (1 on empty slots)."""
        if "pos" not in self._fits:
            m = self.model.marginals()
            shown = self.log.shown
            j = np.broadcast_to(np.arange(self.log.k), shown.shape)
            ctx = np.broadcast_to(self.log.context[:, None], shown.shape)
            self._fits["pos"] = np.where(shown >= 0, m[ctx, np.maximum(shown, 0), j], 1.0)
        return np.asarray(self._fits["pos"])

    def click_log(self) -> Any:
        """The log as a :class:`~serpeval.online.clicks.ClickLog` of (context, document) items."""
        if "clicklog" not in self._fits:
            import pyarrow as pa

            from serpeval.online.clicks import ClickLog

            log = self.log
            offsets = np.concatenate([[0], np.cumsum([len(d) for d in log.context_docs])])
            items = np.where(log.shown >= 0, offsets[log.context][:, None] + log.shown, -1)
            keys = pa.array([f"{c}\x1f{d}" for c, docs in enumerate(log.context_docs) for d in docs], pa.string())
            self._fits["offsets"] = offsets
            self._fits["clicklog"] = ClickLog(items, log.clicks & (log.shown >= 0), log.context.copy(),
                                              list(map(str, range(len(log.contexts)))), keys, log.source,
                                              {"impressions": len(log)})
        return self._fits["clicklog"]

    def fitted(self, kind: str) -> Any:
        """A PBM or DBN fitted on the log by EM (cached; pooled prior, at most
        :data:`EM_ITERATIONS` iterations to a change of :data:`EM_TOL` per impression: the
        model only steadies the doubly robust estimate and gives pbm_ips its examination)."""
        if kind not in self._fits:
            from serpeval.online.clicks import fit_dbn, fit_pbm

            fit = fit_pbm if kind == "pbm" else fit_dbn
            self._fits[kind] = fit(self.click_log(), prior="pooled", iterations=EM_ITERATIONS, tol=EM_TOL)[0]
        return self._fits[kind]

    def items_of(self, lists: NDArray[np.int64]) -> NDArray[np.int64]:
        """Per-context lists ``[n_ctx, k]`` as fitted-model item codes (unseen: the model's
        unseen code)."""
        self.click_log()
        offsets = self._fits["offsets"]
        union = np.diff(offsets)
        n_items = int(offsets[-1])
        inside = (lists >= 0) & (lists < union[:, None])
        return np.where(lists < 0, -1, np.where(inside, offsets[:-1, None] + lists, n_items))


def _match(ctx: Context, lists: NDArray[np.int64]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    c = lists[:, :ctx.log.k][ctx.log.context]
    match = ctx.log.shown == c
    return match, np.cumprod(match, axis=1).astype(bool)


def _safe_div(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def ips_terms(ctx: Context, lists: NDArray[np.int64], self_normalised: bool = False) -> Terms:
    _, prefix_match = _match(ctx, lists)
    w = _safe_div(prefix_match[:, -1].astype(np.float64), ctx.prefix[:, -1])
    r = ctx.rewards.sum(axis=1)
    return Terms(w * r, w if self_normalised else np.ones(len(w)), w[:, None])


def iips_terms(ctx: Context, lists: NDArray[np.int64]) -> Terms:
    match, _ = _match(ctx, lists)
    w = _safe_div(match.astype(np.float64), ctx.position_marginal())
    return Terms((w * ctx.rewards).sum(axis=1), np.ones(len(w)), _columns(w, lists[:, :ctx.log.k]))


def cascade_terms(ctx: Context, lists: NDArray[np.int64]) -> Terms:
    _, prefix_match = _match(ctx, lists)
    w = _safe_div(prefix_match.astype(np.float64), ctx.prefix)
    return Terms((w * ctx.rewards).sum(axis=1), np.ones(len(w)), _columns(w, lists[:, :ctx.log.k]))


def _columns(w: NDArray[np.float64], lists: NDArray[np.int64]) -> NDArray[np.float64]:
    """The weight columns of the positions the candidate fills (all, if it fills none)."""
    used = (lists >= 0).any(axis=0)
    return w[:, used] if used.any() else w


def pbm_terms(ctx: Context, lists: NDArray[np.int64]) -> Terms:
    log = ctx.log
    theta = np.asarray(ctx.fitted("pbm").examination, dtype=np.float64)[: log.k]
    theta = np.pad(theta, (0, log.k - len(theta)), constant_values=theta[-1] if len(theta) else 1.0)
    c = lists[:, :log.k][log.context]  # [n, k]
    # C's position of every shown document (-1: not in C's top k)
    eq = (log.shown[:, :, None] == c[:, None, :]) & (log.shown[:, :, None] >= 0)
    r_c = np.where(eq.any(axis=2), eq.argmax(axis=2), -1)
    inclusion = ctx.model.marginals().sum(axis=2)  # [n_ctx, width]
    shown_pi = np.where(log.shown >= 0, inclusion[log.context[:, None], np.maximum(log.shown, 0)], 0.0)
    ratio = np.where(r_c >= 0, theta[np.maximum(r_c, 0)], 0.0) / theta[None, :]
    w = _safe_div(ratio, shown_pi)
    return Terms((w * log.clicks).sum(axis=1), np.ones(len(log)), w.sum(axis=1, keepdims=True))


def pseudo_inverse_terms(ctx: Context, lists: NDArray[np.int64]) -> Terms:
    """Swaminathan et al. (2017): ``x_i = r_i · 1_{L_i}ᵀ Γ⁺ q_C`` with Γ the exact
    second-moment matrix of the logging design's slate indicator (per context, a batched
    pseudo-inverse of ``[k·width, k·width]``) and ``q_C`` the indicator of C's list."""
    log = ctx.log
    g = ctx.model.pairwise()  # [n_ctx, k, W, k, W]
    n_ctx, k, width = g.shape[0], g.shape[1], g.shape[2]
    c = lists[:, :k]
    q = np.zeros((n_ctx, k, width))
    rows, cols = np.nonzero((c >= 0) & (c < width))
    q[rows, cols, c[rows, cols]] = 1.0
    gamma = g.reshape(n_ctx, k * width, k * width)
    inverse = np.linalg.pinv(gamma, rcond=1e-10, hermitian=True)
    coef = (inverse @ q.reshape(n_ctx, k * width, 1)).reshape(n_ctx, k, width)
    j = np.broadcast_to(np.arange(k), log.shown.shape)
    ctx_of = np.broadcast_to(log.context[:, None], log.shown.shape)
    per_slot = np.where(log.shown >= 0, coef[ctx_of, j, np.maximum(log.shown, 0)], 0.0)
    s = per_slot.sum(axis=1)
    return Terms(ctx.rewards.sum(axis=1) * s, np.ones(len(s)), np.abs(s)[:, None])


def model_position_rewards(model: Any, items: NDArray[np.int64], metric: str) -> NDArray[np.float64]:
    """A click model's expected position rewards ``[n_ctx, k]`` on lists of item codes:
    click probabilities (``clicks``), or P(first click at j) (``ctr``: from P(no click in the
    top j) of the list cut at j; cascade models read the list top-down, so the cut leaves
    the probabilities above unchanged)."""
    if metric == "clicks":
        return np.asarray(model.click_probabilities(items))
    k = items.shape[1]
    none = np.ones((len(items), k + 1))
    for j in range(1, k + 1):  # k steps, vectorized over contexts
        cut = np.where(np.arange(k)[None, :] < j, items, -1)
        none[:, j] = model.click_count_distribution(cut)[:, 0]
    return np.asarray(none[:, :-1] - none[:, 1:])


def dr_terms(ctx: Context, lists: NDArray[np.int64]) -> Terms:
    model = ctx.fitted("dbn")
    q = model_position_rewards(model, ctx.items_of(lists[:, :ctx.log.k]), ctx.metric)  # [n_ctx, k]
    tail = np.concatenate([np.cumsum(q[:, ::-1], axis=1)[:, ::-1], np.zeros((len(q), 1))], axis=1)
    _, prefix_match = _match(ctx, lists)
    w = _safe_div(prefix_match.astype(np.float64), ctx.prefix)
    t = tail[ctx.log.context]
    x = t[:, 0] + (w * (ctx.rewards + t[:, 1:] - t[:, :-1])).sum(axis=1)
    return Terms(x, np.ones(len(x)), _columns(w, lists[:, :ctx.log.k]))


def marginalised_outcome(slots: NDArray[np.float64], clicks: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``E[sign(h_0 - h_1)]`` per impression under the posterior over slot assignments of a
    two-ranker probabilistic interleaving (``slots[n, k, 2]``: each ranker's probability of
    drawing the shown document), exactly as :func:`serpeval.online.interleaving.credit`
    computes it (both directions of the convolution averaged, rounded at 1e-12), vectorized
    over impressions with one step per slot."""
    total = slots.sum(axis=2, keepdims=True)
    q = np.divide(slots, total, out=np.zeros_like(slots), where=total > 0)
    n, k, _ = slots.shape

    def one_way(plus: NDArray[np.float64], minus: NDArray[np.float64]) -> NDArray[np.float64]:
        # Per clicked slot: dist (1 - p - m) + roll(dist, 1) p + roll(dist, -1) m, on the
        # impressions clicked there only (the others keep dist), the rolls as shifted slices
        # plus the wrapped column: the same operations in the same order (the same bits).
        dist = np.zeros((n, 2 * k + 1))
        dist[:, k] = 1.0
        for j in range(k):
            on = np.flatnonzero(clicks[:, j])
            if not len(on):
                continue
            d = dist[on]
            p, m = plus[on, j][:, None], minus[on, j][:, None]
            step = d * (1.0 - p - m)
            step[:, 1:] += d[:, :-1] * p
            step[:, :1] += d[:, -1:] * p
            step[:, :-1] += d[:, 1:] * m
            step[:, -1:] += d[:, :1] * m
            dist[on] = step
        return np.asarray(dist[:, k + 1:].sum(axis=1) - dist[:, :k].sum(axis=1))

    e = (one_way(q[:, :, 0], q[:, :, 1]) - one_way(q[:, :, 1], q[:, :, 0])) / 2.0
    return np.where(np.abs(e) > 1e-12, np.round(e, 12), 0.0)


def interleaved_terms(ctx: Context, lists: NDArray[np.int64], against: int) -> Terms:
    from serpeval.online.counterfactual.logging_model import slots_under

    model = ctx.model
    width = max(model.width, int(lists.max(initial=0)) + 1)
    w_target = model.context_weights([lists, model.rankings[against]], width=width)
    slots, prefix = slots_under(w_target, ctx.log.context, ctx.log.shown)
    w = _safe_div(prefix[:, -1], ctx.prefix[:, -1])
    o = marginalised_outcome(slots, ctx.log.clicks & (ctx.log.shown >= 0))
    return Terms(w * o, np.ones(len(w)), w[:, None])


_FUNCTIONS: dict[str, Any] = {
    "ips": ips_terms,
    "snips": lambda ctx, lists: ips_terms(ctx, lists, self_normalised=True),
    "iips": iips_terms,
    "cascade_ips": cascade_terms,
    "pbm_ips": pbm_terms,
    "pseudo_inverse": pseudo_inverse_terms,
    "dr": dr_terms,
}


def terms(name: str, ctx: Context, lists: NDArray[np.int64], against: int = 0) -> Terms:
    """The terms of estimator ``name`` for the per-context lists ``lists[n_ctx, k]``."""
    if name == "interleaved":
        return interleaved_terms(ctx, lists, against)
    if name not in _FUNCTIONS:
        raise OptionError(f"unknown estimator {name!r}; expected one of {', '.join(ESTIMATORS)}.")
    result: Terms = _FUNCTIONS[name](ctx, lists)
    return result
