"""Hostile values in JSON, JSON lines, CSV and Parquet inputs: refused with an input error
naming ``path:line`` (or the key path), never an internal error and never read as something else.

Issue 27, item 15: a 5,000-digit integer (beyond Python's ``int()`` digit limit), JSON nested
100,000 deep (Python's ``RecursionError``), a lone surrogate escape ``\\ud800``, ids that are
lists, objects, booleans or empty text, ``true``/``false`` grades, and a CSV with two
``relevance`` columns. The property test at the end feeds the JSON and JSONL readers hostile
values of every kind and checks that each outcome is a correct read or a serpeval InputError.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import serpeval
from serpeval.cli import main
from serpeval.core.data import Qrels
from serpeval.core.errors import InputError, ParseError
from serpeval.io import qrels_from_table, read_qrels, read_run, read_subtopic_qrels
from serpeval.io.groups import read_groups

RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
HUGE = "9" * 5000  # more digits than Python's int() converts (4,300 by default)
DEEP = 100_000


def _row(qid: Any = "q1", doc: Any = "d1", **value: Any) -> str:
    return json.dumps({"query_id": qid, "doc_id": doc, **(value or {"relevance": 1})})


#: (file name, content, the line it fails on, a pattern of the message)
CASES: list[tuple[str, str, int | None, str]] = [
    # internal errors before: ValueError (int digit limit), RecursionError, UnicodeEncodeError
    ("huge_grade.jsonl", _row(doc="d0", relevance=0) + "\n" + _row().replace(": 1}", f": {HUGE}}}") + "\n", 2,
     "expected an integer relevance grade .* found infinity"),
    ("huge_grade.json", '{"q1": {"d0": 0,\n "d1": ' + HUGE + "}}", None,
     r'key \["q1"\]\["d1"\]: expected an integer relevance grade .* found infinity'),
    ("huge_grade.txt", "q1 0 d1 1\nq1 0 d2 -" + HUGE + "\n", 2,
     "expected an integer relevance grade .* found -infinity"),
    ("deep.jsonl", _row() + "\n" + '{"query_id": "q1", "doc_id": "d2", "relevance": 1, "x": '
     + "[" * DEEP + "]" * DEEP + "}\n", 2, "nested 100,001 levels deep"),
    ("deep.json", '{"q1":\n {"d1": ' + '{"a":' * DEEP + "1" + "}" * DEEP + "}}", 2, "nested 100,002 levels deep"),
    ("surrogate.jsonl", _row() + "\n" + '{"query_id": "q1", "doc_id": "d\\ud800x", "relevance": 1}\n', 2,
     r'the text "d\\ud800x" in \["doc_id"\] holds the escape \\ud800 without its pair'),
    ("surrogate.json", '{"q1": {"d1": 1,\n  "caf\\u00e9\\ud83d\\ude00": 1,\n  "\\udc00": 0}}', 3,
     r'the text "\\udc00" in \["q1"\] holds the escape \\udc00 without its pair'),
    # accepted before: ids turned into the text "[1, 2]", "true"; empty ids; boolean grades
    ("list_qid.jsonl", _row() + "\n" + _row(qid=[1, 2]) + "\n", 2,
     r"the query id \('query_id'\) is \[1, 2\] \(a list\)"),
    ("object_doc.jsonl", _row(doc={"a": 1}) + "\n", 1, r'the doc id \(\'doc_id\'\) is \{"a": 1\} \(an object\)'),
    ("bool_qid.jsonl", _row(qid=True) + "\n" + _row(qid=False, doc="d2") + "\n", 1,
     r"the query id \('query_id'\) is true \(true/false\)"),
    ("bool_doc.jsonl", _row(doc="d7") + "\n" + _row(doc=False) + "\n", 2, r"the doc id \('doc_id'\) is false"),
    ("empty_doc.jsonl", _row() + "\n\n" + _row(doc="") + "\n", 3,
     r"the doc id \('doc_id'\) is empty: ''; every line needs a doc id\. Ids are text or numbers\."),
    ("blank_qid.jsonl", _row(qid="\u3000") + "\n", 1, r"the query id \('query_id'\) is empty"),
    ("bool_grade.jsonl", _row(relevance=True) + "\n" + _row(doc="d2", relevance=False) + "\n", 1,
     r"the relevance \('relevance'\) is true; expected an integer grade"),
    ("bool_grade.json", '{"q1": {"d1": 1, "d2": true}}', None,
     r'key \["q1"\]\["d2"\]: expected an integer relevance grade, found true'),
    ("empty_doc.json", '{"q1": {"d1": 1, "": 0}}', None, r'key \["q1"\]\[""\]: the doc id is empty'),
    ("empty_qid.json", '{"": {"d1": 1}}', None, r'key \[""\]: the query id is empty'),
    ("rank_eval_bool.json", '{"requests": [{"id": true, "ratings": [{"_id": "d1", "rating": 1}]}]}', None,
     r'requests\[0\]: the "id" is true; expected an id'),
    ("rank_eval_rating.json", '{"requests": [{"id": "q1", "ratings": [{"_id": "d1", "rating": false}]}]}', None,
     r"requests\[0\]\.ratings\[0\]: expected an integer relevance grade, found false\. Write the grade as a "
     r"number \(true as 1, false as 0\)\.$"),
    ("two_relevance.csv", "query_id,doc_id,relevance,relevance\nq1,d1,1,0\n", None,
     r"2 columns are named 'relevance' \('relevance', 'relevance'\)"),
    ("two_cases.csv", "qid,docid,Rel,rel\nq1,d1,1,0\n", None, r"2 columns are named 'rel' \('Rel', 'rel'\)"),
    ("empty_doc.csv", "qid,docid,rel\nq1,d1,1\nq1,,0\n", 3, r"the doc id \('docid'\) is empty"),
]


@pytest.mark.parametrize(("name", "content", "line", "message"), CASES, ids=[c[0] for c in CASES])
def test_the_command_line_refuses_with_one_line_naming_the_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, line: int | None,
        message: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN)
    status = main(["evaluate", str(tmp_path / name), str(tmp_path / "run.txt"), "-m", "P@1"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1, err
    where = re.escape(f"{tmp_path / name}") + (f":{line}" if line is not None else "")
    assert re.match(rf"serpeval evaluate: error: {where}: .*{message}", err.strip()), err


def test_a_huge_grade_in_subtopic_qrels_is_refused_with_its_line() -> None:
    with pytest.raises(ParseError, match=r"<bytes>:2: expected an integer relevance grade .* found infinity"):
        read_subtopic_qrels(("q1 1 d1 1\nq1 2 d2 " + HUGE + "\n").encode())


@pytest.mark.parametrize(("qid", "found"), [("[1, 2]", r"\[1, 2\] \(a list\)"), ("true", r"true \(true/false\)"),
                                           ('{"a": 1}', r'\{"a": 1\} \(an object\)'), ('" "', r"empty: ' '")])
def test_a_groups_file_refuses_query_ids_that_are_not_ids(tmp_path: Path, qid: str, found: str) -> None:
    """They were turned into the text "[1, 2]" or "True" and so matched no query, silently."""
    (tmp_path / "g.jsonl").write_text('{"qid": "q1", "group": "de"}\n{"qid": ' + qid + ', "group": "fr"}\n')
    with pytest.raises(ParseError, match=rf"g\.jsonl:2: the query id is {found}; every line needs a query id"):
        read_groups(tmp_path / "g.jsonl")


def test_a_bool_grade_in_parquet_is_refused_with_its_row(tmp_path: Path) -> None:
    pq.write_table(pa.table({"qid": ["q1", "q1", "q1"], "docid": ["d1", "d2", "d3"],
                             "rel": pa.array([None, False, True])}), tmp_path / "q.parquet")
    with pytest.raises(ParseError, match=r"q\.parquet: row 2: the relevance \('rel'\) is false; expected an "
                                         r"integer grade"):
        read_qrels(tmp_path / "q.parquet")


#: The same judgments in memory: Arrow, pandas (numpy bool and nullable "boolean"), polars.
BOOL_TABLES = [
    ("arrow", lambda: pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [True, False]}),
     r"<table>: row 1: the relevance \('relevance'\) is true"),
    ("pandas", lambda: pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [False, True]}),
     r"<table>: row 1: the relevance \('rel'\) is false"),
    ("pandas-nullable", lambda: pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"],
                                              "rel": pd.array([None, True], dtype="boolean")}),
     r"<table>: row 2: the relevance \('rel'\) is true"),
    ("polars", lambda: pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [True, False]}),
     r"<table>: row 1: the relevance \('label'\) is true"),
]


@pytest.mark.parametrize(("make", "message"), [c[1:] for c in BOOL_TABLES], ids=[c[0] for c in BOOL_TABLES])
def test_a_bool_grade_in_a_table_in_memory_is_refused_as_in_a_file(make: Any, message: str) -> None:
    """An Arrow table, a pandas or a polars DataFrame read True/False as 1/0, silently, while
    the same table written to Parquet was refused."""
    with pytest.raises(ParseError, match=message + r"; expected an integer grade \(0, 1, 2, \.\.\.\)\. Write "
                                               r"the grades as numbers \(true as 1, false as 0\)\.$"):
        serpeval.evaluate(make(), {"1": {"a": 1.0, "b": 2.0}}, ["P@1", "AP"])


def test_a_bool_grade_column_named_by_the_caller_is_refused_under_its_name() -> None:
    table = pa.table({"qid": ["1"], "docno": ["a"], "rel": [1], "judged": [True]})
    with pytest.raises(ParseError, match=r"<table>: row 1: the relevance \('judged'\) is true"):
        qrels_from_table(table, relevance_col="judged")
    assert qrels_from_table(table).relevance.tolist() == [1]   # the bool column is not the grades


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_a_bool_grade_in_a_python_dict_is_refused(value: Any) -> None:
    """``bool`` is an ``int`` in Python: ``{"q": {"a": True}}`` was read as grade 1."""
    shown = repr(bool(value))
    message = (rf"<dict>: query 'q', doc 'b': expected an integer relevance grade, found {shown}\. Write the "
               r"grade as a number \(True as 1, False as 0\)\.$")
    with pytest.raises(ParseError, match=message):
        serpeval.evaluate({"q": {"a": 1, "b": value}}, {"q": {"a": 1.0}}, ["P@1"])
    with pytest.raises(ParseError, match=message):
        Qrels.from_dict({"q": {"a": 1, "b": value}}, grades="float")


def test_bool_ids_in_parquet_are_refused(tmp_path: Path) -> None:
    pq.write_table(pa.table({"qid": ["q1"], "docid": [True], "score": [1.0]}), tmp_path / "r.parquet")
    with pytest.raises(ParseError, match=r"the doc id column 'docid' has type bool; expected text or integers"):
        read_run(tmp_path / "r.parquet")


def test_huge_integer_scores_read_as_the_infinity_they_stand_for(tmp_path: Path) -> None:
    """A score's digits beyond float64 read as infinity, as ``1e5000`` and trec_eval's atof
    do (core.data.check_scores keeps infinite scores), in JSON lines and in JSON alike."""
    (tmp_path / "r.jsonl").write_text(json.dumps({"qid": "q1", "docid": "d1", "score": 1})[:-2] + HUGE + "}\n"
                                      + '{"qid": "q1", "docid": "d2", "score": -' + HUGE + "}\n"
                                      + '{"qid": "q1", "docid": "d3", "score": 1e5000}\n')
    (tmp_path / "r.json").write_text('{"q1": {"d1": ' + HUGE + ', "d2": -' + HUGE + ', "d3": 2}}')
    assert read_run(tmp_path / "r.jsonl").scores.tolist() == [math.inf, -math.inf, math.inf]
    assert read_run(tmp_path / "r.json").scores.tolist() == [math.inf, -math.inf, 2.0]


def test_what_the_checks_let_through_still_reads(tmp_path: Path) -> None:
    """Paired surrogate escapes are one character; integer ids are text; a deep but sane
    extra field is ignored; an escaped backslash before ``ud800`` is not an escape."""
    rows = ['{"qid": 7, "docid": "caf\\u00e9\\ud83d\\ude00", "rel": 2, "meta": [[[1]]]}',
            '{"qid": "7", "docid": "d\\\\ud800", "rel": 1}']
    (tmp_path / "q.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    qrels = read_qrels(tmp_path / "q.jsonl")
    assert qrels.to_dict() == {"7": {"café\U0001F600": 2, "d\\ud800": 1}}


# ---------------------------------------------------------------------------- fuzz

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6),
    st.sampled_from(["", " ", "\t", "q1", "d1", "0", "-1"]),
)
_HOSTILE_TEXT = [HUGE, "-" + HUGE, "[" * 3000 + "]" * 3000, '"\\ud800"', '"a\\udfff"', '"\\ud83d\\ude00"',
                 "1e400", "-1e400", "NaN", "Infinity", "true", "[]", "{}", '""', "null"]


def _value() -> st.SearchStrategy[str]:
    """JSON text of one value: a plain JSON value (nested a little) or a hostile token."""
    plain = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=2)
                         | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4)
    return st.one_of(plain.map(json.dumps), st.sampled_from(_HOSTILE_TEXT))


def _mostly(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``valid`` 7 times in 8, else a hostile value: enough files read for the check of what
    was read to bite, enough hostile values for the refusals."""
    return st.integers(0, 7).flatmap(lambda i: _value() if i == 0 else valid)


