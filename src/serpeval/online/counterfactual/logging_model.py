"""The logging design's exact probabilities over a :class:`CounterfactualLog`.

- probabilistic interleaving (Hofmann, Whiteson & de Rijke 2011): per context the softmax
  weights ``rank ** -tau`` of the logged rankings (:func:`~serpeval.online.interleaving.
  probabilistic.softmax_weights`); prefix and list probabilities of any list by
  :func:`~serpeval.online.interleaving.probabilistic.list_probabilities`, position marginals
  by the exact dynamic programme :func:`~serpeval.online.interleaving.probabilistic.
  position_marginals` (one per context: the programme is per query by nature, vectorized over
  its 2^N placed sets);
- an A/B split: arm a shows its ranking R_a to a share p_a; a prefix has probability
  ``Σ_a p_a [R_a prefix = prefix]``, document d at position j ``Σ_a p_a [R_a[j] = d]``.

Lists are local codes of their context; ``width`` is the padded number of codes (a
candidate's documents outside the logging union get codes past the union, weight 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.errors import InputError
from serpeval.online.interleaving.probabilistic import (
    list_probabilities,
    pairwise_marginals,
    position_marginals,
    softmax_weights,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.online.counterfactual.log import CounterfactualLog

__all__ = ["LoggingModel", "logging_model", "padded"]

_CHUNK = 200_000


def padded(lists: list[list[int]], width: int | None = None) -> NDArray[np.int64]:
    """Ragged lists of codes as an ``int64[len, width]`` array padded with -1."""
    width = max((len(x) for x in lists), default=0) if width is None else width
    out = np.full((len(lists), width), -1, dtype=np.int64)
    for i, x in enumerate(lists):  # one per context
        out[i, :min(len(x), width)] = x[:width]
    return out


class LoggingModel:
    """Exact logging probabilities for the contexts of one log."""

    def __init__(self, log: CounterfactualLog, width: int | None = None) -> None:
        self.log = log
        self.k = log.k
        self.union = np.array([len(d) for d in log.context_docs], dtype=np.int64)
        self.width = int(max(self.union.max(initial=1), width or 0))
        n_rankers = max(len(r) for r in log.context_rankings)
        self.rankings = [padded([r[s] if s < len(r) else [] for r in log.context_rankings])
                         for s in range(n_rankers)]
        self._marginals: NDArray[np.float64] | None = None
        self._pairwise: NDArray[np.float64] | None = None

    # -------------------------------------------------------------- weights
    def context_weights(self, rankings: list[NDArray[np.int64]] | None = None, width: int | None = None,
                        tau: float | None = None) -> NDArray[np.float64]:
        """``W[n_ctx, r, width]`` softmax weights of ``rankings`` (default: the logging ones)."""
        return softmax_weights(self.rankings if rankings is None else rankings, width or self.width,
                               self.log.tau if tau is None else tau)

    def prefix(self, lists: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """``P[n, k]``: logging probability of each impression's list prefix (default: the shown
        lists; else ``lists[n, k]`` per impression)."""
        shown = self.log.shown if lists is None else lists
        if self.log.design == "ab":
            return self._ab_prefix(shown)
        w_ctx = self.context_weights(width=max(self.width, int(shown.max(initial=0)) + 1))
        return prefix_under(w_ctx, self.log.context, shown)

    def _ab_prefix(self, shown: NDArray[np.int64]) -> NDArray[np.float64]:
        shares = np.asarray(self.log.shares, dtype=np.float64)
        out = np.zeros(shown.shape)
        k = shown.shape[1]
        for a, ranking in enumerate(self.rankings):  # one per arm
            arm = _fit(ranking, k)[self.log.context]
            out += shares[a] * np.cumprod(arm == shown, axis=1)
        return out

    def check_logged(self) -> None:
        """Refuse a shown list the design could not have drawn (recomputed probability 0: under
        an A/B split, a list no arm shows), and a logged ``propensity`` that differs from the
        recomputed list probability (relative tolerance :data:`~.log.PROPENSITY_RTOL`; a NaN,
        an empty cell, is not checked). Either means the log's rankings, tau or shares are not
        the ones its lists were drawn from, and every weight would be wrong."""
        from serpeval.online.counterfactual.log import PROPENSITY_RTOL

        exact = self.prefix()[:, -1]
        impossible = ~(exact > 0)
        if impossible.any():
            i = int(np.flatnonzero(impossible)[0])
            raise InputError(
                f"{self.log.source}: row {self._row(i)}: the shown list has probability 0 under the logged "
                f"design ({self.log.design}{': no arm shows it' if self.log.design == 'ab' else ''}) "
                f"({int(impossible.sum()):,} such rows); the log's logging_rankings, tau or shares are not the "
                "ones the lists were drawn from.")
        logged = self.log.logged_propensity
        if logged is None:
            return
        off = ~np.isclose(logged, exact, rtol=PROPENSITY_RTOL, atol=0.0) & ~np.isnan(logged)  # NaN: not logged
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise InputError(
                f"{self.log.source}: row {self._row(i)}: logged propensity {float(logged[i])!r} differs from "
                f"{float(exact[i])!r}, the probability of the shown list recomputed from logging_rankings "
                f"({self.log.design}); the log's rankings, tau or shares are not the ones the list was drawn "
                "from.")

    def _row(self, i: int) -> int:
        """Impression ``i``'s 1-based row in the log as read."""
        return i + 1 if self.log.row_numbers is None else int(self.log.row_numbers[i])

    def pairwise(self) -> NDArray[np.float64]:
        """``G[n_ctx, k, width, k, width]``: P(code d at j and code e at l) (cached); the
        second-moment matrix of the slate indicator (the pseudo-inverse estimator's Γ)."""
        if self._pairwise is None:
            n_ctx, k, width = len(self.union), self.k, self.width
            g = np.zeros((n_ctx, k, width, k, width))
            if self.log.design == "ab":
                shares = np.asarray(self.log.shares, dtype=np.float64)
                for a, ranking in enumerate(self.rankings):  # one per arm
                    arm = _fit(ranking, k)
                    ind = np.zeros((n_ctx, k, width))
                    rows, cols = np.nonzero(arm >= 0)
                    ind[rows, cols, arm[rows, cols]] = 1.0
                    g += shares[a] * np.einsum("cjd,cle->cjdle", ind, ind)
            else:
                w = self.context_weights()
                for c in range(n_ctx):  # the exact programme is per query
                    g[c] = pairwise_marginals(w[c], k)
            self._pairwise = g
        return self._pairwise

    def marginals(self) -> NDArray[np.float64]:
        """``M[n_ctx, width, k]``: P(code d at position j) under the logging design (cached)."""
        if self._marginals is None:
            n_ctx = len(self.union)
            m = np.zeros((n_ctx, self.width, self.k))
            if self.log.design == "ab":
                shares = np.asarray(self.log.shares, dtype=np.float64)
                rows = np.arange(n_ctx)[:, None]
                cols = np.arange(self.k)[None, :]
                for a, ranking in enumerate(self.rankings):
                    arm = _fit(ranking, self.k)
                    valid = arm >= 0
                    np.add.at(m, (np.broadcast_to(rows, arm.shape)[valid], arm[valid],
                                  np.broadcast_to(cols, arm.shape)[valid]), shares[a])
            else:
                w = self.context_weights()
                for c in range(n_ctx):  # the exact programme is per query (see the module docstring)
                    m[c] = position_marginals(w[c], self.k)
            self._marginals = m
        return self._marginals


