"""Defects of the readers found by hand-crafted hostile inputs, each checked against an
independent reading of the same bytes (hand-worked values, Python's own gzip module, a
brute-force split of the lines).

* ``evaluate --stream`` on a truncated ``.gz`` said "a compressed input is corrupt or
  truncated" without naming the file (the safety net's message), and on a bad checksum
  "cRC check failed 0x.. != 0x.."; the whole-file reader names the file and says what to do.
* Subtopic qrels took ``true``/``false`` grades (Parquet, JSON lines, Arrow tables) as 1/0,
  which every other qrels reader refuses: one rule now, in ``core.data.refuse_boolean_grades``.
* The topics and groups readers cut lines at U+2028, U+2029, NEL, vertical tab and form feed
  (``str.splitlines``): a query text holding one became two lines, the second "has no tab"
  (or, in JSON lines, "not valid JSON") at the wrong line number.
* CSV grades and scores were read with ``int()``/``float()``, which take ``1_0`` (10) and
  non-ASCII digits (``"١"`` is 1); TREC files refuse both.
* A streamed run with NaN scores in several pieces counted only the first piece's.
* A Parquet or JSON-lines run given to ``--stream`` was parsed as TREC text (its binary
  bytes shown as the "line"); ``--stream`` with standard input closed was an internal error.
* Query ids of a Parquet groups file were ``str()`` of the cell (``301.0``), not the ids the
  qrels reader makes of the same column (``301``); a float id in JSON lines likewise depended
  on the other lines; a pandas Categorical of booleans passed as grades.
* A byte order mark starting a later line (``cat`` of Windows files) stayed in a topic's id;
  UTF-16 files (Windows PowerShell's ``>``) were reported field by field, garbled.
* Messages: groups and topics files that are not UTF-8 showed Python's codec text; a JSON
  file holding JSON lines, a ';'-separated CSV, a 5-column run line without its Q0 column
  (told "Is the run tag missing?") now say what they are.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.cli import main
from serpeval.core.errors import InputError, ParseError, ReadError
from serpeval.io import as_subtopic_qrels, qrels_from_table, read_qrels, read_run, read_subtopic_qrels
from serpeval.io.groups import read_groups
from serpeval.io.topics import read_topics
from serpeval.io.trec_stream import run_chunks

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


# ----------------------------------------------------------------------------- corrupt gzip, streamed

def _corrupt(kind: str) -> bytes:
    whole = gzip.compress(RUN.encode() * 50)
    if kind == "truncated":
        return whole[: len(whole) // 2]
    damaged = bytearray(whole)
    damaged[-8] ^= 0xFF  # the CRC-32 in the trailer
    return bytes(damaged)


@pytest.mark.parametrize(("kind", "cause"), [("truncated", "the stream ends early: is the file truncated?"),
                                             ("crc", "CRC check failed")])
def test_a_corrupt_gzip_run_read_in_pieces_is_named_as_the_whole_file_reader_names_it(
        tmp_path: Path, kind: str, cause: str) -> None:
    path = tmp_path / "run.gz"
    path.write_bytes(_corrupt(kind))
    with pytest.raises((OSError, EOFError)):  # the oracle: Python's gzip refuses the bytes too
        gzip.decompress(path.read_bytes())
    expected = (f"{path}: cannot read the file: it starts like gzip but is corrupt ({cause}). "
                "Check it with `gzip -t`, or give the uncompressed file.")
    with pytest.raises(ReadError) as whole:
        read_run(path)
    assert str(whole.value) == expected
    with pytest.raises(ReadError) as pieces:
        for _ in run_chunks(path, chunk_bytes=64):
            pass
    assert str(pieces.value) == expected


@pytest.mark.parametrize("kind", ["truncated", "crc"])
def test_evaluate_stream_refuses_a_corrupt_gzip_run_in_one_line_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.gz").write_bytes(_corrupt(kind))
    status = main(["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.gz"), "-m", "P@1", "--stream"])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"serpeval evaluate: error: {tmp_path / 'run.gz'}: cannot read the file: it starts "
                          "like gzip but is corrupt ("), err


# ----------------------------------------------------------------------------- boolean grades, subtopic qrels

def test_subtopic_qrels_refuse_boolean_grades_as_ordinary_qrels_do(tmp_path: Path) -> None:
    table = pa.table({"qid": ["q1", "q1"], "subtopic": ["1", "2"], "docid": ["a", "b"],
                      "rel": pa.array([None, True])})
    pq.write_table(table, tmp_path / "s.parquet")
    message = r"the relevance \('rel'\) is true; expected an integer grade \(0, 1, 2, \.\.\.\)"
    with pytest.raises(ParseError, match=rf"s\.parquet: row 2: {message}"):  # row 1 is null
        read_subtopic_qrels(tmp_path / "s.parquet")
    (tmp_path / "s.jsonl").write_text('{"qid": "q1", "subtopic": 1, "docid": "a", "rel": null}\n\n'
                                      '{"qid": "q1", "subtopic": 2, "docid": "b", "rel": false}\n')
    with pytest.raises(ParseError, match=r"s\.jsonl:3: the relevance \('rel'\) is false; expected an integer"):
        read_subtopic_qrels(tmp_path / "s.jsonl")
    with pytest.raises(ParseError, match=rf"<table>: row 2: {message}"):
        as_subtopic_qrels(table)
    # integer grades in the same shapes still read (1 and 0, hand-written)
    pq.write_table(table.set_column(3, "rel", pa.array([0, 1])), tmp_path / "ok.parquet")
    assert read_subtopic_qrels(tmp_path / "ok.parquet").relevance.tolist() == [0, 1]


def test_a_rank_eval_rating_of_true_is_refused_by_the_one_rule(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"requests": [{"id": "q1", "ratings": [{"_id": "d1", "rating": 1}, '
                                     '{"_id": "d2", "rating": true}]}]}')
    with pytest.raises(ParseError, match=r"^.*r\.json: requests\[0\]\.ratings\[1\]: expected an integer relevance "
                                         r"grade, found true\. Write the grade as a number \(true as 1, false as 0\)"
                                         r"\.$"):
        read_qrels(tmp_path / "r.json", grades="float")


# ----------------------------------------------------------------------------- line breaks in topics and groups

#: Characters str.splitlines() breaks at but LF-terminated files hold inside a line.
NOT_BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"]


def _brute_force_lines(text: str) -> list[str]:
    """The oracle: lines end at LF, CRLF or a lone CR, nothing else."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@pytest.mark.parametrize("char", NOT_BREAKS, ids=[f"U+{ord(c):04X}" for c in NOT_BREAKS])
