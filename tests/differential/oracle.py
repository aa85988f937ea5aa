"""pytrec_eval as the reference, serpeval through its public paths, and a tally of both.

pytrec_eval (trec_eval 9.0.8 compiled) parses nothing: it gets dicts built from the
logical rows of a :class:`~tests.differential.shapes.Collection`, while serpeval reads the
files written from the same rows. It stores scores as 32-bit floats, so serpeval runs with
``float32_scores=True`` (``--compat 9.0.8`` on the command line), as in
``tests/trec_eval/test_pytrec_eval_real_runs.py``.
"""

from __future__ import annotations

import math
import warnings
from functools import cache
from typing import Any

import pytrec_eval
from tests.differential.compare import TALLY, same
from tests.differential.shapes import Collection

import serpeval
from serpeval.core.errors import MissingQueriesWarning
from serpeval.measures import REGISTRY

NOT_NUMERIC = {"runid", "num_q", "relstring"}
# pytrec_eval keeps these per query as log(max(x, 1e-5)); serpeval keeps x and takes the
# geometric mean when aggregating (as trec_eval prints it).
GEOMETRIC = {"gm_map", "gm_bpref"}
MIN_GEO_MEAN = 1e-5
# Every measure but the three non-numeric ones: pytrec_eval 0.5.11 crashes (segmentation
# fault) computing relstring next to gm_bpref for a query whose judgments are all negative.
MEASURES = set(pytrec_eval.supported_measures) - NOT_NUMERIC


@cache
def trec_names() -> tuple[str, ...]:
    """Every numeric per-query value pytrec_eval computes (all of 9.0.8's ``all_trec``)."""
    probe = pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, MEASURES)
    return tuple(probe.evaluate({"q": {"d": 1.0}})["q"])


def serpeval_name(trec_name: str) -> str:
    """The serpeval measure for a pytrec_eval value: the same name, except that the recall
    levels of ``iprec_at_recall`` and ``11pt_avg`` are rounded as trec_eval 9.x does
    (``rounding=v9``; serpeval's default is 10.0's ``lround``)."""
    if trec_name.startswith("iprec_at_recall_"):
        return f"IPrec(recall={trec_name.rsplit('_', 1)[1]},rounding=v9)"
    if trec_name == "11pt_avg":
        return "IPrecAvg(rounding=v9)"
    return trec_name


def reference(coll: Collection, rel_level: int = 1, judged_only: bool = False) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values for the collection's logical rows."""
    evaluator = pytrec_eval.RelevanceEvaluator(coll.qrels_dict(), MEASURES,
                                               relevance_level=rel_level, judged_docs_only_flag=judged_only)
    return evaluator.evaluate(coll.run_dict())


def serpeval_values(qrels: Any, run: Any, names: tuple[str, ...] | None = None,
                    **options: Any) -> dict[str, dict[str, float]]:
    """``serpeval.evaluate(qrels, run, names, float32_scores=True)`` per query, keyed like pytrec_eval."""
    names = names or trec_names()
    measures = {name: REGISTRY.parse(serpeval_name(name)) for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # judged queries the run lacks
        res = serpeval.evaluate(qrels, run, list(measures.values()), float32_scores=True, **options)
    (result,) = res.runs
    columns = {name: res.measures.index(measure) for name, measure in measures.items()}
    qids = result.query_ids.tolist()
    out: dict[str, dict[str, float]] = {q: {} for q in qids}
    for name, i in columns.items():
        for q, v in zip(qids, result.column(i).tolist(), strict=True):
            out[q][name] = math.log(max(v, MIN_GEO_MEAN)) if name in GEOMETRIC else v
    return out


def compare(check: str, ours: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]],
            files: list[Any], label: str) -> None:
    """Assert every value of ``theirs`` is in ``ours`` and equal; count it in :data:`TALLY`."""
    problems = []
    if set(ours) != set(theirs):
        problems.append(f"queries differ: only serpeval {sorted(set(ours) - set(theirs))[:5]}, "
                        f"only reference {sorted(set(theirs) - set(ours))[:5]}")
    values = 0
    for q in sorted(set(ours) & set(theirs)):
        for name, want in theirs[q].items():
            got = ours[q].get(name)
            values += 1
            if got is None or not same(got, want):
                problems.append(f"{name} of query {q!r}: serpeval {got!r}, reference {want!r}")
    TALLY.add(check, files, len(theirs), values, len(problems))
    assert values > 0, f"{label}: compared no value (the reference has no query, or no measure)"
    assert not problems, f"{label}: {len(problems)} of {values} values differ:\n  " + "\n  ".join(problems[:12])
