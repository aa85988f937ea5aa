"""Arguments are checked where they are parsed: a bad value is one line naming the option, the
value and the allowed range, exit status 2, and nothing written (``serpeval.cli._args``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from serpeval.cli import main

POSITIVE = "must be a positive integer"
NON_NEGATIVE = "must be an integer >= 0"
AT_LEAST_2 = "must be an integer >= 2"
LEVEL = "must be a number strictly between 0 and 1"
FINITE = "must be a finite number"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``serpeval ARGV`` in-process: exit status (argparse exits on a bad value), out, err."""
    try:
        status = main(argv)
    except SystemExit as exited:
        status = int(exited.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def error_line(err: str, command: str) -> str:
    """The one error line of stderr; anything else there may only be argparse's usage."""
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith(f"serpeval {command}: error: ")]
    assert len(errors) == 1, err
    assert all(line.startswith(("usage:", " ")) for line in lines if line not in errors), err
    assert "Traceback" not in err
    return errors[0]


#: (command line, option, what it must be, the value as shown)
CASES = [
    (["generate-logs", "out", "--days", "-3"], "--days", POSITIVE, "-3"),
    (["generate-logs", "out", "--days", "0"], "--days", POSITIVE, "0"),
    (["generate-logs", "out", "--days", "1.5"], "--days", POSITIVE, "1.5"),
    (["generate-logs", "out", "--impressions-per-user", "nan"], "--impressions-per-user",
     f"{FINITE} >= 1", "nan"),
    (["generate-logs", "out", "--impressions-per-user", "0.5"], "--impressions-per-user",
     f"{FINITE} >= 1", "0.5"),
    (["generate-logs", "out", "--effect", "nan"], "--effect", FINITE, "nan"),
    (["generate-logs", "out", "--effect=-inf"], "--effect", FINITE, "-inf"),
    (["generate-logs", "out", "--pre-days", "-1"], "--pre-days", NON_NEGATIVE, "-1"),
    (["generate-logs", "out", "--users", "0"], "--users", POSITIVE, "0"),
    (["generate-logs", "out", "--users", "ten"], "--users", POSITIVE, "ten"),
    (["generate-logs", "out", "--experiments", "0"], "--experiments", POSITIVE, "0"),
    (["generate-logs", "out", "--seed", "-1"], "--seed", NON_NEGATIVE, "-1"),
    (["simulate", "--generate", "nan"], "--generate", f"{FINITE} > -1", "nan"),
    (["simulate", "--generate", "-1"], "--generate", f"{FINITE} > -1", "-1"),
    (["simulate", "--generate", "0.01", "--queries", "0"], "--queries", POSITIVE, "0"),
    (["simulate", "--generate", "0.01", "-k", "0"], "-k", POSITIVE, "0"),
    (["simulate", "--generate", "0.01", "--alpha", "1.5"], "--alpha", LEVEL, "1.5"),
    (["simulate", "--generate", "0.01", "--power", "nan"], "--power", LEVEL, "nan"),
    (["simulate", "--generate", "0.01", "--user-sd", "nan"], "--user-sd", f"{FINITE} >= 0", "nan"),
    (["simulate", "--generate", "0.01", "--bootstrap", "0"], "--bootstrap", POSITIVE, "0"),
    (["simulate", "--generate", "0.01", "--mc-impressions", "-5"], "--mc-impressions",
     NON_NEGATIVE, "-5"),
    (["simulate", "--generate", "0.01", "--replicates", "0"], "--replicates", POSITIVE, "0"),
    (["ab", "logs", "--alpha", "0"], "--alpha", LEVEL, "0"),
    (["ab", "logs", "--plan", "--power", "1"], "--power", LEVEL, "1"),
    (["ab", "logs", "--plan", "--mde", "-0.1"], "--mde", f"{FINITE} > 0", "-0.1"),
    (["ab", "logs", "--monitor", "--tuning-n", "0"], "--tuning-n", f"{FINITE} > 0", "0"),
    (["ab", "logs", "--digits", "-1"], "--digits", NON_NEGATIVE, "-1"),
    (["interleaving-report", "logs", "--confidence", "1"], "--confidence", LEVEL, "1"),
    (["interleaving-report", "logs", "--resamples", "0"], "--resamples", POSITIVE, "0"),
    (["interleaving-report", "logs", "--seed", "-2"], "--seed", NON_NEGATIVE, "-2"),
    (["report", "--alpha", "2"], "--alpha", LEVEL, "2"),
    (["report", "--confidence", "0"], "--confidence", LEVEL, "0"),
    (["report", "--resamples", "0"], "--resamples", POSITIVE, "0"),
    (["evaluate", "q", "r", "--digits", "-1"], "--digits", NON_NEGATIVE, "-1"),
    (["evaluate", "q", "r", "--depth", "0"], "--depth", POSITIVE, "0"),
    (["compare", "q", "a", "b", "--resamples", "x"], "--resamples", POSITIVE, "x"),
    (["gate", "q", "--baseline", "a", "--candidate", "b", "--top", "-3"], "--top",
     NON_NEGATIVE, "-3"),
    (["demo", "--queries", "0"], "--queries", AT_LEAST_2, "0"),
    (["demo", "--queries", "1"], "--queries", AT_LEAST_2, "1"),   # a comparison needs 2 queries
]


