"""``gate --max-drop`` has a unit: ``0.01`` is absolute, ``1%`` relative to the baseline mean.

A drop that a bounded measure cannot make (``5`` on nDCG, in [0, 1]) would let every
candidate through; it is refused with a hint, as are ``inf``, ``nan``, negative drops,
``100%`` or more and malformed percentages. The relative margin is checked against a
hand-worked case and the p-value against scipy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from serpeval.cli import main
from serpeval.comparison.gate import MaxDrop, check_max_drop, gate, parse_max_drop
from serpeval.core.errors import OptionError
from serpeval.measures import parse_measures
from serpeval.report.gate import explain_gate


@pytest.mark.parametrize(
    ("given", "relative", "expected"),
    [
        ("0.01", False, MaxDrop(0.01, False)),
        ("1%", False, MaxDrop(0.01, True)),
        (" 2.5 % ", False, MaxDrop(0.025, True)),
        ("1e-2", False, MaxDrop(0.01, False)),
        ("0", False, MaxDrop(0.0, False)),
        ("99.5%", False, MaxDrop(0.995, True)),
        (0.01, False, MaxDrop(0.01, False)),
        (0.01, True, MaxDrop(0.01, True)),   # the API's fraction of the baseline mean
        ("0.01", True, MaxDrop(0.01, True)),
        (3, False, MaxDrop(3.0, False)),      # fine for an unbounded measure (checked later)
        (MaxDrop(0.02, True), False, MaxDrop(0.02, True)),
    ],
)
def test_parse_max_drop(given, relative: bool, expected: MaxDrop) -> None:
    drop = parse_max_drop(given, relative)
    assert drop.relative == expected.relative
    assert drop.value == pytest.approx(expected.value, rel=1e-15)


@pytest.mark.parametrize(
    ("given", "relative", "message"),
    [
        ("inf", False, r"--max-drop must be a finite number; got 'inf'\."),
        ("-Infinity", False, r"--max-drop must be a finite number; got '-Infinity'\."),
        ("nan", False, r"--max-drop must be a finite number; got 'nan'\."),
        ("5%%", False, r"--max-drop must be a number \(0\.01: absolute.*\) or a percentage \(1%: "
                       r"relative to the baseline mean\); got '5%%'\."),
        ("%", False, r"got '%'\."),
        ("", False, r"got ''\."),
        ("1,5", False, r"got '1,5'\."),
        ("0x10", False, r"got '0x10'\."),
        ("-0.01", False, r"--max-drop must be >= 0 \(the drop the candidate is allowed\); got "
                         r"'-0\.01'\. Use 0 to require a significant improvement\."),
        ("-1%", False, r"must be >= 0"),
        ("150%", False, r"--max-drop '150%': a relative drop must be below 100% of the baseline "
                        r"mean \(a drop of 100% or more lets every candidate through\)"),
        ("100%", False, r"below 100%"),
        (1.5, True, r"--max-drop 1\.5 \(= 150%\): a relative drop must be below 100%"),
        (float("inf"), False, r"must be a finite number; got inf\."),
        (float("nan"), False, r"must be a finite number; got nan\."),
        (True, False, r"must be a number"),
        (None, False, r"must be a number"),
    ],
)
def test_parse_max_drop_refuses(given, relative: bool, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_max_drop(given, relative, option="--max-drop")


def test_an_absolute_drop_a_bounded_measure_cannot_make_is_refused_with_a_hint() -> None:
    ndcg_dcg = parse_measures(["nDCG@10", "DCG@10"])
    with pytest.raises(OptionError, match=(
            r"^max_drop 5 is an absolute drop, but nDCG@10 lies in \[0, 1\]: an allowed drop of 1 "
            r"or more lets every candidate through\. Did you mean 5%\? Give an absolute drop below "
            r"1 \(e\.g\. 0\.01\) or a relative one \(e\.g\. 1%\)\.$")):
        check_max_drop(parse_max_drop("5"), ndcg_dcg)
    with pytest.raises(OptionError, match="Did you mean 1%"):
        check_max_drop(parse_max_drop(1), parse_measures(["AP"]))
    with pytest.raises(OptionError, match=r"lies in \[0, 1\].*through\. Give"):  # no % hint past 100
        check_max_drop(parse_max_drop(250), parse_measures(["Unjudged@10"]))  # lower is better too
    check_max_drop(parse_max_drop("0.99"), ndcg_dcg)            # possible on [0, 1]
    check_max_drop(parse_max_drop("5"), parse_measures(["DCG@10", "NumRet"]))  # unbounded
    check_max_drop(parse_max_drop("50%"), ndcg_dcg)             # relative: no bound applies


# Hand-worked: four queries, one relevant doc each.
#   baseline RR:  q1 rank 1 -> 1, q2 rank 2 -> 1/2, q3 rank 2 -> 1/2, q4 not retrieved -> 0
#                 mean = (1 + 0.5 + 0.5 + 0) / 4 = 0.5, so 1% of it is 0.005.
#   candidate RR: 1, 1, 1/3, 0  -> per-query gain (0, +1/2, -1/6, 0).
QRELS = {"q1": {"D-1": 1}, "1030303": {"d2": 1}, "ü3": {"d3": 1}, "Q-04": {"d4": 1}}
BASE = {"q1": {"D-1": 3.0, "x": 1.0}, "1030303": {"x": 3.0, "d2": 2.0},
        "ü3": {"y": 5.0, "d3": 4.0}, "Q-04": {"z": 1.0}}
CAND = {"q1": {"D-1": 3.0}, "1030303": {"d2": 9.0, "x": 1.0},
        "ü3": {"y": 5.0, "z": 4.5, "d3": 4.0}, "Q-04": {"x": 2.0}}


def test_relative_drop_of_one_percent_is_five_thousandths_of_a_half() -> None:
    result = gate(QRELS, BASE, CAND, ["RR"], max_drop="1%")
    check = result.checks[0]
    assert check.baseline_mean == 0.5
    assert check.margin == pytest.approx(0.005, abs=1e-15)
    # H0: mean(gain) <= -0.005, one-sided t on gain + 0.005 (scipy as the reference)
    gains = [0.5, 0.0, 0.0, -1 / 6]  # 1030303, Q-04, q1, ü3
    expected = stats.ttest_1samp([g + 0.005 for g in gains], 0.0, alternative="greater")
    assert check.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    # the same number given as an API fraction, and the same margin given as absolute
    assert gate(QRELS, BASE, CAND, ["RR"], max_drop=0.01, relative=True).checks[0] == check
    absolute = gate(QRELS, BASE, CAND, ["RR"], max_drop="0.005").checks[0]
    assert absolute.p_value == pytest.approx(check.p_value, rel=1e-12)
    # the unit and the threshold it translated to, in the explanation and the JSON report
    assert "allowed drop: 1% of each measure's baseline mean (relative): RR 0.0050 = 1% of " \
           "the baseline mean 0.5000" in explain_gate(result)
    report = result.to_dict()
    assert (report["max_drop"], report["relative"]) == (0.01, True)
    assert (report["max_drop_unit"], report["max_drop_text"]) == ("relative", "1%")
    assert report["checks"][0]["margin_unit"] == "absolute"
    assert report["checks"][0]["margin_from"] == "0.005000 = 1% of the baseline mean 0.500000"
    plain = gate(QRELS, BASE, CAND, ["RR"], max_drop=0.01)
    assert "allowed drop: 0.0100 absolute, in each measure's units" in explain_gate(plain)
    assert plain.to_dict()["max_drop_unit"] == "absolute"


def test_python_gate_refuses_an_impossible_drop_before_evaluating() -> None:
    with pytest.raises(OptionError, match="Did you mean 5%"):
        gate("/nonexistent/qrels.txt", "/nonexistent/a.run", "/nonexistent/b.run", ["nDCG@10"],
             max_drop=5)


# --------------------------------------------------------------------------- command line


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    def trec_run(run: dict[str, dict[str, float]], tag: str) -> str:
        return "".join(f"{q} Q0 {d} 0 {s} {tag}\n" for q, docs in run.items() for d, s in docs.items())

    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()),
        encoding="utf-8")
    (tmp_path / "base.run").write_text(trec_run(BASE, "base"), encoding="utf-8")
    (tmp_path / "cand.run").write_text(trec_run(CAND, "cand"), encoding="utf-8")
    return tmp_path / "qrels.txt", tmp_path / "base.run", tmp_path / "cand.run"


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("5", "--max-drop 5 is an absolute drop, but nDCG@10 lies in [0, 1]: an allowed drop of 1 "
              "or more lets every candidate through. Did you mean 5%?"),
        ("inf", "--max-drop must be a finite number; got 'inf'."),
        ("nan", "--max-drop must be a finite number; got 'nan'."),
        ("150%", "--max-drop '150%': a relative drop must be below 100% of the baseline mean"),
        ("5%%", "got '5%%'."),
        ("-0.01", "--max-drop must be >= 0"),
    ],
)
def test_cli_refuses_with_one_line_before_reading_files(drop: str, message: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "absent.run")  # never read: the option is refused first
    assert main(["gate", str(tmp_path / "absent-qrels.txt"), "--baseline", missing, "--candidate",
                 missing, "-m", "nDCG@10", f"--max-drop={drop}"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("serpeval gate: error: ")
    assert message in lines[0]


def test_cli_relative_drop_report(files, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, base, cand = files
    status = main(["gate", str(qrels), "--baseline", str(base), "--candidate", str(cand),
                   "-m", "RR", "--max-drop", "1%", "--json", "-"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert status == report["exit_code"]
    assert report["max_drop_unit"] == "relative"
    assert report["max_drop_text"] == "1%"
    assert report["checks"][0]["margin"] == pytest.approx(0.005, abs=1e-15)
    assert "RR 0.0050 = 1% of the baseline mean 0.5000" in captured.err


def test_gate_help_states_units_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "absolute, in the measure's units (0.01), or relative to the baseline mean (1%)" in text
    assert "did you mean 5%?" in text
    assert "exit status: 0 pass; 1 fail; 2 bad input or option" in text
    assert "7 nothing evaluated" in text
