"""Streaming evaluation: runs larger than memory, evaluated piece by piece in bounded memory.

``evaluate(qrels, runs, measures, stream=True)`` (or :func:`evaluate_stream`) reads each run
file with :func:`serpeval.io.trec_stream.run_chunks` (blocks of ``chunk_bytes`` of text),
and gives the same :class:`~serpeval.evaluation.results.Results` as the in-memory path,
bit for bit: every measure's value of a query depends on that query's rows and judgments
only, and each piece is ranked by the same :func:`serpeval.ranking.rank` against the one
shared :class:`~serpeval.ranking.QrelsIndex`.

* **Grouped files** (all lines of a query together, in any query order: what every
  engine writes): each piece is cut after its last complete query; the rows of the last
  query move on to the next piece. One pass, memory bounded by about one piece.
* **Files not grouped by query** (a judged query's lines in two places not adjacent): found
  as soon as a query comes back; the run is then read again and its judged rows spilled
  to ``K`` temporary Arrow files by query (``K`` = file size / ``chunk_bytes``), each
  evaluated on its own (the spill directory is removed afterwards; ``spill_dir`` chooses
  where, default the system's temporary directory). Standard input and pipes
  (``<(zcat run.gz)``, a named FIFO) cannot be read twice: an ungrouped run from one is
  refused with a message that says so (sort it by query, or give a file).
* Missing queries (``missing``), depth, judged-only, duplicate docs (named ``path:line``,
  checked within the whole query, reported after the whole file has been read, so that a
  malformed line anywhere is reported first, as in memory), ties, coverage counts: as
  :func:`~serpeval.evaluation.evaluate.evaluate`.
  The count of distinct run queries uses 64-bit fingerprints of the ids (a collision among
  a run's query ids, chance ~n^2/2^65, would count one query fewer; no value changes).

Diversity measures (subtopic qrels) are not streamed: use the in-memory path.
"""

from __future__ import annotations

import math
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from serpeval.core.data import Run
from serpeval.core.errors import DuplicateError, InputError, InvalidParameterError
from serpeval.core.fingerprints import fingerprint, finish_signature, signature_of, signature_part
from serpeval.core.id_codes import codes_in
from serpeval.core.segments import take_segments
from serpeval.core.subtopics import SubtopicQrels
from serpeval.evaluation.results import Results, RunResult, Settings, with_unique_names
from serpeval.io import as_qrels
from serpeval.io.trec_stream import DEFAULT_CHUNK_BYTES, StreamedRun, line_of_row, run_chunks
from serpeval.measures import Measure, parse_measures
from serpeval.measures.propensity import weight_key
from serpeval.ranking import (
    Coverage,
    Missing,
    QrelsIndex,
    Rankings,
    TiePolicy,
    check_ties,
    index_qrels,
    missing_queries_error,
    missing_queries_warning,
    rank,
    require_evaluated,
)

__all__ = ["evaluate_stream"]


class _NotGrouped(Exception):
    """A judged query's rows are in two pieces of the file that are not adjacent."""


@dataclass
class _Options:
    measures: Sequence[Measure]
    missing: Missing
    depth: int | None
    judged_only: bool
    float32_scores: bool
    comments: bool
    chunk_bytes: int
    ties: TiePolicy = "trec_eval"


@dataclass
class _Collected:
    """Per-query values and counts gathered over the pieces of one run."""

    index: QrelsIndex
    seen: Any  # bool per judged query: evaluated already
    codes: list[Any] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    query_prints: list[Any] = field(default_factory=list)
    smallest: list[str] = field(default_factory=list)  # the 4 smallest run query ids (byte order)
    first: list[str] = field(default_factory=list)  # the first 4 run query ids of the first 10,000 rows
    rows: int = 0  # rows noted so far
    unjudged_rows: int = 0
    truncated_rows: int = 0
    dropped_unjudged: int = 0
    ties: int = 0
    signature_total: int = 0  # the run's row hashes added up so far (core.fingerprints.signature_part)
    signature_rows: int = 0


