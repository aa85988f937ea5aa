"""Grades and scores outside their domain are refused by every reader, never cast.

The rule (``serpeval.core.data.check_grades`` / ``check_scores``): a grade is an integer within
±(2^53 - 1); ``2.0`` is 2; ``2.5``, NaN, infinity (``1e400`` reads as infinity), ``1e20``
and anything larger are refused with the reader's location (``path:line`` for TREC and
JSON lines, ``path: row n`` for tables, the key path for JSON). A score is any number but
NaN; infinite scores are kept, as trec_eval's ``atof`` keeps them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import serpeval
from serpeval.core.data import GRADE_LIMIT, Qrels, Run
from serpeval.core.errors import DuplicateError, InputError, ParseError
from serpeval.io import qrels_from_dict, qrels_from_table, read_qrels, read_run

EXPECTED = "expected an integer relevance grade from -9007199254740991 to 9007199254740991"
RUN = {"q1": {f"d{i}": float(10 - i) for i in range(1, 7)}}

# (JSON text of the value, Python value as a DataFrame column holds it, what the message says)
BAD_GRADES = [
    ("1e400", float("inf"), r"found infinity \(a number beyond float64, such as 1e400"),
    ("Infinity", float("inf"), r"found infinity"),
    ("-Infinity", float("-inf"), r"found -infinity"),
    ("NaN", float("nan"), r"found NaN\. NaN is not a grade"),
    ("1e20", 1e20, r"found 1e\+20, outside that range"),
    ("2.5", 2.5, r"found 2\.5, which is not a whole number"),
    ("9007199254740992", 2**53, r"found 9007199254740992, outside that range"),
    ("-9007199254740992", -(2**53), r"found -9007199254740992, outside that range"),
]


def six_relevant(bad: str) -> list[str]:
    """JSON lines of six relevant judgments of q1, the sixth with grade ``bad``."""
    return [json.dumps({"query_id": "q1", "doc_id": f"d{i}", "relevance": 1})[:-1] + "}" for i in range(1, 6)] + [
        '{"query_id": "q1", "doc_id": "d6", "relevance": ' + bad + "}"
    ]


# ---------------------------------------------------------------------------- each reader


@pytest.mark.parametrize(("text", "value", "found"), BAD_GRADES)
def test_jsonl_grade_names_path_and_physical_line(tmp_path: Path, text: str, value: float, found: str) -> None:
    path = tmp_path / "qrels.jsonl"
    lines = six_relevant(text)
    path.write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n")  # a blank line: row 6 is line 7
    with pytest.raises(ParseError, match=rf"qrels\.jsonl:7: {EXPECTED} \(2\^53 - 1\), {found}"):
        read_qrels(path)


@pytest.mark.parametrize(("text", "value", "found"), BAD_GRADES)
def test_json_grade_names_the_key_path(tmp_path: Path, text: str, value: float, found: str) -> None:
    path = tmp_path / "qrels.json"
    path.write_text('{"q1": {"d1": 1, "d\\u00e9 2": ' + text + "}}")
    with pytest.raises(ParseError, match=rf'qrels\.json: key \["q1"\]\["dé 2"\]: {EXPECTED}.*{found}'):
        read_qrels(path)


@pytest.mark.parametrize(("text", "value", "found"), BAD_GRADES)
def test_parquet_and_dataframes_name_the_row(tmp_path: Path, text: str, value: float, found: str) -> None:
    first = [1.0, 0.0] if isinstance(value, float) else [1, 0]  # a float64 or an int64 column
    columns = {"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "c"], "relevance": [*first, value]}
    table = pa.table(columns)
    path = tmp_path / "qrels.parquet"
    pq.write_table(table, path)
    with pytest.raises(ParseError, match=rf"qrels\.parquet: row 3: {EXPECTED}.*{found}"):
        read_qrels(path)
    # pandas reads NaN as a missing value (see test_nan_grade_in_each_table)
    frames = [table, pl.DataFrame(columns)] + ([] if np.isnan(value) else [pd.DataFrame(columns)])
    for frame in frames:
        with pytest.raises(ParseError, match=rf"<table>: row 3: {EXPECTED}.*{found}"):
            qrels_from_table(frame)


@pytest.mark.parametrize(("text", "value", "found"), BAD_GRADES)
def test_plain_dict_names_query_and_doc(text: str, value: float, found: str) -> None:
    with pytest.raises(ParseError, match=rf"<dict>: query 'q1', doc 'b': {EXPECTED}.*{found}"):
        qrels_from_dict({"q1": {"a": 1, "b": value}})


def test_nan_grade_in_each_table() -> None:
    """pandas turns NaN into a missing value (the null message); polars and Arrow keep NaN."""
    columns = {"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1.0, float("nan")]}
    with pytest.raises(InputError, match=r"<table>: row 2: the relevance is missing \(null\)"):
        qrels_from_table(pd.DataFrame(columns))
    for frame in (pl.DataFrame(columns), pa.table(columns)):
        with pytest.raises(ParseError, match=r"<table>: row 2: .* found NaN"):
            qrels_from_table(frame)


def test_integers_beyond_int64_in_every_reader(tmp_path: Path) -> None:
    """A grade beyond int64 (Python's json reads it as an unbounded int, Arrow as uint64) is
    refused, not a crash (OverflowError) and not wrapped around."""
    big = 2**64 - 1
    path = tmp_path / "qrels.jsonl"
    path.write_text(f'{{"qid": "q", "docid": "a", "rel": 1}}\n{{"qid": "q", "docid": "b", "rel": {big}}}\n')
    with pytest.raises(ParseError, match=r"qrels\.jsonl:2: .* found 1\.8446744073709552e\+19, outside that range"):
        read_qrels(path)
    (tmp_path / "q.json").write_text(f'{{"q": {{"a": {big}}}}}')
    with pytest.raises(ParseError, match=rf'q\.json: key \["q"\]\["a"\]: .* found {big}, outside'):
        read_qrels(tmp_path / "q.json")
    table = pa.table({"query_id": ["q"], "doc_id": ["a"], "relevance": pa.array([big], pa.uint64())})
    with pytest.raises(ParseError, match=rf"row 1: .* found {big}, outside"):
        qrels_from_table(table)
    with pytest.raises(ParseError, match=rf"<bytes>:2: .* found {big}0, outside"):
        read_qrels(f"q 0 a 1\nq 0 b {big}0\n".encode())
    with pytest.raises(ParseError, match=r"<bytes>:1: .* found 9007199254740992, outside"):
        read_qrels(b"q 0 a 9007199254740992\n")  # fits int64: the fast path's check


def test_trec_grades_stay_strict_text() -> None:
    """TREC grades are integer text: 2.5, 2.0, 1e20 and inf are refused there (trec_eval's atol
    would read 2, 2, 1 and 0), as are 1_000 (Python's int reads 1000, atol 1)."""
    for text in ("2.5", "2.0", "1e20", "inf", "1_000"):
        with pytest.raises(ParseError, match=rf"<bytes>:2: expected an integer relevance grade in column 4, "
                                             rf"found '{text}'"):
            read_qrels(f"q 0 a 1\nq\t0 b {text}\n".encode())
    with pytest.raises(ParseError, match=r"<bytes>:1: expected a number in column 5 \(score\), found '1_0\.5'"):
        read_run(b"q Q0 a 1 1_0.5 t\n")


def test_whole_floats_are_grades(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"qid": "q", "docid": "a", "rel": 2.0}\n{"qid": "q", "docid": "b", "rel": 1}\n')
    (tmp_path / "q.json").write_text('{"q": {"a": 2.0, "b": 1}}')
    pq.write_table(pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "rel": [2.0, 1.0]}), tmp_path / "q.parquet")
    for name in ("q.jsonl", "q.json", "q.parquet"):
        qrels = read_qrels(tmp_path / name)
        assert qrels.relevance.dtype == np.int64
        assert qrels.relevance.tolist() == [2, 1]


