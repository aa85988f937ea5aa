"""What an interleaving method returns (:class:`Interleaving`), what credit returns
(:class:`Outcome`), and the input checks every method shares.

Positions are **0-based** indices into :attr:`Interleaving.docs` (``0`` is the top result).
Both classes round-trip through JSON (:meth:`Interleaving.to_json`,
:meth:`Interleaving.from_json`) so that a serving system can log exactly what it showed and
compute credit later, elsewhere.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from serpeval.core.errors import InputError, OptionError

__all__ = ["NEUTRAL", "Interleaving", "Outcome"]

NEUTRAL = -1
"""Team of a slot that belongs to no ranker (team draft's shared picks, when ignored)."""

DocId = str | int


@dataclass(frozen=True)
class Interleaving:
    """One composite result list and what credit needs to score clicks on it.

    Attributes:
        method: canonical method name (``team_draft``, ``balanced``, ``probabilistic``,
            ``optimized``).
        docs: the documents to show, top first.
        teams: per slot, the index of the ranker that contributed the document
            (:data:`NEUTRAL` = none; for balanced: the list it was first taken from; for
            optimized: the ranker whose top remaining document it was, NEUTRAL if both).
        ranks: ``ranks[s][i]``: 1-based rank of ``docs[i]`` in ranking ``s``, 0 if absent.
        lengths: length of each input ranking.
        first: the ranker that picked first (for the first-pick balance check).
        probabilities: probabilistic interleaving only: ``probabilities[i][s]`` = the
            probability that ranker ``s`` would have drawn ``docs[i]`` from the documents
            still unplaced at slot ``i`` (what marginalised credit needs).
        params: method options used (and, for optimized, the solved distribution's support
            size, its bias and the probability of the list drawn).
    """

    method: str
    docs: tuple[DocId, ...]
    teams: tuple[int, ...]
    ranks: tuple[tuple[int, ...], ...]
    lengths: tuple[int, ...]
    first: int
    probabilities: tuple[tuple[float, ...], ...] | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rankers(self) -> int:
        """How many rankings were interleaved."""
        return len(self.lengths)

    def __len__(self) -> int:
        return len(self.docs)

    def team_docs(self, team: int) -> list[DocId]:
        """The documents ranker ``team`` contributed, in display order."""
        return [d for d, t in zip(self.docs, self.teams, strict=True) if t == team]

    # -------------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists, not tuples)."""
        out: dict[str, Any] = {
            "method": self.method,
            "docs": list(self.docs),
            "teams": list(self.teams),
            "ranks": [list(r) for r in self.ranks],
            "lengths": list(self.lengths),
            "first": self.first,
            "params": dict(self.params),
        }
        if self.probabilities is not None:
            out["probabilities"] = [list(p) for p in self.probabilities]
        return out

    def to_json(self) -> str:
        """One line of JSON (for a log)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interleaving:
        """Rebuild from :meth:`to_dict`; a malformed record is an :class:`InputError`."""
        if not isinstance(data, dict):
            raise InputError(f"an interleaving record must be a dict (Interleaving.to_dict); got "
                             f"{type(data).__name__}.")
        if isinstance(data.get("docs"), (str, bytes)):
            raise InputError(f"interleaving record: docs must be a list of document ids; got the string "
                             f"{data['docs']!r}.")
        try:
            docs = tuple(data["docs"])
            teams = tuple(int(t) for t in data["teams"])
            ranks = tuple(tuple(int(r) for r in row) for row in data["ranks"])
            lengths = tuple(int(n) for n in data["lengths"])
            probs = data.get("probabilities")
            result = cls(
                method=str(data["method"]), docs=docs, teams=teams, ranks=ranks, lengths=lengths,
                first=int(data["first"]),
                probabilities=None if probs is None else tuple(tuple(float(p) for p in row)
                                                                for row in probs),
                params=dict(data.get("params", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"not an interleaving record ({exc!r}); expected the keys method, docs, teams, "
                "ranks, lengths, first (as written by Interleaving.to_dict)."
            ) from exc
        n = len(docs)
        if len(teams) != n or any(len(r) != n for r in ranks) or len(ranks) != len(lengths):
            raise InputError(f"inconsistent interleaving record: {n} docs, {len(teams)} teams, "
                             f"ranks for {len(ranks)} rankers; each needs one entry per doc.")
        rankers = len(lengths)
        bad_team = next((t for t in teams if not (t == NEUTRAL or 0 <= t < rankers)), None)
        if bad_team is not None:
            raise InputError(f"inconsistent interleaving record: team {bad_team} for {rankers} rankers; a "
                             f"team is a ranker index 0..{rankers - 1} or {NEUTRAL} (no team).")
        bad_rank = next(((s, r) for s, row in enumerate(ranks) for r in row
                         if not 0 <= r <= lengths[s]), None)
        if bad_rank is not None:
            raise InputError(f"inconsistent interleaving record: rank {bad_rank[1]} in ranking {bad_rank[0]} of "
                             f"length {lengths[bad_rank[0]]}; ranks are 1-based, 0 for a document the ranking lacks.")
        probs = result.probabilities
        if probs is not None and (len(probs) != n or any(len(row) != rankers for row in probs)
                                  or not all(0.0 <= p <= 1.0 for row in probs for p in row)):
            raise InputError(f"inconsistent interleaving record: probabilities need one row per doc ({n}) "
                             f"of one probability in [0, 1] per ranker ({rankers}).")
        return result

    @classmethod
    def from_json(cls, text: str) -> Interleaving:
        """Rebuild from :meth:`to_json`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"interleaving record is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise InputError("interleaving record must be a JSON object.")
        return cls.from_dict(data)


@dataclass(frozen=True)
class Outcome:
    """The result of crediting clicks on one :class:`Interleaving`.

    Attributes:
        credits: per ranker, the click credit (expected credit for probabilistic).
        outcome: two rankers: the impression's outcome, positive when ranker 0 (A) is
            preferred, negative for ranker 1 (B), ``0`` a tie; its mean over impressions
            estimates the preference and is **zero in expectation under random clicks**
            for every method except balanced interleaving. Team draft and balanced: the
            sign of credit_A - credit_B (+1, 0, -1). Probabilistic: the marginalised
            outcome E[sign(h_A - h_B)] over slot assignments, in [-1, 1] (Hofmann et al.,
            CIKM 2011; its sign alone is biased). Optimized: the credit difference
            Σ_clicked (g_A(d) - g_B(d)) (Radlinski & Craswell, WSDM 2013: the quantity the
            LP makes zero in expectation; its sign alone is biased). More rankers: ``+1``
            if ranker 0 has the strictly highest credit, ``-1`` if another ranker has, else
            ``0`` (use :attr:`preferences` for the full picture).
        winner: index of the ranker with the strictly highest credit, None on a tie.
        preferences: ``preferences[i][j]`` in [-1, 1]: +1 if ranker i out-credits j, -1 if j
            out-credits i, 0 on a tie (expected values for probabilistic).
        clicks: the clicked positions credited (0-based, sorted, unique).
        ignored_clicks: clicks on neutral slots (team draft with ``ignore_shared``).
        expected_outcome: probabilistic only: E[sign(credit_A - credit_B)] under the
            posterior over assignments (two rankers: equal to ``outcome``).
        method: the interleaving method that credited the clicks (set by
            :func:`serpeval.online.interleaving.credit`; lets the analysis refuse a biased
            method).
        bias: optimized only: the design's bias (``Interleaving.params["bias"]``: the
            largest expected credit difference a random clicker gives at any cut-off; 0 where
            the LP has an unbiased solution). The analysis leaves impressions above
            :data:`~serpeval.online.interleaving.optimized.BIAS_TOLERANCE` out and counts them.
    """

    credits: tuple[float, ...]
    outcome: float
    winner: int | None
    preferences: tuple[tuple[float, ...], ...]
    clicks: tuple[int, ...]
    ignored_clicks: int = 0
    expected_outcome: float | None = None
    method: str | None = None
    bias: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "credits": list(self.credits),
            "outcome": self.outcome,
            "winner": self.winner,
            "preferences": [list(p) for p in self.preferences],
            "clicks": list(self.clicks),
            "ignored_clicks": self.ignored_clicks,
            "expected_outcome": self.expected_outcome,
            "method": self.method,
            "bias": self.bias,
        }