def _sign(run: Run, collected: _Collected) -> None:
    """Add a piece's rows to the run's content signature (the in-memory path's value once
    every piece is in: a sum of row hashes, whatever the pieces)."""
    total, rows = signature_part(run.query_ids, run.doc_ids, run.scores)
    collected.signature_total = (collected.signature_total + total) % (1 << 64)
    collected.signature_rows += rows


def _names(query_ids: pa.ChunkedArray, collected: _Collected) -> None:
    """Note the distinct query ids of a piece (fingerprints, and the few ids messages show)."""
    distinct = pc.unique(query_ids)
    collected.query_prints.append(np.unique(fingerprint(pa.chunked_array([distinct]))))
    low = pc.sort_indices(distinct).to_numpy()[:4]
    collected.smallest = sorted(set(collected.smallest) | set(distinct.take(pa.array(low)).to_pylist()),
                                key=lambda s: s.encode("utf-8"))[:4]
    head = max(0, 10_000 - collected.rows)  # as evaluate()'s message: the first 10,000 rows of the file
    collected.rows += len(query_ids)
    if len(collected.first) < 4 and head:
        for qid in pc.unique(query_ids.slice(0, head)).to_pylist():
            if len(collected.first) < 4 and qid not in collected.first:
                collected.first.append(qid)


def _measure(part: Run, rows: Callable[[], Any], opts: _Options, collected: _Collected, label: str) -> None:
    """Rank and measure the complete queries of ``part`` (``rows()``: their rows in the file)."""
    try:
        rankings = rank(collected.index, part, missing="skip", depth=opts.depth, judged_only=opts.judged_only,
                        float32_scores=opts.float32_scores, ties=opts.ties)
    except DuplicateError as exc:
        raise _relocated(exc, part, rows(), opts, label) from None
    assert rankings.run_order is not None  # rank() always records it
    sorted_codes = rankings.run_order.sorted_codes
    if sorted_codes.size:
        codes = sorted_codes[np.concatenate([[True], sorted_codes[1:] != sorted_codes[:-1]])].astype(np.int64)
        if collected.seen[codes].any():
            raise _NotGrouped
        collected.seen[codes] = True
        values = np.column_stack([m.compute(rankings) for m in opts.measures]) if opts.measures else \
            np.zeros((rankings.n_queries, 0))
        collected.codes.append(codes)
        collected.values.append(values)
    cov = rankings.coverage
    collected.unjudged_rows += cov.unjudged_rows
    collected.truncated_rows += cov.truncated_rows
    collected.dropped_unjudged += cov.dropped_unjudged
    collected.ties += cov.ties


def _relocated(exc: DuplicateError, part: Run, rows: Any, opts: _Options, label: str) -> DuplicateError:
    """The in-memory reader's message for a doc retrieved twice, lines counted in the whole file."""
    query, doc = exc.query, exc.doc
    both = pc.and_(pc.equal(part.query_ids, query), pc.equal(part.doc_ids, doc))
    a, b = (int(rows[i]) for i in np.flatnonzero(both.to_numpy(zero_copy_only=False))[:2])
    if _is_pipe(label):  # read once: no line numbers to look up; data rows, as in memory
        return DuplicateError(
            f"{'<stdin>' if label == '-' else label}: row {b + 1}: document {doc!r} is retrieved twice for "
            f"query {query!r} (first at row {a + 1}). trec_eval refuses such runs; keep one line per "
            "(query, document).", query=query, doc=doc)
    line_a = line_of_row(label, a, comments=opts.comments, chunk_bytes=opts.chunk_bytes)
    line_b = line_of_row(label, b, comments=opts.comments, chunk_bytes=opts.chunk_bytes)
    return DuplicateError(
        f"{label}:{line_b}: document {doc!r} is retrieved twice for query {query!r} "
        f"(first at line {line_a}). trec_eval refuses such runs; keep one line per (query, document).",
        query=query, doc=doc,
    )


def _concat(a: Run | None, b: Run) -> Run:
    if a is None:
        return b
    return Run(pa.chunked_array(a.query_ids.chunks + b.query_ids.chunks, pa.string()),
               pa.chunked_array(a.doc_ids.chunks + b.doc_ids.chunks, pa.string()),
               np.concatenate([a.scores, b.scores]), name=b.name, source=b.source)


