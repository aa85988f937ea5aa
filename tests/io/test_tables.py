"""Qrels and runs from dicts, JSONL, JSON, Parquet, Arrow, pandas and polars give the same numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import serpeval
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.io import read_run

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}
RUN = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1}, "q2": {"d": 1.0, "e": 2.0}}
MEASURES = ["nDCG@10", "AP", "P@2", "RR"]


def expected() -> dict[str, float]:
    return serpeval.evaluate(QRELS, RUN, MEASURES).means("run")


def long(d: dict, value: str) -> list[dict]:
    return [{"query_id": q, "doc_id": doc, value: v} for q, docs in d.items() for doc, v in docs.items()]


def test_pandas_and_polars_and_arrow() -> None:
    for make in (pd.DataFrame, pl.DataFrame, pa.Table.from_pylist):
        res = serpeval.evaluate(make(long(QRELS, "relevance")), make(long(RUN, "score")), MEASURES)
        assert res.means("run") == expected()


def test_column_aliases_and_integer_ids() -> None:
    qrels = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "label": [1, 0]})
    run = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "sim": [0.1, 0.9]})
    assert serpeval.evaluate(qrels, run, ["RR"]).means("run") == {"RR": 0.5}


def test_files(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(long(QRELS, "relevance")), tmp_path / "qrels.parquet")
    pq.write_table(pa.Table.from_pylist(long(RUN, "score")), tmp_path / "bm25.parquet")
    (tmp_path / "bm25.jsonl").write_text("\n".join(json.dumps(r) for r in long(RUN, "score")) + "\n")
    (tmp_path / "bm25.json").write_text(json.dumps(RUN))
    (tmp_path / "qrels.json").write_text(json.dumps(QRELS))
    for qrels in ("qrels.parquet", "qrels.json"):
        for run in ("bm25.parquet", "bm25.jsonl", "bm25.json"):
            res = serpeval.evaluate(tmp_path / qrels, tmp_path / run, MEASURES)
            assert res.run_names == ["bm25"]
            assert res.means("bm25") == expected()


def test_table_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no score column; expected one of score, sim, similarity, "
                                         r"found columns query_id, doc_id"):
        serpeval.evaluate(QRELS, pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"]}), ["AP"])
    with pytest.raises(InputError, match=r"row 2: the doc id is missing \(null\)"):
        serpeval.evaluate(QRELS, pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", None],
                                               "score": [1.0, 2.0]}), ["AP"])
    with pytest.raises(ParseError, match=r"<table>: row 1: expected an integer relevance grade .*, found 1.5, "
                                         r"which is not a whole number"):
        serpeval.evaluate(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1.5]}), RUN, ["AP"])
    with pytest.raises(DuplicateError, match=r"row 2: document 'a' is judged twice for query 'q' \(first at row 1\)"):
        serpeval.evaluate(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "relevance": [1, 0]}),
                          RUN, ["AP"])
    with pytest.raises(ParseError, match=r"<dict>: query 'q1', doc 'a': expected a numeric score, found 'high'"):
        serpeval.evaluate(QRELS, {"q1": {"a": "high"}}, ["AP"])
    with pytest.raises(EmptyInputError, match="the run has no"):
        serpeval.evaluate(QRELS, {"q1": {}}, ["AP"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "doc_id": "a", "score": 1}\n{oops\n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2: not valid JSON"):
        read_run(bad)
    with pytest.raises(InputError, match="cannot read a int"):
        serpeval.evaluate(3, RUN, ["AP"])


def test_jsonl_blank_lines_are_counted(tmp_path) -> None:
    path = tmp_path / "gaps.jsonl"
    rows = ['{"query_id": "q1", "doc_id": "a", "score": 1}', '{"query_id": "q1", "doc_id": "b", "score": 0.5}']
    path.write_text("\n" + rows[0] + "\n  \n" + rows[1] + "\n")
    run = read_run(path)
    assert len(run) == 2
    assert run.skipped_lines == 2  # the first line and the third; not the final newline
    qrels_path = tmp_path / "q.jsonl"
    qrels_path.write_text('{"query_id": "q1", "doc_id": "a", "relevance": 1}\n\n')
    from serpeval.io import read_qrels

    assert read_qrels(qrels_path).skipped_lines == 1


def test_named_runs_mapping_and_duplicate_names() -> None:
    res = serpeval.evaluate(QRELS, {"first": RUN, "second": RUN}, ["AP"])
    assert res.run_names == ["first", "second"]
    res = serpeval.evaluate(QRELS, [RUN, RUN], ["AP"])
    assert res.run_names == ["run", "run#2"]
