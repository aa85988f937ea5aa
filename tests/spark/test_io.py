"""Reading TREC text, JSON lines and Parquet through Spark gives the local readers' rows."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.core import errors
from serpeval.io import read_qrels as local_read_qrels
from serpeval.io import read_run as local_read_run
from serpeval.spark import read_qrels, read_run

RUN_TEXT = (
    "# a comment line\n"
    "q1 Q0 d1 1 2.5 tag\n"
    "q1\tQ0\td2\t2\t2.5\ttag\textra fields are ignored\n"
    "\n"
    "  q1  Q0  d10  3  -1e2  tag\r\n"
    "q2 Q0 d1 1 7 tag\n"
    "   \n"
    "q2 Q0 d3 2 inf tag"
)
QRELS_TEXT = "q1 0 d1 1\n# judged by two assessors\nq1\t0\td10\t-1\n\nq2 Q0 d3 2\r\nq2 0 d4 0\n"


def rows(table: pa.Table, value: str) -> list[tuple]:
    return sorted(zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", value)), strict=True))


def spark_rows(frame, value: str) -> list[tuple]:
    return sorted((r["query_id"], r["doc_id"], r[value]) for r in frame.collect())


@pytest.mark.parametrize("compress", [False, True], ids=["text", "gzip"])
def test_trec_files_read_like_the_local_readers(spark, tmp_path: Path, compress: bool) -> None:
    suffix = ".gz" if compress else ""
    run_path, qrels_path = tmp_path / f"bm25.run{suffix}", tmp_path / f"qrels.txt{suffix}"
    for path, text in ((run_path, RUN_TEXT), (qrels_path, QRELS_TEXT)):
        data = text.encode()
        path.write_bytes(gzip.compress(data) if compress else data)
    run, qrels = read_run(spark, str(run_path)), read_qrels(spark, str(qrels_path))
    want_run, want_qrels = local_read_run(run_path), local_read_qrels(qrels_path)
    assert spark_rows(run.frame, "score") == rows(want_run.to_arrow(), "score")
    assert spark_rows(qrels.frame, "relevance") == rows(want_qrels.to_arrow(), "relevance")
    assert (
        (run.skipped_lines, qrels.skipped_lines)
        == (want_run.skipped_lines, want_qrels.skipped_lines)
        == (3, 2)
    )
    assert run.name == want_run.name == "bm25"
    assert run.source == str(run_path)


def test_byte_order_marks_at_line_starts_are_removed_like_the_local_readers(spark, tmp_path: Path) -> None:
    """A BOM (Windows editors) at the start of the file, and at a line start after `cat`."""
    bom = "\ufeff"
    run_path, qrels_path = tmp_path / "bom.run", tmp_path / "qrels.txt"
    run_path.write_text(bom + RUN_TEXT.replace("q2 Q0 d1", bom + "q2 Q0 d1") + "\n" + bom + "q3 Q0 d1 1 2 t\n",
                        encoding="utf-8")
    qrels_path.write_text(bom + QRELS_TEXT + bom + "q3 0 d1 1\n", encoding="utf-8")
    run, qrels = read_run(spark, str(run_path)), read_qrels(spark, str(qrels_path))
    want_run, want_qrels = local_read_run(run_path), local_read_qrels(qrels_path)
    assert spark_rows(run.frame, "score") == rows(want_run.to_arrow(), "score")
    assert spark_rows(qrels.frame, "relevance") == rows(want_qrels.to_arrow(), "relevance")
    assert {"q1", "q2", "q3"} == {r[0] for r in spark_rows(run.frame, "score")}
    assert (run.skipped_lines, qrels.skipped_lines) == (want_run.skipped_lines, want_qrels.skipped_lines)


@pytest.mark.parametrize(
    ("text", "reader", "message"),
    [
        (
            "q1 Q0 d1 1 2.5\n",
            read_run,
            r"1 line\(s\) are not 'qid Q0 docid rank score tag' lines with a numeric score, "
            r"e\.g\. 'q1 Q0 d1 1 2\.5'",
        ),
        ("q1 Q0 d1 1 high tag\nq1 Q0 d2 2 1.0 tag\n", read_run, r"e\.g\. 'q1 Q0 d1 1 high tag'"),
        (
            "q1 0 d1\n",
            read_qrels,
            r"are not 'qid iter docid rel' lines with a numeric integer grade",
        ),
        ("q1 0 d1 1.5\n", read_qrels, r"e\.g\. 'q1 0 d1 1\.5'"),
    ],
)
def test_malformed_lines_are_refused_with_an_example(
    spark, tmp_path: Path, text, reader, message
) -> None:
    path = tmp_path / "input.txt"
    path.write_text(text)
    with pytest.raises(errors.ParseError, match=message):
        reader(spark, str(path))


def test_a_file_without_data_lines_is_refused(spark, tmp_path: Path) -> None:
    path = tmp_path / "empty.run"
    path.write_text("# nothing here\n\n")
    with pytest.raises(errors.EmptyInputError, match=r"empty\.run: the run has no data lines"):
        read_run(spark, str(path))


def test_parquet_and_json_lines_use_the_local_column_aliases(spark, tmp_path: Path) -> None:
    table = pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "sim": [1.0, 2.0, 3.0]})
    pq.write_table(table, tmp_path / "dense.parquet")
    (tmp_path / "dense.jsonl").write_text(
        "".join(
            json.dumps(dict(zip(table.column_names, values, strict=True))) + "\n"
            for values in zip(*table.to_pydict().values(), strict=True)
        )
    )
    want = rows(local_read_run(tmp_path / "dense.parquet").to_arrow(), "score")
    from serpeval.spark.frames import run_frame

    for name in ("dense.parquet", "dense.jsonl"):
        source = read_run(spark, str(tmp_path / name))
        assert source.name == "dense"
        assert spark_rows(run_frame(source.frame, label=name), "score") == want


def test_dict_of_dicts_json_is_left_to_the_local_backend(spark, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"q1": {"d1": 1.0}}')
    with pytest.raises(errors.ParseError, match="read by the local backend only"):
        read_run(spark, str(path))


def test_ids_that_are_not_utf8_are_refused_as_locally(spark, tmp_path: Path) -> None:
    """Spark's string functions turn an invalid byte into U+FFFD, so 'caf\\xe8' (qrels) and
    'caf\\xe9' (run) became one id and matched; the local reader refuses both files. A
    genuine U+FFFD, and bytes that are not UTF-8 outside the ids (the tag), are accepted."""
    qrels_path, run_path = tmp_path / "latin1.qrels", tmp_path / "latin1.run"
    qrels_path.write_bytes(b"q1 0 caf\xe8 1\nq1 0 d2 0\n")
    run_path.write_bytes(b"q1 Q0 caf\xe9 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    for path, reader, local in ((qrels_path, read_qrels, local_read_qrels), (run_path, read_run, local_read_run)):
        with pytest.raises(errors.ParseError, match="ids must be UTF-8 text"):
            local(path)
        with pytest.raises(errors.ParseError, match=r"latin1\.\w+: 1 line\(s\) have a query or doc id that is "
                                                    r"not UTF-8 text, e\.g\. 'q1 \S+ caf\ufffd 1.*ids must be UTF-8"):
            reader(spark, str(path))
    fine = tmp_path / "fine.run"
    fine.write_bytes(b"q1 Q0 caf\xef\xbf\xbd 1 2.0 t\xe9\n\xef\xbb\xbfq2 Q0 d2 2 1.0 t\n")  # U+FFFD; a BOM
    assert spark_rows(read_run(spark, str(fine)).frame, "score") == rows(local_read_run(fine).to_arrow(), "score") \
        == [("q1", "caf\ufffd", 2.0), ("q2", "d2", 1.0)]


def test_numbers_are_read_with_the_local_grammar_not_javas(spark, tmp_path: Path) -> None:
    """Java's parseDouble reads 1d, 1.5f and 0x1p3 (= 8.0); the local reader refuses them.
    What the local reader takes (+2, .5, 1e400, -inf, Infinity, inF, 1., 1e-400) Spark takes
    too, with the same values."""
    run_path = tmp_path / "scores.run"
    for score in ("1d", "1.5f", "0x1p3", "1_0", "1L"):
        run_path.write_text(f"q1 Q0 d1 1 {score} t\nq1 Q0 d2 2 1.0 t\n")
        with pytest.raises(errors.ParseError, match="expected a number in column 5"):
            local_read_run(run_path)
        with pytest.raises(errors.ParseError,
                           match=rf"1 line\(s\) are not .* numeric score, e\.g\. 'q1 Q0 d1 1 {score} t'"):
            read_run(spark, str(run_path))
    good = ("+2", ".5", "1e400", "-inf", "Infinity", "inF", "1.", "1e-400")
    run_path.write_text("".join(f"q1 Q0 d{i} 1 {score} t\n" for i, score in enumerate(good)))
    want = rows(local_read_run(run_path).to_arrow(), "score")
    assert spark_rows(read_run(spark, str(run_path)).frame, "score") == want
    qrels_path = tmp_path / "grades.qrels"
    for grade, grades in (("1d", "int"), ("1.0", "int"), ("1e2", "int"), ("1d", "float"), ("0x1p3", "float")):
        qrels_path.write_text(f"q1 0 d1 {grade}\n")
        with pytest.raises(errors.ParseError, match=r"relevance grade in column 4"):
            local_read_qrels(qrels_path, grades=grades)
        with pytest.raises(errors.ParseError, match=rf"1 line\(s\) are not .* grade, e\.g\. 'q1 0 d1 {grade}'"):
            read_qrels(spark, str(qrels_path), grades=grades)
    qrels_path.write_text("q1 0 d1 +1\nq1 0 d2 007\nq1 0 d3 1e-1\nq1 0 d4 2.\n")
    assert spark_rows(read_qrels(spark, str(qrels_path), grades="float").frame, "relevance") == \
        rows(local_read_qrels(qrels_path, grades="float").to_arrow(), "relevance")


@pytest.mark.parametrize("text", ['{"query_id": "q1", "doc_id": "d2", "sc', "[1, 2]"], ids=["truncated", "array"])
def test_a_json_line_that_is_not_an_object_is_refused(spark, tmp_path: Path, text: str) -> None:
    """Spark puts such a line in _corrupt_record, and the run then had rows without ids."""
    path = tmp_path / "m.jsonl"
    path.write_text('{"query_id": "q1", "doc_id": "d1", "score": 1.0}\n' + text + "\n")
    with pytest.raises(errors.ParseError, match=r"m\.jsonl:2: "):
        local_read_run(path)
    with pytest.raises(errors.ParseError, match=r"m\.jsonl: not valid JSON, or not a JSON object: "
                                                + re.escape(repr(text)) + r"\. The local backend"):
        read_run(spark, str(path))
    path.write_text(text + "\n")  # nothing but the corrupt-record column: Spark's query would be refused
    with pytest.raises(errors.ParseError, match=r"m\.jsonl: not valid JSON"):
        read_run(spark, str(path))
