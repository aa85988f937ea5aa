"""Outputs that cannot be written, through every command and every output option.

Targets: a missing folder, a folder, ``/dev/full`` (ENOSPC), an input of the same command,
standard output full (``> /dev/full``), closed (``>&-``) or closed by its reader (``| head``),
and a file-size limit hit in the middle of an atomic write (what a full disk does to a big
output). Each must exit 2 (141, quietly, for ``| head``) with one line naming the output and
the cause; a file that was there keeps its content and no temporary file is left.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest
from tests.faults.helpers import (
    GOOD,
    Inputs,
    assert_one_error,
    assert_untouched,
    can_drop_dac,
    good,
    no_dac_prefix,
    run_bash,
    run_process,
)

SIMULATE_FAST = ["--bootstrap", "20", "--mc-impressions", "0"]


def writers(inputs: Inputs, logs: dict[str, Path]) -> dict[str, list[str]]:
    """Each command with each output option; ``{out}`` is where the output goes."""
    q, r, o = str(inputs.qrels), str(inputs.run), str(inputs.other)
    return {
        "evaluate -o": ["evaluate", q, r, "-o", "{out}"],
        "compare -o": ["compare", q, r, o, "--resamples", "100", "-o", "{out}"],
        "gate --json": ["gate", q, "--baseline", r, "--candidate", o, "--json", "{out}"],
        "report -o": ["report", q, r, o, "--resamples", "100", "-o", "{out}"],
        "simulate -o": ["simulate", q, "--run-a", r, "--run-b", o, *SIMULATE_FAST, "-o", "{out}"],
        "simulate --plot": ["simulate", q, "--run-a", r, "--run-b", o, *SIMULATE_FAST, "--plot", "{out}"],
        "ab -o": ["ab", str(logs["ab"]), "-m", "ctr", "-o", "{out}"],
        "interleaving-report -o": ["interleaving-report", str(logs["interleaving"]), "--resamples", "50",
                                   "-o", "{out}"],
        "demo -o": ["demo", "--queries", "20", "-o", "{out}"],
    }


WRITERS = ["evaluate -o", "compare -o", "gate --json", "report -o", "simulate -o", "simulate --plot", "ab -o",
           "interleaving-report -o", "demo -o"]

# name -> (target(outputs folder, inputs) -> path, words of the message)
TARGETS = {
    "missing folder": (lambda f, i: f / "no" / "such" / "out.txt", ("out.txt", "folder", "does not exist")),
    "a folder": (lambda f, i: f, ("is a folder",)),
    "/dev/full": (lambda f, i: Path("/dev/full"), ("/dev/full", "no space left")),
}


def _fill(args: list[str], out: Path | str) -> list[str]:
    return [a.format(out=out) for a in args]


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("writer", WRITERS)
def test_unwritable_output(writer, target, cli, inputs, logs, outputs) -> None:
    if target == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    if target == "/dev/full" and writer == "demo -o":
        pytest.skip("the demo writes through report's save_html, tested above, after ~6 s of work")
    make, words = TARGETS[target]
    kept = good(outputs / "kept.txt")
    assert_one_error(cli(*_fill(writers(inputs, logs)[writer], make(outputs, inputs))), *words)
    assert_untouched(outputs, kept)


# Commands whose output option could name one of their inputs.
SELF_OVERWRITE = {
    "evaluate -o": "run",
    "compare -o": "other",
    "gate --json": "run",
    "report -o": "qrels",
    "simulate -o": "other",
    "simulate --plot": "run",
}


@pytest.mark.parametrize("writer", list(SELF_OVERWRITE))
def test_output_that_is_an_input_is_refused(writer, cli, inputs, logs) -> None:
    victim = getattr(inputs, SELF_OVERWRITE[writer])
    before = victim.read_bytes()
    assert_one_error(cli(*_fill(writers(inputs, logs)[writer], victim)), str(victim),
                     "refusing to overwrite an input")
    assert victim.read_bytes() == before


def test_output_that_is_an_input_through_a_link_is_refused(cli, inputs) -> None:
    link = inputs.folder / "link.csv"
    link.symlink_to(inputs.run)
    before = inputs.run.read_bytes()
    assert_one_error(cli("evaluate", str(inputs.qrels), str(inputs.run), "-o", str(link)), "link.csv",
                     "refusing to overwrite an input", str(inputs.run))
    assert inputs.run.read_bytes() == before


def test_ab_log_is_not_an_output(cli, logs) -> None:
    log = logs["ab"] / "impressions.parquet"
    before = log.read_bytes()
    assert_one_error(cli("ab", str(log), "-o", str(log)), "refusing to overwrite an input")
    assert log.read_bytes() == before


def test_two_outputs_in_one_file_are_refused(cli, inputs, outputs) -> None:
    same = outputs / "same.png"
    assert_one_error(cli("simulate", str(inputs.qrels), "--run-a", str(inputs.run), "--run-b", str(inputs.other),
                         "-o", str(same), "--plot", str(same)), "the same file as -o")


@pytest.mark.skipif(not can_drop_dac(), reason="running as root without setpriv: cannot deny write access")
def test_permission_denied_on_the_output_folder(inputs, outputs) -> None:
    locked = outputs / "locked"
    locked.mkdir()
    kept = good(locked / "out.csv")
    locked.chmod(0o555)
    try:
        outcome = run_process(["evaluate", str(inputs.qrels), str(inputs.run), "-o", str(kept)],
                              prefix=no_dac_prefix())
    finally:
        locked.chmod(0o755)
    assert_one_error(outcome, "out.csv", "permission denied")
    assert_untouched(locked, kept)


# ----------------------------------------------------------------------------- standard output


def printers(inputs: Inputs) -> dict[str, list[str]]:
    q, r, o = str(inputs.qrels), str(inputs.run), str(inputs.other)
    return {
        "evaluate": ["evaluate", q, r],
        "compare": ["compare", q, r, o, "--resamples", "100"],
        "gate": ["gate", q, "--baseline", r, "--candidate", o, "--resamples", "100"],
        "report": ["report", q, r, o, "--resamples", "100", "-o", "{out}"],
        "simulate": ["simulate", q, "--run-a", r, "--run-b", o, *SIMULATE_FAST],
        "measures": ["measures"],
        "trec_eval": ["trec_eval", q, r],
        "generate-logs": ["generate-logs", "{folder}", "--users", "50", "--days", "2"],
    }


PRINTERS = ["evaluate", "compare", "gate", "report", "simulate", "measures", "trec_eval",
            "generate-logs"]


@pytest.mark.parametrize("how", ["> /dev/full", ">&-"])
@pytest.mark.parametrize("printer", PRINTERS)
def test_stdout_unwritable(printer, how, inputs, outputs) -> None:
    """Standard output full or closed: status 2 and one line, never a silent success."""
    if how == "> /dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    args = [a.format(out=outputs / "report.html", folder=outputs / "logs") for a in printers(inputs)[printer]]
    with open(os.devnull if how == ">&-" else "/dev/full", "wb") as sink:
        outcome = run_process(args, stdout=sink.fileno(), preexec=(lambda: os.close(1)) if how == ">&-" else None)
    assert_one_error(outcome, "<stdout>", "no space left" if how == "> /dev/full" else "closed")


@pytest.mark.parametrize("printer", ["trec_eval", "evaluate", "measures"])
def test_reader_went_away(printer, inputs) -> None:
    """Standard output is a pipe whose reader has gone (``| head`` after its line): the
    command ends quietly with 141, as a program killed by SIGPIPE (C trec_eval, cat)."""
    args = [a.format(out="", folder="") for a in printers(inputs)[printer]]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    try:
        outcome = run_process(args, stdout=write)
    finally:
        os.close(write)
    assert (outcome.status, outcome.err) == (141, "")


def test_head_reads_one_line(inputs, tmp_path) -> None:
    """``trec_eval -q ... | head -1`` in a shell: one line out, nothing on stderr."""
    run = tmp_path / "long.run"
    run.write_text("".join(f"{t} Q0 d{t} 1 1.5 r\n" for t in range(20_000)), encoding="utf-8")
    qrels = tmp_path / "long.qrels"
    qrels.write_text("".join(f"{t} 0 d{t} 1\n" for t in range(20_000)), encoding="utf-8")
    outcome = run_bash(f"$SERPEVAL trec_eval -q -m map {qrels} {run} | head -1; exit ${{PIPESTATUS[0]}}")
    assert outcome.out == "map                   \t0\t1.0000\n"
    assert outcome.err == ""
    assert outcome.status in (0, 141)  # 0 when the pipe took all before head left


# ----------------------------------------------------------------------------- a full disk mid-write


def _file_size_limit(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.mark.parametrize("writer", ["evaluate -o", "report -o", "gate --json", "simulate --plot"])
def test_full_disk_mid_write_keeps_the_previous_file(writer, inputs, logs, outputs) -> None:
    """A file-size limit (EFBIG, what a full disk does to a large output) while writing: the
    previous output stays whole and no temporary file is left beside it."""
    out = good(outputs / {"report -o": "r.html", "simulate --plot": "p.png"}.get(writer, "out.csv"))
    args = _fill(writers(inputs, logs)[writer], out)
    if writer == "evaluate -o":
        args += ["-q", "-f", "csv"]  # a few hundred bytes
    outcome = run_process(args, preexec=_file_size_limit(100))
    assert_one_error(outcome, out.name, "file too large", "not written")
    assert_untouched(outputs, out)


def test_full_disk_while_generating_logs(outputs) -> None:
    folder = outputs / "logs"
    folder.mkdir()
    kept = good(folder / "impressions.parquet")
    outcome = run_process(["generate-logs", str(folder), "--users", "2000", "--force"],
                          preexec=_file_size_limit(4096))
    assert_one_error(outcome, str(folder), "file too large")
    assert_untouched(folder, kept)
    assert sorted(p.name for p in folder.iterdir()) == ["impressions.parquet"]


# ----------------------------------------------------------------------------- generate-logs


def test_generate_logs_refuses_an_existing_log_without_force(cli, outputs) -> None:
    folder = outputs / "logs"
    assert cli("generate-logs", str(folder), "--users", "50", "--days", "2", "--pre-days", "2").status == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(before) == {"impressions.parquet", "pre.parquet"}
    assert_one_error(cli("generate-logs", str(folder), "--users", "60", "--days", "2"),
                     str(folder), "already holds a log", "--force")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    done = cli("generate-logs", str(folder), "--users", "60", "--days", "2", "--force")
    assert done.status == 0, done.err
    assert f"wrote {folder / 'impressions.parquet'}" in done.out
    # the new log replaced the old one, and the old pre-period (which would be taken as
    # this log's) is gone
    assert sorted(p.name for p in folder.iterdir()) == ["impressions.parquet"]
    assert (folder / "impressions.parquet").read_bytes() != before["impressions.parquet"]


def test_generate_logs_into_a_file_is_refused(cli, outputs) -> None:
    kept = good(outputs / "file")
    assert_one_error(cli("generate-logs", str(kept), "--users", "50"), str(kept), "is a file, not a folder")
    assert_untouched(outputs, kept)


# ----------------------------------------------------------------------------- where the report went


def test_report_says_where_it_wrote_and_what_it_replaced(cli, inputs, outputs, monkeypatch) -> None:
    monkeypatch.chdir(outputs)
    args = ("report", str(inputs.qrels), str(inputs.run), "--resamples", "100")
    first = cli(*args)
    assert first.status == 0, first.err
    written = outputs / "serpeval-report.html"
    assert f"wrote {written} (" in first.out
    assert "replaced" not in first.out
    second = cli(*args)
    assert "replaced the previous file" in second.out
    assert written.read_text(encoding="utf-8") != GOOD


def test_atomic_write_keeps_the_mode_and_follows_links(tmp_path) -> None:
    from serpeval.io.outputs import write_text

    real = tmp_path / "real.csv"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new"
    assert real.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_devices_are_written_in_place(tmp_path) -> None:
    """``-o /dev/null`` (or /dev/stdout) is written to, never replaced by a regular file."""
    from serpeval.io.outputs import write_text

    write_text("/dev/null", "discarded")
    assert not Path("/dev/null").is_file()
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    write_text(fifo, "through the pipe\n")
    assert reader.communicate(timeout=30)[0] == b"through the pipe\n"
