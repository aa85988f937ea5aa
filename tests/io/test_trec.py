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

from serpeval.core import native
from serpeval.core.errors import DuplicateError, EmptyInputError, ParseError
from serpeval.io import read_qrels, read_run
from serpeval.io import trec as trec_module
from serpeval.io.trec import _careful_run, read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

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


# ---------------------------------------------------------------------------- one reading of the same bytes

BOM = b"\xef\xbb\xbf"


def careful_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the fast paths off: every file goes through the careful parser."""
    monkeypatch.setattr(trec_module, "_fast_rows", lambda *args, **kwargs: None)


def arrow_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow's reader as the fast path (as where the compiled kernels are not built)."""
    monkeypatch.setattr(trec_module, "_native_rows", trec_module._arrow_rows)


def both_paths(read, data: bytes, monkeypatch: pytest.MonkeyPatch):
    """``read(data)`` as the reader chooses, and with the careful path forced (result or
    error); with the compiled kernels, Arrow's fast path must give the first outcome too."""
    outcomes = []
    for force in ("fast", "careful", "arrow"):
        with monkeypatch.context() as patch:
            if force == "careful":
                careful_only(patch)
            elif force == "arrow":
                arrow_only(patch)
            try:
                got = read(data)
                outcomes.append(("rows", got.query_ids.to_pylist(), got.doc_ids.to_pylist(),
                                 (got.scores if hasattr(got, "scores") else got.relevance).tolist(),
                                 got.skipped_lines, getattr(got, "tag", None)))
            except (ParseError, EmptyInputError, DuplicateError) as exc:
                outcomes.append(("error", type(exc).__name__, str(exc)))
    fast, careful, arrow = outcomes
    assert arrow == fast, data
    return fast, careful


@pytest.mark.parametrize("data", [BOM + RUN, BOM + RUN.replace(b" ", b"\t"), RUN + BOM + RUN.replace(b"q", b"p")],
                         ids=["fast", "careful", "after-cat"])
def test_byte_order_mark_at_a_line_start_is_removed_on_both_paths(data: bytes, monkeypatch) -> None:
    # A Windows editor's BOM kept in the first query id made it match no judgment (its AP
    # went from 0.6208 to 0.8357 between the two paths); `cat` of such files puts one mid-file.
    fast, careful = both_paths(read_trec_run, data, monkeypatch)
    assert fast == careful
    assert "\ufeff" not in "".join(fast[1])
    assert fast[1][0] == "q1"


def test_byte_order_mark_elsewhere_stays_part_of_the_id(monkeypatch) -> None:
    data = b"q1 Q0 d1" + BOM + b" 1 2.0 t\n " + BOM + b"q2 Q0 d2 1 1.0 t\n"
    fast, careful = both_paths(read_trec_run, data, monkeypatch)
    assert fast == careful
    assert fast[1:3] == (["q1", "\ufeffq2"], ["d1\ufeff", "d2"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # A missing column beside a doubled space: Arrow saw 6 fields, one empty, and read
        # an empty doc id with the rank as its score (a silently wrong number).
        (b"q1 Q0  d1 1 2.0\n", r"<bytes>:1: expected 6 columns .* found 5"),
        (b" q1 Q0 d1 1 2.0\n", r"<bytes>:1: expected 6 columns .* found 5"),
        (b"q1 Q0 d1 1 2.0 \n", r"<bytes>:1: expected 6 columns .* found 5"),
    ],
)
def test_empty_fields_are_missing_columns_on_both_paths(data: bytes, message: str, monkeypatch) -> None:
    fast, careful = both_paths(read_trec_run, data, monkeypatch)
    assert fast == careful
    with pytest.raises(ParseError, match=message):
        read_trec_run(data)


@pytest.mark.parametrize("data", [b"q1 0  1\n", b" q1 d1 1\n", b"q1  d1 1\n"])
def test_qrels_with_an_empty_field_are_refused_on_both_paths(data: bytes, monkeypatch) -> None:
    fast, careful = both_paths(read_trec_qrels, data, monkeypatch)
    assert fast == careful
    assert fast[0] == "error"
    assert "expected 4 columns" in fast[2]


def test_tab_inside_a_single_spaced_line_separates_fields_on_both_paths(monkeypatch) -> None:
    # trec_eval splits on any whitespace: "d\t1" is two fields, so the score is the 5th field, 1.
    data = b"q1 Q0 d\t1 1 2.0 t\nq1 Q0 e 2 0.5 t\n"
    fast, careful = both_paths(read_trec_run, data, monkeypatch)
    assert fast == careful
    assert fast[1:4] == (["q1", "q1"], ["d", "e"], [1.0, 0.5])