def _slice(run: Run, start: int, stop: int) -> Run:
    return Run(run.query_ids.slice(start, stop - start), run.doc_ids.slice(start, stop - start),
               run.scores[start:stop], name=run.name, source=run.source)


def _grouped(path: str, info: StreamedRun, opts: _Options, collected: _Collected,
             progress: Callable[[int, int], None] | None) -> None:
    """One pass over a file grouped by query (raises _NotGrouped when it is not)."""
    carry: Run | None = None
    carry_row = 0
    failed: DuplicateError | None = None  # raised after the whole file is read: a bad line comes first
    for chunk in run_chunks(path, info, comments=opts.comments, chunk_bytes=opts.chunk_bytes, progress=progress):
        _names(chunk.run.query_ids, collected)
        _sign(chunk.run, collected)
        pending = _concat(carry, chunk.run)
        base = carry_row if carry is not None else chunk.first_row
        last = pending.query_ids[-1]
        same = pc.equal(pending.query_ids, last).to_numpy(zero_copy_only=False)
        other = np.flatnonzero(~same)
        cut = int(other[-1]) + 1 if other.size else 0
        if cut and failed is None:
            try:
                _measure(_slice(pending, 0, cut), partial(np.arange, base, base + cut), opts, collected, path)
            except DuplicateError as exc:
                failed = exc
        carry, carry_row = _slice(pending, cut, len(pending)), base + cut
    if failed is not None:
        raise failed
    if carry is not None and len(carry):
        _measure(carry, partial(np.arange, carry_row, carry_row + len(carry)), opts, collected, path)


def _is_pipe(path: str) -> bool:
    """Whether ``path`` can be read only once: standard input, a pipe (``<(zcat run.gz)``), a
    named FIFO, a device."""

    try:
        return path == "-" or not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # gone since: the next read says why


def _refuse_pipe(path: str) -> None:
    """An ungrouped run is read twice (to partition it): refuse one that cannot be, standard
    input or a pipe (``<(zcat run.gz)``, a named FIFO), saying why and what to do."""
    if _is_pipe(path):
        label, what = ("<stdin>", "standard input") if path == "-" else (path, "a pipe")
        raise InputError(
            f"{label}: the run is not grouped by query (a query's lines come back after other queries), "
            f"and {what} cannot be read twice to partition it for --stream. Give the run as a file, "
            "sort it by query first (sort -s -k1,1), or drop --stream."
        )


def _partitioned(path: str, info: StreamedRun, opts: _Options, collected: _Collected,
                 progress: Callable[[int, int], None] | None, spill_dir: str | None) -> None:
    """Two passes: spill the judged rows to ``K`` files by query, then evaluate each file."""

    _refuse_pipe(path)
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        if handle.read(2) == b"\x1f\x8b":
            size *= 4  # gzip: roughly the text's size
    index = collected.index
    # about chunk_bytes of text a part; never more parts than judged queries (a query is never
    # split, so further parts would stay empty: files opened and read back for nothing)
    parts = max(2, min(math.ceil(size / opts.chunk_bytes), len(index.query_ids)))
    collected.query_prints.clear()
    schema = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64()),
                        ("row", pa.int64())])
    with tempfile.TemporaryDirectory(prefix="serpeval-stream-", dir=spill_dir) as tmp:
        files = [Path(tmp) / f"part-{k}.arrow" for k in range(parts)]
        sinks = [pa.OSFile(str(f), "wb") for f in files]
        writers = [ipc.new_stream(sink, schema) for sink in sinks]
        try:
            for chunk in run_chunks(path, info, comments=opts.comments, chunk_bytes=opts.chunk_bytes,
                                    progress=progress):
                run = chunk.run
                _names(run.query_ids, collected)
                _sign(run, collected)
                codes, _ = codes_in(run.query_ids, index.query_table)
                judged = np.flatnonzero(codes >= 0)
                collected.unjudged_rows += len(codes) - len(judged)
                part = codes[judged] % parts
                order = judged[np.argsort(part, kind="stable")]
                bounds = np.concatenate([[0], np.cumsum(np.bincount(part, minlength=parts))])
                table = pa.table([run.query_ids, run.doc_ids, pa.array(run.scores),
                                  pa.array(np.arange(chunk.first_row, chunk.first_row + len(run)))],
                                 schema=schema).take(pa.array(order))
                for k in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():  # the parts this piece reaches
                    writers[k].write_table(table.slice(bounds[k], bounds[k + 1] - bounds[k]))
        finally:
            for writer, sink in zip(writers, sinks, strict=True):
                writer.close()
                sink.close()
        for f in files:
            with pa.memory_map(str(f)) as source:
                table = ipc.open_stream(source).read_all()
            f.unlink()
            if table.num_rows == 0:
                continue
            part_run = Run(table["query_id"], table["doc_id"], table["score"].to_numpy(), name=info.label,
                           source=info.label)
            rows = table["row"]
            del table
            _measure(part_run, rows.to_numpy, opts, collected, path)
            del part_run, rows