# ------------------------------------------------------------------ shared checks and helpers


def check_rankings(rankings: Any, max_rankers: int | None, method: str) -> list[list[DocId]]:
    """Validate the input rankings: >= 2 non-empty lists of str/int ids without repeats."""
    if isinstance(rankings, (str, bytes)) or not isinstance(rankings, Sequence):
        raise InputError(f"rankings must be a list of rankings (lists of document ids); "
                         f"got {type(rankings).__name__}.")
    if any(isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in rankings):
        raise InputError("each ranking must be a list of document ids (not a string).")
    out = [list(r) for r in rankings]
    if len(out) < 2:
        raise InputError(f"interleaving needs at least 2 rankings; got {len(out)}.")
    if max_rankers is not None and len(out) > max_rankers:
        raise OptionError(f"{method} interleaving compares {max_rankers} rankers; got {len(out)}. "
                          "Use method='team_draft' or 'probabilistic' to multileave more.")
    for s, ranking in enumerate(out):
        if not ranking:
            raise InputError(f"ranking {s} is empty; every ranker must return at least one document.")
        if not set(map(type, ranking)) <= {str, int}:
            ranking = out[s] = [_plain_id(d, s) for d in ranking]
        if len(set(ranking)) != len(ranking):
            seen: set[DocId] = set()
            for doc in ranking:
                if doc in seen:
                    raise InputError(f"ranking {s} lists document {doc!r} twice; a ranking must "
                                     "list each document once.")
                seen.add(doc)
    return out