def test_grade_limits_are_accepted() -> None:
    qrels = qrels_from_dict({"q": {"a": GRADE_LIMIT, "b": -GRADE_LIMIT, "c": np.int8(1)}})
    assert qrels.relevance.tolist() == [GRADE_LIMIT, -GRADE_LIMIT, 1]   # True is refused (test_hostile_reader_inputs)
    assert read_qrels(f"q 0 a {GRADE_LIMIT}\nq 0 b -{GRADE_LIMIT}\n".encode()).relevance.tolist() == [
        GRADE_LIMIT, -GRADE_LIMIT]


def test_text_and_other_values_are_not_grades(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=rf"<dict>: query 'q', doc 'a': {EXPECTED}.*found '2' \(str\)"):
        qrels_from_dict({"q": {"a": "2"}})
    with pytest.raises(ParseError, match=r"found None \(NoneType\)"):
        qrels_from_dict({"q": {"a": None}})
    path = tmp_path / "q.jsonl"
    path.write_text('{"qid": "q", "docid": "a", "rel": 1}\n\n{"qid": "q", "docid": "b", "rel": "2"}\n')
    with pytest.raises(ParseError, match=r"q\.jsonl:3: the 'rel' field holds '2' \(text\) but line 1 holds 1 "
                                         r"\(a number\)\. Give the field one type in every line\."):
        read_qrels(path)
    path.write_text('{"qid": "q", "docid": "a", "rel": "1"}\n{"qid": "q", "docid": "b", "rel": "2"}\n')
    with pytest.raises(ParseError, match=r"q\.jsonl:1: .* found '1' \(str\)\. Write grades as numbers"):
        read_qrels(path)


