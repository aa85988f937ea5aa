"""Unreadable inputs, through every command that reads qrels and runs.

Each fault class is made for real (a symlink loop, a corrupt gzip member, a Parquet file cut
in half...) and given to each command in the place of the run (or the qrels); the command must
exit 2 with one line naming the file and the cause, and leave the output file it was told to
write as it was. The matrix runs through ``main`` in this process; :func:`test_in_a_process`
repeats the TREC faults in real processes of ``serpeval evaluate`` and ``serpeval trec_eval``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.faults.helpers import (
    GOOD,
    Inputs,
    assert_one_error,
    assert_untouched,
    can_drop_dac,
    good,
    gzip_bomb,
    no_dac_prefix,
    run_process,
    serpeval_env,
)

GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _ids_table(**columns: pa.Array) -> pa.Table:
    base = {"query_id": pa.array(["301", "301", "302"]), "doc_id": pa.array(["a", "b", "c"])}
    return pa.table({**base, **columns})


def _parquet(path: Path, table: pa.Table) -> Path:
    pq.write_table(table, path)
    return path


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _loop(folder: Path) -> Path:
    (folder / "loop-a.run").symlink_to(folder / "loop-b.run")
    (folder / "loop-b.run").symlink_to(folder / "loop-a.run")
    return folder / "loop-a.run"


def _bad_crc(folder: Path, inputs: Inputs) -> Path:
    data = bytearray(gzip.compress(inputs.run.read_bytes()))
    data[-8] ^= 0xFF  # the CRC-32 of the trailer
    return _bytes(folder / "crc.run.gz", bytes(data))


# name -> (slot, make(folder, inputs) -> path, words the message must hold; None: it works)
Maker = Callable[[Path, Inputs], Path]
FAULTS: dict[str, tuple[str, Maker, tuple[str, ...] | None]] = {
    "missing file": ("run", lambda f, i: f / "nope.run", ("nope.run", "no such file")),
    "a directory": ("run", lambda f, i: f, ("is a directory",)),
    "ENOTDIR": ("run", lambda f, i: i.qrels / "run", ("qrels.txt/run", "not a directory")),
    "ELOOP": ("run", lambda f, i: _loop(f), ("loop-a.run", "symbolic links")),
    "ENAMETOOLONG": ("run", lambda f, i: f / ("r" * 300), ("rrrr", "too long")),
    "gzip bad CRC": ("run", _bad_crc, ("crc.run.gz", "corrupt", "CRC check failed")),
    "gzip bad bit lengths": ("run", lambda f, i: _bytes(f / "bits.gz", GZIP_HEADER + b"\x05" + b"\xff" * 4 + bytes(8)),
                             ("bits.gz", "corrupt", "too many length or distance symbols")),
    "gzip bad block type": ("run", lambda f, i: _bytes(f / "block.gz", GZIP_HEADER + b"\x07" + bytes(10)),
                            ("block.gz", "invalid block type")),
    "gzip truncated": ("run", lambda f, i: _bytes(f / "cut.run.gz", gzip.compress(i.run.read_bytes())[:-12]),
                       ("cut.run.gz", "truncated")),
    "gzip magic, then garbage": ("qrels", lambda f, i: _bytes(f / "q.gz", b"\x1f\x8bnot gzip at all"),
                                 ("q.gz", "corrupt")),
    "plain file named .gz": ("run", lambda f, i: _bytes(f / "plain.run.gz", i.run.read_bytes()), None),
    "Parquet truncated": ("run", lambda f, i: _bytes(f / "cut.parquet", i.parquet_run.read_bytes()[:300]),
                          ("cut.parquet", "not a readable Parquet file")),
    "Parquet garbage": ("run", lambda f, i: _bytes(f / "junk.parquet", b"PAR1" + os.urandom(64) + b"PAR1"),
                        ("junk.parquet", "not a readable Parquet file")),
    "text named .parquet": ("qrels", lambda f, i: _bytes(f / "text.parquet", i.qrels.read_bytes()),
                            ("text.parquet", "not a readable Parquet file")),
    ".parquet.gz": ("run", lambda f, i: _bytes(f / "run.parquet.gz", gzip.compress(i.parquet_run.read_bytes())),
                    None),
    "Parquet list ids": ("run", lambda f, i: _parquet(f / "list.parquet", _ids_table(
        doc_id=pa.array([["a"], ["b"], ["c"]]), score=pa.array([1.0, 2.0, 3.0]))),
        ("list.parquet", "doc id column", "list<")),
    "Parquet struct ids": ("qrels", lambda f, i: _parquet(f / "struct.parquet", _ids_table(
        query_id=pa.array([{"n": 301}, {"n": 301}, {"n": 302}]), relevance=pa.array([1, 0, 1]))),
        ("struct.parquet", "query id column", "struct<")),
    "Parquet binary ids, not UTF-8": ("run", lambda f, i: _parquet(f / "bin.parquet", _ids_table(
        doc_id=pa.array([b"a", b"\xff\xfeb", b"c"], pa.binary()), score=pa.array([1.0, 2.0, 3.0]))),
        ("bin.parquet", "row 2", "not UTF-8")),
    "Parquet uint64 grade beyond int64": ("qrels", lambda f, i: _parquet(f / "u64.parquet", _ids_table(
        relevance=pa.array([2**64 - 1, 0, 1], pa.uint64()))), ("u64.parquet", "18446744073709551615")),
    "JSONL not UTF-8": ("run", lambda f, i: _bytes(f / "bad.jsonl", b'{"qid": "301", "docid": "a", "score": 1}\n'
                                                    b'{"qid": "301", "docid": "\xe9", "score": 2}\n'),
                        ("bad.jsonl:2", "not UTF-8")),
    "JSON not UTF-8": ("qrels", lambda f, i: _bytes(f / "bad.json", b'{"301": {"a": 1,\n"\xff": 0}}'),
                       ("bad.json:2", "not UTF-8")),
}
TEXT_ONLY = {"missing file", "a directory", "ENOTDIR", "ELOOP", "ENAMETOOLONG", "gzip bad CRC",
             "gzip bad bit lengths", "gzip bad block type", "gzip truncated", "gzip magic, then garbage",
             "plain file named .gz"}


def command(name: str, qrels: Path | str, run: Path | str, other: Path, out: Path) -> list[str]:
    """The command line of ``name`` reading ``qrels`` and ``run``, writing ``out`` when it can."""
    q, r = str(qrels), str(run)
    return {
        "evaluate": ["evaluate", q, r, "-f", "csv", "-o", str(out)],
        "compare": ["compare", q, r, str(other), "--resamples", "100", "-o", str(out)],
        "gate": ["gate", q, "--baseline", r, "--candidate", str(other), "--json", str(out)],
        "report": ["report", q, r, str(other), "--resamples", "100", "-o", str(out)],
        "simulate": ["simulate", q, "--run-a", r, "--run-b", str(other), "--bootstrap", "20",
                     "--mc-impressions", "0", "-o", str(out)],
        "trec_eval": ["trec_eval", q, r],
        "judged": ["judged", q, r, str(other), "-f", "csv", "-o", str(out)],
        "diff": ["diff", r, str(other), "--qrels", q, "-f", "csv", "-o", str(out)],
        "pool": ["pool", r, str(other), "--depth", "5", "--qrels", q, "-o", str(out)],
    }[name]


COMMANDS = ("evaluate", "compare", "gate", "report", "simulate", "trec_eval", "judged", "diff", "pool")
CASES = [(c, f) for c in COMMANDS for f in FAULTS if c != "trec_eval" or f in TEXT_ONLY]


def _case(fault: str, inputs: Inputs, tmp_path: Path) -> tuple[Path, Path, tuple[str, ...] | None]:
    slot, make, words = FAULTS[fault]
    faulty = make(tmp_path, inputs)
    return (faulty, inputs.run, words) if slot == "qrels" else (inputs.qrels, faulty, words)


def assert_kept_or_replaced_by_an_error_report(name: str, outputs: Path, out: Path) -> None:
    """Every output is untouched, but gate's ``--json`` report: a gate that ends with an error
    replaces it with a report whose decision is ``error`` (docs/how-to/gate.md: a CI artifact
    must never keep an earlier run's pass), written atomically like any output."""
    if name != "gate":
        assert_untouched(outputs, out)
        return
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["decision"], report["passed"], report["exit_code"]) == ("error", False, 2)
    assert report["reason"]
    assert_untouched(outputs)  # no temporary file left


