"""Probabilistic interleaving and multileaving (Hofmann, Whiteson & de Rijke, CIKM 2011) with
marginalised credit.

**Drafting.** Each ranker s turns its ranking into a softmax over *all* documents of the
rankings, ``P_s(d) ∝ rank_s(d) ** -tau`` (tau = 3 by default, as in Lerot and mpkato); a
document missing from ranking s gets rank ``len(s) + 1`` there, so every document has a
non-zero probability under every ranker (the method's "fidelity"; a ``tau`` so steep that a
weight underflows to zero is refused, :func:`check_tau`). For each slot a ranker is
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

import math
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import as_generator
from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving._result import (
    NEUTRAL,
    DocId,
    Interleaving,
    Outcome,
    check_clicks,
    check_rankings,
    rank_table,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

NAME = "probabilistic"
MAX_RANKERS = None
#: Unbiased under random clicks: the mean outcome is zero when clicks ignore the documents.
BIASED = False
_TIE = 1e-12


def _pairwise(values: list[float], lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``values[lo:lo + n]`` (``pairwise_sum`` in its add loop)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += values[i]
        return res
    if n <= 128:
        r = values[lo:lo + 8]
        i = 8
        while i < n - n % 8:
            r = [r[j] + values[lo + i + j] for j in range(8)]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for t in range(lo + i, lo + n):
            res += values[t]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(values, lo, half) + _pairwise(values, lo + half, n - half)


def _np_sum(values: list[float]) -> float:
    """``float(np.array(values).sum())`` bit for bit, in Python floats (the same additions in
    the same order; a test pins it against NumPy for lengths 0..300): for the short lists here
    NumPy's per-call overhead cost more than the sums."""
    return _pairwise(values, 0, len(values))


#: ``-ln`` of the smallest normal float: a weight ``rank ** -tau`` below it underflows (to a
#: subnormal or to 0.0), and the softmax silently loses documents.
_LOG_TINY = -float(np.log(np.finfo(np.float64).tiny))


def check_tau(tau: float, longest: int) -> float:
    """``tau`` as a float, refused unless it is positive and every softmax weight
    ``rank ** -tau`` of rankings up to ``longest`` documents is a normal float.

    The lowest weight belongs to a document missing from the longest ranking, rank
    ``longest + 1``. Past ``tau = -ln(tiny) / ln(longest + 1)`` (295 for rankings of 10, 189
    for 42) it underflows, the drafting divides 0 by 0 and the credit is NaN; the softmax is
    then deterministic in all but name (the top remaining document has all the mass), so
    the limit costs nothing.
    """
    if not isinstance(tau, (int, float, np.integer, np.floating)) or isinstance(tau, bool) or not tau > 0:
        raise OptionError(f"tau must be a positive number (the softmax's steepness); got {tau!r}.")
    tau = float(tau)
    limit = _LOG_TINY / float(np.log(longest + 1)) if longest >= 1 else float("inf")
    if tau > limit:
        raise OptionError(
            f"tau={tau:g} is too steep for rankings of {longest} documents: the softmax weight "
            f"{longest + 1} ** -{tau:g} of a document at rank {longest + 1} underflows to zero in "
            f"floating point and the drafting and credit would be NaN. Use tau <= {math.floor(limit * 100) / 100:g} "
            "(already practically deterministic: the top remaining document gets nearly all the mass).")
    return tau