def test_direct_constructors_refuse_too() -> None:
    with pytest.raises(ParseError, match=r"<qrels>: row 2: .* found 2\.5"):
        Qrels(["q", "q"], ["a", "b"], [1, 2.5])
    with pytest.raises(ParseError, match=r"<qrels>: row 1: .* found infinity"):
        Qrels(["q"], ["a"], np.array([np.inf]))
    with pytest.raises(ParseError, match=r"<run>: row 2: the score is NaN"):
        Run(["q", "q"], ["a", "b"], [1.0, float("nan")])


def test_spark_groups_use_the_same_rule() -> None:
    """The Spark backend's per-group reader (plain Arrow, no Spark needed) refuses the same grades."""
    from serpeval.spark.groups import _qrels

    table = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1.0, 1e20]})
    with pytest.raises(ParseError, match=r"qrels: the relevance of document 'b' for query 'q': .* found 1e\+20"):
        _qrels(table, "qrels")
    assert _qrels(table.set_column(2, "relevance", pa.array([1.0, 3.0])), "qrels").relevance.tolist() == [1, 3]


# ---------------------------------------------------------------------------- NumRel 6 -> 5


@pytest.mark.parametrize("text", ["1e400", "1e20", "NaN", "2.5"])
def test_num_rel_is_never_silently_wrong(tmp_path: Path, text: str) -> None:
    """Six relevant judgments, the sixth with a value that used to be cast to a garbage
    integer (a negative one made NumRel 5, exit 0). Now: an error; with 1.0 it is 6."""
    path = tmp_path / "qrels.jsonl"
    path.write_text("\n".join(six_relevant(text)) + "\n")
    with pytest.raises(ParseError, match=r"qrels\.jsonl:6: "):
        serpeval.evaluate(path, RUN, ["NumRel"])
    path.write_text("\n".join(six_relevant("1.0")) + "\n")
    assert serpeval.evaluate(path, RUN, ["NumRel"]).means("run") == {"NumRel": 6.0}


# ---------------------------------------------------------------------------- repeated JSON keys


def test_json_repeated_keys_are_refused_with_the_key_path(tmp_path: Path) -> None:
    path = tmp_path / "qrels.json"
    path.write_text('{"q1": {"d1": 1, "d2": 0, "d1": 2}}')  # json.loads would keep d1 = 2 silently
    with pytest.raises(DuplicateError, match=r'qrels\.json: key \["q1"\]\["d1"\] appears twice .*document '
                                             r"'d1' is listed twice for query 'q1'; keep one value\."):
        read_qrels(path)
    path.write_text('{"q1": {"d1": 1},\n "q2": {"d1": 0},\n "q1": {"d3": 1}}')  # q1's d1 would vanish
    with pytest.raises(DuplicateError, match=r'qrels\.json: key \["q1"\] appears twice .*query \'q1\' is listed '
                                             r"twice at the top level; merge its two objects into one\."):
        read_qrels(path)
    run = tmp_path / "run.json"
    run.write_text('{"q1": {"d1": 0.5, "d1": 0.7}}')
    with pytest.raises(DuplicateError, match=r'run\.json: key \["q1"\]\["d1"\] appears twice'):
        read_run(run)


