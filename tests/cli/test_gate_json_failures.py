"""``gate --json`` records why the gate stopped, and a report that cannot be written is an
error (issue 27, items 13 and 15).

A CI job uploads ``gate.json`` whatever the exit status; before, exit 7 (nothing evaluated:
the qrels and a run do not belong together) wrote no file, so the dashboard showed nothing,
or the PASS of an earlier run left in the workspace.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from serpeval.cli import main

# Judged ids of mixed shapes; the wrong run answers other ids only (nothing to evaluate).
QRELS = {"301": {"FBIS3-1": 1, "FT921-7": 0}, "ü-7": {"d1": 2}, "Q-0000000004": {"x": 1}}
GOOD_RUN = {"301": {"FBIS3-1": 2.0, "FT921-7": 1.0}, "ü-7": {"d1": 1.0, "zz": 0.5}, "Q-0000000004": {"x": 3.0}}
WRONG_RUN = {"1030303": {"FBIS3-1": 2.0, "d1": 1.0}, "87181": {"x": 0.5}}


def _write_run(path: Path, run: dict[str, dict[str, float]]) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(docs.items())), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()),
                     encoding="utf-8")
    return qrels, _write_run(tmp_path / "good.run", GOOD_RUN), _write_run(tmp_path / "wrong.run", WRONG_RUN)


def _gate(qrels: Path, base: Path, cand: Path, out: str) -> list[str]:
    return ["gate", str(qrels), "--baseline", str(base), "--candidate", str(cand), "-m", "nDCG@10", "--json", out]


def test_exit_7_writes_a_decision_file_that_says_why(files, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    qrels, good, wrong = files
    report = tmp_path / "gate.json"
    report.write_text('{"decision": "pass", "exit_code": 0}\n', encoding="utf-8")   # an earlier run's
    assert main(_gate(qrels, good, wrong, str(report))) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"serpeval gate: error: {wrong}: no judged query has results")
    payload = json.loads(report.read_text(encoding="utf-8"))
    assert payload["decision"] == "error"
    assert payload["passed"] is False
    assert payload["exit_code"] == 7
    assert payload["status"] == "nothing evaluated"
    assert payload["reason"] == err[0].removeprefix("serpeval gate: error: ")
    assert (payload["baseline"], payload["candidate"], payload["qrels"]) == (str(good), str(wrong), str(qrels))
    assert payload["measures"] == ["nDCG@10"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporary file left


def test_exit_7_with_the_report_on_standard_output(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, _, wrong = files
    assert main(_gate(qrels, wrong, wrong, "-")) == 7
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert (payload["decision"], payload["exit_code"]) == ("error", 7)
    assert "PASS" not in captured.out + captured.err


@pytest.mark.parametrize("cause", ["malformed run", "bad option"])
def test_an_error_exit_2_replaces_an_earlier_report(files, tmp_path: Path, cause: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An earlier run's PASS must not stay in gate.json when the next gate stops with exit 2:
    the file is replaced (atomically) by a report of the exit-7 shape with status "error"."""
    qrels, good, _ = files
    report = tmp_path / "gate.json"
    assert main(_gate(qrels, good, good, str(report))) == 0
    capsys.readouterr()
    assert json.loads(report.read_text(encoding="utf-8"))["decision"] == "pass"
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 FBIS3-1 1 abc r\n", encoding="utf-8")
    argv = _gate(qrels, good, bad, str(report)) if cause == "malformed run" else \
        [*_gate(qrels, good, good, str(report)), "--max-drop", "5"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert ("expected a number in column 5 (score), found 'abc'" if cause == "malformed run"
            else "--max-drop 5 is an absolute drop") in err[0]
    payload = json.loads(report.read_text(encoding="utf-8"))
    assert (payload["decision"], payload["passed"], payload["exit_code"], payload["status"]) == (
        "error", False, 2, "error")
    assert payload["reason"] == err[0].removeprefix("serpeval gate: error: ")
    assert payload["measures"] == ["nDCG@10"]
    assert payload["candidate"] == str(bad if cause == "malformed run" else good)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporary file left


def test_an_error_exit_2_with_the_report_on_standard_output(files, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    qrels, good, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 FBIS3-1 1 abc r\n", encoding="utf-8")
    assert main(_gate(qrels, good, bad, "-")) == 2
    captured = capsys.readouterr()
    assert (json.loads(captured.out)["decision"], json.loads(captured.out)["exit_code"]) == ("error", 2)
    assert len(captured.err.strip().splitlines()) == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("which", ["pass", "nothing evaluated", "malformed run"])
def test_a_report_on_a_full_disk_is_the_output_error(files, which: str) -> None:
    """A separate process (the real exit path): a passing gate and a gate that stopped with
    exit 7 both exit 2, the documented status of an output that cannot be written, with one
    line naming /dev/full; never 0 without the file."""
    qrels, good, wrong = files
    cand = good if which == "pass" else wrong
    if which == "malformed run":
        cand = wrong.with_name("bad.run")
        cand.write_text("301 Q0 FBIS3-1 1 abc r\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "serpeval", *_gate(qrels, good, cand, "/dev/full")],
                          capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("serpeval gate: error: /dev/full: cannot write: no space left")
    if which == "nothing evaluated":
        assert "no judged query has results" in lines[0]        # the gate's own reason is kept
    if which == "malformed run":
        assert "expected a number in column 5 (score), found 'abc'" in lines[0]
