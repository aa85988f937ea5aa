"""Per-query parity with pytrec_eval (trec_eval 9.0.8 compiled) on the real TREC runs.

pytrec_eval stores scores as 32-bit floats (9.0.8), so serpeval runs with
``float32_scores=True`` here; everything else is the same rule set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import serpeval
from serpeval.io import read_qrels, read_run

pytrec_eval = pytest.importorskip("pytrec_eval")

# pytrec_eval measure -> serpeval measure
PAIRS = {
    "P_5": "P@5", "P_10": "P@10", "P_100": "P@100", "recall_10": "R@10", "recall_100": "R@100",
    "recall_1000": "R@1000", "map": "AP", "map_cut_10": "AP@10", "map_cut_100": "AP@100",
    "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "ndcg_cut_100": "nDCG@100", "recip_rank": "RR",
    "Rprec": "Rprec", "bpref": "Bpref", "infAP": "infAP", "success_1": "Success@1",
    "success_10": "Success@10", "set_P": "SetP", "set_recall": "SetR", "set_F": "SetF",
    "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
}
TREC_MEASURES = {"P.5,10,100", "recall.10,100,1000", "map", "map_cut.10,100", "ndcg",
                 "ndcg_cut.10,100", "recip_rank", "Rprec", "bpref", "infAP", "success.1,10",
                 "set_P", "set_recall", "set_F", "num_ret", "num_rel", "num_rel_ret"}

COLLECTIONS = [
    ("robust04", "qrels.txt.gz", "bm25.run.gz"),
    ("robust04", "qrels.txt.gz", "bm25-rm3.run.gz"),
    ("dl19-passage", "qrels.txt", "bm25-default.run.gz"),
    ("dl20-doc", "qrels.txt", "d_bm25.run.gz"),
    ("core18", "qrels.txt", "title-rm3.run.gz"),
]


@pytest.mark.parametrize(("folder", "qrels_name", "run_name"), COLLECTIONS)
def test_every_query_equals_pytrec_eval(trec: Path, folder: str, qrels_name: str, run_name: str) -> None:
    qrels = read_qrels(trec / folder / qrels_name)
    run = read_run(trec / folder / "runs" / run_name)
    oracle = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), TREC_MEASURES).evaluate(run.to_dict())
    res = serpeval.evaluate(qrels, run, list(PAIRS.values()), float32_scores=True)
    (result,) = res.runs
    assert sorted(result.query_ids.tolist()) == sorted(oracle)
    compared = 0
    for i, (trec_name, _) in enumerate(PAIRS.items()):
        for qid, value in zip(result.query_ids.tolist(), result.column(i).tolist(), strict=True):
            assert value == pytest.approx(oracle[qid][trec_name], abs=1e-12), (trec_name, qid)
            compared += 1
    assert compared == len(PAIRS) * len(oracle)
