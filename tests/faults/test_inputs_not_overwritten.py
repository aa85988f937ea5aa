"""No command writes over one of its own inputs, whatever the spelling of the output.

Every command that reads files and writes one is given, as its output, each of its inputs in
turn (qrels, runs, groups, topics, baselines, logs, calibration qrels, online JSON, a demo
collection), spelled the same, with ``./``, through a symbolic link and through a hard link:
all four are the same file (``st_dev``, ``st_ino``). Each must be refused before any work with
one line naming the output and "refusing to overwrite an input", and the input must keep its
bytes. The refusal does not depend on what the input holds: the inputs here are read by no
command (they would fail to parse), so a refusal that came after reading would fail the test.

Also here: an output spelled as a folder (``-o out/``) is refused instead of becoming a file
named ``out``; and, below the command line, the atomic writer itself refuses a file that was
opened as an input in the same command (the safety net for inputs that no option names).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.faults.helpers import Inputs, assert_one_error, assert_untouched, good

SIM_FAST = ["--bootstrap", "20", "--mc-impressions", "0"]

# name -> (argv with {q} qrels, {r}/{o} runs, {x} the extra input, {out} the output; the input
# (a key of _files, or one of q r o) that the output is made to be)
CASES: dict[str, tuple[list[str], str]] = {
    "evaluate qrels": (["evaluate", "{q}", "{r}", "-o", "{out}"], "q"),
    "evaluate run": (["evaluate", "{q}", "{r}", "{o}", "-o", "{out}"], "o"),
    "evaluate --groups": (["evaluate", "{q}", "{r}", "--groups", "{x}", "-o", "{out}"], "groups"),
    "evaluate --topics": (["evaluate", "{q}", "{r}", "--groups", "builtin:length", "--topics", "{x}",
                           "-o", "{out}"], "topics"),
    "evaluate --stream run": (["evaluate", "{q}", "{r}", "--stream", "-o", "{out}"], "r"),
    "compare run": (["compare", "{q}", "{r}", "{o}", "-o", "{out}"], "r"),
    "compare --groups": (["compare", "{q}", "{r}", "{o}", "--groups", "{x}", "-o", "{out}"], "groups"),
    "compare --topics": (["compare", "{q}", "{r}", "{o}", "--groups", "builtin:length", "--topics", "{x}",
                          "-o", "{out}"], "topics"),
    "gate --baseline": (["gate", "{q}", "--baseline", "{r}", "--candidate", "{o}", "--json", "{out}"], "r"),
    "gate --groups": (["gate", "{q}", "--baseline", "{r}", "--candidate", "{o}", "--groups", "{x}",
                       "--json", "{out}"], "groups"),
    "report qrels": (["report", "{q}", "{r}", "{o}", "-o", "{out}"], "q"),
    "report --topics": (["report", "{q}", "{r}", "{o}", "--topics", "{x}", "-o", "{out}"], "topics"),
    "report --groups": (["report", "{q}", "{r}", "{o}", "--groups", "{x}", "-o", "{out}"], "groups"),
    "report --ab": (["report", "{q}", "{r}", "{o}", "--ab", "{x}", "-o", "{out}"], "json"),
    "simulate --run-b -o": (["simulate", "{q}", "--run-a", "{r}", "--run-b", "{o}", *SIM_FAST, "-o", "{out}"],
                            "o"),
    "simulate qrels --plot": (["simulate", "{q}", "--run-a", "{r}", "--run-b", "{o}", *SIM_FAST,
                               "--plot", "{out}"], "q"),
    "ab log file": (["ab", "{x}", "-m", "ctr", "-o", "{out}"], "log"),
    "ab --clicks": (["ab", "{logs}", "--clicks", "{x}", "-m", "ctr", "-o", "{out}"], "clicks"),
    "ab --pre": (["ab", "{logs}", "--pre", "{x}", "-m", "ctr", "-o", "{out}"], "pre"),
    "ab file in the log folder": (["ab", "{logs}", "-m", "ctr", "-o", "{out}"], "in-logs"),
    "interleaving-report --clicks": (["interleaving-report", "{logs}", "--clicks", "{x}", "-o", "{out}"],
                                     "clicks"),
    "clicks-to-qrels log -o": (["clicks-to-qrels", "{x}", "-o", "{out}"], "log"),
    "clicks-to-qrels --calibrate --counts": (["clicks-to-qrels", "{logs}/impressions.parquet", "--calibrate",
                                              "{q}", "-o", "{spare}", "--counts", "{out}"], "q"),
    "pool run": (["pool", "{r}", "-o", "{out}"], "r"),
    "pool --qrels": (["pool", "{r}", "--qrels", "{q}", "-o", "{out}"], "q"),
    "pool --simulate": (["pool", "{r}", "--simulate", "{x}", "-o", "{out}"], "qrels2"),
    "pool --topics": (["pool", "{r}", "--topics", "{x}", "-o", "{out}"], "topics"),
    "judged run": (["judged", "{q}", "{r}", "-o", "{out}"], "r"),
    "diff run_b": (["diff", "{r}", "{o}", "-o", "{out}"], "o"),
    "diff --qrels --unjudged": (["diff", "{r}", "{o}", "--qrels", "{q}", "--unjudged", "{out}"], "q"),
    "agreement --runs": (["agreement", "{q}", "{x}", "--runs", "{r}", "-o", "{out}"], "r"),
    "agreement qrels": (["agreement", "{q}", "{x}", "-o", "{out}"], "qrels2"),
    "demo --data": (["demo", "--data", "{data}", "-o", "{out}"], "in-data"),
}

SPELLINGS = ["same", "dot-slash", "symlink", "hardlink"]


def _files(folder: Path, inputs: Inputs) -> dict[str, Path]:
    """The extra inputs: files whose content no reader accepts (see the module docstring)."""
    junk = "this is not an input any reader accepts\x00\n"
    paths = {name: folder / name for name in
             ("groups", "topics", "json", "log", "clicks", "pre", "qrels2")}
    for path in paths.values():
        path.write_text(junk, encoding="utf-8")
    logs = folder / "logs"
    logs.mkdir()
    (logs / "impressions.parquet").write_text(junk, encoding="utf-8")
    paths["in-logs"] = logs / "impressions.parquet"
    data = folder / "collection"
    (data / "runs").mkdir(parents=True)
    (data / "runs" / "bm25.run").write_text(junk, encoding="utf-8")
    paths["in-data"] = data / "runs" / "bm25.run"
    paths.update(q=inputs.qrels, r=inputs.run, o=inputs.other)
    return paths


def _spell(victim: Path, spelling: str, tmp: Path) -> str:
    """The output path: ``victim`` itself, or another spelling of the same file."""
    if spelling == "same":
        return str(victim)
    if spelling == "dot-slash":
        return f"{victim.parent}/./{victim.name}"
    other = tmp / f"alias-{spelling}{victim.suffix}"
    if spelling == "symlink":
        other.symlink_to(victim)
    else:
        os.link(victim, other)
    return str(other)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("case", list(CASES))
def test_an_input_is_never_an_output(case, spelling, cli, inputs, tmp_path) -> None:
    files = _files(inputs.folder, inputs)
    argv, role = CASES[case]
    victim = files[role]
    before = victim.read_bytes()
    aliases = tmp_path / "aliases"
    aliases.mkdir()
    out = _spell(victim, spelling, aliases)
    extra = str(files[role]) if role not in ("q", "r", "o", "in-logs", "in-data") else ""
    values = {"q": str(inputs.qrels), "r": str(inputs.run), "o": str(inputs.other), "x": extra,
              "logs": str(inputs.folder / "logs"), "data": str(inputs.folder / "collection"),
              "spare": str(tmp_path / "spare.txt"), "out": out}
    if case == "agreement qrels":
        values["x"] = str(files["qrels2"])
    outcome = cli(*[a.format(**values) for a in argv])
    assert_one_error(outcome, out, "refusing to overwrite an input")
    assert victim.read_bytes() == before
    assert_untouched(victim.parent)


def test_stdin_from_a_file_is_an_input(cli, inputs, monkeypatch) -> None:
    """``evaluate - run -o qrels.txt < qrels.txt``: standard input is that file."""
    before = inputs.qrels.read_bytes()
    with inputs.qrels.open("rb") as handle:
        monkeypatch.setattr("sys.stdin", handle)
        real = os.dup(0)
        os.dup2(handle.fileno(), 0)
        try:
            outcome = cli("evaluate", "-", str(inputs.run), "-o", str(inputs.qrels))
        finally:
            os.dup2(real, 0)
            os.close(real)
    assert_one_error(outcome, "refusing to overwrite an input", "<stdin>")
    assert inputs.qrels.read_bytes() == before


@pytest.mark.parametrize("argv", [
    ["evaluate", "{q}", "{r}", "-o", "{out}"],
    ["compare", "{q}", "{r}", "{o}", "--resamples", "100", "-o", "{out}"],
    ["gate", "{q}", "--baseline", "{r}", "--candidate", "{o}", "--json", "{out}"],
    ["simulate", "{q}", "--run-a", "{r}", "--run-b", "{o}", *SIM_FAST, "--plot", "{out}"],
    ["diff", "{r}", "{o}", "--qrels", "{q}", "--unjudged", "{out}"],
], ids=lambda a: f"{a[0]} {a[-2]}")
def test_an_output_spelled_as_a_folder_is_refused(argv, cli, inputs, outputs) -> None:
    """``-o out/`` means a folder: refused (no file named ``out`` appears), whether or not
    ``out`` exists as a file already."""
    kept = good(outputs / "kept")
    for target in (outputs / "new", kept):
        out = f"{target}/"
        values = {"q": str(inputs.qrels), "r": str(inputs.run), "o": str(inputs.other), "out": out}
        assert_one_error(cli(*[a.format(**values) for a in argv]), out, "folder")
    assert not (outputs / "new").exists()
    assert_untouched(outputs, kept)


def test_the_atomic_writer_refuses_a_file_opened_as_an_input(tmp_path) -> None:
    """Inside a command (:func:`reading_scope`), a file opened through ``open_input`` (by any
    spelling) cannot be replaced by ``atomic_path``; outside one, the API writes freely."""
    from serpeval.core.errors import OutputError
    from serpeval.core.identity import reading_scope
    from serpeval.io.inputs import open_input
    from serpeval.io.outputs import write_text

    source = tmp_path / "qrels.txt"
    source.write_text("1 0 d 1\n", encoding="utf-8")
    link = tmp_path / "hard.txt"
    os.link(source, link)
    with reading_scope():
        open_input(f"{tmp_path}/./qrels.txt")
        with pytest.raises(OutputError, match="refusing to overwrite an input"):
            write_text(link, "replaced")
        write_text(tmp_path / "other.txt", "fine")
    assert source.read_text(encoding="utf-8") == "1 0 d 1\n"
    open_input(source)
    write_text(source, "the API may\n")  # no command: nothing is guarded
    assert source.read_text(encoding="utf-8") == "the API may\n"