def test_a_query_text_holding_a_unicode_line_separator_stays_one_topic(tmp_path: Path, char: str) -> None:
    text = f"q1\tsolar{char}panels\r\nq2\twind\n"
    assert len(_brute_force_lines(text.rstrip("\n"))) == 2
    (tmp_path / "t.tsv").write_text(text, encoding="utf-8", newline="")
    # the text's whitespace is collapsed to single spaces (the documented rule); U+001C and
    # U+001E are not whitespace for str.split, so they stay inside the word
    want = "solar panels" if char.isspace() else f"solar{char}panels"
    assert read_topics(tmp_path / "t.tsv") == {"q1": want, "q2": "wind"}
    if ord(char) < 0x20:
        return  # a control character is not allowed raw in a JSON string
    (tmp_path / "t.jsonl").write_text('{"qid": "q1", "text": "solar' + char + 'panels"}\n'
                                      '{"qid": "q2", "text": "wind"}\n', encoding="utf-8", newline="")
    assert read_topics(tmp_path / "t.jsonl") == {"q1": want, "q2": "wind"}


def test_a_group_name_holding_a_line_separator_stays_on_its_line(tmp_path: Path) -> None:
    (tmp_path / "g.tsv").write_text("q1\tnews\u2028sport\nq2\tweather\nq3\n", encoding="utf-8", newline="")
    with pytest.raises(ParseError, match=r"g\.tsv:3: expected 'query_id<TAB>group', found no tab in 'q3'"):
        read_groups(tmp_path / "g.tsv")  # line 3 (was: line 2, 'sport')
    (tmp_path / "g.tsv").write_text("q1\tnews\u2028sport\nq2\tweather\n", encoding="utf-8", newline="")
    pairs = read_groups(tmp_path / "g.tsv")
    assert list(zip(pairs.query_ids, pairs.groups, strict=True)) == [("q1", "news\u2028sport"), ("q2", "weather")]


# ----------------------------------------------------------------------------- numbers in CSV