def _plain_id(doc: Any, s: int) -> DocId:
    """A document id of a str or int subclass (``numpy.str_``, an ``IntEnum``) as the plain
    str or int it is stored as; anything else (``bool``, ``float``, ``numpy.int64``) refused."""
    if isinstance(doc, str):
        return str(doc)
    if isinstance(doc, int) and not isinstance(doc, bool):
        return int(doc)
    raise InputError(f"ranking {s}: document ids must be str or int; got {doc!r}.")


def check_k(k: int | None, rankings: list[list[DocId]]) -> int:
    """``k`` (None = the size of the union), refusing k < 1 or k > the union."""
    union = len(set().union(*rankings))
    if k is None:
        return union
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise OptionError(f"k must be a positive integer (the number of results to show); got {k!r}.")
    k = int(k)  # a NumPy integer (a k read from an array) as the int it is
    if k > union:
        raise OptionError(
            f"k={k} is larger than the {union} distinct documents the rankings hold together; "
            f"show at most k={union} (or pass k=None to show them all)."
        )
    return k


def rank_table(rankings: list[list[DocId]], docs: Sequence[DocId]) -> tuple[tuple[int, ...], ...]:
    """``ranks[s][i]``: 1-based rank of ``docs[i]`` in ranking ``s``, 0 if absent."""
    out = []
    for ranking in rankings:
        where = dict(zip(ranking, range(1, len(ranking) + 1), strict=True))
        out.append(tuple([where.get(d, 0) for d in docs]))
    return tuple(out)


def check_clicks(result: Interleaving, clicked_positions: Any) -> tuple[int, ...]:
    """Sorted unique 0-based positions, each shown (else :class:`InputError`)."""
    if not isinstance(result, Interleaving):
        raise InputError(f"credit needs the Interleaving that was shown; got {type(result).__name__}.")
    try:
        positions = [int(p) for p in clicked_positions]
        bad_type = any(isinstance(p, bool) or int(p) != p for p in clicked_positions)
    except (TypeError, ValueError) as exc:
        raise InputError(f"clicked_positions must be integers (0-based positions); got "
                         f"{clicked_positions!r}.") from exc
    if bad_type:
        raise InputError(f"clicked_positions must be integers (0-based positions); got "
                         f"{clicked_positions!r}.")
    n = len(result.docs)
    for p in positions:
        if not 0 <= p < n:
            raise InputError(
                f"click at position {p} was not shown: positions are 0-based indices into the "
                f"{n} shown documents (0..{n - 1})."
            )
    return tuple(sorted(set(positions)))


def pairwise(credits: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """``P[i][j] = sign(credit_i - credit_j)``."""
    return tuple(tuple(float((a > b) - (a < b)) for b in credits) for a in credits)


def outcome_from_credits(credits: Sequence[float], clicks: tuple[int, ...], ignored: int = 0) -> Outcome:
    """The :class:`Outcome` of deterministic credits (team draft, balanced, optimized)."""
    best = max(credits)
    leaders = [s for s, c in enumerate(credits) if c == best]
    winner = leaders[0] if len(leaders) == 1 else None
    if len(credits) == 2:
        outcome = (credits[0] > credits[1]) - (credits[0] < credits[1])
    else:
        outcome = 0 if winner is None else (1 if winner == 0 else -1)
    return Outcome(tuple(float(c) for c in credits), int(outcome), winner, pairwise(credits),
                   clicks, ignored)
