"""``--compat 9.0.8`` against pytrec_eval-terrier (trec_eval 9.0.8 compiled) as a live oracle.

Every per-topic value of every measure pytrec_eval computes (all of ``-m all_trec`` 9.0.8:
95 names) must be *equal* - the same double, not merely the same 4 decimals - on the
generated edge cases and on the real TREC runs, with the default relevance level, ``-l 2``
and ``-J``. pytrec_eval cannot express -c, -M or -N, duplicates, or comments; those are
covered by the binaries' outputs in ``test_conformance.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from serpeval.core.data import Qrels, Run
from serpeval.io import read_qrels, read_run
from serpeval.trec_eval.compute import compute_evaluation
from serpeval.trec_eval.options import Options

pytrec_eval = pytest.importorskip("pytrec_eval")

FIXTURES = Path(__file__).parent / "fixtures" / "cases"
# Inputs pytrec_eval can express (a dict cannot hold a duplicate docno).
CASES = ["ties", "graded", "random", "float32", "missing", "short", "ids", "layout", "comments"]
REAL = [
    ("robust04", "qrels.txt.gz", "bm25.run.gz"),
    ("robust04", "qrels.txt.gz", "bm25-rm3.run.gz"),
    ("core18", "qrels.txt", "title-rm3.run.gz"),
    ("core18", "qrels.txt", "desc-rm3.run.gz"),
    ("dl19-passage", "qrels.txt", "bm25-default.run.gz"),
    ("dl20-doc", "qrels.txt", "d_bm25.run.gz"),
    ("dl20-doc", "qrels.txt", "d_bm25rm3.run.gz"),
    ("covid-round5", "qrels.txt", "bm25-abstract-qdel.run.gz"),
    ("beir-trec-covid", "qrels.txt", "bm25-flat.run.gz"),
]
NOT_NUMERIC = {"runid", "num_q", "relstring"}


def serpeval_values(qrels: Qrels, run: Run, rel: int, judged_only: bool
                    ) -> dict[str, dict[str, float]]:
    """Per-topic values of ``trec_eval --compat 9.0.8 -q -m all_trec``, keyed like pytrec_eval."""
    opts = Options(per_query=True, measures=["all_trec"], compat="9.0.8", rel_level=rel,
                   judged_only=judged_only)
    evaluation = compute_evaluation(opts, qrels, run)
    by_name = {c.name: v for c, v in zip(evaluation.columns, evaluation.per_topic, strict=True)
               if v is not None and c.kind != "str"}
    # pytrec_eval keeps gm_map/gm_bpref per topic as log(max(x, 1e-5)).
    by_name["gm_map"] = [math.log(max(x, 1e-5)) for x in by_name["map"]]
    by_name["gm_bpref"] = [math.log(max(x, 1e-5)) for x in by_name["bpref"]]
    topics = evaluation.topics.to_pylist()
    return {q: {name: float(values[i]) for name, values in by_name.items()}
            for i, q in enumerate(topics)}


def assert_equal_to_pytrec_eval(qrels: Qrels, run: Run, rel: int, judged_only: bool,
                                as_dicts: tuple[dict, dict] | None = None) -> int:
    """``as_dicts``: ``(qrels.to_dict(), run.to_dict())`` when already made (pytrec_eval's
    input; 311k Robust04 judgments take 0.1 s to convert)."""
    qrels_dict, run_dict = as_dicts if as_dicts is not None else (qrels.to_dict(), run.to_dict())
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels_dict, pytrec_eval.supported_measures, relevance_level=rel,
        judged_docs_only_flag=judged_only)
    theirs = evaluator.evaluate(run_dict)
    ours = serpeval_values(qrels, run, rel, judged_only)
    assert sorted(ours) == sorted(theirs)
    compared = 0
    for qid, values in theirs.items():
        for name, value in values.items():
            if name in NOT_NUMERIC:
                continue
            if judged_only and math.isnan(value):
                continue  # trec_eval's 0/0 with nothing judged retrieved; serpeval gives 0
            assert ours[qid][name] == value, (qid, name, ours[qid][name], value)
            compared += 1
    return compared


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (2, False), (1, True)])
def test_generated_cases_equal_pytrec_eval(case: str, rel: int, judged_only: bool) -> None:
    qrels = read_qrels(FIXTURES / case / "qrels")
    run = read_run(FIXTURES / case / "run")
    assert assert_equal_to_pytrec_eval(qrels, run, rel, judged_only) > 100


@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), REAL, ids=lambda x: str(x))
def test_real_runs_equal_pytrec_eval(trec: Path, folder: str, qrels_name: str, run_name: str
                                     ) -> None:
    qrels = read_qrels(trec / folder / qrels_name)
    run = read_run(trec / folder / "runs" / run_name)
    as_dicts = qrels.to_dict(), run.to_dict()  # once for the three settings
    for rel, judged_only in [(1, False), (2, False), (1, True)]:
        assert assert_equal_to_pytrec_eval(qrels, run, rel, judged_only, as_dicts) > 1000