def test_jsonl_repeated_field_is_refused_with_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.jsonl"
    path.write_text('{"qid": "q", "docid": "a", "rel": 1}\n{"qid": "q", "docid": "b", "rel": 0, "rel": 2}\n')
    with pytest.raises(ParseError, match=r'qrels\.jsonl:2: key \["rel"\] appears twice in the object'):
        read_qrels(path)


# ---------------------------------------------------------------------------- scores


def test_nan_scores_are_refused_by_every_reader(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"qid": "q", "docid": "a", "score": 1}\n\n{"qid": "q", "docid": "b", '
                                      '"score": NaN}\n')
    (tmp_path / "r.json").write_text('{"q": {"a": 1, "b": NaN}}')
    pq.write_table(pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "score": [1.0, float("nan")]}),
                   tmp_path / "r.parquet")
    (tmp_path / "r.txt").write_text("q Q0 a 1 1 t\n\nq Q0 b 2 nan t\n")
    where = {"r.jsonl": r"r\.jsonl:3", "r.json": r'r\.json: key \["q"\]\["b"\]', "r.parquet": r"r\.parquet: row 2",
             "r.txt": r"r\.txt:3"}
    for name, location in where.items():
        with pytest.raises(ParseError, match=rf"{location}: the score is NaN; scores must be numbers"):
            read_run(tmp_path / name)


def test_infinite_and_huge_scores_read_alike_in_every_format(tmp_path: Path) -> None:
    """trec_eval's atof reads inf and 1e400 as infinity; a JSON integer beyond int64 is the
    float it stands for. Every format gives the same run and the same ranks."""
    big = 10**30
    (tmp_path / "r.txt").write_text(f"q Q0 a 1 inf t\nq Q0 b 2 1e400 t\nq Q0 c 3 {big} t\nq Q0 d 4 -1e400 t\n")
    (tmp_path / "r.jsonl").write_text(
        '{"qid": "q", "docid": "a", "score": Infinity}\n{"qid": "q", "docid": "b", "score": 1e400}\n'
        f'{{"qid": "q", "docid": "c", "score": {big}}}\n{{"qid": "q", "docid": "d", "score": -1e400}}\n')
    (tmp_path / "r.json").write_text(f'{{"q": {{"a": Infinity, "b": 1e400, "c": {big}, "d": -Infinity}}}}')
    expected = [np.inf, np.inf, 1e30, -np.inf]
    qrels = {"q": {"a": 0, "b": 1, "c": 1, "d": 1}}
    for name in ("r.txt", "r.jsonl", "r.json"):
        run = read_run(tmp_path / name)
        assert run.scores.tolist() == expected
        # b ties a at infinity and wins on doc id (descending): ranks b, a, c, d -> P@2 = 1/2
        assert serpeval.evaluate(qrels, run, ["P@2", "RR"]).means(run.name) == {"P@2": 0.5, "RR": 1.0}
    assert serpeval.Run.from_dict({"q": {"a": 10**400}}).scores.tolist() == [np.inf]


def test_scores_that_are_not_numbers() -> None:
    with pytest.raises(ParseError, match=r"<dict>: query 'q', doc 'a': expected a numeric score, found True"):
        serpeval.Run.from_dict({"q": {"a": True}})
    with pytest.raises(InputError, match=r"<table>: the DataFrame cannot be read as columns of one type each"):
        serpeval.evaluate({"q": {"a": 1}}, pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
                                                        "score": [1, "x"]}), ["AP"])


# ---------------------------------------------------------------------------- property


_ids = st.text(alphabet=st.sampled_from("aZ09_-.:/ü€漢"), min_size=1, max_size=9)
_grades = st.one_of(st.integers(-3, 5), st.integers(-GRADE_LIMIT, GRADE_LIMIT),
                    st.sampled_from([GRADE_LIMIT, -GRADE_LIMIT, 2**31, 1023, 1024]))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_ids, st.dictionaries(_ids, _grades, min_size=1, max_size=6), min_size=1, max_size=5),
       st.booleans())