_ID = _mostly(st.sampled_from(['"q1"', '"q2"', "7", "-3", '"d\\ud83d\\ude00"', '"caf\u00e9"']))
_NUMBER = _mostly(st.one_of(st.integers(-3, 3).map(str), st.sampled_from(["2.0", "0.25", "1e3"])))


@st.composite
def _jsonl(draw: st.DrawFn) -> str:
    """Lines shaped like qrels or run rows (an id pair and a value), any field of which may be
    hostile, plus now and then an extra field."""
    lines = []
    names = draw(st.sampled_from([("qid", "docid"), ("query_id", "doc_id"), ("topic", "pid")]))
    value = draw(st.sampled_from(["rel", "relevance", "score"]))
    for _ in range(draw(st.integers(1, 4))):
        fields = [f'"{names[0]}": {draw(_ID)}', f'"{names[1]}": {draw(_ID)}', f'"{value}": {draw(_NUMBER)}']
        if draw(st.booleans()):
            fields.append(f'"x": {draw(_value())}')
        lines.append("{" + ", ".join(draw(st.permutations(fields))) + "}")
    return "\n".join(lines) + "\n"


_KEY_HOSTILE = ['""', '" "', '"\\ud800"', '"\\udc00x"']


def _key(valid: list[str]) -> st.SearchStrategy[str]:
    return st.integers(0, 7).flatmap(lambda i: st.sampled_from(_KEY_HOSTILE if i == 0 else valid))


