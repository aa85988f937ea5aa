"""Per-query parity with ranx (0.3) for every ranx metric name, on the DL20 document runs.

ranx orders tied scores by an unstable argsort (numba's compiled, NumPy's interpreted, as
here) over the order the run was given (then reversed), serpeval by doc id descending
(trec_eval's rule): the values are identical on the runs with every tie broken the same way
(scores rewritten in serpeval's order), and on the runs as they are they differ only on
queries with tied scores. ranx needs the run and the qrels to have the same queries: both
are cut to the judged queries the run answers. ranx runs interpreted in a child process
(tests/integrations/ranx_oracle.py): compiling its numba kernels took ~40 s of CPU with
numba's cache cold; interpreted and compiled ranx agree within 4e-15 on this data (checked
by hand).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integrations.ranx_oracle import need_ranx, ranx_evaluate

import serpeval
from serpeval.io import read_qrels, read_run

NAMES = [
    "ndcg@10", "ndcg@10-l2", "ndcg_burges@10", "ndcg_burges@10-l2", "ndcg", "dcg@10", "dcg_burges@10",
    "map", "map@100", "map@100-l2", "mrr", "mrr@10", "precision@10", "precision@10-l2", "precision",
    "recall@100", "recall", "f1@10", "f1", "hits@10", "hits", "hit_rate@10", "hit_rate", "r-precision",
    "bpref", "rbp.95", "rbp.8-l2",
]


def _untied(run: dict) -> dict:
    out = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda d: (-d[1], [-b for b in d[0].encode()]))
        out[qid] = {doc: float(len(ranked) - i) for i, (doc, _) in enumerate(ranked)}
    return out


def _differing(qrels: dict, run: dict, theirs: dict) -> dict[str, list[str]]:
    """Per name, the queries where serpeval and ``theirs`` (ranx's values on ``run``) differ."""
    reference, qids = theirs["result"], theirs["query_ids"]
    assert qids == sorted(run)  # ranx.Run sorts its query ids
    ours = serpeval.evaluate(qrels, run, NAMES).runs[0]
    assert ours.query_ids.tolist() == qids
    out = {}
    for j, name in enumerate(NAMES):
        mine = ours.column(j)
        out[name] = [q for i, q in enumerate(qids) if abs(mine[i] - reference[name][i]) > 1e-12]
    return out


@pytest.mark.slow
def test_every_ranx_name_matches_ranx_per_query(trec: Path) -> None:
    need_ranx()
    folder = trec / "dl20-doc"
    qrels = read_qrels(folder / "qrels.txt").to_dict()
    run = read_run(folder / "runs" / "d_bm25.run.gz").to_dict()
    run = {q: docs for q, docs in run.items() if q in qrels}
    qrels = {q: grades for q, grades in qrels.items() if q in run}
    assert len(run) == 45
    untied = _untied(run)
    theirs_untied, theirs = ranx_evaluate(qrels, [untied, run], NAMES, return_mean=False)
    assert _differing(qrels, untied, theirs_untied) == {name: [] for name in NAMES}
    tied = {q for q, docs in run.items() if len(set(docs.values())) < len(docs)}
    for name, queries in _differing(qrels, run, theirs).items():
        assert set(queries) <= tied, name
