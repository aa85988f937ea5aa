"""Streaming evaluation (``evaluate(..., stream=True)``, ``evaluate --stream``) against the
in-memory path: the same per-query values bit for bit, the same coverage, the same errors.

The pieces are forced tiny (``chunk_bytes`` of a few hundred bytes) so that queries
straddle piece boundaries everywhere; shuffled files take the partitioning path.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest

from serpeval.cli.app import main
from serpeval.core.errors import DuplicateError, EmptyInputError, MissingQueriesError, ParseError
from serpeval.evaluation.evaluate import evaluate
from serpeval.evaluation.stream import evaluate_stream
from serpeval.io.trec_stream import StreamedRun, line_of_row, run_chunks

MEASURES = ["nDCG@10", "AP", "P@5", "R@100", "RR", "bpref", "num_ret", "num_rel_ret", "Judged@10"]


def _ids(rng: np.random.Generator, n: int, prefix: str) -> list[str]:
    """Ids of mixed lengths and scripts (byte order differs from code point order for some)."""
    shapes = [prefix + "{}", prefix + "-{:07d}", "Ü" + prefix + "{}", prefix + "\u4e2d{}", "{}"]
    return [shapes[i % len(shapes)].format(i) for i in rng.permutation(n)]


def _workload(tmp_path: Path, seed: int = 0, n_queries: int = 120) -> tuple[Path, list[str]]:
    """Qrels (some judged queries absent from the run, negative grades) and run lines with
    ties, unjudged queries and docs; returns the qrels path and the run lines grouped by query."""
    rng = np.random.default_rng(seed)
    queries = _ids(rng, n_queries, "q")
    docs = _ids(rng, 80, "d")
    qrels = []
    for i, q in enumerate(queries):
        if i % 9 == 4:
            continue  # run query without judgments
        for j in rng.choice(len(docs), 10, replace=False):
            qrels.append(f"{q} 0 {docs[j]} {rng.integers(-1, 4)}\n")
    (tmp_path / "qrels").write_text("".join(qrels), encoding="utf-8")
    lines = []
    for i, q in enumerate(queries):
        if i % 13 == 5:
            continue  # judged query absent from the run
        for j in rng.choice(len(docs), int(rng.integers(1, 45)), replace=False):
            score = rng.integers(0, 6) / 4  # many ties
            lines.append(f"{q} Q0 {docs[j]} 0 {score} tag-{seed}\n")
    return tmp_path / "qrels", lines


def _same(a, b) -> None:
    assert [r.name for r in a.runs] == [r.name for r in b.runs]
    for ra, rb in zip(a.runs, b.runs, strict=True):
        assert list(ra.query_ids) == list(rb.query_ids)
        assert ra.values.tobytes() == rb.values.tobytes()  # bit for bit
        assert ra.coverage == rb.coverage
        assert ra.tag == rb.tag
        assert a.means(ra.name) == b.means(rb.name)
        # the run's content signature, added up piece by piece, is the in-memory one
        assert ra.signature == rb.signature
        assert len(ra.signature) == 16
        assert ra.qrels_signature == rb.qrels_signature == a.settings.qrels_signature
    assert a.inputs() == b.inputs()
    assert a.settings.grades == b.settings.grades


@pytest.mark.parametrize("shape", ["grouped", "shuffled", "gzip", "gzip-shuffled"])
@pytest.mark.parametrize("options", [{}, {"missing": "zero"}, {"depth": 7}, {"judged_only": True},
                                     {"float32_scores": True}])
def test_stream_equals_memory(tmp_path: Path, shape: str, options: dict) -> None:
    # 60 queries (~1,400 lines): every id shape, judged queries absent from the run, run queries
    # without judgments and ties are still there (asserted below); 97-byte pieces cut nearly
    # every line, and 1000-byte pieces spill fewer parts than queries, so parts hold several
    # queries (the part count is capped at the judged queries)
    qrels, lines = _workload(tmp_path, n_queries=60)
    if "shuffled" in shape:
        lines = [lines[i] for i in np.random.default_rng(1).permutation(len(lines))]
    text = "".join(lines).encode("utf-8")
    path = tmp_path / ("run.gz" if "gzip" in shape else "run.txt")
    path.write_bytes(gzip.compress(text) if "gzip" in shape else text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = evaluate(qrels, path, MEASURES, **options)
        for chunk_bytes in (97, 1000, 1 << 20):
            streamed = evaluate_stream(qrels, path, MEASURES, chunk_bytes=chunk_bytes, **options)
            _same(memory, streamed)
    assert memory.runs[0].coverage.missing  # the workload has missing queries
    assert memory.runs[0].coverage.unjudged_queries
    assert memory.runs[0].coverage.ties


def test_many_runs_and_names(tmp_path: Path) -> None:
    qrels, lines = _workload(tmp_path)
    a, b = tmp_path / "a" / "bm25.run", tmp_path / "b" / "bm25.run"
    for p in (a, b):
        p.parent.mkdir()
        p.write_text("# a comment\n\n" + "".join(lines) + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = evaluate(qrels, [a, b], MEASURES)
        facts: list[StreamedRun] = []
        streamed = evaluate_stream(qrels, [a, b], MEASURES, chunk_bytes=300, facts=facts)
    _same(memory, streamed)
    assert [r.name for r in streamed.runs] == ["bm25", "bm25#2"]
    assert [f.skipped_lines for f in facts] == [3, 3]  # comment, blank line, trailing blank line
    assert facts[0].rows == len(lines)


def test_stream_keyword_of_evaluate(tmp_path: Path) -> None:
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    seen: list[tuple[int, int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(evaluate(qrels, path, MEASURES), evaluate(qrels, path, MEASURES, stream=True,
                                                        progress=lambda d, t: seen.append((d, t))))
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


def test_progress_reports_bytes(tmp_path: Path) -> None:
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    seen: list[tuple[int, int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=500, progress=lambda d, t: seen.append((d, t)))
    size = path.stat().st_size
    done = [d for d, _ in seen]
    assert len(seen) >= size // 500
    assert done == sorted(done)
    assert seen[-1] == (size, size)


def _message(exc_info) -> str:
    return str(exc_info.value)


@pytest.mark.parametrize("bad", [
    "q1 Q0 d1 1 2.0\n",              # 5 columns
    "q1 Q0 d1 1 x tag\n",            # not a number
    "q1 Q0 d1 1 nan tag\n",          # NaN
    "q1  Q0\td1 1 1_0 tag\n",        # careful path, digit separator
    "q1 Q0 \xff\n",                  # short line with odd bytes
])
@pytest.mark.parametrize("where", [3, 250, 900])
def test_errors_name_the_same_line(tmp_path: Path, bad: str, where: int) -> None:
    qrels, lines = _workload(tmp_path)
    lines = [*lines[:where], bad, *lines[where:]]
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ParseError) as memory:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(ParseError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=200)
    assert _message(streamed) == _message(memory)
    assert f"{path}:{where + 1}:" in _message(streamed)


def test_comment_refused_with_line(tmp_path: Path) -> None:
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join([*lines[:40], "# note\n", *lines[40:]]), encoding="utf-8")
    from serpeval.io.trec import read_trec_run

    with pytest.raises(ParseError) as memory:
        read_trec_run(path, comments=False)
    with pytest.raises(ParseError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=150, comments=False)
    assert _message(streamed) == _message(memory)
    assert f"{path}:41:" in _message(streamed)


@pytest.mark.parametrize("shuffled", [False, True])
def test_duplicate_across_pieces(tmp_path: Path, shuffled: bool) -> None:
    """A doc retrieved twice for one query, the two lines far apart (in other pieces; in the
    shuffled file, with other queries between them): the same error and lines as in memory."""
    qrels, lines = _workload(tmp_path)
    if shuffled:
        lines = [lines[i] for i in np.random.default_rng(3).permutation(len(lines))]
    judged = {line.split()[0] for line in qrels.read_text(encoding="utf-8").splitlines()}
    query = next(line.split()[0] for line in lines[100:] if line.split()[0] in judged)
    rows = [i for i, line in enumerate(lines) if line.split()[0] == query]
    first = rows[0]
    copy = lines[first].replace(" 0 ", " 9 ", 1)
    at = rows[-1] + 1 if not shuffled else len(lines) - 5
    lines.insert(at, copy)
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(DuplicateError) as memory:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(DuplicateError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=120)
    assert _message(streamed) == _message(memory)
    assert f"{path}:{at + 1}:" in _message(streamed)
    assert f"first at line {first + 1}" in _message(streamed)


def test_missing_error_and_empty(tmp_path: Path) -> None:
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(MissingQueriesError) as memory:
        evaluate(qrels, path, ["AP"], missing="error")
    with pytest.raises(MissingQueriesError) as streamed:
        evaluate_stream(qrels, path, ["AP"], missing="error", chunk_bytes=300)
    assert _message(streamed) == _message(memory)
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(EmptyInputError) as memory_empty:
        evaluate(qrels, empty, ["AP"])
    with pytest.raises(EmptyInputError) as streamed_empty:
        evaluate_stream(qrels, empty, ["AP"], chunk_bytes=4)
    assert _message(streamed_empty) == _message(memory_empty)


def test_pieces_and_line_of_row(tmp_path: Path) -> None:
    """Pieces cover every line once (CRLF, lone CR, blank lines, a line longer than a piece)."""
    text = b"q1 Q0 a 1 1 t\r\n\r\nq1 Q0 b 1 2 t\rq2 Q0 " + b"c" * 500 + b" 1 3 t\n# c\nq3 Q0 d 1 4 t"
    path = tmp_path / "run"
    path.write_bytes(text)
    info = StreamedRun(str(path))
    chunks = list(run_chunks(path, info, chunk_bytes=16))
    assert sum(len(c.run) for c in chunks) == info.rows == 4
    assert info.skipped_lines == 2
    assert info.tag == "t"
    assert [line_of_row(path, r, chunk_bytes=16) for r in range(4)] == [1, 3, 4, 6]
    docs = [d for c in chunks for d in c.run.doc_ids.to_pylist()]
    assert docs == ["a", "b", "c" * 500, "d"]


def test_cli_stream_same_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, lines = _workload(tmp_path)
    lines = [lines[i] for i in np.random.default_rng(5).permutation(len(lines))]
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress("".join(lines).encode("utf-8")))
    outputs = []
    for extra in ([], ["--stream"]):
        assert main(["evaluate", str(qrels), str(path), "-q", "-f", "tsv", "-m", "AP,nDCG@10", *extra]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0].out == outputs[1].out
    assert outputs[0].out.count("\n") > 90
    assert outputs[0].err == outputs[1].err


@pytest.mark.parametrize("text", [b"", b"a", b"a\n", b"a\r\nb", b"\r\r\n\n", b"a\rb\r", b"\n\n", b"x\r", b"\r\n\r"])
def test_count_lines_is_splitlines(text: bytes) -> None:
    from serpeval.io.trec_stream import _count_lines

    assert _count_lines(text) == len(text.splitlines())


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_grouped_and_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is read once: grouped, it streams like a file (named by its run tag);
    not grouped, it is refused with a message (it cannot be read twice)."""
    qrels, lines = _workload(tmp_path)
    text = "".join(lines).encode("utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _stdin(monkeypatch, text)
        memory = evaluate(qrels, "-", MEASURES)
        _stdin(monkeypatch, text)
        _same(memory, evaluate_stream(qrels, "-", MEASURES, chunk_bytes=400))
    assert memory.runs[0].name == "tag-0"
    shuffled = "".join(lines[i] for i in np.random.default_rng(2).permutation(len(lines))).encode("utf-8")
    _stdin(monkeypatch, shuffled)
    from serpeval.core.errors import InputError

    with pytest.raises(InputError, match="not grouped by query"):
        evaluate_stream(qrels, "-", ["AP"], chunk_bytes=400)


def test_spill_files_removed(tmp_path: Path) -> None:
    """A run not grouped by query is partitioned into spill_dir, which is left empty."""
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join(lines[i] for i in np.random.default_rng(4).permutation(len(lines))), encoding="utf-8")
    spill = tmp_path / "spill"
    spill.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(evaluate(qrels, path, MEASURES), evaluate_stream(qrels, path, MEASURES, chunk_bytes=700, spill_dir=spill))
    assert list(spill.iterdir()) == []


