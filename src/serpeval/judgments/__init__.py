"""Judgments as a workflow: what to judge next (pooling), how much of a run is judged, whether
assessors agree, how two runs differ without judgments, and qrels inferred from clicks.

A small lazy index: ``import serpeval.judgments`` loads nothing heavy; each name is imported
from its module on first use. The functions :func:`serpeval.pool`, :func:`serpeval.judged` and
:func:`serpeval.agreement` are in the top-level index only: here their names are the modules
``pool``, ``judged`` and ``agreement`` (the import system sets a package attribute to its
submodule, so a function of the same name would be replaced by the module once that module is
imported). ``diff_runs``, ``clicks_to_qrels``, ``judged_gaps`` and the result classes are here
and, for the first two, at the top level too.

Layer: above ``comparison`` and ``online`` (it evaluates runs, compares them and fits click
models), below ``report``. May import comparison, online, stats, evaluation, measures, ranking,
io and core; never report or cli.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.core.lazy import lazy_index

_LAZY: dict[str, str] = {
    # what to judge next
    "Pool": "serpeval.judgments.pool",
    # how much of each run is judged
    "JudgedRates": "serpeval.judgments.judged",
    "judged_gaps": "serpeval.judgments.judged", "JudgedGap": "serpeval.judgments.judged",
    # two runs without judgments
    "diff_runs": "serpeval.judgments.diff", "RunDiff": "serpeval.judgments.diff",
    # assessor agreement and system-ranking stability
    "Agreement": "serpeval.judgments.agreement",
    "PairAgreement": "serpeval.judgments.agreement", "RankingStability": "serpeval.judgments.agreement",
    # qrels from clicks
    "clicks_to_qrels": "serpeval.judgments.clicks", "ClickQrels": "serpeval.judgments.clicks",
}

__all__ = [
    "Agreement",
    "ClickQrels",
    "JudgedGap",
    "JudgedRates",
    "PairAgreement",
    "Pool",
    "RankingStability",
    "RunDiff",
    "clicks_to_qrels",
    "diff_runs",
    "judged_gaps",
]

if TYPE_CHECKING:
    from serpeval.judgments.agreement import Agreement, PairAgreement, RankingStability
    from serpeval.judgments.clicks import ClickQrels, clicks_to_qrels
    from serpeval.judgments.diff import RunDiff, diff_runs
    from serpeval.judgments.judged import JudgedGap, JudgedRates, judged_gaps
    from serpeval.judgments.pool import Pool

__getattr__, __dir__ = lazy_index(__name__, _LAZY)