@pytest.mark.parametrize("cell", ["1_0", "\u0661", "\u0662.\u0665", "0x10", "1,5", "½"])
def test_csv_numbers_are_spelled_as_in_trec_files(tmp_path: Path, cell: str) -> None:
    """int("1_0") is 10 and int("١") is 1 in Python; a TREC file refuses both spellings."""
    (tmp_path / "q.csv").write_text(f'qid,docid,rel\nq1,a,1\nq1,b,"{cell}"\n', encoding="utf-8")
    (tmp_path / "r.csv").write_text(f'qid,docid,score\nq1,a,1\nq1,b,"{cell}"\n', encoding="utf-8")
    for path, read in ((tmp_path / "q.csv", read_qrels), (tmp_path / "r.csv", read_run)):
        with pytest.raises(ParseError, match=rf"{re.escape(path.name)}:3: the '(rel|score)' field is "
                                             rf"{re.escape(repr(cell))}, not a number"):
            read(path)
    with pytest.raises(ParseError, match="column 5"):  # the TREC reader's verdict on the same spelling
        read_run(f"q1 Q0 b 1 {cell} t\n".encode())


@pytest.mark.parametrize(("cell", "grade", "score"), [("2", 2, 2.0), (" +1 ", 1, 1.0), ("2.0", 2, 2.0), ("-0", 0, 0.0),
                                                     ("1e2", 100, 100.0), (".5", None, 0.5), ("1.", 1, 1.0),
                                                     ("INF", None, float("inf"))])
def test_csv_numbers_that_are_decimal_still_read(tmp_path: Path, cell: str, grade: int | None, score: float) -> None:
    (tmp_path / "q.csv").write_text(f"qid,docid,rel\nq1,a,{cell}\n")
    (tmp_path / "r.csv").write_text(f"qid,docid,score\nq1,a,{cell}\n")
    assert read_run(tmp_path / "r.csv").scores.tolist() == [score]
    if grade is None:
        with pytest.raises(ParseError, match=r"q\.csv:2: expected an integer relevance grade"):
            read_qrels(tmp_path / "q.csv")
    else:
        assert read_qrels(tmp_path / "q.csv").relevance.tolist() == [grade]


# ----------------------------------------------------------------------------- NaN scores, streamed

@pytest.mark.parametrize("chunk_bytes", [40, 200, 1 << 20])
def test_a_streamed_run_counts_the_nan_scores_of_the_whole_file(tmp_path: Path, chunk_bytes: int) -> None:
    """Read in pieces, the message said "1 score(s) are NaN" for the first piece's one; the
    file holds 3 (lines 3, 40 and 41, written so by hand), as the whole-file reader says."""
    lines = [f"q{i // 10} Q0 d{i} {i} {1.0 / (i + 1)} t\n" for i in range(50)]
    for at in (2, 39, 40):
        lines[at] = f"q{at // 10} Q0 x{at} 1 {'nan' if at != 39 else '-NaN'} t\n"
    path = tmp_path / "n.run"
    path.write_text("".join(lines))
    expected = (f"{path}:3: the score is NaN; scores must be numbers (NaN has no rank). 3 score(s) are NaN; "
                "give those documents a score or drop them.")
    with pytest.raises(ParseError) as whole:
        read_run(path)
    assert str(whole.value) == expected
    with pytest.raises(ParseError) as pieces:
        for _ in run_chunks(path, chunk_bytes=chunk_bytes):
            pass
    assert str(pieces.value) == expected


# ----------------------------------------------------------------------------- tables given to --stream

