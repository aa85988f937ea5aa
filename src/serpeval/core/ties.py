"""The tie policies' names and the one check of a policy name (no NumPy: the command line
reads them for ``--ties`` without loading the ranking). :mod:`serpeval.ranking` applies them.
"""

from __future__ import annotations

from typing import Literal, get_args

from serpeval.core.errors import InvalidParameterError

__all__ = ["TIE_POLICIES", "TIE_RULES", "TiePolicy", "check_ties", "same_ties"]

TiePolicy = Literal["trec_eval", "optimistic", "pessimistic", "expected", "rank"]
TIE_POLICIES: tuple[TiePolicy, ...] = get_args(TiePolicy)
"""The tie policies, the default first (see :mod:`serpeval.ranking` and ``docs/how-to/ties.md``)."""

TIE_RULES: dict[str, str] = {
    "trec_eval": "ties by doc id descending (byte order), as trec_eval",
    "optimistic": "ties: higher grade first (unjudged as not relevant), then doc id descending",
    "pessimistic": "ties: lower grade first (unjudged as not relevant), then doc id descending",
    "expected": "ties: each value is its exact expectation over every order of each tie group",
    "rank": "order: the run's rank column ascending, then file order (scores ignored)",
}
"""One line per tie policy, for the rules every report states."""


def check_ties(ties: object) -> TiePolicy:
    """``ties`` if it names a tie policy; else :class:`InvalidParameterError` listing them."""
    for policy in TIE_POLICIES:
        if ties == policy:
            return policy
    raise InvalidParameterError(
        f"unknown tie policy {ties!r}: use one of {', '.join(TIE_POLICIES)} (trec_eval is the default)."
    )


def same_ties(baseline: tuple[str, str], candidate: tuple[str, str]) -> None:
    """Refuse to compare values computed under different tie policies.

    ``baseline`` and ``candidate`` are ``(label, policy)``; a missing policy (results written
    before tie policies existed) reads as ``trec_eval``, the only rule there was.

    Raises:
        InvalidParameterError: the policies differ (the message names both).
    """
    (a, ta), (b, tb) = baseline, candidate
    ta, tb = ta or "trec_eval", tb or "trec_eval"
    if ta != tb:
        raise InvalidParameterError(
            f"cannot compare {a} (ties={ta}) with {b} (ties={tb}): values computed under different tie "
            "policies differ by the tie rule alone; evaluate both with the same --ties."
        )
