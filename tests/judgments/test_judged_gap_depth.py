"""The unequal-judging warning compares runs over the depth they all reach (issue 27, item 6).

A run 150 deep against one 1000 deep: at depth 1000 the deep run's extra documents, which no
pool saw, made its judged share look 48 points lower on Robust04 and the warning said the
shallow run was favoured in AP, although over the 150 ranks both reach the shares are 91%
and 90%. The check now compares at min(measure's depth, the depth every run reaches) and
says which depth.
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from pathlib import Path

import pytest
from tests.conftest import TREC, need

from serpeval.cli.app import main
from serpeval.evaluation.evaluate import evaluate
from serpeval.io import read_qrels, read_run
from serpeval.judgments.judged import judged_gaps

# Query "q-1" and "クエリ2" judge d1..d3 (grades 2, 0, 1); everything else is unjudged.
QRELS = {"q-1": {"d1": 2, "d2": 0, "d3": 1}, "クエリ2": {"d1": 1, "d2": 0, "d3": 0}}
#: Three documents per query, all judged.
SHALLOW = {q: {"d1": 3.0, "d2": 2.0, "d3": 1.0} for q in QRELS}
#: The same three first, then seven documents no judge saw.
DEEP = {q: {"d1": 3.0, "d2": 2.0, "d3": 1.0, **{f"new{i}": 0.5 - i / 100 for i in range(7)}} for q in QRELS}
#: Only one of its top 3 judged: a real gap within the depth both reach.
DEEP_HOLES = {q: {"d1": 3.0, "x1": 2.0, "x2": 1.0, **{f"new{i}": 0.5 - i / 100 for i in range(7)}} for q in QRELS}


def test_a_shallow_run_is_compared_over_the_depth_both_reach() -> None:
    runs = {"shallow": SHALLOW, "deep": DEEP}
    results = evaluate(QRELS, runs, ["AP"])
    # Over 3 ranks (the depth both reach) both runs' retrieved documents are 3/3 judged;
    # at depth 10 the deep run's would be 3/10 (the old check: a 70-point "gap").
    assert judged_gaps(QRELS, list(runs.values()), results) == []


def test_a_real_gap_is_reported_at_the_common_depth_and_says_so() -> None:
    runs = {"shallow": SHALLOW, "holes": DEEP_HOLES}
    results = evaluate(QRELS, runs, ["AP", "P@2"])
    gaps = judged_gaps(QRELS, [SHALLOW, DEEP_HOLES], results)
    by_depth = {g.depth: g for g in gaps}
    # Depth 2 (P@2): shallow 2/2, holes 1/2 -> 50 points.
    assert by_depth[2].best[1] == pytest.approx(1.0)
    assert by_depth[2].worst[1] == pytest.approx(0.5)
    # AP looks to depth 10, but the shallow run stops at 3: shallow 3/3, holes 1/3.
    gap = by_depth[3]
    assert gap.measures == ("AP",)
    assert gap.worst[1] == pytest.approx(1 / 3)
    assert gap.deeper == (("AP", 10),)                         # AP itself looks to 10
    assert "top 3 (the depth every run reaches; AP looks to 10)" in gap.message()
    assert by_depth[2].deeper == ()                             # P@2: both runs reach 2
    assert "top 2 differs" in by_depth[2].message()


def _reference_shares(qrels_path: Path, run_paths: list[Path], depth: int) -> list[float]:
    """Per run, the mean over judged queries the run answers of (documents with a grade >= 0
    in its top ``min(depth, length)``) / min(depth, length); ties by score descending, then doc
    id descending (trec_eval's order). Plain Python, independent of serpeval; the 311k
    Robust04 judgments read once for all runs."""
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    with gzip.open(qrels_path, "rt") as f:
        for line in f:
            q, _, d, g = line.split()
            grades[q][d] = int(g)
    out = []
    for run_path in run_paths:
        ranked: dict[str, list[tuple[float, str]]] = defaultdict(list)
        with gzip.open(run_path, "rt") as f:
            for line in f:
                q, _, d, _, s, _ = line.split()
                ranked[q].append((float(s), d))
        shares = []
        for q, docs in ranked.items():
            if q not in grades:
                continue
            top = sorted(docs, key=lambda sd: (sd[0], sd[1]), reverse=True)[:depth]
            shares.append(sum(grades[q].get(d, -1) >= 0 for _, d in top) / len(top))
        out.append(sum(shares) / len(shares))
    return out


def test_robust04_bm25_against_rm3_has_no_false_warning(capsys: pytest.CaptureFixture[str]) -> None:
    root = need(TREC / "robust04")
    qrels = root / "qrels.txt.gz"
    runs = [root / "runs" / "bm25.run.gz", root / "runs" / "bm25-rm3.run.gz"]
    # read once for evaluate and both judged_gaps calls (the CLI below reads the files itself)
    judgments, read = read_qrels(qrels), [read_run(p) for p in runs]
    results = evaluate(judgments, read, ["nDCG@10", "AP"])
    assert [r.name for r in results.runs] == ["bm25", "bm25-rm3"]
    assert judged_gaps(judgments, read, results) == []        # was: 48.2 points at depth 1000
    (gap,) = [g for g in judged_gaps(judgments, read, results, threshold=0.0) if g.measures == ("AP",)]
    assert gap.depth == 150                                   # BM25's rankings stop at 150
    shares = dict([gap.best, gap.worst])
    reference = _reference_shares(qrels, runs, 150)
    assert shares["bm25"] == pytest.approx(reference[0], abs=1e-12)
    assert shares["bm25-rm3"] == pytest.approx(reference[1], abs=1e-12)
    assert main(["compare", str(qrels), *map(str, runs), "-m", "nDCG@10", "-m", "AP"]) == 0
    assert "judged rate" not in capsys.readouterr().out