@pytest.mark.parametrize(("argv", "option", "wanted", "shown"), CASES,
                         ids=[" ".join(c[0]) for c in CASES])
def test_bad_values_are_one_line_and_write_nothing(argv, option, wanted, shown, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(argv, capsys)
    assert status == 2
    assert out == ""
    line = error_line(err, argv[0])
    assert line == f"serpeval {argv[0]}: error: argument {option}: {wanted}, got {shown}"
    assert list(tmp_path.iterdir()) == []


def test_folders_and_files_to_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("keep me\n")
    Path("figs").mkdir()
    cases = [
        (["generate-logs", "afile", "--users", "10"],
         "argument folder: afile is a file, not a folder; give a new or an existing folder"),
        (["generate-logs", "afile/logs", "--users", "10"],
         f"argument folder: cannot create the folder afile/logs: {tmp_path / 'afile'} is a file"),
        (["simulate", "--generate", "0.01", "--plot", "figs"],
         f"argument --plot: figs is a folder; give a file name such as {Path('figs/power.png')}"),
        (["simulate", "--generate", "0.01", "--plot", "missing/power.png"],
         f"argument --plot: the folder missing of {Path('missing/power.png')} does not exist"),
        (["simulate", "--generate", "0.01", "--plot", "afile/power.png"],
         f"argument --plot: the folder afile of {Path('afile/power.png')} is a file"),
    ]
    for argv, message in cases:
        status, _, err = run_cli(argv, capsys)
        assert status == 2
        assert error_line(err, argv[0]) == f"serpeval {argv[0]}: error: {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "figs"]
    assert Path("afile").read_text() == "keep me\n"
    assert list(Path("figs").iterdir()) == []


def test_the_real_command_exits_2_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "serpeval", "generate-logs", str(tmp_path / "out"),
                           "--days", "-3"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert error_line(done.stderr, "generate-logs") == (
        "serpeval generate-logs: error: argument --days: must be a positive integer, got -3")
    assert not (tmp_path / "out").exists()


def test_generate_logs_says_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    plain, with_pre = tmp_path / "plain", tmp_path / "with-pre"
    status, out, _ = run_cli(["generate-logs", str(plain), "--users", "50", "--days", "2",
                              "--pre-days", "0"], capsys)
    assert status == 0
    assert out == f"wrote {plain}/impressions.parquet (50 users)\n"
    assert sorted(p.name for p in plain.iterdir()) == ["impressions.parquet"]
    status, out, _ = run_cli(["generate-logs", str(with_pre), "--users", "50", "--days", "2",
                              "--pre-days", "3", "--users", "1e2"], capsys)
    assert status == 0
    assert out == f"wrote {with_pre}/impressions.parquet and pre.parquet (100 users)\n"
    assert sorted(p.name for p in with_pre.iterdir()) == ["impressions.parquet", "pre.parquet"]


@pytest.mark.parametrize(("given", "models", "written"), [
    ("power", "navigational", ["power.png"]),              # no suffix: .png added
    ("power.svg", "navigational", ["power.svg"]),
    ("power.v2", "navigational", ["power.v2.png"]),        # not an image suffix
    ("both.png", "navigational,pbm", ["both-navigational.png", "both-pbm.png"]),
], ids=["power", "power.svg", "power.v2", "both.png"])
def test_simulate_plot_prints_the_name_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                given: str, models: str, written: list[str]) -> None:
    """One simulation and plot per case (each a run of its own: the cases share nothing)."""
    pytest.importorskip("matplotlib")
    quick = ["simulate", "--generate", "0.05", "--queries", "30", "--bootstrap", "20",
             "--mc-impressions", "0", "-f", "json"]
    folder = tmp_path / given.replace(".", "_")
    folder.mkdir()
    status, out, _ = run_cli([*quick, "-c", models, "--plot", str(folder / given)], capsys)
    assert status == 0
    notes = json.loads(out)["notes"]
    assert [n for n in notes if n.startswith("power plot: ")] == \
        [f"power plot: {folder / name}" for name in written]
    assert sorted(p.name for p in folder.iterdir()) == sorted(written)
    assert all((folder / name).stat().st_size > 1000 for name in written)