def _zero_rankings(index: QrelsIndex, codes: Any, coverage: Coverage) -> Rankings:
    """Empty rankings of the judged queries ``codes`` (``missing="zero"``), as :func:`rank` builds them."""
    i_offsets, picked = take_segments(index.ideal_offsets, codes)
    return Rankings(index.query_names[codes], np.zeros(len(codes) + 1, dtype=np.int64),
                    np.zeros(0, dtype=np.int64), i_offsets, index.ideal_grades[picked], coverage)


def _stream_one(path: str, index: QrelsIndex, opts: _Options, qrels_source: str,
                progress: Callable[[int, int], None] | None, spill_dir: str | None,
                facts: list[StreamedRun] | None, qrels_signature: str = "") -> RunResult:
    n_judged = len(index.query_ids)
    info = StreamedRun(path)
    collected = _Collected(index, np.zeros(n_judged, dtype=bool))
    try:
        _grouped(path, info, opts, collected, progress)
    except _NotGrouped:
        info = StreamedRun(path)
        collected = _Collected(index, np.zeros(n_judged, dtype=bool))
        _partitioned(path, info, opts, collected, progress, spill_dir)
    if facts is not None:
        facts.append(info)
    present = int(np.count_nonzero(collected.seen))
    run_queries = len(np.unique(np.concatenate(collected.query_prints))) if collected.query_prints else 0
    absent = np.flatnonzero(~collected.seen)
    missing_ids = tuple(index.query_ids.take(pa.array(absent, pa.int64())).to_pylist())
    coverage = Coverage(
        run=info.name, judged_queries=n_judged, run_queries=run_queries,
        evaluated=n_judged if opts.missing == "zero" else present, missing=missing_ids,
        missing_policy=opts.missing, unjudged_queries=run_queries - present,
        unjudged_rows=collected.unjudged_rows, truncated_rows=collected.truncated_rows,
        dropped_unjudged=collected.dropped_unjudged, ties=collected.ties,
    )
    label = info.label
    if missing_ids and opts.missing == "error":
        require_evaluated(coverage, label, run_examples=collected.smallest)
        raise missing_queries_error(label, info.name, missing_ids)
    require_evaluated(coverage, label, qrels=qrels_source, run_examples=collected.first)
    if missing_ids and opts.missing == "skip":
        warnings.warn(missing_queries_warning(coverage), stacklevel=3)
    codes, values = collected.codes, collected.values
    if opts.missing == "zero" and absent.size:
        zero = _zero_rankings(index, absent, coverage)
        codes.append(absent)
        values.append(np.column_stack([m.compute(zero) for m in opts.measures]) if opts.measures
                      else np.zeros((len(absent), 0)))
    all_codes = np.concatenate(codes)
    order = np.argsort(all_codes, kind="stable")
    all_codes = all_codes[order]
    table = np.concatenate(values)[order]
    query_ids = index.query_names if len(all_codes) == n_judged else index.query_names[all_codes]
    return RunResult(info.name, info.tag or info.name, query_ids, table, coverage,
                     finish_signature(collected.signature_total, collected.signature_rows), qrels_signature)