@pytest.mark.parametrize(("name", "fault"), CASES)
def test_input_fault(name, fault, cli, inputs, outputs, tmp_path) -> None:
    qrels, run, words = _case(fault, inputs, tmp_path)
    out = good(outputs / "out.txt")
    outcome = cli(*command(name, qrels, run, inputs.other, out))
    if words is None:  # not a fault: read as what it is
        assert outcome.status in (0, 1), outcome.err  # gate: 1 is its verdict
        assert "Traceback" not in outcome.err
        if name != "trec_eval":
            assert out.read_text(encoding="utf-8") != GOOD
        return
    assert_one_error(outcome, *words, status=2)
    assert_kept_or_replaced_by_an_error_report(name, outputs, out)


@pytest.mark.parametrize("name", ["evaluate", "trec_eval"])
@pytest.mark.parametrize("fault", sorted(TEXT_ONLY - {"plain file named .gz"}))
def test_in_a_process(name, fault, inputs, outputs, tmp_path) -> None:
    """The same faults in a real process: status, one line, no traceback."""
    qrels, run, words = _case(fault, inputs, tmp_path)
    out = good(outputs / "out.txt")
    assert words is not None
    assert_one_error(run_process(command(name, qrels, run, inputs.other, out)), *words, status=2)
    assert_untouched(outputs, out)