def prefix_under(w_ctx: NDArray[np.float64], context: NDArray[np.int64], lists: NDArray[np.int64]
                 ) -> NDArray[np.float64]:
    """Prefix probabilities of ``lists[n, k]`` under probabilistic interleaving with the
    per-context weights ``w_ctx`` (impressions in chunks, to bound memory)."""
    out = np.empty(lists.shape)
    for start in range(0, len(lists), _CHUNK):
        stop = start + _CHUNK
        _, out[start:stop] = list_probabilities(w_ctx[context[start:stop]], lists[start:stop])
    return out


def slots_under(w_ctx: NDArray[np.float64], context: NDArray[np.int64], lists: NDArray[np.int64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(slots[n, k, r], prefix[n, k])`` of ``lists`` under the per-context weights."""
    n, k = lists.shape
    slots = np.empty((n, k, w_ctx.shape[1]))
    prefix = np.empty((n, k))
    for start in range(0, n, _CHUNK):
        stop = start + _CHUNK
        slots[start:stop], prefix[start:stop] = list_probabilities(w_ctx[context[start:stop]], lists[start:stop])
    return slots, prefix


def _fit(codes: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """``codes`` cut or -1-padded to ``k`` columns."""
    if codes.shape[1] >= k:
        return codes[:, :k]
    return np.pad(codes, ((0, 0), (0, k - codes.shape[1])), constant_values=-1)


def logging_model(log: CounterfactualLog, width: int | None = None) -> LoggingModel:
    """The :class:`LoggingModel` of ``log``."""
    return LoggingModel(log, width)