@st.composite
def _nested_json(draw: st.DrawFn) -> str:
    """``{query_id: {doc_id: value}}`` with hostile keys, values and shapes now and then."""
    queries = []
    for _ in range(draw(st.integers(1, 3))):
        qid = draw(_key(['"q1"', '"q\\ud83d\\ude00"', '"2"']))
        docs = ", ".join(draw(_key(['"d1"', '"d2"', '"caf\u00e9"'])) + ": " + draw(_NUMBER)
                         for _ in range(draw(st.integers(1, 3))))
        queries.append(f"{qid}: {draw(_value())}" if draw(st.integers(0, 7)) == 0 else f"{qid}: {{{docs}}}")
    return "{" + ", ".join(queries) + "}"


def _number(text: str) -> int | float:
    """The reference's reading of a JSON integer: exact, or the float it stands for."""
    return int(text) if len(text.lstrip("-")) <= 4000 else float(text)


def _expected_rows(path: Path) -> list[tuple[Any, Any, Any]] | None:
    """What a correct reader reads: (query id, doc id, value) per entry, ids as text; None
    where the reference cannot say (an id that is a JSON float: 1.0 may print as 1)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text, parse_int=_number)
        return [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    rows = []
    for line in text.splitlines():
        record = json.loads(line, parse_int=_number)
        q, d, v = (next(record[k] for k in names if k in record) for names in (
            ("qid", "query_id", "topic"), ("docid", "doc_id", "pid"), ("rel", "relevance", "score")))
        if isinstance(q, float) or isinstance(d, float):
            return None
        rows.append((str(q), str(d), v))
    return rows


def _read_or_refuse(path: Path) -> None:
    """Every read either raises a serpeval InputError or succeeds with exactly the entries of
    the file (ids as text, grades as the integers written, scores as the numbers written);
    any other exception fails the test."""
    for reader in (read_qrels, read_run):
        try:
            data = reader(path)
        except InputError:
            continue
        values = data.relevance.tolist() if reader is read_qrels else data.scores.tolist()
        got = list(zip(data.query_ids.to_pylist(), data.doc_ids.to_pylist(), values, strict=True))
        expected = _expected_rows(path)
        if expected is not None:
            assert got == [(q, d, float(v) if reader is read_run else v) for q, d, v in expected]
        for q, d, v in got:
            assert q.strip(), got
            assert d.strip(), got
            assert isinstance(v, float if reader is read_run else int), got


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_jsonl())
def test_fuzz_jsonl_is_read_or_refused_with_an_input_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "f.jsonl").write_text(text, encoding="utf-8")
    _read_or_refuse(tmp_path / "f.jsonl")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_nested_json())
def test_fuzz_json_is_read_or_refused_with_an_input_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "f.json").write_text(text, encoding="utf-8")
    _read_or_refuse(tmp_path / "f.json")