def test_bad_line_reported_before_duplicate(tmp_path: Path) -> None:
    """A duplicate early and a malformed line late: the malformed line is reported, as in memory."""
    qrels, lines = _workload(tmp_path)
    judged = {line.split()[0] for line in qrels.read_text(encoding="utf-8").splitlines()}
    first = next(i for i, line in enumerate(lines) if line.split()[0] in judged)
    lines.insert(first + 1, lines[first])
    lines.insert(len(lines) - 3, "q1 Q0 d1 1 2.0\n")
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ParseError) as memory:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(ParseError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=200)
    assert _message(streamed) == _message(memory)


def test_bad_line_reported_before_nan(tmp_path: Path) -> None:
    """A NaN score early and a malformed line late: the malformed line is reported, as in memory;
    a NaN alone is reported with its line."""
    qrels, lines = _workload(tmp_path)
    lines.insert(10, "q1 Q0 d1 1 nan t\n")
    path = tmp_path / "run"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ParseError) as memory_nan:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(ParseError) as streamed_nan:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=200)
    assert _message(streamed_nan) == _message(memory_nan)
    assert "NaN" in _message(streamed_nan)
    lines.insert(len(lines) - 3, "q1 Q0 d1 1 2.0\n")
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ParseError) as memory:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(ParseError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=200)
    assert _message(streamed) == _message(memory)
    assert "expected 6 columns" in _message(streamed)