def test_a_table_run_given_to_the_streaming_reader_is_refused_saying_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It was parsed as TREC text: a Parquet run gave "expected 6 columns, found 3: 'PAR1\\x15...'"
    (its binary bytes as the "line"), a JSONL run "found 1: '{...}'"."""
    table = pa.table({"qid": ["q1", "q1", "q2"], "docid": ["d1", "d2", "d3"], "score": [2.0, 1.0, 1.0]})
    pq.write_table(table, tmp_path / "r.parquet")
    (tmp_path / "r.bin").write_bytes((tmp_path / "r.parquet").read_bytes())  # Parquet by its bytes only
    (tmp_path / "r.bin.gz").write_bytes(gzip.compress((tmp_path / "r.parquet").read_bytes()))
    (tmp_path / "r.jsonl").write_text('{"qid": "q1", "docid": "d1", "score": 2.0}\n')
    (tmp_path / "qrels.txt").write_text(QRELS)
    for name, kind in (("r.parquet", "a .parquet table"), ("r.jsonl", "a .jsonl table"), ("r.bin", "a Parquet file"),
                       ("r.bin.gz", "a Parquet file")):
        path = tmp_path / name
        with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: the run is {kind}; streaming \(--stream, "
                                             r"stream=True\) reads TREC run text only"):
            list(run_chunks(path))
        status = main(["evaluate", str(tmp_path / "qrels.txt"), str(path), "-m", "P@1", "--stream"])
        err = capsys.readouterr().err.strip()
        assert status == 2, err
        assert len(err.splitlines()) == 1, err
        assert "Evaluate it without --stream" in err, err
        assert main(["evaluate", str(tmp_path / "qrels.txt"), str(path), "-m", "P@1"]) == 0  # in memory: read
        capsys.readouterr()


def test_a_trec_run_whose_first_query_is_named_like_the_parquet_magic_still_streams(tmp_path: Path) -> None:
    path = tmp_path / "p.run"
    path.write_text("PAR1 Q0 d1 1 2.0 t\nPAR1 Q0 d2 2 1.0 t\n")
    chunks = list(run_chunks(path))
    assert [c.run.query_ids.to_pylist() for c in chunks] == [["PAR1", "PAR1"]]


# ----------------------------------------------------------------------------- query ids of a Parquet groups file

def test_float_query_ids_of_a_parquet_groups_file_are_the_ids_the_qrels_reader_reads(tmp_path: Path) -> None:
    """pandas writes integer ids with a gap as floats (301.0): the qrels and run readers read
    them as '301' (Arrow's cast), the groups reader as '301.0' (Python's str), so no query
    was in any group."""
    ids = pa.array([301.0, 302.0, None])
    pq.write_table(pa.table({"qid": ids.fill_null(303.0), "docid": ["a", "b", "c"], "rel": [1, 0, 2]}),
                   tmp_path / "q.parquet")
    pq.write_table(pa.table({"qid": ids.fill_null(303.0), "group": ["head", "tail", "tail"]}), tmp_path / "g.parquet")
    qrels_ids = read_qrels(tmp_path / "q.parquet").query_ids.to_pylist()
    assert qrels_ids == ["301", "302", "303"]  # hand-written: the ids as integers
    pairs = read_groups(tmp_path / "g.parquet")
    assert list(pairs.query_ids) == qrels_ids
    pq.write_table(pa.table({"qid": ids, "group": ["head", "tail", "tail"]}), tmp_path / "n.parquet")
    with pytest.raises(ParseError, match=r"n\.parquet \(column 'group'\): row 3: the query id is missing \(null\)"):
        read_groups(tmp_path / "n.parquet")
    pq.write_table(pa.table({"qid": [True], "group": ["head"]}), tmp_path / "b.parquet")
    with pytest.raises(ParseError, match=r"the query id column 'qid' has type bool"):
        read_groups(tmp_path / "b.parquet")


# ----------------------------------------------------------------------------- byte order marks of joined files

BOM = "\ufeff"


def test_a_byte_order_mark_starting_a_later_line_is_removed_as_in_trec_files(tmp_path: Path) -> None:
    """`cat a b` of two files saved with a mark: the second's mark starts a line. The TREC
    readers remove it; the topics reader kept it in the query id ('\\ufeffq2', a query
    matching nothing, silently) and the JSON-lines reader refused the line as "not valid JSON"."""
    (tmp_path / "t.tsv").write_text(f"{BOM}q1\tsolar\n{BOM}q2\twind power\n", encoding="utf-8")
    assert read_topics(tmp_path / "t.tsv") == {"q1": "solar", "q2": "wind power"}
    (tmp_path / "g.tsv").write_text(f"{BOM}q1\thead\r\n{BOM}q2\ttail\r\n", encoding="utf-8")
    assert read_groups(tmp_path / "g.tsv").query_ids == ("q1", "q2")
    (tmp_path / "q.jsonl").write_text(f'{BOM}{{"qid": "q1", "docid": "d1", "rel": 1}}\n'
                                      f'{BOM}{{"qid": "q2", "docid": "d3", "rel": 2}}\n', encoding="utf-8")
    text = read_qrels(f"{BOM}q1 0 d1 1\n{BOM}q2 0 d3 2\n".encode())  # the TREC reader: the oracle
    jsonl = read_qrels(tmp_path / "q.jsonl")
    assert jsonl.query_ids.to_pylist() == text.query_ids.to_pylist() == ["q1", "q2"]
    assert jsonl.relevance.tolist() == text.relevance.tolist() == [1, 2]
    # a mark inside an id stays part of it, in both (only a line's first character is removed)
    assert read_topics(_write(tmp_path / "i.tsv", f"q{BOM}1\tx\n")) == {f"q{BOM}1": "x"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- text that is not UTF-8

@pytest.mark.parametrize(("name", "what", "read"), [("g.tsv", "groups file", read_groups),
                                                    ("t.tsv", "topics file", read_topics),
                                                    ("q.csv", "file", read_qrels)])
def test_a_file_that_is_not_utf8_is_refused_naming_line_column_and_fix(
        tmp_path: Path, name: str, what: str, read) -> None:
    """The groups and topics readers printed Python's codec message ("'utf-8' codec can't
    decode byte 0xe9 in position 6: invalid continuation byte"), without a fix."""
    head = "qid,docid,rel\n" if name.endswith(".csv") else ""
    sep = "," if name.endswith(".csv") else "\t"
    (tmp_path / name).write_bytes(f"{head}q1{sep}1{',1' if head else ''}\n".encode() + f"q2{sep}caf".encode()
                                  + b"\xe9" + (b",1" if head else b"") + b"\n")
    line = 3 if head else 2
    # Latin-1 'é' is byte 0xe9 at column 7 of "q2<sep>caf\xe9" (7th byte), counted by hand
    with pytest.raises(ParseError, match=rf"{re.escape(name)}:{line}: the {what} is not UTF-8 text \(byte 0xe9 at "
                                         r"column 7\); save it as UTF-8\.$"):
        read(tmp_path / name)