def evaluate_stream(
    qrels: Any,
    runs: str | Path | Iterable[str | Path],
    measures: Any,
    *,
    missing: Missing = "skip",
    depth: int | None = None,
    judged_only: bool = False,
    float32_scores: bool = False,
    comments: bool = True,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    spill_dir: str | Path | None = None,
    facts: list[StreamedRun] | None = None,
    ties: TiePolicy = "trec_eval",
) -> Results:
    """Evaluate TREC run files piece by piece (see the module docstring); the arguments are
    :func:`~serpeval.evaluation.evaluate.evaluate`'s, plus:

    Args:
        runs: one path (``.gz`` ok, ``"-"`` for standard input) or several.
        comments: skip ``#`` comment lines (``False`` refuses them, trec_eval 9.0.8).
        chunk_bytes: bytes of text read per piece (memory is a few times this).
        progress: ``progress(done, total)`` after each piece: bytes read of the file and its
            size (0 when unknown), run after run.
        spill_dir: where an ungrouped run is partitioned (default: the temporary directory).
        facts: a list that receives each run file's
            :class:`~serpeval.io.trec_stream.StreamedRun` (name, tag, rows, skipped lines).
        ties: the tie policy (a query is ranked whole within a piece, so every policy gives
            the in-memory values).

    Raises:
        InputError: subtopic qrels (diversity measures are not streamed); an ungrouped run
            on standard input or a pipe.
    """
    from serpeval.core.checks import check_count

    if isinstance(qrels, SubtopicQrels):
        raise InputError("stream=True does not evaluate diversity measures (subtopic qrels); "
                         "evaluate in memory (stream=False).")
    chunk_bytes = check_count(chunk_bytes, "chunk_bytes")
    parsed = parse_measures(measures)
    scored = [str(m) for m in parsed if weight_key(m) is not None]
    if scored:  # their weights are ranked by evaluate(), from the whole qrels
        raise InputError(f"{scored[0]} is not computed by the streaming evaluation; drop stream=True (--stream).")
    if any(m.spec.subtopics for m in parsed):
        raise InputError("stream=True does not evaluate diversity measures; evaluate in memory (stream=False).")
    judgments = as_qrels(qrels)
    index = index_qrels(judgments)
    if isinstance(runs, Mapping):
        raise InputError("stream=True reads run files: give a path or a list of paths, not a dict.")
    paths = [str(runs)] if isinstance(runs, (str, Path)) else list(runs)
    if not all(isinstance(p, (str, Path)) for p in paths):
        raise InputError("stream=True reads run files: give paths (TREC text, .gz ok), not runs in memory.")
    paths = [str(p) for p in paths]
    if not paths:
        raise InputError("No runs given; pass a run or a list of runs.")
    if check_ties(ties) == "rank":
        raise InvalidParameterError("ties='rank' reads the whole run file's rank column, which stream=True does not "
                                    "keep; evaluate in memory (stream=False), or use another tie policy.")
    opts = _Options(parsed, missing, depth, judged_only, float32_scores, comments, chunk_bytes, check_ties(ties))
    if missing not in ("skip", "zero", "error"):
        rank(index, Run(pa.chunked_array([["x"]]), pa.chunked_array([["x"]]), np.zeros(1)), missing=missing)
    if depth is not None and depth <= 0:
        rank(index, Run(pa.chunked_array([["x"]]), pa.chunked_array([["x"]]), np.zeros(1)), depth=depth)
    qrels_signature = signature_of(judgments)
    results = [_stream_one(p, index, opts, judgments.source, progress,
                           None if spill_dir is None else str(spill_dir), facts, qrels_signature) for p in paths]
    results = with_unique_names(results)
    settings = Settings(missing=missing, depth=depth, judged_only=judged_only, float32_scores=float32_scores,
                        qrels=judgments.source, qrels_skipped_lines=judgments.skipped_lines, subtopics=False,
                        ties=opts.ties, qrels_signature=qrels_signature, grades=judgments.grades)
    return Results(parsed, tuple(results), settings)
