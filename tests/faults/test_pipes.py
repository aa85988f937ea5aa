"""Inputs from pipes: process substitution (``<(zcat run.gz)``), named FIFOs and standard input.

Each is read once, with gzip recognised from the bytes already read, and gives the same
output as the file itself (byte for byte for ``trec_eval``, as the C program does). A FIFO
gets its data from a writer thread; a timeout turns a hang into a failure. The piped command
runs as a process (the pipes are the point); the reference, the same command on the file, runs
in this process (``cli``: the same entry point, without a second start-up).
"""

from __future__ import annotations

import gzip
import os
import shlex
import subprocess
import threading
from pathlib import Path

import pytest
from tests.faults.helpers import assert_one_error, run_bash, run_process


def _same_output(script: str, reference: list[str], cli) -> None:
    piped = run_bash(script)
    direct = cli(*reference)
    assert (piped.status, piped.err) == (0, direct.err), piped.err
    assert direct.status == 0, direct.err
    assert piped.out == direct.out


@pytest.fixture
def gz(inputs):
    """The run and the qrels gzip-compressed."""
    run = inputs.folder / "bm25.run.gz"
    run.write_bytes(gzip.compress(inputs.run.read_bytes()))
    qrels = inputs.folder / "qrels.txt.gz"
    qrels.write_bytes(gzip.compress(inputs.qrels.read_bytes()))
    return {"run": run, "qrels": qrels}


@pytest.mark.parametrize("source", ["zcat", "cat"])  # decompressed by zcat, or gzip bytes in the pipe
def test_trec_eval_process_substitution(source, inputs, gz, cli) -> None:
    q = shlex.quote(str(inputs.qrels))
    _same_output(f"$SERPEVAL trec_eval -q -m all_trec {q} <({source} {shlex.quote(str(gz['run']))})",
                 ["trec_eval", "-q", "-m", "all_trec", str(inputs.qrels), str(gz["run"])], cli)


def test_trec_eval_both_inputs_and_stdin(inputs, gz, cli) -> None:
    _same_output(f"$SERPEVAL trec_eval -m map <(cat {gz['qrels']}) - < {gz['run']}",
                 ["trec_eval", "-m", "map", str(inputs.qrels), str(inputs.run)], cli)


def test_evaluate_and_compare_process_substitution(inputs, gz, cli) -> None:
    q, r, o = (shlex.quote(str(p)) for p in (gz["qrels"], gz["run"], inputs.other))
    # a pipe's run is named by its run tag (bm25), as the file's by its stem (bm25.run)
    _same_output(f"$SERPEVAL evaluate -f csv <(zcat {q}) <(cat {r}) {o}",
                 ["evaluate", "-f", "csv", str(inputs.qrels), str(inputs.run), str(inputs.other)], cli)
    compared = run_bash(f"$SERPEVAL compare -f csv --resamples 100 {q} <(zcat {r}) {o}")
    assert compared.status == 0, compared.err
    assert "Traceback" not in compared.err


def test_parquet_and_topics_through_pipes(inputs, cli) -> None:
    """Parquet needs random access: a pipe's bytes are read into memory once. Parquet is
    recognised by its magic bytes (a pipe has no .parquet name)."""
    p, q, t = (shlex.quote(str(x)) for x in (inputs.parquet_run, inputs.parquet_qrels, inputs.topics))
    piped = run_bash(f"$SERPEVAL evaluate -f csv <(cat {q}) <(gzip -c {p})")
    direct = cli("evaluate", "-f", "csv", str(inputs.qrels), str(inputs.run))
    assert piped.status == 0, piped.err
    assert [line.split(",")[1:] for line in piped.out.splitlines()] == \
        [line.split(",")[1:] for line in direct.out.splitlines()]
    report = inputs.folder / "r.html"
    done = run_bash(f"$SERPEVAL report {q} {p} --topics <(gzip -c {t}) -o {report}")
    assert done.status == 0, done.err
    assert "polio vaccine" in report.read_text(encoding="utf-8")


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as handle:  # blocks until the command opens the FIFO
            handle.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("name", "content"), [
    ("run.fifo", "gzip"), ("run.fifo", "text"), ("run.parquet", "parquet"), ("run.jsonl", "jsonl")])
def test_named_fifo(name, content, inputs, tmp_path, cli) -> None:
    """A named FIFO is read once: sniffing gzip must not consume the writer's data (before,
    the file was reopened after the sniff and the command waited forever)."""
    fifo = tmp_path / name
    os.mkfifo(fifo)
    data = {"gzip": gzip.compress(inputs.run.read_bytes()), "text": inputs.run.read_bytes(),
            "parquet": inputs.parquet_run.read_bytes(),
            "jsonl": "".join(f'{{"qid": "{r[0]}", "docid": "{r[2]}", "score": {r[4]}}}\n'
                             for r in (line.split() for line in inputs.run.read_text("utf-8").splitlines())
                             ).encode()}[content]
    for command in (["trec_eval", "-m", "map", "-m", "P.5"], ["evaluate", "-f", "csv"]):
        if command[0] == "trec_eval" and content in ("parquet", "jsonl"):
            continue
        feeder = _feed(fifo, data)
        try:
            got = run_process([*command, str(inputs.qrels), str(fifo)], timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{command[0]} hung on a FIFO holding {content}")
        feeder.join(timeout=60)
        want = cli(*command, str(inputs.qrels), str(inputs.run))
        assert (got.status, want.status) == (0, 0), (got.err, want.err)
        if command[0] == "trec_eval":
            assert got.out == want.out
        else:
            assert got.out.splitlines()[1].split(",")[1:] == want.out.splitlines()[1].split(",")[1:]


def test_logs_from_a_pipe_are_a_clear_error(logs) -> None:
    """A/B logs are opened by the query engine by name (possibly several times): a pipe
    cannot work, and says so in one line."""
    log = shlex.quote(str(logs["ab"] / "impressions.parquet"))
    assert_one_error(run_bash(f"$SERPEVAL ab <(cat {log})"), "/dev/fd/", "is a pipe", "Save the log to a file")