# ----------------------------------------------------------------------------- standard input closed, streamed

def test_a_streamed_run_from_a_closed_standard_input_is_refused_as_in_memory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`serpeval evaluate q.txt - --stream <&-` was an internal error (exit 70: 'NoneType'
    object has no attribute 'buffer'); without --stream it is an input error (exit 2)."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    monkeypatch.setattr(sys, "stdin", None)  # what Python sets when started with fd 0 closed
    with pytest.raises(ReadError, match=r"^<stdin>: standard input is closed; give a file name instead of '-'\.$"):
        next(run_chunks("-"))
    lines = []
    for stream in ([], ["--stream"]):
        status = main(["evaluate", str(tmp_path / "qrels.txt"), "-", "-m", "P@1", *stream])
        lines.append((status, capsys.readouterr().err.strip()))
    assert lines[0] == lines[1] == (2, "serpeval evaluate: error: <stdin>: standard input is closed; give a file "
                                       "name instead of '-'.")


def test_a_bad_line_of_a_trec_run_whose_first_query_is_named_par1_is_named_as_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "p.run"
    path.write_text("PAR1 Q0 d1 1 2.0 t\nq2 Q0 d2 1 abc t\n")
    with pytest.raises(ParseError, match=r"p\.run:2: expected a number in column 5 \(score\), found 'abc'"):
        list(run_chunks(path))


