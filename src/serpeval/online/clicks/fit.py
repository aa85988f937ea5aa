"""Fitting click models to a click log by EM, and judging them on held-out impressions.

All updates are vectorized over impressions; the only loops run over EM iterations and over
the k ranks (inside the kernel). Each (query, document) parameter gets a Beta(a, b) prior
(``prior=(1, 1)`` by default): sparse items are pulled toward 1/2 instead of 0 or 1, the
over-fitting PyClick users report (PyClick issue #11), and items unseen in training get
the prior mean (the extra last code of a fitted model's parameter table).

**PBM** (Chuklin et al. 2015, ch. 4): with ``a = alpha_item``, ``g = gamma_rank`` and an
unclicked cell, P(A = 1 | C = 0) = a (1 - g) / (1 - a g) and
P(E = 1 | C = 0) = g (1 - a) / (1 - a g); clicked cells have A = E = 1. M-step: alpha =
mean posterior over the item's cells (with the prior), gamma_r = mean posterior over rank r.

**DBN / SDBN / DCM** share the cascade E-step of :func:`~._kernel.posterior_examination`
(P(E_r | clicks), exact). Then P(A_r = 1 | C) = C_r + (1 - C_r)(1 - P(E_r | C)) alpha; DBN's
satisfaction at the last click l is sigma / (sigma + (1 - sigma)(1 - gamma + gamma N_{l+1}))
(0 at earlier clicks), and gamma = expected continuations / expected chances to continue;
DCM's lambda_r = expected continuations after clicks at r / clicks at r.

:func:`evaluate_model` reports the held-out log-likelihood (chain rule over conditional click
probabilities) and the perplexity of the unconditional click probabilities,
``2 ** -(mean over impressions of log2 P(observed C_r))`` per rank, averaged over ranks (the
definitions of Chuklin et al. and PyClick).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import check_count
from serpeval.core.errors import OptionError
from serpeval.online.clicks import _kernel
from serpeval.online.clicks.logs import ClickLog
from serpeval.online.clicks.models import DBN, DCM, PBM, ClickModel
from serpeval.online.common import last_click

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["FitReport", "evaluate_model", "fit_dbn", "fit_dcm", "fit_pbm", "rank_ctr_baseline"]

_EPS = 1e-9


@dataclass(frozen=True)
class FitReport:
    """How an EM fit went: iterations, final training log-likelihood, convergence
    (``converged``: the last iteration improved the log-likelihood by less than ``tol``
    per impression)."""

    model: str
    iterations: int
    log_likelihood: float
    converged: bool
    impressions: int

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "iterations": self.iterations,
                "log_likelihood": self.log_likelihood, "converged": self.converged,
                "impressions": self.impressions}


def _check(log: ClickLog, iterations: int, tol: float, prior: tuple[float, float]) -> None:
    if not isinstance(log, ClickLog):
        raise OptionError(f"fit needs a ClickLog; got {type(log).__name__}.")
    check_count(iterations, "iterations")
    if not tol > 0:
        raise OptionError(f"tol must be > 0; got {tol!r}.")
    if len(prior) != 2 or min(prior) < 0:
        raise OptionError(f"prior must be two non-negative pseudo-counts (a, b); got {prior!r}.")


class _ItemMean:
    """Per item: (sum of values + a) / (count + a + b) over the cells in ``mask``.

    The cells' item codes and counts are gathered once per fit; each EM step then costs
    one gather and one ``bincount``. The extra last item (unseen) gets the prior mean.
    """

    def __init__(self, items: NDArray[np.int64], mask: NDArray[np.bool_], n_items: int,
                 prior: tuple[float, float]) -> None:
        self.cells = np.flatnonzero(mask)
        self.codes = items.ravel()[self.cells]
        self.size = n_items + 1
        a, b = prior
        self.a, self.ab = a, a + b
        self.default = a / (a + b) if a + b > 0 else 0.5
        self.count = np.bincount(self.codes, minlength=self.size)[: self.size].astype(np.float64)

    def __call__(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        total = np.bincount(self.codes, weights=values.ravel()[self.cells], minlength=self.size)
        denom = self.count + self.ab
        out = np.where(denom > 0, (total[: self.size] + self.a) / np.maximum(denom, _EPS), self.default)
        out[-1] = self.default
        return np.clip(out, _EPS, 1.0 - _EPS)


def _slot_major(log: ClickLog) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_]]:
    items = np.ascontiguousarray(log.items.T)
    return items, np.ascontiguousarray(log.clicks.T), items >= 0


def _log_likelihood(model: ClickModel, items: NDArray[np.int64], clicks: NDArray[np.bool_]) -> float:
    return float(_kernel.log_likelihood(*model.cells(items), clicks).sum())


def fit_pbm(log: ClickLog, *, iterations: int = 100, tol: float = 1e-6,
            prior: tuple[float, float] = (1.0, 1.0)) -> tuple[PBM, FitReport]:
    """Fit a PBM (per-item attractiveness, per-rank examination) by EM.

    Stops when an iteration raises the training log-likelihood per impression by less
    than ``tol``.
    """
    _check(log, iterations, tol, prior)
    items, clicks, shown = _slot_major(log)
    k, n = items.shape
    item_mean = _ItemMean(items, shown, log.n_items, prior)
    per_rank = np.maximum(shown.sum(axis=1), 1)
    alpha = np.full(log.n_items + 1, 0.5)
    gamma = np.full(k, 0.5)
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        a = np.where(shown, alpha[items], 0.0)
        g = gamma[:, None]
        denom = np.maximum(1.0 - a * g, _EPS)
        post_a = np.where(clicks, 1.0, a * (1.0 - g) / denom)
        post_g = np.where(clicks, 1.0, g * (1.0 - a) / denom)
        alpha = item_mean(post_a)
        gamma = np.clip(np.where(shown, post_g, 0.0).sum(axis=1) / per_rank, _EPS, 1.0 - _EPS)
        ll = _log_likelihood(PBM(attractiveness=alpha, examination=gamma), items, clicks)
        if ll - previous <= tol * n:
            converged = True
            break
        previous = ll
    model = PBM(attractiveness=alpha, examination=gamma, name="pbm (fitted)")
    return model, FitReport("pbm", it, ll, converged, n)


def fit_dbn(log: ClickLog, *, gamma: float | None = None, iterations: int = 100, tol: float = 1e-6,
            prior: tuple[float, float] = (1.0, 1.0)) -> tuple[DBN, FitReport]:
    """Fit a DBN by EM: per-item attractiveness and satisfaction, one continuation gamma.

    ``gamma=None`` fits gamma; a number fixes it (``gamma=1`` is the simplified DBN, SDBN).
    Stops when an iteration raises the log-likelihood per impression by less than ``tol``.
    """
    _check(log, iterations, tol, prior)
    g = 0.9 if gamma is None else float(gamma)
    if not 0.0 <= g <= 1.0:
        raise OptionError(f"gamma must be a probability in [0, 1]; got {gamma!r}.")
    items, clicks, shown = _slot_major(log)
    k, n = items.shape
    attractive_mean = _ItemMean(items, shown, log.n_items, prior)
    satisfied_mean = _ItemMean(items, clicks, log.n_items, prior)
    alpha = np.full(log.n_items + 1, 0.5)
    sigma = np.full(log.n_items + 1, 0.5)
    cols = np.arange(n)
    last = last_click(clicks)
    has_click = last >= 0
    lc = np.maximum(last, 0)
    slot = np.arange(k)[:, None]
    # Chances to continue from r to r + 1 exist where both slots are shown.
    both_shown = np.zeros((k, n), dtype=bool)
    both_shown[:-1] = shown[1:]
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        c, sc, sn = DBN(attractiveness=alpha, satisfaction=sigma, gamma=g).cells(items)
        p_exam, tail = _kernel.posterior_examination(c, sc, sn, clicks)
        post_a = np.where(clicks, 1.0, (1.0 - p_exam) * c)
        # Satisfaction: only the last click can be satisfying.
        s_last = sigma[items[lc, cols]]
        p_sat = s_last / np.maximum(s_last + (1 - s_last) * (1 - g + g * tail[lc + 1, cols]), _EPS)
        post_s = np.zeros((k, n))
        post_s[last[has_click], cols[has_click]] = p_sat[has_click]
        new_g = g
        if gamma is None:
            at_risk = np.where(slot == last, 1.0 - p_sat, p_exam)  # p_exam = 1 above the last click
            cont = np.zeros((k, n))
            cont[:-1] = p_exam[1:]
            new_g = float(np.clip(cont[both_shown].sum() / max(at_risk[both_shown].sum(), _EPS),
                                  _EPS, 1.0))
        alpha, sigma, g = attractive_mean(post_a), satisfied_mean(post_s), new_g
        ll = _log_likelihood(DBN(attractiveness=alpha, satisfaction=sigma, gamma=g), items, clicks)
        if ll - previous <= tol * n:
            converged = True
            break
        previous = ll
    name = "sdbn (fitted)" if gamma == 1 else "dbn (fitted)"
    fitted = DBN(attractiveness=alpha, satisfaction=sigma, gamma=g, name=name)
    return fitted, FitReport(name.split()[0], it, ll, converged, n)


def fit_dcm(log: ClickLog, *, iterations: int = 100, tol: float = 1e-6,
            prior: tuple[float, float] = (1.0, 1.0)) -> tuple[DCM, FitReport]:
    """Fit a DCM by EM: per-item attractiveness, per-rank continuation after a click.

    Stops when an iteration raises the log-likelihood per impression by less than ``tol``.
    """
    _check(log, iterations, tol, prior)
    items, clicks, shown = _slot_major(log)
    k, n = items.shape
    item_mean = _ItemMean(items, shown, log.n_items, prior)
    alpha = np.full(log.n_items + 1, 0.5)
    lam = np.full(k, 0.5)
    last = last_click(clicks)
    slot = np.arange(k)[:, None]
    # Clicks followed by a shown slot: the ones that say something about lambda.
    informative = clicks.copy()
    informative[-1] = False
    informative[:-1] &= shown[1:]
    counts = informative.sum(axis=1)
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        c, sc, sn = DCM(attractiveness=alpha, continuation=lam).cells(items)
        p_exam, _ = _kernel.posterior_examination(c, sc, sn, clicks)
        post_a = np.where(clicks, 1.0, (1.0 - p_exam) * c)
        cont = np.ones((k, n))
        cont[:-1] = np.where(slot[:-1] == last, p_exam[1:], 1.0)  # the last click: P(E_{l+1} | C)
        totals = np.where(informative, cont, 0.0).sum(axis=1)
        alpha = item_mean(post_a)
        lam = np.clip((totals + prior[0]) / np.maximum(counts + prior[0] + prior[1], _EPS),
                      _EPS, 1.0 - _EPS)
        ll = _log_likelihood(DCM(attractiveness=alpha, continuation=lam), items, clicks)
        if ll - previous <= tol * n:
            converged = True
            break
        previous = ll
    model = DCM(attractiveness=alpha, continuation=lam, name="dcm (fitted)")
    return model, FitReport("dcm", it, ll, converged, n)


def rank_ctr_baseline(log: ClickLog) -> PBM:
    """The baseline every click model must beat: P(click at r) = CTR at rank r (RCTR)."""
    ctr = np.clip(log.ctr_by_rank(), _EPS, 1.0 - _EPS)
    return PBM(attractiveness=np.ones(log.n_items + 1), examination=ctr, name="rank CTR (baseline)")


def evaluate_model(model: ClickModel, log: ClickLog) -> dict[str, Any]:
    """Held-out quality of ``model`` on ``log`` (encoded with the training log's codes).

    Returns the mean log-likelihood per impression (natural log), the perplexity per rank and
    its mean over ranks (lower is better, 1 is perfect, 2 is a coin flip).
    """
    items, clicks = log.items, log.clicks
    ll = model.log_likelihood(items, clicks)
    p = np.clip(model.click_probabilities(items), _EPS, 1.0 - _EPS)
    shown = items >= 0
    log2 = np.where(clicks, np.log2(p), np.log2(1.0 - p))
    per_rank = 2.0 ** (-np.where(shown, log2, 0.0).sum(axis=0) / np.maximum(shown.sum(axis=0), 1))
    return {
        "model": model.name,
        "impressions": len(items),
        "log_likelihood": float(ll.mean()),
        "perplexity": float(per_rank.mean()),
        "perplexity_by_rank": per_rank.round(4).tolist(),
        "unseen_cells": int(log.counts.get("unseen_cells", 0)),
    }
