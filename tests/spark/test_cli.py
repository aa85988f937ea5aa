"""``serpeval evaluate --backend spark`` prints what the local backend prints."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.cli import main

MEASURES = ["-m", "nDCG@10,AP,P(rel=2)@5,RR,NumRet,GMAP"]


def write_trec(tmp_path: Path, qrels: pa.Table, runs: dict[str, pa.Table]) -> list[str]:
    """TREC files with a comment and a blank line each; returns [qrels, run, ...] paths."""
    q = qrels.to_pydict()
    lines = ["# pooled judgments", ""] + [
        f"{qid} 0 {doc} {rel}"
        for qid, doc, rel in zip(q["query_id"], q["doc_id"], q["relevance"], strict=True)
    ]
    (tmp_path / "qrels.txt").write_text("\n".join(lines) + "\n")
    paths = [str(tmp_path / "qrels.txt")]
    for name, table in runs.items():
        r = table.to_pydict()
        body = [
            f"{qid} Q0 {doc} 0 {score!r} {name}"
            for qid, doc, score in zip(r["query_id"], r["doc_id"], r["score"], strict=True)
        ]
        (tmp_path / f"{name}.run").write_text("\n".join(["# produced by a test", *body]) + "\n")
        paths.append(str(tmp_path / f"{name}.run"))
    return paths


def both_backends(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[str, str]:
    assert main(["evaluate", *args]) == 0
    local = capsys.readouterr().out
    assert main(["evaluate", "--backend", "spark", *args]) == 0
    return local, capsys.readouterr().out


def test_the_table_and_its_notes_are_the_local_ones(spark, tied, tmp_path: Path, capsys) -> None:
    qrels, run = tied
    later = run.set_column(2, "score", pa.array([-s for s in run["score"].to_pylist()]))
    paths = write_trec(tmp_path, qrels, {"bm25": run, "dense": later})
    local, distributed = both_backends(capsys, [*paths, *MEASURES, "--depth", "20"])
    assert distributed == local
    assert "bm25: 5 of 50 judged queries have no results (skipped)" in local
    assert "qrels " + paths[0] + ": 2 blank/comment line(s) skipped" in local
    local, distributed = both_backends(
        capsys, [*paths, *MEASURES, "-q", "-f", "markdown", "--missing", "zero"]
    )
    assert distributed == local
    assert local.count("| bm25 |") == 50


def test_json_output_matches_the_local_numbers(spark, tied, tmp_path: Path, capsys) -> None:
    paths = write_trec(tmp_path, *tied[:1], {"bm25": tied[1]})
    local, distributed = (
        json.loads(text) for text in both_backends(capsys, [*paths, *MEASURES, "-f", "json"])
    )
    assert distributed["coverage"] == local["coverage"]
    assert distributed["notes"] == local["notes"]
    for want, got in zip(local["results"], distributed["results"], strict=True):
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert got[key] == (
                value if isinstance(value, str) else pytest.approx(value, rel=1e-12)
            )


def test_real_run_through_the_command_line(spark, trec, capsys) -> None:
    folder = trec / "dl19-passage"
    args = [
        str(folder / "qrels.txt"),
        str(folder / "runs" / "bm25-default.run.gz"),
        "-m",
        "ndcg_cut_10,map,recall_1000,P_10,recip_rank",
    ]
    local, distributed = both_backends(capsys, args)
    assert distributed == local
    assert "bm25-default" in local


def test_errors_are_one_line_and_exit_2(spark, tmp_path: Path, capsys) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 1.0 a\nq1 Q0 d1 2 0.5 a\n")
    assert (
        main(
            ["evaluate", "--backend", "spark", str(tmp_path / "qrels.txt"), str(tmp_path / "a.run")]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        f"serpeval evaluate: error: {tmp_path / 'a.run'}: document 'd1' is retrieved twice for "
        "query 'q1'. trec_eval refuses such runs; keep one row per (query, document), e.g. with "
        "dropDuplicates on the query and doc columns.\n"
    )
