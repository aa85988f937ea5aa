"""Fractional grades (``grades="float"``) through every qrels reader (issue 29 item 2): TREC
text (fast and careful), JSON lines, JSON, CSV, Parquet, a DataFrame, an ``_rank_eval`` body,
and the value rule (:func:`serpeval.core.data.check_float_grades`)."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.core.data import Qrels, check_float_grades, check_grades
from serpeval.core.errors import DuplicateError, EmptyInputError, InvalidParameterError, ParseError
from serpeval.io import as_qrels, qrels_from_table, read_qrels
from serpeval.io.propensities import as_propensities, read_propensities


def rows(qrels: Qrels) -> list[tuple[str, str, float]]:
    return list(zip(qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist(), qrels.relevance.tolist(), strict=True))


WANT = [("q1", "d1", 2.5), ("q1", "d2", 0.0), ("q2", "d1", -0.5)]


def test_every_format(tmp_path) -> None:
    files = {
        "q.txt": "q1 0 d1 2.5\nq1 0 d2 0\nq2 0 d1 -0.5\n",
        "q2.txt": "q1\t0\td1\t2.5\r\n# c\nq1 0  d2 0e0\nq2 0 d1 -.5",  # careful path
        "q.jsonl": "\n".join(json.dumps({"qid": q, "docno": d, "rel": g}) for q, d, g in WANT),
        "q.json": json.dumps({"q1": {"d1": 2.5, "d2": 0}, "q2": {"d1": -0.5}}),
        "q.csv": "query_id,doc_id,relevance\nq1,d1,2.5\nq1,d2,0\nq2,d1,-0.5\n",
        "r.json": json.dumps({"requests": [{"id": "q1", "ratings": [{"_id": "d1", "rating": 2.5},
                                                                   {"_id": "d2", "rating": 0}]},
                                           {"id": "q2", "ratings": [{"_id": "d1", "rating": -0.5}]}]}),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                             "relevance": [2.5, 0.0, -0.5]}), tmp_path / "q.parquet")
    for name in [*files, "q.parquet"]:
        qrels = read_qrels(tmp_path / name, grades="float")
        assert qrels.grades == "float", name
        assert sorted(rows(qrels)) == sorted(WANT), name
        with pytest.raises(ParseError, match="--grades float"):
            read_qrels(tmp_path / name)  # the default refuses 2.5, naming where


def test_dataframe_and_conversions() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d1"], "label": [2.5, 0.0, -0.5]})
    assert rows(qrels_from_table(df, grades="float")) == WANT
    assert rows(as_qrels(df, grades="float")) == WANT
    bad = pa.table({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d1"], "label": pa.array([2.5, math.nan, 1.0])})
    with pytest.raises(ParseError, match=r"<table>: row 2: expected a finite real relevance grade .* found NaN"):
        qrels_from_table(bad, grades="float")
    with pytest.raises(InvalidParameterError, match="grades must be one of int, float; got 'real'"):
        read_qrels("x.txt", grades="real")  # type: ignore[arg-type]


def test_duplicate_and_empty_and_bad_text(tmp_path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 0.5\nq1 0 d1 1.5\n")
    with pytest.raises(DuplicateError, match=r"q.txt:2: document 'd1' is judged twice"):
        read_qrels(path, grades="float")
    path.write_text("q1 0 d1 0,5\n")
    with pytest.raises(ParseError, match=r"q.txt:1: expected a real relevance grade in column 4, found '0,5'"):
        read_qrels(path, grades="float")
    path.write_text("q1 0 d1 inf\nq1 0 d2 1\n")
    with pytest.raises(ParseError, match=r"q.txt:1: .* found infinity"):
        read_qrels(path, grades="float")
    path.write_text("q1 0 d1\n")
    with pytest.raises(ParseError, match="expected 4 columns"):
        read_qrels(path, grades="float")
    path.write_text("# nothing\n")
    with pytest.raises(EmptyInputError):
        read_qrels(path, grades="float")


def test_value_rule() -> None:
    where = lambda i: f"row {i + 1}"  # noqa: E731
    assert check_float_grades(np.array([1, 2, -3], dtype=np.int32), where).tolist() == [1.0, 2.0, -3.0]
    assert check_float_grades(np.array([True, False]), where).tolist() == [1.0, 0.0]
    assert check_float_grades([Decimal("0.1"), 2, 0.5], where).tolist() == [0.1, 2.0, 0.5]
    assert check_float_grades(pa.chunked_array([[1.5, 2.0]]), where).tolist() == [1.5, 2.0]
    with pytest.raises(ParseError, match=r"row 2: .* found 9007199254740992, outside that range"):
        check_float_grades(np.array([1, 2**53], dtype=np.int64), where)
    with pytest.raises(ParseError, match=r"row 1: .* found 'a' \(str\)\. .* \(2 values are not valid grades"):
        check_float_grades(["a", None, 1], where)
    with pytest.raises(ParseError, match=r"row 2: .* found 100000000000000000000, outside that range"):
        check_float_grades([1, 10**20], where)
    with pytest.raises(ParseError, match=r"row 1: .* outside that range"):
        check_float_grades([10**400], where)  # beyond float64 as an int
    with pytest.raises(ParseError, match=r"row 1: .* found -infinity"):
        check_float_grades([-math.inf], where)
    with pytest.raises(ParseError, match=r"not a whole number.*--grades float"):
        check_grades([2.5], where)
    arr = np.array([1.0, 2.0])
    assert check_float_grades(arr, where) is not arr  # never the caller's array


def test_propensity_files(tmp_path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("a 0.5\na 0.4\n")
    with pytest.raises(DuplicateError, match=r"p.txt:2: document 'a' is listed twice \(first at line 1\)"):
        read_propensities(path)
    path.write_text("a 0.5 x\n")
    with pytest.raises(ParseError, match=r"p.txt:1: expected 2 columns"):
        read_propensities(path)
    path.write_text("\n# only comments\n")
    with pytest.raises(EmptyInputError, match="no propensities"):
        read_propensities(path)
    assert as_propensities(None) == (None, "<propensities>")
    assert as_propensities({1: 0.5}) == ({"1": 0.5}, "<propensities>")
    with pytest.raises(ParseError, match="expected a path or a"):
        as_propensities(3)
