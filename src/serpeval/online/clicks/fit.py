"""Fitting click models to a click log by EM, and judging them on held-out impressions.

All updates are vectorized over impressions; the only loops run over EM iterations and over
the k ranks (inside the kernel). Each (query, document) parameter gets a Beta prior, so that
sparse items are not fitted to 0 or 1 (the over-fitting PyClick users report, PyClick issue
#11); items unseen in training get the prior mean (the extra last code of a fitted model's
parameter table):

- ``prior=(a, b)`` (default ``(1, 1)``): M-step ``(sum of posteriors + a) / (cells + a + b)``;
  an item without evidence stays at ``a / (a + b)`` (1/2), which can rank it above items with
  plenty of evidence (most attractiveness and satisfaction values of a real log are far below
  1/2);
- ``prior="pooled"`` (empirical Bayes): the prior mean is the parameter's pooled mean over all
  cells of the log, ``m = sum of posteriors / cells``, recomputed at every M-step, with the
  weight of :data:`POOLED_STRENGTH` observations: ``(sum + s m) / (cells + s)``. An item
  without evidence gets the typical value ``m``, and evidence moves it after a handful of
  observations, so the prior never outranks the data. (Per-rank parameters, PBM's examination
  and DCM's continuation, are pooled the same way over ranks.)

Every fit runs EM until an iteration changes the training log-likelihood by less than ``tol``
per impression (default 1e-6), or ``iterations`` (then ``converged`` is False and says so).

**PBM** (Chuklin et al. 2015, ch. 4): with ``a = alpha_item``, ``g = gamma_rank`` and an
unclicked cell, P(A = 1 | C = 0) = a (1 - g) / (1 - a g) and
P(E = 1 | C = 0) = g (1 - a) / (1 - a g); clicked cells have A = E = 1. M-step: alpha =
mean posterior over the item's cells (with the prior), gamma_r = mean posterior over rank r.

**DBN / SDBN / DCM** share the cascade E-step of :func:`~.kernel.posterior_examination`
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

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import check_count
from serpeval.core.errors import InputError, OptionError
from serpeval.online.clicks import kernel
from serpeval.online.clicks.logs import ClickLog
from serpeval.online.clicks.models import DBN, DCM, PBM, ClickModel
from serpeval.online.common import last_click

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["POOLED_STRENGTH", "FitReport", "Prior", "evaluate_model", "fit_dbn", "fit_dcm", "fit_pbm",
           "rank_ctr_baseline"]

_EPS = 1e-9
#: Weight, in observations, of the pooled prior (``prior="pooled"``): the two pseudo-counts of
#: Beta(1, 1), centred on the pooled mean instead of 1/2.
POOLED_STRENGTH = 2.0
#: A Beta prior's pseudo-counts ``(a, b)``, or ``"pooled"`` (module docstring).
Prior = tuple[float, float] | str


@dataclass(frozen=True)
class FitReport:
    """How an EM fit went: iterations, final training log-likelihood, convergence
    (``converged``: the last iteration changed the log-likelihood by less than ``tol``
    per impression) and the prior used."""

    model: str
    iterations: int
    log_likelihood: float
    converged: bool
    impressions: int
    tol: float = 1e-6
    prior: str = "beta(1, 1)"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "iterations": self.iterations,
                "log_likelihood": self.log_likelihood, "converged": self.converged,
                "impressions": self.impressions, "tol": self.tol, "prior": self.prior}


def _prior_name(prior: Prior) -> str:
    return "pooled" if isinstance(prior, str) else f"beta({prior[0]:g}, {prior[1]:g})"


def _converged(ll: float, previous: float, tol: float, n: int) -> bool:
    """The stopping rule: the log-likelihood moved by less than ``tol`` per impression (either
    way: with the pooled prior EM maximises a penalised likelihood, which may end a hair below)."""
    return abs(ll - previous) <= tol * n


def _check(log: ClickLog, iterations: int, tol: float, prior: Prior) -> None:
    if not isinstance(log, ClickLog):
        raise OptionError(f"fit needs a ClickLog; got {type(log).__name__}.")
    check_count(iterations, "iterations")
    if not tol > 0:
        raise OptionError(f"tol must be > 0; got {tol!r}.")
    if isinstance(prior, str):
        if prior != "pooled":
            raise OptionError(f'prior must be "pooled" or two pseudo-counts (a, b); got {prior!r}.')
    elif (not isinstance(prior, (tuple, list, np.ndarray)) or len(prior) != 2
          or not all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
                     and math.isfinite(x) and x >= 0 for x in prior)):
        # a NaN or infinite pseudo-count made every parameter NaN, or silently 1/2
        raise OptionError(f"prior must be two finite non-negative pseudo-counts (a, b), or \"pooled\"; got {prior!r}.")


def _posterior_mean(total: NDArray[np.float64], count: NDArray[np.float64],
                    prior: Prior) -> tuple[NDArray[np.float64], float]:
    """``(total + a) / (count + a + b)`` per entry, and the prior mean for entries without
    cells; for ``"pooled"``, ``a = s m`` and ``a + b = s`` with ``m = sum(total) / sum(count)``."""
    if isinstance(prior, str):
        cells = float(count.sum())
        mean = float(total.sum()) / cells if cells > 0 else 0.5
        a, ab = POOLED_STRENGTH * mean, POOLED_STRENGTH
    else:
        a, ab = prior[0], prior[0] + prior[1]
        mean = a / ab if ab > 0 else 0.5
    denom = count + ab
    out = np.where(denom > 0, (total + a) / np.maximum(denom, _EPS), mean)
    return out, mean


class _ItemMean:
    """Per item: (sum of values + a) / (count + a + b) over the cells in ``mask``.

    The cells' item codes and counts are gathered once per fit; each EM step then costs
    one gather and one ``bincount``. The extra last item (unseen) gets the prior mean.
    """

    def __init__(self, items: NDArray[np.int64], mask: NDArray[np.bool_], n_items: int,
                 prior: Prior) -> None:
        self.cells = np.flatnonzero(mask)
        self.every_cell = len(self.cells) == mask.size  # then the gather is the identity: skipped
        self.codes = items.ravel()[self.cells]
        self.size = n_items + 1
        self.prior = prior
        self.count = np.bincount(self.codes, minlength=self.size)[: self.size].astype(np.float64)

    def __call__(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.of_cells(values.ravel() if self.every_cell else values.ravel()[self.cells])

    def of_cells(self, weights: NDArray[np.float64]) -> NDArray[np.float64]:
        """The same, from the values at the cells of ``mask`` only (in their flat order)."""
        total = np.bincount(self.codes, weights=weights, minlength=self.size)
        out, mean = _posterior_mean(total[: self.size].astype(np.float64), self.count, self.prior)
        out[-1] = mean
        return np.clip(out, _EPS, 1.0 - _EPS)


def _slot_major(log: ClickLog) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_]]:
    items = np.ascontiguousarray(log.items.T)
    return items, np.ascontiguousarray(log.clicks.T), items >= 0


def _dbn_cells(alpha: NDArray[np.float64], sigma: NDArray[np.float64], g: float,
               items: NDArray[np.int64], out: tuple[NDArray[np.float64], NDArray[np.float64]]) -> kernel.Cells:
    """``DBN(attractiveness=alpha, satisfaction=sigma, gamma=g).cells(items)`` without building
    and validating the model at every EM step (the fit's parameters are probabilities by
    construction): the same values bit for bit, with ``sc = 1 - (1 - sigma) g`` computed once
    per item and then gathered instead of once per cell (an empty slot's 0.0 padding included).
    ``c`` and ``sc`` are gathered into ``out`` (reused at every step; ``mode="wrap"`` reads
    index -1 as the last entry, the appended 0.0, as indexing does), and ``sn = 1 - g``, one
    number, is broadcast (strides 0: the kernel multiplies by the number itself, the same bits)."""
    c = np.take(np.append(alpha, 0.0), items, out=out[0], mode="wrap")
    sc = np.take(1.0 - (1.0 - np.append(sigma, 0.0)) * g, items, out=out[1], mode="wrap")
    return c, sc, np.broadcast_to(np.float64(1.0 - g), items.shape)


def _dcm_cells(alpha: NDArray[np.float64], lam: NDArray[np.float64], items: NDArray[np.int64],
               out: NDArray[np.float64]) -> kernel.Cells:
    """``DCM(attractiveness=alpha, continuation=lam).cells(items)`` without building and
    validating the model at every EM step: ``c`` gathered into ``out`` (as in :func:`_dbn_cells`),
    ``sc = 1 - lambda_r`` and ``sn = 0`` broadcast instead of copied (the same values)."""
    c = np.take(np.append(alpha, 0.0), items, out=out, mode="wrap")
    sc = np.broadcast_to(1.0 - lam[: items.shape[0], None], items.shape)
    return c, sc, np.broadcast_to(np.float64(0.0), items.shape)


def _attractive_posterior(p_exam: NDArray[np.float64], c: NDArray[np.float64], clicked: NDArray[np.int64], *,
                          out: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(A = 1 | clicks) of the cascade models, ``np.where(clicks, 1.0, (1 - P(E | C)) c)``,
    into ``out`` (the same values: the product, then 1.0 put at the clicked cells, ``clicked``
    their flat indices: ``np.flatnonzero(clicks)``)."""
    np.multiply(np.subtract(1.0, p_exam, out=out), c, out=out)
    np.put(out, clicked, 1.0)
    return out


def _masked_sum(values: NDArray[np.float64], mask: NDArray[np.bool_], every: bool) -> float:
    """``values[mask].sum()``; when every entry is in ``mask``, the sum of the (contiguous)
    array as it is: the same values in the same order, so the same pairwise sum."""
    return float(values.ravel().sum() if every else values[mask].sum())


def _pbm_log_likelihood(c: NDArray[np.float64], clicks: NDArray[np.bool_],
                        clicked: NDArray[np.int64] | None = None) -> float:
    """:func:`kernel.log_likelihood` of PBM's cells ``(c, 0, 0)``, without the forward filter.

    With ``sc = sn = 0`` the filter's examination stays exactly 1: after a click it is
    ``1 - sc = 1``; after a skip ``1 (1 - c) / (1 - 1 c)``, a number divided by itself (``c``
    is at most ``(1 - 1e-9)^2``, so ``1 - c`` is far above the kernel's floor). So every
    conditional click probability is ``c`` itself, bit for bit, and the log-likelihood is
    the kernel's to the last bit (the same operations in the same order on the same values).
    ``clicked``: ``np.flatnonzero(clicks)``, when the caller has it.
    """
    if clicked is None:
        clicked = np.flatnonzero(clicks)
    q = np.subtract(1.0, c)
    np.put(q, clicked, c.take(clicked))  # np.where(clicks, c, 1 - c)
    np.maximum(q, kernel.TINY, out=q)
    return float(np.log(q, out=q).sum(axis=0).sum())


def fit_pbm(log: ClickLog, *, iterations: int = 100, tol: float = 1e-6,
            prior: Prior = (1.0, 1.0)) -> tuple[PBM, FitReport]:
    """Fit a PBM (per-item attractiveness, per-rank examination) by EM.

    Stops when an iteration changes the training log-likelihood by less than ``tol`` per
    impression; ``prior``: see the module docstring.
    """
    _check(log, iterations, tol, prior)
    items, clicks, shown = _slot_major(log)
    k, n = items.shape
    item_mean = _ItemMean(items, shown, log.n_items, prior)
    per_rank = np.maximum(shown.sum(axis=1), 1)
    every_shown = bool(shown.all())  # then masking the empty slots out changes nothing: skipped
    alpha = np.full(log.n_items + 1, 0.5)
    gamma = np.full(k, 0.5)
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    # a = alpha[item] (0 on empty slots: the appended 0.0) and c = a gamma_rank (PBM.cells)
    # for the current parameters: the last log-likelihood's.
    a = np.append(alpha, 0.0)[items]
    c = a * gamma[:, None]
    # The E-step's arrays, reused at every step: ``np.where(clicks, 1.0, x)`` is x with 1.0
    # copied into the clicked cells, and each product and quotient is the formula's, in place.
    denom, post_a, post_g = np.empty((k, n)), np.empty((k, n)), np.empty((k, n))
    clicked = np.flatnonzero(clicks)  # flat indices of the clicked cells
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        g = gamma[:, None]
        np.maximum(np.subtract(1.0, c, out=denom), _EPS, out=denom)
        np.multiply(a, 1.0 - g, out=post_a)
        post_a /= denom
        np.put(post_a, clicked, 1.0)  # a (1 - g) / denom off the clicks, 1 on them
        np.multiply(np.subtract(1.0, a, out=post_g), g, out=post_g)
        post_g /= denom
        np.put(post_g, clicked, 1.0)  # g (1 - a) / denom off the clicks, 1 on them
        alpha = item_mean(post_a)
        gamma = np.clip((post_g if every_shown else np.where(shown, post_g, 0.0)).sum(axis=1) / per_rank,
                        _EPS, 1.0 - _EPS)
        a = np.append(alpha, 0.0)[items]
        c = a * gamma[:, None]
        ll = _pbm_log_likelihood(c, clicks, clicked)
        if _converged(ll, previous, tol, n):
            converged = True
            break
        previous = ll
    model = PBM(attractiveness=alpha, examination=gamma, name="pbm (fitted)", vocabulary=log.item_keys)
    return model, FitReport("pbm", it, ll, converged, n, tol, _prior_name(prior))


def fit_dbn(log: ClickLog, *, gamma: float | None = None, iterations: int = 100, tol: float = 1e-6,
            prior: Prior = (1.0, 1.0)) -> tuple[DBN, FitReport]:
    """Fit a DBN by EM: per-item attractiveness and satisfaction, one continuation gamma.

    ``gamma=None`` fits gamma; a number fixes it (``gamma=1`` is the simplified DBN, SDBN).
    Stops when an iteration changes the log-likelihood by less than ``tol`` per impression;
    ``prior``: see the module docstring.
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
    # Chances to continue from r to r + 1 exist where both slots are shown (slots r < k - 1);
    # a continuation from r is examination at r + 1.
    # The last click's cells among slots 0..k-2 (flat indices into a (k - 1, n) array), and
    # their impressions.
    last_cols = np.flatnonzero((last >= 0) & (last < k - 1))
    last_cells = last[last_cols] * n + last_cols
    next_shown = shown[1:]
    every_next = bool(next_shown.all())
    # The satisfaction posterior is 0 at every click but an impression's last: its values at
    # the clicked cells (satisfied_mean's cells, in flat order) are p_sat at these positions.
    sat_at = np.searchsorted(satisfied_mean.cells, last[has_click] * n + cols[has_click])
    # The item at each impression's last click (its first slot when none) and the flat index
    # of the tail's cell just below it: items[lc, cols] and tail[lc + 1, cols], gathered by take.
    last_items = items[lc, cols]
    after_last = (lc + 1) * n + cols
    post_a = np.empty((k, n))
    clicked = satisfied_mean.cells  # flat indices of the clicked cells
    by_slot = [np.flatnonzero(row) for row in clicks]
    layout = kernel.posterior_layout(last, k)
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    # Arrays reused at every step (written in full each time: the same values as new ones).
    cell_out = (np.empty((k, n)), np.empty((k, n)))
    exam_out = (np.empty((k, n)), np.empty((k + 1, n)))
    at_risk = np.empty((k - 1, n))
    cells = _dbn_cells(alpha, sigma, g, items, cell_out)
    skip = np.subtract(1.0, cells[0])  # 1 - c, shared by the log-likelihood and the next E-step
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        c, sc, sn = cells  # the cells of the current parameters (the last log-likelihood's)
        p_exam, tail = kernel.posterior_examination(c, sc, sn, clicks, last, layout, exam_out, skip)
        _attractive_posterior(p_exam, c, clicked, out=post_a)
        # Satisfaction: only the last click can be satisfying.
        s_last = sigma.take(last_items)
        p_sat = s_last / np.maximum(s_last + (1 - s_last) * (1 - g + g * tail.take(after_last)), _EPS)
        post_s = np.zeros(len(satisfied_mean.cells))
        post_s[sat_at] = p_sat[has_click]
        new_g = g
        if gamma is None:
            # p_exam (1 above the last click), 1 - p_sat at the last click: np.where(at the last
            # click, 1 - p_sat, p_exam[:-1]), the same values
            np.copyto(at_risk, p_exam[:-1])
            np.put(at_risk, last_cells, (1.0 - p_sat).take(last_cols))
            new_g = float(np.clip(_masked_sum(p_exam[1:], next_shown, every_next)
                                  / max(_masked_sum(at_risk, next_shown, every_next), _EPS), _EPS, 1.0))
        alpha, sigma, g = attractive_mean(post_a), satisfied_mean.of_cells(post_s), new_g
        cells = _dbn_cells(alpha, sigma, g, items, cell_out)
        np.subtract(1.0, cells[0], out=skip)
        ll = float(kernel.log_likelihood(*cells, clicks, by_slot, skip).sum())
        if _converged(ll, previous, tol, n):
            converged = True
            break
        previous = ll
    name = "sdbn (fitted)" if gamma == 1 else "dbn (fitted)"
    fitted = DBN(attractiveness=alpha, satisfaction=sigma, gamma=g, name=name, vocabulary=log.item_keys)
    return fitted, FitReport(name.split()[0], it, ll, converged, n, tol, _prior_name(prior))


def fit_dcm(log: ClickLog, *, iterations: int = 100, tol: float = 1e-6,
            prior: Prior = (1.0, 1.0)) -> tuple[DCM, FitReport]:
    """Fit a DCM by EM: per-item attractiveness, per-rank continuation after a click.

    Stops when an iteration changes the log-likelihood by less than ``tol`` per impression;
    ``prior``: see the module docstring.
    """
    _check(log, iterations, tol, prior)
    items, clicks, shown = _slot_major(log)
    k, n = items.shape
    item_mean = _ItemMean(items, shown, log.n_items, prior)
    alpha = np.full(log.n_items + 1, 0.5)
    lam = np.full(k, 0.5)
    last = last_click(clicks)
    # Clicks followed by a shown slot: the ones that say something about lambda.
    informative = clicks.copy()
    informative[-1] = False
    informative[:-1] &= shown[1:]
    counts = informative.sum(axis=1)
    # Their continuation is 1, but at the last click P(E_{l+1} | C): p_exam one slot (n cells)
    # further on.
    cols = np.arange(n)
    informative_cells = np.flatnonzero(informative)
    last_informative = np.flatnonzero(informative[np.maximum(last, 0), cols] & (last >= 0))
    last_informative = last[last_informative] * n + last_informative
    post_a = np.empty((k, n))
    clicked = np.flatnonzero(clicks)
    by_slot = [np.flatnonzero(row) for row in clicks]
    layout = kernel.posterior_layout(last, k)
    previous, ll, converged, it = -np.inf, -np.inf, False, 0
    # Arrays reused at every step (written in full each time, or, for ``continued``, at the
    # cells that change: the same values as new ones).
    c_out = np.empty((k, n))
    exam_out = (np.empty((k, n)), np.empty((k + 1, n)))
    # np.where(informative, continuation, 0.0), the same values (zeros in place, so the same
    # sums): 1.0 at the informative clicks, then, at every step, P(E_{l+1} | C) at the last ones.
    continued = np.zeros((k, n))
    np.put(continued, informative_cells, 1.0)
    cells = _dcm_cells(alpha, lam, items, c_out)
    skip = np.subtract(1.0, cells[0])  # 1 - c, shared by the log-likelihood and the next E-step
    for it in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        c, sc, sn = cells  # the cells of the current parameters (the last log-likelihood's)
        p_exam, _ = kernel.posterior_examination(c, sc, sn, clicks, last, layout, exam_out, skip)
        _attractive_posterior(p_exam, c, clicked, out=post_a)
        np.put(continued, last_informative, p_exam.take(last_informative + n))
        totals = continued.sum(axis=1)
        alpha = item_mean(post_a)
        lam = np.clip(_posterior_mean(totals, counts.astype(np.float64), prior)[0], _EPS, 1.0 - _EPS)
        cells = _dcm_cells(alpha, lam, items, c_out)
        np.subtract(1.0, cells[0], out=skip)
        ll = float(kernel.log_likelihood(*cells, clicks, by_slot, skip).sum())
        if _converged(ll, previous, tol, n):
            converged = True
            break
        previous = ll
    model = DCM(attractiveness=alpha, continuation=lam, name="dcm (fitted)", vocabulary=log.item_keys)
    return model, FitReport("dcm", it, ll, converged, n, tol, _prior_name(prior))


def rank_ctr_baseline(log: ClickLog) -> PBM:
    """The baseline every click model must beat: P(click at r) = CTR at rank r (RCTR)."""
    ctr = np.clip(log.ctr_by_rank(), _EPS, 1.0 - _EPS)
    return PBM(attractiveness=np.ones(log.n_items + 1), examination=ctr, name="rank CTR (baseline)",
               vocabulary=log.item_keys)


def evaluate_model(model: ClickModel, log: ClickLog) -> dict[str, Any]:
    """Held-out quality of ``model`` on ``log``.

    A fitted model remembers the (query, document) pairs of its training log
    (:attr:`ClickModel.vocabulary`); ``log`` is re-encoded in those codes
    (:meth:`ClickLog.encode_like`; pairs unseen in training get the prior mean and are counted
    in ``unseen_cells``), so a held-out log read on its own is scored right. A model without a
    vocabulary takes the log's codes as they are, and refuses a log with more pairs than it
    has parameters.

    Returns the mean log-likelihood per impression (natural log), the perplexity per rank and
    its mean over ranks (lower is better, 1 is perfect, 2 is a coin flip).
    """
    log = _in_model_codes(model, log)
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


def _in_model_codes(model: ClickModel, log: ClickLog) -> ClickLog:
    """``log`` in the item codes of ``model`` (see :func:`evaluate_model`)."""
    if not isinstance(log, ClickLog):
        raise OptionError(f"evaluate_model needs a ClickLog; got {type(log).__name__}.")
    if model.vocabulary is not None:
        return log.encode_like(model.vocabulary)
    if model.n_items not in (log.n_items, log.n_items + 1):
        raise InputError(
            f"{log.source}: the log numbers {log.n_items:,} (query, document) pairs but {model.name} has "
            f"parameters for {model.n_items:,} items and no vocabulary to map them. Fit the model with "
            "fit_pbm / fit_dbn / fit_dcm (a fitted model re-encodes held-out logs itself), or call "
            "log.encode_like(training_log) first."
        )
    return log
