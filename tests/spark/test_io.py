"""Reading TREC text, JSON lines and Parquet through Spark gives the local readers' rows."""

from __future__ import annotations

import gzip
import json
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