def test_a_glob_over_a_log_folder_reads_pre_as_the_pre_period(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ab 'logs/*.parquet'`` also matches ``pre.parquet``: it is the CUPED pre-period (as in
    ``ab logs``), never impressions, and the notes say so."""
    pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB")
    pytest.importorskip("ibis", reason="the A/B analysis needs ibis")
    logs = tmp_path / "logs"
    assert run_cli(["generate-logs", str(logs), "--users", "1500", "--effect", "0.3",
                    "--days", "4", "--pre-days", "4", "--seed", "3"], capsys)[0] == 0
    pattern = str(logs / "*.parquet")
    status, folder_out, _ = run_cli(["ab", str(logs), "-f", "json"], capsys)
    assert status == 0
    status, glob_out, _ = run_cli(["ab", pattern, "-f", "json"], capsys)
    assert status == 0
    by_folder, by_glob = json.loads(folder_out), json.loads(glob_out)
    assert by_glob["cuped"] is True
    assert by_glob["results"] == by_folder["results"]         # the same numbers, CUPED included
    assert by_glob["variants"] == by_folder["variants"]
    note = f"{logs / 'pre.parquet'}: matched by {pattern}, read as the pre-period (CUPED), not as impressions"
    assert note in by_glob["notes"]
    assert note not in by_folder["notes"]
    status, plan_out, _ = run_cli(["ab", pattern, "--plan", "-f", "json"], capsys)
    assert status == 0
    assert note in json.loads(plan_out)["notes"]
    # --pre given: the matched pre.parquet is only left out of the impressions
    status, given_out, _ = run_cli(["ab", pattern, "--pre", str(logs / "pre.parquet"), "-f", "json"],
                                   capsys)
    assert status == 0
    assert json.loads(given_out)["results"] == by_folder["results"]
    assert any("left out of the impressions" in n for n in json.loads(given_out)["notes"])
    # impressions in several files beside pre.parquet: the files are read one by one
    import pyarrow.parquet as pq

    parts = tmp_path / "parts"
    parts.mkdir()
    table = pq.read_table(logs / "impressions.parquet")
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), parts / "part-0.parquet")
    pq.write_table(table.slice(half), parts / "part-1.parquet")
    (parts / "pre.parquet").write_bytes((logs / "pre.parquet").read_bytes())
    status, parts_out, _ = run_cli(["ab", str(parts / "*.parquet"), "-f", "json"], capsys)
    assert status == 0
    for got, want in zip(json.loads(parts_out)["results"], by_folder["results"], strict=True):
        for key, value in want.items():                       # sums in another order
            assert got[key] == (pytest.approx(value, rel=1e-9) if isinstance(value, float) else value)
    # a pattern that matches only the pre-period has no impressions to analyse
    status, _, err = run_cli(["ab", str(logs / "pre*.parquet")], capsys)
    assert status == 2
    assert error_line(err, "ab").endswith("which are a log folder's clicks or pre-period, not "
                                          "impressions; name the impressions.")
