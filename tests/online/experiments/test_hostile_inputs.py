"""Hostile inputs to ``ab``, ``generate-logs`` and the triggered analyses (issue 27, items 10 and 15).

Each input was accepted, hung or mislabelled before; each must now be refused with the
reason, or counted and reported.
"""

from __future__ import annotations

import csv
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.cli.app import main
from serpeval.core.errors import InputError, OptionError, StatsError
from serpeval.online.experiments import analyze_ab, analyze_ab_triggered, plan_ab
from serpeval.online.simulation.generate import LogGenerator


def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:  # argparse refusals
        return int(exited.code or 0)


# ---------------------------------------------------------------- ab --split

@pytest.mark.parametrize(("split", "total"), [("control=0.7,treatment=0.7", "1.4"),
                                              ("control=0.5,treatment=0.3", "0.8"),
                                              ("control=inf,treatment=0.5", "inf")])
def test_split_shares_must_sum_to_one(tmp_path, capsys, split, total) -> None:
    assert main(["generate-logs", str(tmp_path / "ab"), "--users", "300"]) == 0
    capsys.readouterr()
    assert main(["ab", str(tmp_path / "ab"), "-m", "ctr", "--split", split]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("serpeval ab: error: --split")
    assert f"sum to {total};" in err
    assert "must sum to 1" in err
    assert "\n" not in err


def test_split_of_three_arms_typed_as_decimals_is_read(tmp_path, capsys) -> None:
    """0.333 + 0.333 + 0.334 = 1 (to the float rounding of a hand-typed sum): accepted."""
    assert main(["generate-logs", str(tmp_path / "ab"), "--users", "600", "--variants", "control,b,c"]) == 0
    capsys.readouterr()
    assert main(["ab", str(tmp_path / "ab"), "-m", "ctr", "--split", "control=0.333,b=0.333,c=0.334",
                 "-f", "json"]) == 0
    srm = json.loads(capsys.readouterr().out)["srm"]
    n = sum(srm["observed"])
    share = {"control": 0.333, "b": 0.333, "c": 0.334}
    expected = dict(zip(srm["variants"], srm["expected"], strict=True))
    assert expected == pytest.approx({v: share[v] * n for v in share})


# ---------------------------------------------------------------- clicks that are not positions

def _text_click_log(clicks: list[str]) -> pa.Table:
    n = len(clicks)
    return pa.table({"impression_id": list(range(n)), "experiment": ["é-exp"] * n,
                     "variant": ["control" if i % 2 else "treatment" for i in range(n)],
                     "user_id": [f"u{i % 7}-{'ü' * (i % 3)}" for i in range(n)],
                     "n_shown": [10] * n, "clicks": clicks})


@pytest.mark.parametrize("bad", ["top", "1.5", "first;2", "[x1]"])
def test_clicks_that_are_not_integer_positions_are_refused(tmp_path, capsys, bad) -> None:
    """Before: 'top' became a NULL click counted as 'on a position not shown', '1.5' was
    rounded to position 2, and the analysis ran on what was left."""
    clicks = ["1;3", "", bad, "[2]", bad, "1"] * 5
    table = _text_click_log(clicks)
    with pytest.raises(InputError, match=r"not integer positions, e\.g\. .*expected a list of integer positions"):
        analyze_ab(table, metrics=["ctr"])
    path = tmp_path / "log.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.column_names)
        writer.writerows(zip(*[table.column(c).to_pylist() for c in table.column_names], strict=True))
    assert main(["ab", str(path), "-m", "ctr"]) == 2
    err = capsys.readouterr().err
    assert "holds 10 item(s) in 10 row(s) that are not integer positions" in err
    assert repr(bad) in err


def test_integer_text_clicks_still_read(tmp_path) -> None:
    """The same log with integer positions only: read, every click counted (3 per 6 rows x 5 + ...)."""
    clicks = ["1;3", "", "[2, 4]", "[2]", "", "1"] * 5
    res = analyze_ab(_text_click_log(clicks), metrics=["ctr"])
    assert res.exclusions.clicks == 30  # (2 + 0 + 2 + 1 + 0 + 1) x 5
    assert res.exclusions.invalid_clicks == 0


# ---------------------------------------------------------------- generate-logs sizes and names

@pytest.mark.parametrize(("argv", "message"), [
    (["--variants", ""], "variants must be distinct, non-empty names"),
    (["--variants", "control, "], "variants must be distinct, non-empty names"),
    (["--variants", "control"], "at least two for an A/B log"),
    (["--effect", "1e308"], "effect must be a finite shift of at most 40"),
    (["--effect", "-41"], "effect must be a finite shift of at most 40"),
    (["--users", "1e12"], "4e+12 expected impressions; at most 4e+09"),
    (["--users", "1e9", "--impressions-per-user", "5"], "5e+09 expected impressions"),
])
def test_generate_logs_refuses_what_cannot_be_a_log(tmp_path, capsys, argv, message) -> None:
    """Before: '' made one nameless arm, 1e308 was accepted, 1e12 users ran for ever."""
    folder = tmp_path / "log"
    assert _status(["generate-logs", str(folder), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert not folder.exists()


def test_generator_bounds_hold_for_the_api_too() -> None:
    with pytest.raises(OptionError, match="non-empty names"):
        LogGenerator(10, variants=("",))
    with pytest.raises(OptionError, match="at most 40"):
        LogGenerator(10, effect=1e308)
    LogGenerator(10, effect=40.0)  # the bound itself is allowed
    LogGenerator(10, variants=("one",), interleaving=True)  # an interleaving log has no arms


# ---------------------------------------------------------------- a user seen in both variants

def _mixed_log() -> pa.Table:
    """20 users; user 'u0' sees control 3 times (triggered) and treatment once (not triggered),
    so in the triggered part alone u0 looks like a clean control user.

    Impressions of the 19 clean users: 57, of which 38 triggered (every first two of three).
    """
    rows = []
    for u in range(20):
        arm = "control" if u % 2 == 0 else "treatment"
        for k in range(3):
            rows.append((f"u{u}", arm, [1] if (u * (k + 1)) % 5 < 2 else [], k < 2 or u == 0))
    rows.append(("u0", "treatment", [2], False))
    return pa.table({
        "impression_id": list(range(len(rows))), "experiment": ["e"] * len(rows),
        "variant": [r[1] for r in rows], "user_id": [r[0] for r in rows], "n_shown": [10] * len(rows),
        "clicks": pa.array([r[2] for r in rows], pa.list_(pa.int64())),
        "triggered": [r[3] for r in rows], "segment": ["a" if r[3] else "b" for r in rows],
    })


def test_a_unit_in_both_variants_is_excluded_from_the_triggered_analysis_and_counted() -> None:
    """Before: the triggered part counted u0 as a control user, and the trigger rate was
    (38 + 3) / 57 = 71.9% instead of 38 / 57 = 66.7% over the clean users."""
    res = analyze_ab_triggered(_mixed_log(), metrics=["ctr"])
    for part in (res.untriggered, res.triggered):
        assert part.exclusions.mixed_units == 1
        assert sum(v["units"] for v in part.variants.values()) == 19
    assert res.trigger_rate == pytest.approx(38 / 57, rel=1e-12)
    assert any("1 unit(s) seen in more than one variant excluded" in n for n in res.notes())


def test_a_unit_in_both_variants_across_segments_is_excluded_and_counted() -> None:
    """u0's control pages are in segment a, its treatment page in b: per segment it looked clean."""
    from serpeval.online.experiments.segments import analyze_ab_segments

    res = analyze_ab_segments(_mixed_log(), by="segment", metrics=["ctr"])
    assert sum(r.units for r in res.rows if r.segment == "a") == 19
    assert any("1 unit(s) seen in more than one variant excluded (4 impressions)" in n
               for n in res.notes_extra)


def test_plan_reports_the_units_in_both_variants() -> None:
    plan = plan_ab(_mixed_log(), metrics=["ctr"], mde=0.1)
    assert plan.rows[0]["units_observed"] == 9  # the control arm: u0, u2, ..., u18 less u0
    assert any("1 unit(s) seen in more than one variant excluded (4 impressions)" in n for n in plan.notes)


def _assignment(pairs: list[tuple[str, str]], clicks: list[list[int]] | None = None,
                seconds: list[list[float]] | None = None) -> pa.Table:
    """A log of one experiment: ``(user, variant)`` per impression, one click on result 1 each
    unless ``clicks`` says otherwise, click times where ``seconds`` gives them."""
    n = len(pairs)
    columns = {
        "impression_id": list(range(n)), "experiment": ["e"] * n, "variant": [v for _, v in pairs],
        "user_id": [u for u, _ in pairs], "n_shown": [10] * n,
        "clicks": pa.array(clicks if clicks is not None else [[1]] * n, pa.list_(pa.int64())),
    }
    if seconds is not None:
        columns["click_seconds"] = pa.array(seconds, pa.list_(pa.float64()))
    return pa.table(columns)


def test_an_arm_emptied_by_units_seen_in_both_variants_says_so() -> None:
    """Users 1 and 2 saw both variants; the only clean users are treatment's: the refusal names
    the two units left out, not only the one variant left."""
    log = _assignment([("u1", "control"), ("u1", "treatment"), ("u2", "control"), ("u2", "treatment"),
                       ("u3", "treatment"), ("u4", "treatment")])
    with pytest.raises(InputError) as refused:
        analyze_ab(log, metrics=["ctr"])
    assert "has units in only one variant (treatment); 2 unit(s) seen in more than one variant were left out" \
        in str(refused.value)
    with pytest.raises(InputError, match=r"variant 'control' has no units .*; 2 unit\(s\) seen in more than one"):
        analyze_ab(log, metrics=["ctr"], control="control")
    with pytest.raises(InputError) as clean:  # no unit left out: nothing said of it
        analyze_ab(_assignment([("u3", "treatment"), ("u4", "treatment")]), metrics=["ctr"])
    assert "left out" not in str(clean.value)


def test_a_ratio_metric_with_no_denominator_in_an_arm_is_refused_by_name(tmp_path, capsys) -> None:
    """No control page has a click time (its clicks' times are negative: missing), so
    time_to_first_click has no value in control: one line naming the metric and the variant
    (it was a NaN that the multiple-testing correction refused, after a RuntimeWarning)."""
    users = [(f"u{u}", "control" if u < 3 else "treatment") for u in range(6) for _ in range(2)]
    seconds = [[-2.0] if v == "control" else [3.0 + k] for k, (_, v) in enumerate(users)]
    log = _assignment(users, seconds=seconds)
    with pytest.raises(StatsError, match=r"metric 'time_to_first_click' .* has no value in variant 'control': its "
                                         r"denominator \(timed\) is 0 in every unit"):
        analyze_ab(log, metrics=["ctr", "time_to_first_click"])
    ctr = analyze_ab(log, metrics=["ctr"]).to_dicts()[0]   # ctr 1 in every unit of both arms: no variance,
    assert math.isnan(ctr["p_value"])                        # no test (not p = 1)
    assert ctr["verdict"] == "no test: no variance"
    path = tmp_path / "log.parquet"
    pq.write_table(log, path)
    assert main(["ab", str(path), "-m", "ctr,time_to_first_click"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"serpeval ab: error: {path}: metric 'time_to_first_click'")
    assert err.endswith("Leave it out of the metrics (-m), or check the log's click_seconds column.\n")
    assert err.count("\n") == 1  # no RuntimeWarning before it


# ---------------------------------------------------------------- triggered output

def test_ab_triggered_shows_the_whole_logs_sample_ratio_check_too(tmp_path, capsys) -> None:
    assert main(["generate-logs", str(tmp_path / "ab"), "--users", "800", "--changed-queries", "0.3"]) == 0
    capsys.readouterr()
    assert main(["ab", str(tmp_path / "ab"), "--triggered", "-m", "ctr"]) == 0
    out = capsys.readouterr().out
    res = analyze_ab_triggered(tmp_path / "ab", metrics=["ctr"])
    whole, part = res.untriggered.srm, res.triggered.srm
    assert sum(whole.observed) == 800 - res.untriggered.exclusions.mixed_units
    assert sum(part.observed) < sum(whole.observed)
    assert f"every impression: sample ratio OK: control {whole.observed[0]:,}" in " ".join(out.split())
    assert f"triggered impressions: sample ratio OK: control {part.observed[0]:,}" in " ".join(out.split())


def test_interleaving_report_triggered_labels_the_unscaled_delta(tmp_path, capsys) -> None:
    from serpeval.online.experiments import analyze_interleaving_triggered

    il = tmp_path / "il"
    assert main(["generate-logs", str(il), "--users", "800", "--changed-queries", "0.3", "--interleaving"]) == 0
    capsys.readouterr()
    assert main(["interleaving-report", str(il), "--triggered", "--resamples", "100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    res = analyze_interleaving_triggered(il, n_resamples=100, rng=0, period=None)
    unscaled = res.triggered.analysis.delta
    assert f"= {unscaled:+.4f}" in out
    before = out[:out.index(f"= {unscaled:+.4f}")]
    assert before.rsplit("delta (B-A)", 1)[0].endswith(
        "triggered impressions only, unscaled (not x the trigger rate): ")
