"""serpeval: tells a search team, with numbers they can defend, whether a ranking change helped.

Offline evaluation identical to trec_eval (and fast), significance testing, online
evaluation (interleaving, click models, A/B tests) and reports.

``import serpeval`` is light: the submodules load on first use.

Examples:
    >>> import serpeval
    >>> res = serpeval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P@1", "AP"])
    >>> res.means("run")
    {'P@1': 1.0, 'AP': 1.0}
"""

from __future__ import annotations

# isort: off
# First, before typing: in a serpeval program, a Ctrl-C while the modules below load is
# "interrupted", 130 (serpeval.cli.startup takes SIGINT when imported).
from serpeval.cli import startup as _startup  # noqa: F401
# isort: on

from typing import TYPE_CHECKING

from serpeval.core.version import __version__

__all__ = [
    "REGISTRY",
    "CompareOptions",
    "GateOptions",
    "Measure",
    "Qrels",
    "Results",
    "Run",
    "SubtopicQrels",
    "__version__",
    "agreement",
    "clicks_to_qrels",
    "compare",
    "dcg",
    "diff_runs",
    "evaluate",
    "gate",
    "judged",
    "ndcg",
    "parse_measure",
    "pool",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "reciprocal_rank",
    "retrieve",
    "sweep",
    "tie_summary",
]

from serpeval.core.lazy import lazy_index

_LAZY = {
    "REGISTRY": "serpeval.measures",
    "Measure": "serpeval.measures",
    "parse_measure": "serpeval.measures",
    "Qrels": "serpeval.core.data",
    "Run": "serpeval.core.data",
    "Results": "serpeval.evaluation.results",
    "evaluate": "serpeval.evaluation.evaluate",
    "compare": "serpeval.comparison.compare",
    "CompareOptions": "serpeval.comparison.compare",
    "GateOptions": "serpeval.comparison.gate",
    "gate": "serpeval.comparison.gate",
    "read_qrels": "serpeval.io",
    "read_run": "serpeval.io",
    "read_subtopic_qrels": "serpeval.io",
    "SubtopicQrels": "serpeval.core.subtopics",
    "dcg": "serpeval.measures.formulas",
    "ndcg": "serpeval.measures.formulas",
    "reciprocal_rank": "serpeval.measures.formulas",
    "pool": "serpeval.judgments.pool",
    "judged": "serpeval.judgments.judged",
    "diff_runs": "serpeval.judgments.diff",
    "agreement": "serpeval.judgments.agreement",
    "clicks_to_qrels": "serpeval.judgments.clicks",
    "retrieve": "serpeval.engines.retrieve",
    "sweep": "serpeval.engines.sweep",
    "tie_summary": "serpeval.evaluation.ties",
}

if TYPE_CHECKING:
    from serpeval.comparison.compare import CompareOptions, compare
    from serpeval.comparison.gate import GateOptions, gate
    from serpeval.core.data import Qrels, Run
    from serpeval.core.subtopics import SubtopicQrels
    from serpeval.engines.retrieve import retrieve
    from serpeval.engines.sweep import sweep
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.evaluation.results import Results
    from serpeval.evaluation.ties import tie_summary
    from serpeval.io import read_qrels, read_run, read_subtopic_qrels
    from serpeval.judgments.agreement import agreement
    from serpeval.judgments.clicks import clicks_to_qrels
    from serpeval.judgments.diff import diff_runs
    from serpeval.judgments.judged import judged
    from serpeval.judgments.pool import pool
    from serpeval.measures import REGISTRY, Measure, parse_measure
    from serpeval.measures.formulas import dcg, ndcg, reciprocal_rank


__getattr__, __dir__ = lazy_index(__name__, _LAZY)