@pytest.mark.skipif(not can_drop_dac(), reason="running as root without setpriv: cannot deny read access")
@pytest.mark.parametrize("name", COMMANDS)
def test_permission_denied(name, inputs, outputs, tmp_path) -> None:
    """EACCES: a run the user may not read (root drops CAP_DAC_OVERRIDE to be refused)."""
    secret = tmp_path / "secret.run"
    secret.write_text(inputs.run.read_text(encoding="utf-8"), encoding="utf-8")
    secret.chmod(0)
    out = good(outputs / "out.txt")
    outcome = run_process(command(name, inputs.qrels, secret, inputs.other, out), prefix=no_dac_prefix())
    assert_one_error(outcome, "secret.run", "permission denied")
    assert_kept_or_replaced_by_an_error_report(name, outputs, out)


@pytest.mark.parametrize("name", ["evaluate", "trec_eval"])
def test_closed_stdin(name, inputs, outputs) -> None:
    """``-`` with standard input closed (``<&-``)."""
    out = good(outputs / "out.txt")
    outcome = run_process(command(name, inputs.qrels, "-", inputs.other, out), stdin=None,
                          preexec=lambda: os.close(0))
    assert_one_error(outcome, "<stdin>", "standard input is closed")
    assert_untouched(outputs, out)


@pytest.mark.parametrize("name", ["evaluate", "trec_eval"])
def test_out_of_memory(name, inputs, outputs, tmp_path) -> None:
    """A run that does not fit in memory (a 1 GB gzip bomb under a 512 MiB address-space limit):
    one line naming the file, the lines read so far and what to try; no traceback, no abort.
    (The bomb is twice the limit, as it was at 4 GB under 2 GiB and 2 GB under 1 GiB: the CPU
    goes into inflating up to the limit. Both commands start and fail while reading down to
    256 MiB, so 512 MiB leaves them twice their start-up.)"""
    import resource

    bomb = gzip_bomb(tmp_path / "huge.run.gz", 1)
    out = good(outputs / "out.txt")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**29, 2**29))

    env = {**serpeval_env(), "OMP_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"}
    outcome = run_process(command(name, inputs.qrels, bomb, inputs.other, out), preexec=limit, env=env)
    line = assert_one_error(outcome, "out of memory while reading", "huge.run.gz", "6 lines read so far")
    if name == "evaluate":
        assert "--backend spark" in line
    assert_untouched(outputs, out)


