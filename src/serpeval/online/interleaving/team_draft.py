"""Team draft interleaving (Radlinski, Kurup & Joachims, CIKM 2008) and team draft
multileaving (Schuth et al., CIKM 2014): one code path for any number of rankers.

**Drafting.** Until k documents are shown: the team with the fewest members picks next, a
fresh random draw breaks ties (for two rankers: one coin per round of two picks, the coin
that removes position bias; a fixed A, B, A, B alternation is the classic bug). The picking
team adds its highest-ranked document that is not shown yet. A team whose ranking is used up
stops picking and the others fill the list.

**Unbiased only while every ranking can pick.** Under random clicks the per-round coin makes
the teams' positions symmetric, so the mean outcome is zero - as long as no ranking runs out
before ``k``. Once one does, the others fill the remaining slots and hold more of the list,
and random clicks favour them: A = (a), B = (b, c, d), k = 4 and each position clicked with
probability 0.3 give P(A wins) = .3 x .7^3 = 0.1029 and P(B wins) = .7 (1 - .7^3) +
.3 (3 x .3^2 x .7 + .3^3) = 0.5247 (a regression test enumerates it). Keep ``k`` small enough
that no ranking runs out (at most twice the shorter ranking's length, less when the rankings
share documents), or check the design with :func:`~serpeval.online.interleaving.analysis.aa_check`.

**Shared picks** (``ignore_shared=True``; Chapelle et al. 2012, Airbnb's "competitive
pairs"): at the start of a round (all teams equal in size) when every ranker's next document
is the same one, it is shown once on no team (:data:`~._result.NEUTRAL`) and clicks on it
are ignored; no coin is spent on it.

**Credit.** Each ranker's credit is the number of clicks on its team's documents; two
rankers: the outcome is the sign of credit_A - credit_B (no clicks, or equal counts: a tie).

**Known blind spot** (Hofmann et al., CIKM 2011): A = (d1, d2, d3, d4), B = (d2, d3, d4, d1)
with only d3 relevant: B ranks d3 higher, yet d3 joins each team with probability 1/2, so the
expected outcome is a tie (a regression test).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from serpeval.online.interleaving._result import (
    NEUTRAL,
    DocId,
    Interleaving,
    Outcome,
    check_clicks,
    outcome_from_credits,
    rank_table,
)

NAME = "team_draft"
MAX_RANKERS = None
#: Unbiased under random clicks: the mean outcome is zero when clicks ignore the documents (as
#: long as no ranking runs out before k: see the module docstring).
BIASED = False


def interleave(rankings: list[list[DocId]], k: int, rng: np.random.Generator, *,
               ignore_shared: bool = False) -> Interleaving:
    """Draft ``k`` documents from ``rankings`` (validated by the caller)."""
    if len(rankings) == 2:
        docs, teams, first = _draft_two(rankings[0], rankings[1], k, rng.random(k).tolist(),
                                        ignore_shared)
    else:
        docs, teams, first = _draft_many(rankings, k, rng.random(k).tolist(), ignore_shared)
    return Interleaving(
        method=NAME, docs=tuple(docs), teams=tuple(teams), ranks=rank_table(rankings, docs),
        lengths=tuple(len(r) for r in rankings), first=first,
        params={"ignore_shared": bool(ignore_shared)},
    )


def _draft_two(a: list[DocId], b: list[DocId], k: int, draws: list[float],
               ignore_shared: bool) -> tuple[list[DocId], list[int], int]:
    """Team draft for two rankers: the same rule as :func:`_draft_many`, unrolled for speed.

    With equal team sizes A picks when ``draws[slot] < 0.5`` (what ``_draft_many`` does with
    ``tied[int(draw * 2)]``), so both paths give the same list for the same draws.
    """
    placed: set[DocId] = set()
    docs: list[DocId] = []
    teams: list[int] = []
    ia = ib = size_a = size_b = 0
    len_a, len_b = len(a), len(b)
    first = NEUTRAL
    while len(docs) < k:
        while ia < len_a and a[ia] in placed:
            ia += 1
        while ib < len_b and b[ib] in placed:
            ib += 1
        has_a, has_b = ia < len_a, ib < len_b
        if ignore_shared and has_a and has_b and size_a == size_b and a[ia] == b[ib]:
            team, doc = NEUTRAL, a[ia]
        elif has_a and (not has_b or size_a < size_b
                        or (size_a == size_b and draws[len(docs)] < 0.5)):
            team, doc = 0, a[ia]
            size_a += 1
        elif has_b:
            team, doc = 1, b[ib]
            size_b += 1
        else:  # pragma: no cover - k <= |union| is checked by the caller
            break
        if first == NEUTRAL:
            first = team
        docs.append(doc)
        teams.append(team)
        placed.add(doc)
    return docs, teams, first


def _draft_many(rankings: list[list[DocId]], k: int, draws: list[float],
                ignore_shared: bool) -> tuple[list[DocId], list[int], int]:
    """Team draft for any number of rankers (multileaving)."""
    n = len(rankings)
    placed: set[DocId] = set()
    pointer = [0] * n
    size = [0] * n
    docs: list[DocId] = []
    teams: list[int] = []
    first = NEUTRAL
    heads: list[DocId | None] = [r[0] for r in rankings]
    while len(docs) < k:
        for s in range(n):  # advance every head past documents already shown
            if heads[s] is not None and heads[s] in placed:
                ranking, i = rankings[s], pointer[s] + 1
                while i < len(ranking) and ranking[i] in placed:
                    i += 1
                pointer[s] = i
                heads[s] = ranking[i] if i < len(ranking) else None
        active = [s for s in range(n) if heads[s] is not None]
        if not active:  # pragma: no cover - k <= |union| is checked by the caller
            break
        if (ignore_shared and len(active) == n and min(size) == max(size)
                and all(h == heads[0] for h in heads)):
            team = NEUTRAL
        else:
            fewest = min(size[s] for s in active)
            tied = [s for s in active if size[s] == fewest]
            team = tied[int(draws[len(docs)] * len(tied))] if len(tied) > 1 else tied[0]
            size[team] += 1
            if first == NEUTRAL:
                first = team
        doc = heads[0 if team == NEUTRAL else team]
        docs.append(doc)  # type: ignore[arg-type]
        teams.append(team)
        placed.add(doc)  # type: ignore[arg-type]
    return docs, teams, first


def credit(result: Interleaving, clicked_positions: Any) -> Outcome:
    """Clicks per team; clicks on neutral (shared) slots are ignored and counted."""
    clicks = check_clicks(result, clicked_positions)
    credits = [0] * result.n_rankers
    ignored = 0
    for p in clicks:
        team = result.teams[p]
        if team == NEUTRAL:
            ignored += 1
        else:
            credits[team] += 1
    return outcome_from_credits(credits, clicks, ignored)
