"""Optimized interleaving (Radlinski & Craswell, WSDM 2013), solved with scipy's HiGHS LP.

**Allowed lists.** Every document shown is the top *remaining* document of A or of B, so each
prefix of the list is a union of prefixes of A and B: the user experience is preserved. All
such lists of length k are enumerated (at most 2^k; fewer when the rankings overlap); more
than :data:`MAX_LISTS` (2^16) is refused, since neither the enumeration nor the LP would end.

**Credit function.** ``g_s(d) = 1 / rank_s(d)`` ("inverse", default) or ``-rank_s(d)``
("linear"); a document missing from ranking s has rank ``len(s) + 1``. A click on d credits
``delta(d) = g_A(d) - g_B(d)``; a ranker's credit is the sum of g_s over the clicked
documents, and the outcome is the credit difference ``Σ_clicked delta`` itself (not its sign:
the LP below makes the *sum* zero in expectation under random clicks, and only the sum; the
sign is biased - with A = d0..d9, B = d3, d0, d1, d2, d4..d9 and random clicks it favours A,
p < 1e-10 in 4,000 impressions, a regression test). Its scale is that of the credit
function. Where the LP has no unbiased solution (``params["bias"]`` > :data:`BIAS_TOLERANCE`)
the outcome keeps that bias: :attr:`Outcome.bias` carries it, and
:func:`~serpeval.online.interleaving.analysis.analyze_outcomes` leaves such impressions out of
its statistics and reports how many and how large (per query, since the bias is a property of
the two rankings; ``allow_biased=True`` keeps them). This happens: rankings shorter than k, or
documents one ranker lacks, can leave no distribution with zero expected credit at every
cut-off (the issue's held-out check: with linear credit, 6 of 561 queries of real runs); uniform random clicks
can miss it (their expected credit is the k-th cut-off's only), position-biased ones do not,
so :func:`~serpeval.online.interleaving.analysis.aa_check` uses both.

**Distribution over lists.** The LP maximises the expected sensitivity ``Σ_L p_L s(L)``
subject to ``Σ p_L = 1``, ``p_L >= 0`` and, for every cut-off j = 1..k, unbiasedness:
``Σ_L p_L Σ_{i<=j} delta(L_i) = 0`` (a user clicking at random within the top j gives no
expected credit to either ranker). ``s(L)`` is the entropy of the outcome (A wins, B wins,
tie) of a user who clicks exactly one result, at position i with probability ∝ 1/i: lists
whose clicks decide something, in both directions, score high. (mpkato's implementation
minimises a credit-variance "insensitivity" instead; both are heuristics for the same aim.)
If no unbiased distribution exists the LP is solved with penalised slack and the remaining
bias is reported in ``params["bias"]`` and ``Outcome.bias`` - never silently.

The solved distribution depends only on (A, B, k, credit), so it is cached (LRU, 4096 pairs):
a serving system pays the LP once per distinct pair of rankings.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, get_args

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.online.interleaving._result import (
    NEUTRAL,
    DocId,
    Interleaving,
    Outcome,
    check_clicks,
    outcome_from_credits,
    rank_table,
)

NAME = "optimized"
MAX_RANKERS = 2
#: Unbiased under random clicks: the mean outcome is zero when clicks ignore the documents.
BIASED = False
CreditFunction = Literal["inverse", "linear"]
CREDIT_FUNCTIONS: tuple[CreditFunction, ...] = get_args(CreditFunction)
_PENALTY = 1e4
#: A design's bias above this is real, not the LP solver's rounding: of 1,200 random pairs
#: (3-8 documents each, k = 3-6, both credit functions) the feasible ones came out at most
#: 1e-14, the 131 infeasible ones at least 0.0056; on the top 10 of real runs (Robust04 BM25
#: vs BM25+RM3, 250 queries; Core18 title vs desc RM3, 50) feasible at most 4.4e-13, and one
#: Robust04 query infeasible with either credit function (bias 6.0 linear, 0.092 inverse).
BIAS_TOLERANCE = 1e-9


def _gain(rank: np.ndarray, credit_function: CreditFunction) -> np.ndarray:
    return 1.0 / rank if credit_function == "inverse" else -rank


#: The most allowed lists the LP is solved over (2^16: two disjoint rankings at k = 16, a few
#: seconds). Their number grows as 2^k when the rankings differ, so a larger k would enumerate
#: millions of lists and never return: :func:`allowed_lists` refuses it instead.
MAX_LISTS = 2**16


def allowed_lists(a: tuple[DocId, ...], b: tuple[DocId, ...], k: int) -> list[tuple[DocId, ...]]:
    """Every list of length k whose documents are each the top remaining of A or of B
    (at most :data:`MAX_LISTS`, else :class:`OptionError`)."""
    out: list[tuple[DocId, ...]] = []

    def head(ranking: tuple[DocId, ...], shown: set[DocId]) -> DocId | None:
        return next((d for d in ranking if d not in shown), None)

    def extend(prefix: list[DocId], shown: set[DocId]) -> None:
        if len(prefix) == k:
            if len(out) == MAX_LISTS:
                raise OptionError(
                    f"optimized interleaving at k={k}: these rankings allow more than {MAX_LISTS:,} "
                    "lists (up to 2^k when they differ), too many to solve the LP over. Show fewer "
                    "results (k <= 16 always works) or use method='team_draft' or 'probabilistic'.")
            out.append(tuple(prefix))
            return
        options = {doc for doc in (head(a, shown), head(b, shown)) if doc is not None}
        for doc in sorted(options, key=str):
            prefix.append(doc)
            shown.add(doc)
            extend(prefix, shown)
            shown.discard(doc)
            prefix.pop()

    extend([], set())
    return out


@lru_cache(maxsize=4096)
def distribution(a: tuple[DocId, ...], b: tuple[DocId, ...], k: int,
                 credit_function: CreditFunction) -> tuple[tuple[tuple[DocId, ...], ...], np.ndarray, float]:
    """``(lists, probabilities, bias)`` of the optimized interleaving of A and B."""
    from scipy.optimize import linprog

    lists = allowed_lists(a, b, k)
    ranks = np.array([rank_table([list(a), list(b)], lst) for lst in lists], dtype=np.float64)
    lengths = np.array([len(a), len(b)], dtype=np.float64)
    ranks = np.where(ranks > 0, ranks, lengths[None, :, None] + 1.0)  # [lists, 2, k]
    delta = _gain(ranks[:, 0], credit_function) - _gain(ranks[:, 1], credit_function)
    cumulative = np.cumsum(delta, axis=1)  # [lists, k]
    m = len(lists)
    weights = 1.0 / np.arange(1, k + 1)
    weights /= weights.sum()
    p_win = (weights * (delta > 0)).sum(axis=1)
    p_loss = (weights * (delta < 0)).sum(axis=1)
    p_tie = 1.0 - p_win - p_loss
    parts = np.stack([p_win, p_loss, p_tie], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        sensitivity = -np.where(parts > 0, parts * np.log(parts), 0.0).sum(axis=1)
    # Variables: p (m), then slack+ (k), slack- (k); minimise -sensitivity + penalty * slack.
    cost = np.concatenate([-sensitivity, np.full(2 * k, _PENALTY)])
    a_eq = np.zeros((k + 1, m + 2 * k))
    a_eq[0, :m] = 1.0
    a_eq[1:, :m] = cumulative.T
    a_eq[1:, m:m + k] = -np.eye(k)
    a_eq[1:, m + k:] = np.eye(k)
    b_eq = np.zeros(k + 1)
    b_eq[0] = 1.0
    res = linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if not res.success:  # pragma: no cover - the slack makes the LP always feasible
        raise OptionError(f"optimized interleaving: the LP failed ({res.message}).")
    p = np.clip(res.x[:m], 0.0, None)
    p /= p.sum()
    bias = float(np.abs(cumulative.T @ p).max(initial=0.0))
    return tuple(lists), p, bias


def interleave(rankings: list[list[DocId]], k: int, rng: np.random.Generator, *,
               credit_function: CreditFunction = "inverse") -> Interleaving:
    """Draw one list from the optimized distribution (validated by the caller)."""
    if credit_function not in CREDIT_FUNCTIONS:
        raise OptionError(f"credit_function must be one of {', '.join(CREDIT_FUNCTIONS)}; "
                          f"got {credit_function!r}.")
    a, b = (tuple(r) for r in rankings)
    lists, p, bias = distribution(a, b, k, credit_function)
    pick = min(int(np.searchsorted(np.cumsum(p), rng.random(), side="right")), len(lists) - 1)
    docs = lists[pick]
    heads_a, heads_b = _heads(a, docs), _heads(b, docs)
    teams = tuple(NEUTRAL if (x and y) else (0 if x else 1)
                  for x, y in zip(heads_a, heads_b, strict=True))
    return Interleaving(
        method=NAME, docs=docs, teams=teams, ranks=rank_table([list(a), list(b)], docs),
        lengths=(len(a), len(b)), first=teams[0],
        params={"credit_function": credit_function, "support": int(np.count_nonzero(p > 1e-12)),
                "bias": bias, "probability": float(p[pick])},
    )


def _heads(ranking: tuple[DocId, ...], docs: tuple[DocId, ...]) -> list[bool]:
    """For each slot: was the document the top remaining one of ``ranking``?"""
    shown: set[DocId] = set()
    out = []
    top = 0  # ranking[top]: the first document not shown yet (only moves down as docs are shown)
    for doc in docs:
        while top < len(ranking) and ranking[top] in shown:
            top += 1
        out.append(top < len(ranking) and ranking[top] == doc)
        shown.add(doc)
    return out


def credit(result: Interleaving, clicked_positions: Any) -> Outcome:
    """Credit per ranker: Σ g_s(clicked); outcome: Σ delta (see the module docstring)."""
    clicks = check_clicks(result, clicked_positions)
    fn = result.params.get("credit_function", "inverse")
    if fn not in CREDIT_FUNCTIONS:
        raise OptionError(f"unknown credit_function {fn!r} in the interleaving record.")
    credits = []
    for s in range(2):
        ranks = np.array([result.ranks[s][p] or result.lengths[s] + 1 for p in clicks], dtype=float)
        # Rounded so that equal sums taken in a different order tie exactly.
        credits.append(round(float(_gain(ranks, fn).sum()), 12) if clicks else 0.0)
    r = outcome_from_credits(credits, clicks)
    return Outcome(credits=r.credits, outcome=round(credits[0] - credits[1], 12), winner=r.winner,
                   preferences=r.preferences, clicks=r.clicks, ignored_clicks=r.ignored_clicks,
                   expected_outcome=r.expected_outcome, method=r.method,
                   bias=float(result.params.get("bias", 0.0)))
