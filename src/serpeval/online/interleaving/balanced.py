"""Balanced interleaving (Joachims 2002/2003), kept as a documented baseline.

**Drafting.** One coin per query decides whether A goes first. With pointers ``k_a, k_b``
(both 0): if ``k_a < k_b`` or (``k_a == k_b`` and A goes first), A's document at ``k_a`` is
appended unless already shown and ``k_a`` advances; otherwise the same for B. When one
ranking is used up the other keeps filling the list.

**Credit.** Let d_max be the lowest clicked document and ``m = min(rank_A(d_max),
rank_B(d_max))`` (a document missing from a ranking has rank infinity there).
``h_A = |clicked ∩ A[1..m]|``, ``h_B = |clicked ∩ B[1..m]|``; the outcome is the sign of
``h_A - h_B``.

**Known bias** (Chapelle et al. 2012; Hofmann et al. 2011): with A = (x, y, z) and
B = (y, z, x), both possible lists hold x, y, z in an order where a user clicking one result
uniformly at random makes B win with probability 2/3 (a regression test). Prefer team draft.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from serpeval.online.interleaving._result import (
    DocId,
    Interleaving,
    Outcome,
    check_clicks,
    outcome_from_credits,
    rank_table,
)

NAME = "balanced"
MAX_RANKERS = 2
#: Biased under random clicks (Chapelle et al. 2012): the analysis refuses it unless asked.
BIASED = True


def interleave(rankings: list[list[DocId]], k: int, rng: np.random.Generator) -> Interleaving:
    """Merge two rankings into ``k`` documents (validated by the caller)."""
    a, b = rankings
    a_first = bool(rng.random() < 0.5)
    ka = kb = 0
    docs: list[DocId] = []
    teams: list[int] = []
    shown: set[DocId] = set()
    while len(docs) < k and (ka < len(a) or kb < len(b)):
        take_a = kb >= len(b) or (ka < len(a) and (ka < kb or (ka == kb and a_first)))
        doc = a[ka] if take_a else b[kb]
        if take_a:
            ka += 1
        else:
            kb += 1
        if doc not in shown:
            shown.add(doc)
            docs.append(doc)
            teams.append(0 if take_a else 1)
    return Interleaving(
        method=NAME, docs=tuple(docs), teams=tuple(teams), ranks=rank_table(rankings, docs),
        lengths=(len(a), len(b)), first=0 if a_first else 1,
    )


def credit(result: Interleaving, clicked_positions: Any) -> Outcome:
    """Joachims' credit: clicks within each ranking's top m, m set by the lowest click."""
    clicks = check_clicks(result, clicked_positions)
    if not clicks:
        return outcome_from_credits([0, 0], clicks)
    inf = float("inf")
    rank_a = [r if r > 0 else inf for r in result.ranks[0]]
    rank_b = [r if r > 0 else inf for r in result.ranks[1]]
    lowest = clicks[-1]
    m = min(rank_a[lowest], rank_b[lowest])
    h_a = sum(1 for p in clicks if rank_a[p] <= m)
    h_b = sum(1 for p in clicks if rank_b[p] <= m)
    return outcome_from_credits([h_a, h_b], clicks)