def interleave(rankings: list[list[DocId]], k: int, rng: np.random.Generator, *,
               tau: float = 3.0) -> Interleaving:
    """Sample ``k`` documents from the rankers' softmaxes (validated by the caller)."""
    tau = check_tau(tau, max(len(r) for r in rankings))
    union = list(dict.fromkeys(d for ranking in rankings for d in ranking))
    ranks = np.array(rank_table(rankings, union), dtype=np.float64)  # [rankers, docs]
    lengths = np.array([len(r) for r in rankings], dtype=np.float64)
    ranks = np.where(ranks > 0, ranks, lengths[:, None] + 1.0)
    weights = (ranks ** -float(tau)).tolist()
    unplaced = [True] * len(union)
    live = [list(row) for row in weights]  # the weights of the documents not yet placed, 0 for the placed ones
    chosen_docs: list[int] = []
    teams: list[int] = []
    probs: list[tuple[float, ...]] = []
    n = len(rankings)
    last = len(union) - 1
    # In Python floats, the operations of the NumPy version (``live.sum(axis=1)``, one
    # pairwise sum per row; ``cumsum``, a running sum; the quotients; ``searchsorted(side=
    # "right")``, bisect_right) on the same values, so the same draws and probabilities; a
    # total of 0.0 (weights underflowed) is divided by NumPy, as before.
    for pick_team, pick_doc in rng.random((k, 2)).tolist():
        team = int(pick_team * n)
        totals = [_np_sum(row) for row in live]
        total = totals[team]
        if total != 0.0:
            cdf = [v / total for v in accumulate(live[team])]
        else:  # pragma: no cover - only weights that underflow to 0 get here
            cdf = (np.cumsum(live[team]) / np.float64(total)).tolist()
        doc = min(bisect_right(cdf, pick_doc), last)
        while not unplaced[doc]:  # pragma: no cover - float edge: never land on a placed doc
            doc -= 1
        if 0.0 in totals:  # pragma: no cover - as above
            probs.append(tuple((np.array([w[doc] for w in weights]) / np.array(totals)).tolist()))
        else:
            probs.append(tuple(w[doc] / t for w, t in zip(weights, totals, strict=True)))
        unplaced[doc] = False
        for row in live:
            row[doc] = 0.0
        chosen_docs.append(doc)
        teams.append(team)
    docs = [union[d] for d in chosen_docs]
    return Interleaving(
        method=NAME, docs=tuple(docs), teams=tuple(teams), ranks=rank_table(rankings, docs),
        lengths=tuple(len(r) for r in rankings), first=teams[0] if teams else NEUTRAL,
        probabilities=tuple(probs), params={"tau": float(tau)},
    )


def _sign_expectation(plus: np.ndarray | list[float], minus: np.ndarray | list[float]) -> float:
    """E[sign(Σ X_i)] for independent X_i in {+1 (plus_i), -1 (minus_i), 0 (the rest)}.

    One direction of the convolution: rounding makes it differ from
    ``-_sign_expectation(minus, plus)`` by about 1e-16, and from 0 when ``plus == minus``;
    :func:`_preference` evaluates both directions.
    """
    m = len(plus)
    # ``dist`` over the sums -m..m, updated by ``dist (1 - p - q) + roll(dist, 1) p +
    # roll(dist, -1) q`` per slot. In Python floats: the same IEEE operations in the same order
    # as that NumPy expression (the rolls are data movement), so the same bits, at a sixth of
    # the cost for the few clicked slots of a list (numpy's per-call overhead dominated).
    dist = [0.0] * (2 * m + 1)
    dist[m] = 1.0
    if isinstance(plus, np.ndarray):
        plus = plus.tolist()
    if isinstance(minus, np.ndarray):
        minus = minus.tolist()
    for p, q in zip(plus, minus, strict=True):
        stay = 1.0 - p - q
        dist = [d * stay + below * p + above * q
                for d, below, above in zip(dist, [dist[-1], *dist[:-1]], [*dist[1:], dist[0]], strict=True)]
    return _np_sum(dist[m + 1:]) - _np_sum(dist[:m])  # NumPy's (pairwise) sums, as before


def _preference(plus: np.ndarray | list[float], minus: np.ndarray | list[float]) -> float:
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
    # The preference matrix in Python floats (the values a float array would hold and give
    # back), each ranker's clicked-slot probabilities as a list.
    prefs = [[0.0] * n for _ in range(n)]
    columns = q_clicked.T.tolist()
    for i in range(n):
        for j in range(i + 1, n):
            e = _preference(columns[i], columns[j]) if clicks else 0.0
            prefs[i][j], prefs[j][i] = e, -e
    best = [s for s in range(n) if all(prefs[s][t] > _TIE for t in range(n) if t != s)]
    winner = best[0] if best else None
    expected: float | None = None
    if n == 2:
        # Rounded so that swapping A and B mirrors the outcome exactly.
        expected = round(prefs[0][1], 12) if abs(prefs[0][1]) > _TIE else 0.0
        outcome: float = expected
    else:
        outcome = 0 if winner is None else (1 if winner == 0 else -1)
    return Outcome(tuple(credits.tolist()), outcome, winner, tuple(map(tuple, prefs)), clicks, 0, expected)


