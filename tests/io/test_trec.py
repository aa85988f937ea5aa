"""TREC readers: every accepted spelling, every refused one with its exact message."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serpeval.core.errors import DuplicateError, EmptyInputError, ParseError
from serpeval.io import read_qrels, read_run
from serpeval.io.trec import _careful_run, read_trec_run, write_trec_qrels, write_trec_run

RUN = b"q1 Q0 d1 1 3.5 tagA\nq1 Q0 d2 2 2.0 tagA\nq2 Q0 d1 1 1e-3 tagB\n"


def rows(run) -> list[tuple[str, str, float]]:
    return list(zip(run.query_ids.to_pylist(), run.doc_ids.to_pylist(), run.scores.tolist(), strict=True))


def test_plain_run_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run"
    path.write_bytes(RUN)
    run = read_run(path)
    assert rows(run) == [("q1", "d1", 3.5), ("q1", "d2", 2.0), ("q2", "d1", 0.001)]
    assert run.name == "bm25"
    assert run.tag == "tagB"  # the tag of the last line, as trec_eval's runid
    assert run.skipped_lines == 0


@pytest.mark.parametrize(
    "variant",
    [
        RUN.replace(b" ", b"\t"),                       # tabs
        RUN.replace(b" ", b"   "),                      # runs of spaces
        RUN.replace(b"\n", b"\r\n"),                    # CRLF
        b"  " + RUN.replace(b"\n", b"  \n"),            # leading and trailing blanks
        RUN.replace(b"tagA\n", b"tagA extra columns here\n"),  # fields after the tag are ignored
    ],
    ids=["tabs", "spaces", "crlf", "blanks", "extra-columns"],
)
def test_whitespace_variants_give_the_same_rows(variant: bytes) -> None:
    assert rows(read_trec_run(variant)) == rows(read_trec_run(RUN))


def test_lone_carriage_return_ends_a_line_on_both_paths() -> None:
    # Arrow and Python's universal newlines both break lines at a lone CR.
    data = b"q1 Q0 d1 1 3.5 tagA\rq1 Q0 d2 2 2.0 tagA\r\nq2 Q0 d1 1 1e-3 tagB\n"
    assert rows(read_trec_run(data)) == rows(read_trec_run(RUN))
    assert rows(read_trec_run(data.replace(b"tagA", b"tag  A"))) == rows(read_trec_run(RUN))


def test_blank_lines_on_the_fast_path_are_counted() -> None:
    run = read_trec_run(b"\n" + RUN.replace(b"\n", b"\n\n", 1) + b"\r\n")
    assert rows(run) == rows(read_trec_run(RUN))
    assert run.skipped_lines == 3


def test_comments_and_blank_lines_are_skipped_and_counted() -> None:
    data = b"# produced by bm25\n\n" + RUN + b"   \n# end\n"
    run = read_trec_run(data)
    assert rows(run) == rows(read_trec_run(RUN))
    assert run.skipped_lines == 4


def test_comments_refused_in_908_mode() -> None:
    with pytest.raises(ParseError, match=r"<bytes>:1: '#' comment lines are not allowed"):
        read_trec_run(b"# c\n" + RUN, comments=False)


def test_gzip_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(RUN))
    assert rows(read_run(path)) == rows(read_trec_run(RUN))
    assert read_run(path).name == "run"
    fake = io.TextIOWrapper(io.BytesIO(RUN))
    monkeypatch.setattr(sys, "stdin", fake)
    assert rows(read_run("-")) == rows(read_trec_run(RUN))


def test_ids_are_opaque_strings() -> None:
    run = read_trec_run(b"003 Q0 d10 1 1 t\n3 Q0 D10 1 1 t\n")
    assert run.query_ids.to_pylist() == ["003", "3"]
    assert run.doc_ids.to_pylist() == ["d10", "D10"]


def test_utf8_ids() -> None:
    run = read_trec_run("ü1 Q0 dök 1 1 t\n".encode())
    assert run.query_ids.to_pylist() == ["ü1"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"q1 Q0 d1 1 2.0\n", r"<bytes>:1: expected 6 columns \(qid Q0 docid rank score tag\), "
                              r"found 5: 'q1 Q0 d1 1 2.0'\. Is the run tag missing\?"),
        (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n",
         r"<bytes>:2: expected a number in column 5 \(score\), found 'high'"),
        (b"q1 Q0 d1 1 nan t\n", r"<bytes>:1: the score is NaN"),
        (b"\n\nq1 d1 2\n", r"<bytes>:3: expected 6 columns"),
    ],
)
def test_malformed_runs_name_the_line(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_trec_run(data)


def test_empty_run_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.run"
    path.write_bytes(b"\n  \n")
    with pytest.raises(EmptyInputError, match=r"empty.run: the run has no data lines"):
        read_run(path)


def test_missing_file_message(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=r"nope.run: no such file"):
        read_run(tmp_path / "nope.run")


def test_qrels_reading_and_errors(tmp_path: Path) -> None:
    qrels = read_qrels(b"1 0 d1 2\n1 Q0 d2 0\n2 0 d1 -1\n")
    assert qrels.relevance.tolist() == [2, 0, -1]
    assert qrels.query_ids.to_pylist() == ["1", "1", "2"]
    with pytest.raises(ParseError, match=r"<bytes>:2: expected 4 columns \(qid iter docid rel\), found 6: "
                                         r".*are the qrels and run arguments swapped\?"):
        read_qrels(b"1 0 d1 2\n1 Q0 d1 1 2.5 run\n")
    with pytest.raises(ParseError, match=r"<bytes>:1: expected an integer relevance grade in column 4, found '2.5'"):
        read_qrels(b"1 0 d1 2.5\n")
    with pytest.raises(DuplicateError, match=r"<bytes>:3: document 'd1' is judged twice for query '1' "
                                             r"\(first at line 1\)"):
        read_qrels(b"1 0 d1 2\n1 0 d2 0\n1 0 d1 1\n")
    path = tmp_path / "q.txt"
    path.write_bytes(b"# judged by NIST\n1 0 d1 1\n\n")
    assert read_qrels(path).skipped_lines == 2


def test_duplicate_in_qrels_found_on_fast_path_names_lines() -> None:
    data = b"".join(b"1 0 d%d 1\n" % i for i in range(50)) + b"1 0 d7 0\n"
    with pytest.raises(DuplicateError, match=r"<bytes>:51: document 'd7' is judged twice .* \(first at line 8\)"):
        read_qrels(data)


def test_writers_round_trip(tmp_path: Path) -> None:
    run = read_trec_run(b"q1 Q0 a 9 1.0 t\nq1 Q0 b 9 1.0 t\nq0 Q0 c 1 0.5 t\n")
    out = tmp_path / "out.run"
    write_trec_run(run, out)
    # ranked by trec_eval's order: queries by id, score desc, ties by doc id desc (b before a)
    assert out.read_text().splitlines() == ["q0 Q0 c 1 0.5 t", "q1 Q0 b 1 1.0 t", "q1 Q0 a 2 1.0 t"]
    qrels = read_qrels(b"1 0 d1 2\n")
    write_trec_qrels(qrels, tmp_path / "q.txt.gz")
    assert read_qrels(tmp_path / "q.txt.gz").relevance.tolist() == [2]


# ---------------------------------------------------------------------------- fuzzing

_id = st.text(alphabet=st.sampled_from("abcXYZ019_-.ü#"), min_size=1, max_size=6).filter(
    lambda s: not s.startswith("#"))
_score = st.one_of(st.integers(-1000, 1000).map(str),
                   st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr))
_sep = st.sampled_from([" ", "  ", "\t", " \t "])


@given(st.lists(st.tuples(_id, _id, _score, _sep), min_size=1, max_size=20), st.booleans())
def test_fast_and_careful_paths_agree(lines: list[tuple[str, str, str, str]], crlf: bool) -> None:
    """Whatever the spacing, both parsers give the same rows (and the fast path is used when it can)."""
    end = "\r\n" if crlf else "\n"
    text = "".join(f"{q}{sep}Q0{sep}{d}{sep}1{sep}{s}{sep}tag{end}" for q, d, s, sep in lines)
    data = text.encode()
    run = read_trec_run(data)
    q, d, s, _ = _careful_run(data, "<bytes>", comments=True)
    assert run.query_ids.to_pylist() == q
    assert run.doc_ids.to_pylist() == d
    assert np.array_equal(run.scores, np.array(s, dtype=np.float64))


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash_unexpectedly(data: bytes) -> None:
    """Garbage gives a clear serpeval error or a valid run, never a bare exception."""
    try:
        run = read_trec_run(data)
    except (ParseError, EmptyInputError):
        return
    assert len(run) == len(run.doc_ids) == len(run.query_ids) > 0