def test_grades_round_trip_exactly_through_every_format(tmp_path_factory, judgments, as_float) -> None:
    """Any integer grade within the limit reads back exactly from JSON lines, JSON, Parquet and
    TREC text, and all four give the same Qrels (ids, grades, order). ``as_float`` writes the
    grades as JSON floats (``2.0``) where they are exact."""
    tmp = tmp_path_factory.mktemp("grades")
    rows = [(q, d, g) for q, docs in judgments.items() for d, g in docs.items()]

    def number(g: int) -> str:
        return f"{g}.0" if as_float and abs(g) < 2**52 else str(g)

    (tmp / "q.jsonl").write_text("".join(
        '{"query_id": ' + json.dumps(q) + ', "doc_id": ' + json.dumps(d) + ', "relevance": ' + number(g) + "}\n"
        for q, d, g in rows), encoding="utf-8")
    (tmp / "q.json").write_text("{" + ", ".join(
        json.dumps(q) + ": {" + ", ".join(json.dumps(d) + ": " + number(g) for d, g in docs.items()) + "}"
        for q, docs in judgments.items()) + "}", encoding="utf-8")
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                             "relevance": pa.array([r[2] for r in rows], pa.int64())}), tmp / "q.parquet")
    (tmp / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows), encoding="utf-8")
    for name in ("q.jsonl", "q.json", "q.parquet", "q.txt"):
        qrels = read_qrels(tmp / name)
        assert qrels.query_ids.to_pylist() == [r[0] for r in rows], name
        assert qrels.doc_ids.to_pylist() == [r[1] for r in rows], name
        assert qrels.relevance.tolist() == [r[2] for r in rows], name
        assert qrels.to_dict() == judgments


# ---------------------------------------------------------------------------- command line


def _serpeval(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    src = str(Path(serpeval.__file__).parents[1])
    return subprocess.run([sys.executable, "-m", "serpeval", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": src}, check=False)


def test_command_line_refuses_with_one_line_and_status_2(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text("\n".join(six_relevant("1e400")) + "\n")
    (tmp_path / "dup.json").write_text('{"q1": {"d1": 1, "d1": 0}}')
    (tmp_path / "big.txt").write_text("q1 0 d1 1\nq1 0 d2 1100\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    cases = [
        (["q.jsonl", "r.txt", "-m", "NumRel"], r"q\.jsonl:6: expected an integer relevance grade .* found infinity"),
        (["dup.json", "r.txt", "-m", "AP"], r'dup\.json: key \["q1"\]\["d1"\] appears twice'),
        (["big.txt", "r.txt", "-m", "IPrec(recall=2)"],
         r"the 'recall' parameter of IPrec must be a number in \[0, 1\]"),
        (["big.txt", "r.txt", "-m", "SetF(beta=1e308)"], r"the 'beta' parameter of SetF must be a number in "
                                                         r"\[0, 1e\+100\]"),
        (["big.txt", "r.txt", "-m", "DCG(gain=exp)"], r"DCG with gain=exp of query 'q1' is beyond float64"),
    ]
    for args, message in cases:
        result = _serpeval("evaluate", *args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert re.search(message, lines[0]), lines[0]
        assert result.stdout == ""
    ok = _serpeval("evaluate", "big.txt", "r.txt", "-m", "nDCG(gain=exp)", "--format", "json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    # d1 (grade 1) first, d2 (grade 1100) second: (1 + 2^1100/log2 3) / (2^1100 + 1/log2 3) = 1/log2 3
    # to 1e-300 (it printed NaN: 2^1100 overflowed to inf)
    assert json.loads(ok.stdout)["results"][0]["nDCG(gain=exp)"] == pytest.approx(1 / np.log2(3), rel=1e-15)


def test_int64_minimum_as_a_python_object_is_outside_the_range() -> None:
    """A NumPy scalar in a dict (an object sequence, not an array): abs(np.int64(-2**63))
    overflows back to -2**63, so the range is checked by comparison, not by abs()."""
    found = r"found np\.int64\(-9223372036854775808\), outside that range"
    with pytest.raises(ParseError, match=rf"<dict>: query 'q1', doc 'b': {EXPECTED}.*{found}"):
        qrels_from_dict({"q1": {"a": 1, "b": np.int64(-(2**63))}})