# ====================================================================== propensities
# What a counterfactual estimator needs from a probabilistic-interleaving log (issue 32):
# the exact probability of the list that was shown, of each of its prefixes, and of each
# document at each position, under the pair of rankers that was interleaved. Everything is
# recomputed exactly from the logged rankings and tau (no sampling).

#: The largest union of documents whose position marginals are computed exactly (a dynamic
#: programme over the 2**N sets of placed documents: N = 20 is 1M states, ~0.2 s).
MAX_MARGINAL_DOCS = 20


@dataclass(frozen=True)
class Propensities:
    """Exact logging probabilities of one shown list (0-based positions).

    Attributes:
        design: ``"probabilistic"`` (probabilistic interleaving) or ``"ab"`` (an A/B split).
        list_probability: P(the whole shown list) under the logging design.
        prefix: ``prefix[j]`` = P(the first ``j + 1`` shown documents, in that order).
        positions: ``positions[j]`` = P(the document shown at ``j`` is shown at ``j``): the
            marginal over every way the slots above could have been filled (None when the
            union holds more than :data:`MAX_MARGINAL_DOCS` documents).
        slots: probabilistic only: ``slots[j][s]`` = P(ranker s draws ``shown[j]`` from the
            documents still unplaced at ``j``) (the ``probabilities`` of an interleaving).
    """

    design: str
    list_probability: float
    prefix: tuple[float, ...]
    positions: tuple[float, ...] | None
    slots: tuple[tuple[float, ...], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The log fields (docs/explanation/counterfactual-logs.md)."""
        return {"logging_design": self.design, "propensity": self.list_probability,
                "prefix_propensities": list(self.prefix),
                "position_propensities": None if self.positions is None else list(self.positions)}


def softmax_weights(rankings: Sequence[NDArray[np.int64]], n_docs: int, tau: float = 3.0) -> NDArray[np.float64]:
    """``W[n, r, N]``: ranker r's unnormalised softmax weight ``rank ** -tau`` of local
    document code d in impression n.

    ``rankings[r]`` is ``int[n, m]`` local codes (``0 .. n_docs - 1``) best first, ``-1``
    padded. A document of the impression's union that ranking r lacks gets rank
    ``len_r + 1`` (as :func:`interleave` does); a code in no ranking of the impression gets
    weight 0 (it can never be drawn).
    """
    arrays = [np.asarray(r, dtype=np.int64) for r in rankings]
    tau = check_tau(tau, max((int(arr.shape[1]) for arr in arrays if arr.ndim == 2), default=0))
    n = len(arrays[0])
    rows = np.arange(n)[:, None]
    ranks = np.zeros((n, len(arrays), n_docs))
    for s, arr in enumerate(arrays):
        valid = arr >= 0
        pos = np.broadcast_to(np.arange(1, arr.shape[1] + 1, dtype=np.float64), arr.shape)
        ranks[np.broadcast_to(rows, arr.shape)[valid], s, arr[valid]] = pos[valid]
    in_union: NDArray[np.bool_] = np.asarray((ranks > 0).any(axis=1))  # [n, N]
    lengths = np.stack([(arr >= 0).sum(axis=1) for arr in arrays], axis=1).astype(np.float64)  # [n, r]
    ranks = np.where(ranks > 0, ranks, lengths[:, :, None] + 1.0)
    return np.where(in_union[:, None, :], ranks ** -float(tau), 0.0)


def _mean_over_rankers(terms: Iterator[NDArray[np.float64]], r: int) -> NDArray[np.float64]:
    """The mean of the ``r`` arrays of ``terms`` (one per ranker) as NumPy's mean over a last
    axis of length ``r`` gives it, without that ``[..., r]`` array below 8 rankers: there NumPy
    adds the values left to right and divides by ``r``, done here a term at a time (the same
    bits); from 8 on (pairwise sums) the terms are stacked and NumPy takes the mean. ``r >= 1``."""
    if r >= 8:
        return np.asarray(np.stack(list(terms), axis=-1).mean(axis=-1))
    total = np.array(next(terms), dtype=np.float64)  # a copy: a term may be a view
    for term in terms:
        total += term
    total /= r
    return total


def list_probabilities(weights: NDArray[np.float64], shown: NDArray[np.int64]
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(slots[n, k, r], prefix[n, k])`` of shown lists under probabilistic interleaving.

    ``slots[i, j, s]`` = ``W[i, s, shown[i, j]] / Σ_{d unplaced} W[i, s, d]`` (ranker s's
    probability of drawing the shown document at slot j); ``prefix[i, j]`` =
    ``Π_{l <= j} mean_s slots[i, l, s]`` (the ranker is chosen uniformly at each slot, with
    replacement, so the slots' probabilities multiply). An empty slot (``-1``) has
    probability 1; a document of weight 0 makes the list impossible (probability 0).
    One NumPy step per slot, never a loop per impression.
    """
    w = np.asarray(weights, dtype=np.float64)
    docs = np.asarray(shown, dtype=np.int64)
    n, r, _ = w.shape
    k = docs.shape[1]
    total = w.sum(axis=2)  # [n, r]
    slots = np.ones((n, k, r))
    prefix = np.ones((n, k))
    running = np.ones(n)
    rows = np.arange(n)
    for j in range(k):
        d = docs[:, j]
        here = d >= 0
        w_d = w[rows, :, np.maximum(d, 0)] * here[:, None]  # [n, r]
        p = np.where(here[:, None], w_d / np.maximum(total, 1e-300), 1.0)
        slots[:, j] = p
        running = running * _mean_over_rankers((p[:, s] for s in range(p.shape[1])), p.shape[1])
        prefix[:, j] = running
        total = total - w_d
    return slots, prefix


def position_marginals(weights: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``M[N, k]``: exact P(document d is shown at position j) for one impression's
    ``weights[r, N]`` (a row of :func:`softmax_weights`), summed over every way to fill the
    slots above.

    The draw at a slot depends on the slots above only through the *set* of documents
    placed, so a dynamic programme over those sets is exact: ``P(S ∪ {d}) += P(S) p(d | S)``
    with ``p(d | S) = mean_s W_sd / (W_s - Σ_{e in S} W_se)``; ``M[d, |S|] = Σ_S P(S) p(d | S)``.
    Each column sums to 1 (while documents remain). Cost O(2^N N) for N documents with
    non-zero weight: refused above :data:`MAX_MARGINAL_DOCS`.
    """
    w_all = np.asarray(weights, dtype=np.float64)
    live = np.flatnonzero((w_all > 0).any(axis=0))
    n_live = len(live)
    if n_live > MAX_MARGINAL_DOCS:
        raise OptionError(
            f"exact position marginals need at most {MAX_MARGINAL_DOCS} documents in the union of "
            f"the rankings; this one has {n_live}. Interleave shorter rankings (k <= 10 of each "
            "ranker) or use the list and prefix probabilities, which are exact at any size.")
    w = w_all[:, live]  # [r, N]
    out = np.zeros((w_all.shape[1], k))
    depth = min(k, n_live)
    if depth == 0:
        return out
    full = 1 << n_live
    masks = np.arange(full, dtype=np.int64)
    n_rankers = w.shape[0]
    # placed[s, S] = Σ_{e in S} W_se, added in increasing e. The sets whose largest member is
    # d are [2^d, 2^(d+1)), each the set 2^d below it plus d: one addition per set and ranker,
    # in the same order as adding W_d to every set holding d, d = 0, 1, ... (the same bits).
    placed = np.zeros((n_rankers, full))
    popcount = np.zeros(full, dtype=np.int64)
    for d in range(n_live):
        low, high = 1 << d, 2 << d
        np.add(placed[:, :low], w[:, d:d + 1], out=placed[:, low:high])
        np.add(popcount[:low], 1, out=popcount[low:high])
    totals = w.sum(axis=1)
    prob = np.zeros(full)
    prob[0] = 1.0
    bits = np.left_shift(1, np.arange(n_live, dtype=np.int64))
    for j in range(depth):
        level = masks[popcount == j]
        level = level[prob[level] > 0]
        remaining = totals[None, :] - placed[:, level].T  # [L, r]
        free = (level[:, None] & bits[None, :]) == 0  # [L, N]
        # mean_s W_sd / remaining_s, [L, N]
        denominator = np.maximum(remaining, 1e-300)
        p = _mean_over_rankers((w[s][None, :] / denominator[:, s:s + 1] for s in range(n_rankers)), n_rankers)
        p *= free
        flow = prob[level][:, None] * p
        out[live, j] = flow.sum(axis=0)
        if j + 1 < depth:
            nxt = (level[:, None] | bits[None, :])[free]
            prob += np.bincount(nxt, weights=flow[free], minlength=full)
    return out


def interleave_batch(weights: NDArray[np.float64], k: int, rng: int | np.random.Generator | None = None
                     ) -> tuple[NDArray[np.int64], NDArray[np.int8]]:
    """Probabilistic interleaving of many impressions at once: ``(docs[n, k], teams[n, k])``.

    ``weights[n, r, N]`` from :func:`softmax_weights`. The same drafting as
    :func:`interleave` (a ranker uniformly at random per slot, with replacement, then a
    document from its softmax over the unplaced documents), one NumPy step per slot.
    Slots past the union stay empty (``-1``, team -1).
    """

    generator = as_generator(rng)
    w = np.array(weights, dtype=np.float64)
    n, r, n_docs = w.shape
    rows = np.arange(n)
    docs = np.full((n, k), -1, dtype=np.int64)
    teams = np.full((n, k), -1, dtype=np.int8)
    for j in range(k):
        team = generator.integers(0, r, n)
        live = w[rows, team]  # [n, N]
        total = live.sum(axis=1)
        has = total > 0
        cdf = np.cumsum(live, axis=1)
        u = generator.random(n) * total
        doc = np.minimum(np.count_nonzero(cdf <= u[:, None], axis=1), n_docs - 1)
        edge = np.flatnonzero(~(live[rows, doc] > 0))  # float edge at the top: the first live document
        if len(edge):
            doc[edge] = np.argmax(live[edge] > 0, axis=1)
        docs[:, j] = np.where(has, doc, -1)
        teams[:, j] = np.where(has, team, -1)
        w[rows[has], :, doc[has]] = 0.0
    return docs, teams


def propensities(rankings: Any, shown: Sequence[DocId], *, tau: float = 3.0,
                 marginals: bool = True) -> Propensities:
    """Exact logging propensities of one probabilistic interleaving (serving time).

    ``rankings``: the interleaved rankings (A first), as given to :func:`interleave`;
    ``shown``: the documents shown, top first. Returns the list, prefix and per-position
    probabilities (:class:`Propensities`). A shown document in no ranking is an error.

    Examples:
        >>> p = propensities([["a", "b"], ["b", "a"]], ["a", "b"])
        >>> round(p.list_probability, 6)   # slot 1: (8/9 + 1/9) / 2; slot 2: 1
        0.5
        >>> [round(x, 6) for x in p.positions]
        [0.5, 0.5]
    """

    checked = check_rankings(rankings, MAX_RANKERS, NAME)
    union = list(dict.fromkeys(d for ranking in checked for d in ranking))
    code = {d: i for i, d in enumerate(union)}
    missing = [d for d in shown if d not in code]
    if missing:
        raise InputError(f"shown document {missing[0]!r} is in none of the interleaved rankings; "
                         "propensities need the rankings that produced the list.")
    if len(set(shown)) != len(shown):
        raise InputError("the shown list holds a document twice.")
    codes = [np.array([[code[d] for d in r]], dtype=np.int64) for r in checked]
    w = softmax_weights(codes, len(union), tau)
    seen = np.array([[code[d] for d in shown]], dtype=np.int64)
    slots, prefix = list_probabilities(w, seen)
    positions: tuple[float, ...] | None = None
    if marginals and len(union) <= MAX_MARGINAL_DOCS:
        m = position_marginals(w[0], len(shown))
        positions = tuple(float(m[c, j]) for j, c in enumerate(seen[0]))
    return Propensities(NAME, float(prefix[0, -1]) if len(shown) else 1.0,
                        tuple(float(x) for x in prefix[0]), positions,
                        tuple(tuple(float(x) for x in row) for row in slots[0]))


def ab_propensities(arm_rankings: Sequence[Sequence[DocId]], shares: Sequence[float],
                    shown: Sequence[DocId]) -> Propensities:
    """Exact logging propensities of a list shown in an A/B test (deterministic rankers).

    With arm a shown to a share ``p_a`` of the traffic and ranking ``R_a``, the list's
    probability is ``Σ_a p_a [R_a[:k] = shown]``, a prefix's ``Σ_a p_a [R_a[:j] = shown[:j]]``
    and a position's ``Σ_a p_a [R_a[j] = shown[j]]``: a document only one arm shows there
    has the arm's share; a list no arm shows has probability 0 (a candidate's list is
    supported only where it equals an arm's).
    """
    if len(arm_rankings) != len(shares) or not shares:
        raise OptionError(f"one traffic share per arm; got {len(arm_rankings)} rankings and {len(shares)} shares.")
    p = np.asarray(shares, dtype=np.float64)
    if not (np.all(p > 0) and abs(p.sum() - 1.0) < 1e-9):
        raise OptionError(f"arm shares must be positive and sum to 1; got {list(shares)!r}.")
    k = len(shown)
    match = np.array([[j < len(r) and r[j] == shown[j] for j in range(k)] for r in arm_rankings], dtype=bool)
    prefix_match = np.cumprod(match, axis=1).astype(bool) if k else match
    prefix = p @ prefix_match if k else np.zeros(0)
    positions = p @ match if k else np.zeros(0)
    exact = np.array([len(r) >= k and bool(prefix_match[a, -1]) if k else True
                      for a, r in enumerate(arm_rankings)])
    return Propensities("ab", float(p @ exact), tuple(float(x) for x in prefix),
                        tuple(float(x) for x in positions))


#: The largest union for exact pairwise (two-position) marginals: the programme carries the
#: document placed at the first position along the sets, ``2**N x N`` states.
MAX_PAIRWISE_DOCS = 14


def pairwise_marginals(weights: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``G[k, N, k, N]``: exact P(d at position j and e at position l) for one impression's
    ``weights[r, N]`` (the second-moment matrix Γ of the slate indicator that Swaminathan et
    al.'s pseudo-inverse estimator needs). The diagonal blocks are the position marginals
    (:func:`position_marginals`); an off-diagonal block ``j < l`` runs the same programme over
    (placed set, document at j) from level j on. Refused above :data:`MAX_PAIRWISE_DOCS`.
    """
    w_all = np.asarray(weights, dtype=np.float64)
    live = np.flatnonzero((w_all > 0).any(axis=0))
    n_live = len(live)
    if n_live > MAX_PAIRWISE_DOCS:
        raise OptionError(f"exact pairwise marginals need at most {MAX_PAIRWISE_DOCS} documents in the union "
                          f"of the rankings; this one has {n_live} (use a smaller k).")
    n_all = w_all.shape[1]
    out = np.zeros((k, n_all, k, n_all))
    depth = min(k, n_live)
    if depth == 0:
        return out
    w = w_all[:, live]
    full = 1 << n_live
    masks = np.arange(full, dtype=np.int64)
    placed = np.zeros((w.shape[0], full))
    popcount = np.zeros(full, dtype=np.int64)
    for d in range(n_live):
        bit = ((masks >> d) & 1).astype(bool)
        placed[:, bit] += w[:, d:d + 1]
        popcount += bit
    bits = np.left_shift(1, np.arange(n_live, dtype=np.int64))
    free_all = (masks[:, None] & bits[None, :]) == 0
    remaining = w.sum(axis=1)[None, :] - placed.T  # [full, r]
    step = (w.T[None, :, :] / np.maximum(remaining[:, None, :], 1e-300)).mean(axis=2) * free_all  # p(e | S)
    prob = np.zeros(full)
    prob[0] = 1.0
    ix = np.ix_(live, live)
    for j in range(depth):
        level = masks[popcount == j]
        flow = prob[level][:, None] * step[level]  # [L, N]: P(S) p(d | S)
        block = np.zeros((n_live, n_live))
        np.fill_diagonal(block, flow.sum(axis=0))
        out[j][:, j][ix] = block
        # carry the document placed at j along: marked[mask, d]
        marked = np.zeros((full, n_live))
        rows, cols = np.nonzero(flow)
        np.add.at(marked, (level[rows] | bits[cols], cols), flow[rows, cols])
        for lev in range(j + 1, depth):
            at = masks[popcount == lev]
            mk = marked[at]  # [L, N(d)]
            pair = mk.T @ step[at]  # [N(d), N(e)]
            out[j][:, lev][ix] = pair
            out[lev][:, j][ix] = pair.T
            if lev + 1 < depth:
                nxt = np.zeros((full, n_live))
                src, e = np.nonzero(step[at])
                contrib = mk[src] * step[at][src, e][:, None]  # [pairs, N(d)]
                np.add.at(nxt, at[src] | bits[e], contrib)
                marked = nxt
        if j + 1 < depth:
            nxt_rows, nxt_cols = np.nonzero(free_all[level] & (flow > 0))
            prob += np.bincount(level[nxt_rows] | bits[nxt_cols], weights=flow[nxt_rows, nxt_cols], minlength=full)
    return out