def test_nothing_evaluated_same_message(tmp_path: Path) -> None:
    """A run that matches no judged query: the same error (examples of its query ids) as in memory."""
    qrels, lines = _workload(tmp_path)
    path = tmp_path / "run"
    path.write_text("".join("other-" + line for line in lines), encoding="utf-8")
    from serpeval.core.errors import InputError, NothingEvaluatedError

    with pytest.raises(NothingEvaluatedError) as memory:
        evaluate(qrels, path, ["AP"])
    with pytest.raises(NothingEvaluatedError) as streamed:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=100)
    assert _message(streamed) == _message(memory)
    with pytest.raises(NothingEvaluatedError) as memory_error:
        evaluate(qrels, path, ["AP"], missing="error")
    with pytest.raises(NothingEvaluatedError) as streamed_error:
        evaluate_stream(qrels, path, ["AP"], chunk_bytes=100, missing="error")
    assert _message(streamed_error) == _message(memory_error)
    with pytest.raises(InputError, match="run files"):
        evaluate_stream(qrels, {"a": str(path)}, ["AP"])


def _fifo(tmp_path: Path, data: bytes) -> Path:
    """A named pipe that a thread fills with ``data`` once (what ``<(zcat run.gz)`` gives)."""
    import os
    import threading

    folder = tmp_path / f"pipe-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    path = folder / "run"  # the same run name for every pipe
    os.mkfifo(path)

    def feed() -> None:
        try:
            with open(path, "wb") as handle:
                handle.write(data)
        except BrokenPipeError:
            pass  # the reader stopped early (a refusal reads no further), as `cat` sees in <(cat run)

    threading.Thread(target=feed, daemon=True).start()
    return path