# ----------------------------------------------------------------------------- UTF-16 text

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_file_is_named_as_utf16_with_the_conversion(tmp_path: Path, encoding: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Windows PowerShell's `>` writes UTF-16: each field was shown garbled, as "expected a
    number in column 5 (score), found '\\x002\\x00.\\x000\\x00'". Python's codec is the oracle
    that the bytes are UTF-16 text of a valid run."""
    text = RUN if encoding == "utf-16" else QRELS
    data = (b"\xfe\xff" if encoding == "utf-16-be" else b"") + text.encode(encoding)
    assert data.decode("utf-16") == text
    path = tmp_path / ("run.txt" if encoding == "utf-16" else "qrels.txt")
    path.write_bytes(data)
    mark = "FF FE" if encoding == "utf-16" else "FE FF"
    expected = (rf"^{re.escape(str(path))}:1: the file is UTF-16 text \(it starts with the UTF-16 byte order mark "
                rf"{mark}, .*\); serpeval reads UTF-8\. Convert it: iconv -f UTF-16 -t UTF-8 FILE > NEW")
    with pytest.raises(ParseError, match=expected):
        (read_run if encoding == "utf-16" else read_qrels)(path)
    if encoding == "utf-16":
        with pytest.raises(ParseError, match=expected):
            list(run_chunks(path))
    (tmp_path / "t.jsonl").write_bytes('{"qid": "q1", "text": "x"}\n'.encode("utf-16"))
    with pytest.raises(ParseError, match=r"t\.jsonl:1: the topics file is UTF-16 text"):
        read_topics(tmp_path / "t.jsonl")


# ----------------------------------------------------------------------------- JSON lines under a .json name

@pytest.mark.parametrize(("content", "message"), [
    ('{"qid": "q1", "docid": "d1", "rel": 1}\n{"qid": "q1", "docid": "d2", "rel": 0}\n',
     r"q\.json:2: invalid JSON: Extra data\. The file holds more than one JSON value: if it is JSON lines "
     r"\(one object per line\), name it \.jsonl\.$"),
    ('[{"qid": "q1", "docid": "d1", "rel": 1}]',
     r"q\.json: expected a JSON object \{query_id: \{doc_id: value\}\}, found a list\. A list of records is JSON "
     r"lines: write one object per line to a \.jsonl file\.$"),
    ("null", r"q\.json: expected a JSON object \{query_id: \{doc_id: value\}\}, found null\.$"),  # was "a list"
    (" \n", r"q\.json: the file is empty; expected a JSON object"),
])
def test_a_json_file_that_is_not_one_object_says_what_it_is(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "q.json").write_text(content)
    with pytest.raises(InputError, match=message):
        read_qrels(tmp_path / "q.json")


def test_a_csv_separated_by_semicolons_is_named_as_such(tmp_path: Path) -> None:
    """Excel in many locales writes ';'-separated "CSV": the whole header became one column."""
    (tmp_path / "q.csv").write_text("qid;docid;rel\nq1;d1;1\n")
    with pytest.raises(InputError, match=r"q\.csv: no query_id column; .* found columns qid;docid;rel\. Rename the "
                                         r"column or pass its name\. The one column's name holds ';': is the file "
                                         r"separated by ';'\?"):
        read_qrels(tmp_path / "q.csv")


@pytest.mark.parametrize(("line", "hint"), [
    ("q1 d1 1 2.0 r", " Is the Q0 column missing?"),       # was: "Is the run tag missing?" (it is there: r)
    ("q1 Q0 d1 1 r", " Is the rank or the score missing?"),  # was: "Is the run tag missing?"
    ("q1 Q0 d1 1 2.0", " Is the run tag missing?"),
    ("q1 Q0 d1 x y", ""),
])
def test_a_five_column_run_line_is_told_which_column_is_missing(line: str, hint: str) -> None:
    with pytest.raises(ParseError) as refused:
        read_run(f"q0 Q0 d0 1 3.0 r\n{line}\n".encode())
    assert str(refused.value) == (f"<bytes>:2: expected 6 columns (qid Q0 docid rank score tag), found 5: {line!r}."
                                  + hint)


def test_a_qrels_file_given_as_a_run_is_named_as_such() -> None:
    with pytest.raises(ParseError, match=r"^<bytes>:1: expected 6 columns \(qid Q0 docid rank score tag\), found "
                                         r"4: 'q1 0 d1 1'\. This looks like a qrels line; is a qrels file given "
                                         r"as a run\?$"):
        read_run(b"q1 0 d1 1\n")


def test_a_categorical_column_of_booleans_is_refused_as_a_boolean_column() -> None:
    """pandas' Categorical of True/False is an Arrow dictionary of booleans: it was read as 1/0."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": pd.Categorical([None, False])})
    with pytest.raises(ParseError, match=r"<table>: row 2: the relevance \('rel'\) is false; expected an integer"):
        qrels_from_table(frame)
    grades = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": pd.Categorical([2, 0])})
    assert qrels_from_table(grades).relevance.tolist() == [2, 0]  # a categorical of integers is grades


def test_a_float_query_id_in_json_lines_reads_the_same_whatever_the_other_lines_hold(tmp_path: Path) -> None:
    """{"qid": 301.0} read as '301' when every id of the field is a number (an Arrow column of
    floats, cast to text) but as '301.0' when another line's id is text (json.dumps)."""
    rows = ['{"qid": 301.0, "docid": "d1", "rel": 1}', '{"qid": 302, "docid": "d2", "rel": 1}']
    (tmp_path / "numbers.jsonl").write_text("\n".join(rows) + "\n")
    (tmp_path / "mixed.jsonl").write_text("\n".join([*rows, '{"qid": "q5", "docid": "d3", "rel": 0}']) + "\n")
    assert read_qrels(tmp_path / "numbers.jsonl").query_ids.to_pylist() == ["301", "302"]
    assert read_qrels(tmp_path / "mixed.jsonl").query_ids.to_pylist() == ["301", "302", "q5"]


# ----------------------------------------------------------------------------- writing TREC text that reads back

@pytest.mark.parametrize(("qid", "doc", "role", "why"), [
    ("solar panels", "d1", "query id", "it holds whitespace"),    # a Quepid query text as the id
    ("q1", "my doc", "doc id", "it holds whitespace"),             # an Elasticsearch _id
    ("q1", "d\t1", "doc id", "it holds whitespace"),
    ("#7", "d1", "query id", "a line starting with '#' is a comment"),
    ("\ufeffq1", "d1", "query id", "a byte order mark starting a line is removed"),
])
def test_the_trec_writers_refuse_an_id_that_would_not_read_back(tmp_path: Path, qid: str, doc: str, role: str,
                                                                why: str) -> None:
    """`q1 Q0 my doc 1 12.5 t` read back as doc 'my' with score 1.0, silently; `#7 Q0 d1 ...`
    as a comment (the query gone). The writers now refuse them."""
    from serpeval.io import qrels_from_dict, run_from_dict, write_trec_qrels, write_trec_run

    value = qid if role == "query id" else doc
    message = rf"<dict>: cannot write the {role} {re.escape(repr(value))} \(line 1 of the output\) as TREC text: {why}"
    with pytest.raises(InputError, match=message):
        write_trec_run(run_from_dict({qid: {doc: 12.5}}), tmp_path / "r.run")
    with pytest.raises(InputError, match=message):
        write_trec_qrels(qrels_from_dict({qid: {doc: 1}}), tmp_path / "q.txt")
    assert not (tmp_path / "r.run").exists()
    assert not (tmp_path / "q.txt").exists()


def test_what_the_trec_writers_write_reads_back_as_it_was(tmp_path: Path) -> None:
    """The oracle is the data itself: ids without ASCII whitespace (NBSP, '#' inside or in a
    doc id, non-ASCII) and every score read back unchanged; a tag with spaces is one field."""
    from serpeval.io import qrels_from_dict, run_from_dict, write_trec_qrels, write_trec_run

    scores = {"q\u00a01": {"#d": 0.1, "d\u00a0e": 1e-300, "é": float("inf")}, "q#2": {"d1": -0.0, "d2": 1 / 3}}
    write_trec_run(run_from_dict(scores, name="BM25 baseline"), tmp_path / "r.run")
    back = read_run(tmp_path / "r.run")
    assert back.tag == "BM25_baseline"
    got = {(q, d): s for q, d, s in zip(back.query_ids.to_pylist(), back.doc_ids.to_pylist(), back.scores.tolist(),
                                        strict=True)}
    assert got == {(q, d): s for q, docs in scores.items() for d, s in docs.items()}
    grades = {"q\u00a01": {"#d": 2, "é": 0}, "q#2": {"d1": -1}}
    write_trec_qrels(qrels_from_dict(grades), tmp_path / "q.txt")
    qrels = read_qrels(tmp_path / "q.txt")
    assert {(q, d): g for q, d, g in zip(qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist(),
                                         qrels.relevance.tolist(), strict=True)} == \
        {(q, d): g for q, docs in grades.items() for d, g in docs.items()}


def test_subtopic_rows_refuse_true_and_false_as_every_reader_does() -> None:
    """pyndeval-shaped tuples were the last reader to take True as grade 1 (the files, tables and
    dicts refuse it through core.data.refuse_boolean_grades)."""
    import numpy as np

    from serpeval.core.errors import ParseError
    from serpeval.core.subtopics import subtopic_qrels_from_rows

    rows = [("q", "s1", "d", 2), ("q", "s2", "d", np.int64(0))]
    assert subtopic_qrels_from_rows(rows).relevance.tolist() == [2, 0]
    for flag in (True, np.False_):
        expected = r"^<rows>: row 2: expected an integer relevance grade, found (True|False)"
        with pytest.raises(ParseError, match=expected):
            subtopic_qrels_from_rows([("q", "s1", "d", 1), ("q", "s2", "d", flag)])
