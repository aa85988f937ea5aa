"""``serpeval ab plan LOGS`` and ``serpeval ab monitor LOGS`` (issue 28 item 4): the same
analyses as the deprecated ``ab LOGS --plan`` / ``--monitor`` (the reference: the flag forms,
tested in tests/online/experiments/test_cli.py), which keep working; ``ab LOGS`` still
analyses, even when the log folder is called ``plan``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from serpeval.cli.app import build_parser, main


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ab") / "logs"
    assert main(["generate-logs", str(folder), "--users", "2000", "--days", "3", "--seed", "7"]) == 0
    return folder


def flat(value: object, at: str = "") -> dict[str, object]:
    """A JSON document as {path: leaf}, so that pytest.approx compares every number in it."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flat(item, f"{at}/{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in flat(item, f"{at}/{i}").items()}
    return {at: value}


def out_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(argv)
    done = capsys.readouterr()
    return status, done.out, done.err


@pytest.mark.parametrize(("word", "flag", "extra"), [
    ("plan", "--plan", ["--mde", "0.02"]),
    ("monitor", "--monitor", ["--looks", "3"]),
])
def test_subcommand_equals_the_deprecated_flag(logs: Path, word: str, flag: str, extra: list[str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    old = out_of(["ab", str(logs), flag, "-m", "ctr", *extra, "-f", "json"], capsys)
    assert old[0] == 0
    # options may also come first, as with any command
    for argv in (["ab", word, str(logs), "-m", "ctr", *extra, "-f", "json"],
                 ["ab", "-m", "ctr", word, str(logs), *extra, "-f", "json"]):
        new = out_of(argv, capsys)
        assert (new[0], new[2]) == (old[0], old[2])
        # DuckDB's parallel sums differ run to run in the last bits (the flag form's own
        # reruns do): equal to 1e-9, every field and row
        got, want = flat(json.loads(new[1])), flat(json.loads(old[1]))
        assert got.keys() == want.keys()
        floats = [k for k, v in want.items() if isinstance(v, float)]
        assert {k: got[k] for k in floats} == pytest.approx({k: want[k] for k in floats}, rel=1e-9)
        assert {k: v for k, v in got.items() if k not in floats} == {k: v for k, v in want.items() if k not in floats}


def test_a_log_folder_called_plan_is_still_analysed(logs: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(logs, tmp_path / "plan")
    monkeypatch.chdir(tmp_path)
    status, out, _ = out_of(["ab", "plan", "-m", "ctr", "-f", "csv"], capsys)
    assert status == 0
    assert out.splitlines()[0].startswith("metric,control,treatment,units_control")


@pytest.mark.parametrize(("argv", "says"), [
    (["ab", "plan", "LOGS", "--monitor"], "ab plan: --monitor is the mode 'ab monitor'"),
    (["ab", "monitor", "LOGS", "--plan"], "ab monitor: --plan is the mode 'ab plan'"),
    (["ab", "plan", "LOGS", "--triggered"], "ab plan: --triggered is another analysis"),
    (["ab", "LOGS", "MORE"], "argument [plan|monitor] LOGS: expected LOGS, or plan or monitor then LOGS; "
                             "got 'LOGS' 'MORE'"),
    (["ab", "plan", "a", "b"], "unrecognized arguments: b"),
])
def test_a_mode_word_with_a_mode_flag_or_two_logs_is_one_line(argv: list[str], says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    try:  # argparse exits; a check after parsing returns the status
        status = main(argv)
    except SystemExit as stop:
        status = stop.code  # type: ignore[assignment]
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    # argparse's top-level parser reports extra words, for every command: "serpeval: error:"
    assert err.startswith("serpeval: error: " if says.startswith("unrecognized") else "serpeval ab: error: ")
    assert says in err


def test_the_help_shows_the_subcommands_and_deprecates_the_flags() -> None:
    text = " ".join(build_parser(only=["ab"])._subparsers._group_actions[0].choices["ab"]  # type: ignore[union-attr]
                    .format_help().split())
    assert "[plan|monitor] LOGS" in text
    assert "--plan deprecated: use 'serpeval ab plan LOGS'" in text
    assert "--monitor deprecated: use 'serpeval ab monitor LOGS'" in text


def test_monitor_with_several_metrics_is_refused_in_one_line(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ab monitor`` follows one metric, as monitor_ab does: ``-m ctr -m mrr`` was silently
    ctr alone."""
    for metrics in (["-m", "ctr", "-m", "mrr"], ["-m", "ctr,mrr"]):
        status, out, err = out_of(["ab", "monitor", str(logs), *metrics, "--looks", "2"], capsys)
        assert status == 2
        assert out == ""
        assert err == "serpeval ab: error: ab monitor follows one metric; got 2 (ctr, mrr). Choose one: -m ctr.\n"
    status, out, _ = out_of(["ab", "monitor", str(logs), "-m", "mrr", "--looks", "2", "-f", "markdown"], capsys)
    assert status == 0
    assert ": mrr look by look" in out
