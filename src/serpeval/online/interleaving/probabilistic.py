"""Probabilistic interleaving and multileaving (Hofmann, Whiteson & de Rijke, CIKM 2011) with
marginalised credit.

**Drafting.** Each ranker s turns its ranking into a softmax over *all* documents of the
rankings, ``P_s(d) ∝ rank_s(d) ** -tau`` (tau = 3 by default, as in Lerot and mpkato); a
document missing from ranking s gets rank ``len(s) + 1`` there, so every document has a
non-zero probability under every ranker (the method's "fidelity"). For each slot a ranker is
chosen uniformly at random, *with* replacement, and draws a document from its softmax
renormalised over the documents not yet shown. The result records, per slot, every ranker's
probability of drawing the shown document.

**Marginalised credit.** Given the shown list I, the assignment of slots to rankers has the
posterior ``P(a | I) ∝ Π_i P_{a_i}(I_i | unplaced_i)`` - a product over slots, so slot i
belongs to ranker s with ``q_is = p_is / Σ_s' p_is'`` independently. A ranker's credit is its
expected number of clicked slots, ``Σ_{i clicked} q_is``; the preference of i over j is the
exact ``E[sign(h_i - h_j)]`` over assignments (a convolution over the clicked slots, not a
sample). Exact for any number of rankers because the ranker choice is with replacement. The
convolution is run in both directions and averaged (``_preference``), so the matrix is
exactly antisymmetric and two identical rankers get exactly 0.0, not floating-point noise
that a test over many impressions would call a preference.

**Outcome** (two rankers): the marginalised outcome ``E[sign(h_A - h_B) | list, clicks]``
itself, a number in [-1, 1], not its sign. It is the conditional expectation of the outcome
of the sampled assignment, so its mean has the same expectation - zero when clicks ignore
the documents, because the assignment is uniform and independent of the clicks (Hofmann et
al. 2011, §4). Its sign is biased: with A = d0..d3 and B = d3, d0, d1, d2 and independent
random clicks, an exact enumeration of every drafting path gives E[sign] != 0 while
E[marginalised outcome] = 0 (a regression test).

Cost: it can show a low-ranked document near the top (it is not "considerate").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.online.interleaving._result import (
    NEUTRAL,
    DocId,
    Interleaving,
    Outcome,
    check_clicks,
    rank_table,
)

NAME = "probabilistic"
MAX_RANKERS = None
#: Unbiased under random clicks: the mean outcome is zero when clicks ignore the documents.
BIASED = False
_TIE = 1e-12


def interleave(rankings: list[list[DocId]], k: int, rng: np.random.Generator, *,
               tau: float = 3.0) -> Interleaving:
    """Sample ``k`` documents from the rankers' softmaxes (validated by the caller)."""
    if not isinstance(tau, (int, float)) or isinstance(tau, bool) or not tau > 0:
        raise OptionError(f"tau must be a positive number (the softmax's steepness); got {tau!r}.")
    union = list(dict.fromkeys(d for ranking in rankings for d in ranking))
    ranks = np.array(rank_table(rankings, union), dtype=np.float64)  # [rankers, docs]
    lengths = np.array([len(r) for r in rankings], dtype=np.float64)
    ranks = np.where(ranks > 0, ranks, lengths[:, None] + 1.0)
    weights = ranks ** -float(tau)
    unplaced = np.ones(len(union), dtype=bool)
    picks = rng.random((k, 2))
    chosen_docs: list[int] = []
    teams: list[int] = []
    probs: list[tuple[float, ...]] = []
    n = len(rankings)
    for i in range(k):
        team = int(picks[i, 0] * n)
        live = np.where(unplaced, weights, 0.0)
        totals = live.sum(axis=1)
        cdf = np.cumsum(live[team]) / totals[team]
        doc = int(min(np.searchsorted(cdf, picks[i, 1], side="right"), len(union) - 1))
        while not unplaced[doc]:  # pragma: no cover - float edge: never land on a placed doc
            doc -= 1
        probs.append(tuple(float(p) for p in weights[:, doc] / totals))
        unplaced[doc] = False
        chosen_docs.append(doc)
        teams.append(team)
    docs = [union[d] for d in chosen_docs]
    return Interleaving(
        method=NAME, docs=tuple(docs), teams=tuple(teams), ranks=rank_table(rankings, docs),
        lengths=tuple(len(r) for r in rankings), first=teams[0] if teams else NEUTRAL,
        probabilities=tuple(probs), params={"tau": float(tau)},
    )


def _sign_expectation(plus: np.ndarray, minus: np.ndarray) -> float:
    """E[sign(Σ X_i)] for independent X_i in {+1 (plus_i), -1 (minus_i), 0 (the rest)}.

    One direction of the convolution: rounding makes it differ from
    ``-_sign_expectation(minus, plus)`` by about 1e-16, and from 0 when ``plus == minus``;
    :func:`_preference` evaluates both directions.
    """
    m = len(plus)
    dist = np.zeros(2 * m + 1)
    dist[m] = 1.0
    for p, q in zip(plus.tolist(), minus.tolist(), strict=True):
        dist = dist * (1.0 - p - q) + np.roll(dist, 1) * p + np.roll(dist, -1) * q
    return float(dist[m + 1:].sum() - dist[:m].sum())


def _preference(plus: np.ndarray, minus: np.ndarray) -> float:
    """E[sign(h_i - h_j)], computed so that it is exactly antisymmetric and exactly 0 for
    identical rankers: ``(f(plus, minus) - f(minus, plus)) / 2`` with ``f`` =
    :func:`_sign_expectation`, equal in exact arithmetic (``f(minus, plus) = -f(plus,
    minus)``). When rankers i and j drew every clicked slot with the same probabilities
    (identical rankings) both terms are the same floating-point computation and cancel to
    0.0; swapping i and j negates the result bit for bit. (One direction alone left about
    1e-16 of noise, which a t-test over many impressions of identical rankers called
    significant.)
    """
    return (_sign_expectation(plus, minus) - _sign_expectation(minus, plus)) / 2.0


def credit(result: Interleaving, clicked_positions: Any) -> Outcome:
    """Marginalised credit (see the module docstring)."""
    clicks = check_clicks(result, clicked_positions)
    if result.probabilities is None:
        raise OptionError("this interleaving has no slot probabilities; was it made by "
                          "method='probabilistic'?")
    p = np.array(result.probabilities, dtype=np.float64)  # [slots, rankers]
    q = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
    q_clicked = q[list(clicks)] if clicks else np.zeros((0, result.n_rankers))
    credits = q_clicked.sum(axis=0)
    n = result.n_rankers
    prefs = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            e = _preference(q_clicked[:, i], q_clicked[:, j]) if clicks else 0.0
            prefs[i, j], prefs[j, i] = e, -e
    best = [s for s in range(n) if all(prefs[s, t] > _TIE for t in range(n) if t != s)]
    winner = best[0] if best else None
    expected: float | None = None
    if n == 2:
        # Rounded so that swapping A and B mirrors the outcome exactly.
        expected = round(float(prefs[0, 1]), 12) if abs(prefs[0, 1]) > _TIE else 0.0
        outcome: float = expected
    else:
        outcome = 0 if winner is None else (1 if winner == 0 else -1)
    return Outcome(tuple(float(c) for c in credits), outcome, winner,
                   tuple(tuple(float(v) for v in row) for row in prefs), clicks, 0, expected)