def test_a_pipe_not_grouped_by_query_is_refused_for_the_true_reason(tmp_path: Path) -> None:
    """A named pipe (or ``/dev/fd/N``) is read once, like standard input: grouped, it streams
    like a file; not grouped, the message says so and what to do (it used to re-read the
    drained pipe and say "the run has no data lines")."""
    from serpeval.core.errors import InputError

    qrels, lines = _workload(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(evaluate(qrels, _fifo(tmp_path, "".join(lines).encode()), MEASURES),
              evaluate_stream(qrels, _fifo(tmp_path, "".join(lines).encode()), MEASURES, chunk_bytes=400))
    shuffled = "".join(lines[i] for i in np.random.default_rng(2).permutation(len(lines))).encode("utf-8")
    pipe = _fifo(tmp_path, shuffled)
    with pytest.raises(InputError, match="not grouped by query") as caught:
        evaluate_stream(qrels, pipe, ["AP"], chunk_bytes=400)
    assert str(pipe) in str(caught.value)
    assert "sort -s -k1,1" in str(caught.value)
    assert "no data lines" not in str(caught.value)


def test_cli_stream_of_an_ungrouped_process_substitution() -> None:
    """``serpeval evaluate --stream q <(cat run)`` with an ungrouped run: exit 2, one line
    with the true reason."""
    from tests.faults.helpers import assert_one_error, run_bash

    script = ('d=$(mktemp -d); printf "1 0 a 1\\n1 0 b 0\\n2 0 c 1\\n" > $d/q; '
              'printf "1 Q0 a 1 2 r\\n2 Q0 c 1 1 r\\n1 Q0 b 2 1 r\\n" > $d/r; '
              '$SERPEVAL evaluate --stream $d/q <(cat $d/r); s=$?; rm -r $d; exit $s')
    assert_one_error(run_bash(script), "/dev/fd/", "not grouped by query", "sort -s -k1,1")


def test_gzip_from_a_pipe_is_decompressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gzip is recognised by its magic bytes from a pipe and standard input too, as in memory
    (``<(cat run.gz)``, ``zcat``-less ``cat run.gz |``); it used to be parsed as text."""
    qrels, lines = _workload(tmp_path)
    packed = gzip.compress("".join(lines).encode("utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = evaluate(qrels, _fifo(tmp_path, packed), MEASURES)
        _same(memory, evaluate_stream(qrels, _fifo(tmp_path, packed), MEASURES, chunk_bytes=400))
        _stdin(monkeypatch, packed)
        streamed = evaluate_stream(qrels, "-", MEASURES, chunk_bytes=400)
    assert streamed.runs[0].values.tobytes() == memory.runs[0].values.tobytes()


def test_a_duplicate_in_a_pipe_is_named_by_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document twice in a piped run: the rows are named, as the in-memory reader names them
    for a pipe (the pipe cannot be read again for line numbers: that gave "line -1" for
    ``<(...)`` and an internal error for standard input)."""
    run = "1 Q0 a 1 2 r\n1 Q0 é 2 1 r\n1 Q0 a 3 1 r\n2 Q0 c 1 1 r\n".encode()
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n2 0 c 1\n", encoding="utf-8")
    pipe = _fifo(tmp_path, run)
    with pytest.raises(DuplicateError) as memory:
        evaluate(qrels, _fifo(tmp_path, run), ["AP"])
    with pytest.raises(DuplicateError) as streamed:
        evaluate_stream(qrels, pipe, ["AP"])
    assert "row 3" in str(memory.value)
    assert "first at row 1" in str(memory.value)
    assert str(streamed.value).startswith(f"{pipe}: ")
    assert str(streamed.value).split(": ", 1)[1] == str(memory.value).split(": ", 1)[1]
    _stdin(monkeypatch, run)
    with pytest.raises(DuplicateError, match=r"^<stdin>: row 3: .*first at row 1"):
        evaluate_stream(qrels, "-", ["AP"])