@pytest.mark.parametrize("args", [
    ["evaluate", "{q}", "{r}", "-m", "P@99999999999999999999"],
    ["compare", "{q}", "{r}", "{o}", "-m", "nDCG@99999999999999999999"],
    ["gate", "{q}", "--baseline", "{r}", "--candidate", "{o}", "-m", "AP@99999999999999999999"],
    ["report", "{q}", "{r}", "-m", "P@99999999999999999999", "-o", "{out}"],
    ["measures", "P@99999999999999999999"],
    ["trec_eval", "-m", "P.99999999999999999999", "{q}", "{r}"],
], ids=lambda a: a[0])
def test_cutoff_overflow(args, cli, inputs, outputs) -> None:
    """A cutoff beyond a 64-bit integer is refused by name (it was an OverflowError)."""
    out = good(outputs / "out.html")
    filled = [a.format(q=inputs.qrels, r=inputs.run, o=inputs.other, out=out) for a in args]
    expected = "from 1 to 9223372036854775807" if args[0] != "trec_eval" else "below"
    assert_one_error(cli(*filled), "99999999999999999999", expected)
    assert_untouched(outputs, out)


def test_cutoff_overflow_in_a_process(inputs) -> None:
    outcome = run_process(["evaluate", str(inputs.qrels), str(inputs.run), "-m", "P@99999999999999999999"])
    assert_one_error(outcome, "P@99999999999999999999", "from 1 to 9223372036854775807")


def test_debug_keeps_the_traceback(inputs, tmp_path) -> None:
    outcome = run_process(["--debug", "evaluate", str(inputs.qrels), str(tmp_path / "nope.run")])
    assert outcome.status == 1
    assert "Traceback" in outcome.err
    assert "ReadError" in outcome.err
    assert "nope.run: no such file" in outcome.err


# ----------------------------------------------------------------------------- logs (ab, interleaving-report)


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "log.parquet")
    return folder / "log.parquet"


LOG_FAULTS: dict[str, tuple[Callable[[Path, Path], Path], tuple[str, ...]]] = {
    "missing file": (lambda f, log: f / "nope.parquet", ("nope.parquet", "no such file")),
    "ENOTDIR": (lambda f, log: log / "impressions.parquet" / "x.parquet", ("x.parquet", "not a directory")),
    "ELOOP": (lambda f, log: _loop(f), ("loop-a.run", "symbolic links")),
    "ENAMETOOLONG": (lambda f, log: f / ("l" * 300 + ".parquet"), ("llll", "too long")),
    "a FIFO": (lambda f, log: _fifo(f), ("log.parquet", "is a pipe", "Save the log to a file")),
    "Parquet truncated": (lambda f, log: _bytes(f / "cut.parquet", (log / "impressions.parquet").read_bytes()[:500]),
                          ("cut.parquet", "could not be read as Parquet")),
    "text named .parquet": (lambda f, log: _bytes(f / "text.parquet", b"impression_id,variant\n1,a\n"),
                            ("text.parquet", "could not be read as Parquet")),
}


@pytest.mark.parametrize("fault", list(LOG_FAULTS))
@pytest.mark.parametrize("name", ["ab", "interleaving-report"])
def test_log_fault(name, fault, cli, logs, outputs, tmp_path) -> None:
    """A/B and interleaving logs are read by DuckDB, by name: the same faults, one line each."""
    make, words = LOG_FAULTS[fault]
    log = make(tmp_path, logs["ab" if name == "ab" else "interleaving"])
    out = good(outputs / "out.txt")
    assert_one_error(cli(name, str(log), "-o", str(out)), *words)
    assert_untouched(outputs, out)