@pytest.mark.parametrize("grade", [b"0x10", b"0X1f", b"1_0", b"99999999999999999999", b"1.0", b"nan"])
def test_grades_are_decimal_integers_on_both_paths(grade: bytes, monkeypatch) -> None:
    # Arrow's integer parser reads 0x10 as 16, Python's int reads 1_0 as 10; trec_eval's atol
    # would read 0 and 1. Refused with the line on both paths rather than read another way.
    data = b"q1 0 d0 1\nq1 0 d1 " + grade + b"\n"
    fast, careful = both_paths(read_trec_qrels, data, monkeypatch)
    assert fast == careful
    assert fast[0] == "error"
    assert "<bytes>:2: expected an integer relevance grade" in fast[2]  # format, or the range rule


@pytest.mark.parametrize("reader", ["_native_rows", "_arrow_rows"])
def test_signed_and_zero_padded_grades_stay_on_the_fast_path(reader: str, monkeypatch) -> None:
    if reader == "_native_rows" and not native.available():
        pytest.skip("the compiled kernels are not built")
    calls = []
    original = getattr(trec_module, reader)
    monkeypatch.setattr(trec_module, "_fast_rows", lambda *a, **k: calls.append(original(*a, **k)) or calls[-1])
    qrels = read_trec_qrels(b"q1 0 a +1\nq1 0 b -01\nq1 0 c 007\nq1 0 d 9007199254740991\n")
    assert qrels.relevance.tolist() == [1, -1, 7, 2**53 - 1]
    assert calls[0] is not None


def test_scores_with_digit_separators_are_refused(monkeypatch) -> None:
    fast, careful = both_paths(read_trec_run, b"q1 Q0 d1 1 1_0 t\n", monkeypatch)
    assert fast == careful
    assert "expected a number in column 5 (score), found '1_0'" in fast[2]


_IDS = st.sampled_from(["q1", "q2", "d1", "D1", "07", "7", "ü", "x\ufeff", "#c"])
_NUMBERS = st.sampled_from(["0", "1", "-1", "+2", "07", "2.5", "1e-3", ".5", "inf", "-0"])
_ODD = st.sampled_from(["", "\ufeff", "0x10", "1_0", "nan", "NA", "#", "\ufeffq1", "2.5"])
_SEPARATORS = st.sampled_from([" "] * 12 + ["  ", "\t", "\x0b", "\x0c", " \t"])


@st.composite
def _fuzz_file(draw, kind: str) -> bytes:
    """Mostly well-formed lines (so that the fast path is tried), with odd fields, blanks,
    byte order marks, separators and line ends here and there."""
    columns = [_IDS, st.sampled_from(["Q0", "0"]), _IDS, _NUMBERS, _NUMBERS, st.just("tag")]
    if kind == "qrels":
        columns = [_IDS, st.just("0"), _IDS, _NUMBERS]
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        fields = [draw(_ODD) if draw(st.integers(0, 9)) == 0 else draw(column) for column in columns]
        fields = fields[: draw(st.sampled_from([len(fields)] * 8 + [len(fields) - 1, len(fields) + 1]))]
        if len(fields) > len(columns):
            fields.append("extra")
        line = draw(_SEPARATORS).join(fields) if draw(st.booleans()) else " ".join(fields)
        prefix = draw(st.sampled_from(["", "", "", "", " ", "\ufeff", "# ", "\t"]))
        lines.append(prefix + line + draw(st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", " \n", "\n\n"])))
    return "".join(lines).encode()


@given(_fuzz_file("run"), _fuzz_file("qrels"), st.booleans())
def test_fast_and_careful_paths_read_every_file_alike(run: bytes, qrels: bytes, bom: bool) -> None:
    """Any mix of fields, blanks, marks and line ends: the same rows, or the same error."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for read, content in ((read_trec_run, run), (read_trec_qrels, qrels)):
            fast, careful = both_paths(read, BOM + content if bom else content, monkeypatch)
            assert fast == careful, content


@given(st.lists(st.sampled_from([b"q", b"1", b" ", b"  ", b"\n", b"\r\n", b"\t", b"\x0c", b"\xef\xbb\xbf", b"d7"]),
                max_size=30), st.integers(1, 9))
def test_single_spaced_is_the_same_slice_by_slice(parts: list[bytes], size: int) -> None:
    """A file checked a few bytes at a time (pairs, marks and tabs across every cut) gets the
    answer of the whole data checked at once."""
    data = b"".join(parts)
    whole = trec_module._single_spaced(data)
    sliced = trec_module._single_spaced_slices(data[i: i + size] for i in range(0, len(data), size))
    assert sliced == whole


def test_single_spaced_reads_a_file_slice_by_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec_module, "_SLICE", 5)
    for data, expected in ((b"q Q0 d 1 2.0 t\n" * 3, True), (b"q Q0 d 1 2.0 t\n" * 2 + b"q Q0  d 1 2.0 t\n", False),
                           (b"q Q0 d 1 2.0 t\n\xef\xbb\xbfq Q0 d 1 2.0 t\n", False), (b"", True)):
        path = tmp_path / "run.txt"
        path.write_bytes(data)
        assert trec_module.Source(path).single_spaced() is expected
        assert trec_module._single_spaced(data) is expected
