"""``serpeval ab``, ``serpeval interleaving-report`` and ``serpeval generate-logs``."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.cli.app import main
from serpeval.online.experiments import analyze_ab


@pytest.fixture(scope="module")
def folder(ab_logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("ab-cli")
    pq.write_table(ab_logs.impressions, out / "impressions.parquet")
    pq.write_table(ab_logs.pre, out / "pre.parquet")
    return out


def test_ab_table(folder, capsys) -> None:
    assert (
        main(["ab", str(folder), "--experiment", "ranker-v2", "-m", "ctr", "-m", "abandonment"])
        == 0
    )
    out = capsys.readouterr().out
    assert "ranker-v2: control" in out
    assert "ctr" in out
    assert "abandonment" in out
    assert "sample ratio OK" in out
    assert "CUPED with the pre-period" in out
    assert "holm over 2" in out


def test_ab_json_matches_the_api(folder, capsys) -> None:
    assert main(["ab", str(folder), "-m", "ctr,mrr", "--no-cuped", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    api = analyze_ab(folder / "impressions.parquet", metrics=["ctr", "mrr"]).to_dicts()
    assert [r["metric"] for r in payload["results"]] == ["ctr", "mrr"]
    for got, want in zip(payload["results"], api, strict=True):
        assert got["p_value"] == pytest.approx(want["p_value"], rel=1e-12)
        assert got["rel_ci_lower"] == pytest.approx(want["rel_ci_lower"], rel=1e-12)
    assert payload["cuped"] is False
    assert payload["exclusions"]["kept_rows"] > 0


def test_ab_csv_monitor_and_plan(folder, capsys) -> None:
    assert main(["ab", str(folder / "impressions.parquet"), "-m", "ctr", "-f", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("metric,control,treatment,units_control")
    assert len(lines) == 2
    assert (
        main(["ab", str(folder / "impressions.parquet"), "--monitor", "--looks", "3", "-f", "csv"])
        == 0
    )
    assert len(capsys.readouterr().out.splitlines()) == 4
    assert main(["ab", str(folder), "--plan", "-m", "ctr", "--mde", "0.02", "-f", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)["rows"][0]
    assert plan["metric"] == "ctr"
    assert plan["units_per_arm"] > 0
    assert 0 < plan["variance_reduction"] < 1


def test_plan_without_cuped_is_the_plan_of_the_log_without_its_pre_period(folder, capsys) -> None:
    """``ab plan --no-cuped`` plans as the analysis with --no-cuped analyses: the pre-period
    log in the folder is not used (it used to shrink the variance all the same)."""
    def plan(*args: str) -> dict:
        assert main(["ab", "plan", *args, "-m", "ctr", "--mde", "0.02", "-f", "json"]) == 0
        payload = json.loads(capsys.readouterr().out)
        return {"row": payload["rows"][0], "notes": payload["notes"]}

    with_pre, without, alone = plan(str(folder)), plan(str(folder), "--no-cuped"), plan(
        str(folder / "impressions.parquet"))
    assert 0 < with_pre["row"]["variance_reduction"] < 1
    assert "variance_reduction" not in without["row"]
    assert without["row"] == alone["row"]
    assert without["row"]["units_per_arm"] > with_pre["row"]["units_per_arm"]
    assert any("the pre-period log is not used" in n for n in without["notes"])
    assert any("CUPED with the pre-period log" in n for n in with_pre["notes"])
    assert any("no pre-period log" in n for n in alone["notes"])


def test_errors_are_one_line(folder, capsys) -> None:
    assert main(["ab", str(folder), "--experiment", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("serpeval ab: error:")
    assert "'nope' is not in the log" in err
    assert "\n" not in err
    assert main(["ab", str(folder), "--split", "control:0.5"]) == 2
    assert "VARIANT=SHARE" in capsys.readouterr().err
    assert main(["ab", str(folder), "--split", "control=0.5,control=0.3,treatment=0.5"]) == 2
    assert "variant 'control' appears twice" in capsys.readouterr().err


def test_srm_banner(tmp_path, capsys) -> None:
    n = 1000
    table = pa.table(
        {
            "impression_id": list(range(n)),
            "experiment": ["e"] * n,
            "variant": ["control" if i < 700 else "treatment" for i in range(n)],
            "user_id": list(range(n)),
            "n_shown": [10] * n,
            "clicks": [[1] if i % 2 else [] for i in range(n)],
        }
    )
    pq.write_table(table, tmp_path / "srm.parquet")
    assert main(["ab", str(tmp_path / "srm.parquet"), "-m", "ctr"]) == 0
    assert "SAMPLE RATIO MISMATCH" in capsys.readouterr().err


def test_generate_then_interleaving_report(tmp_path, capsys) -> None:
    assert main(["generate-logs", str(tmp_path / "il"), "--users", "800", "--interleaving"]) == 0
    assert "impressions.parquet" in capsys.readouterr().out
    assert (
        main(["interleaving-report", str(tmp_path / "il"), "--resamples", "300", "-f", "json"]) == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["results"][0]["units"] == 800
    assert payload["teams"] == ["A", "B"]
    days = payload["over_time"]["rows"]  # the JSON always carries the series (14 days)
    assert len(days) == 14
    assert days[-1]["delta"] == payload["results"][0]["delta (B-A)"]
    assert {c["check"] for c in payload["checks"]} == {
        "first-pick balance",
        "per-position team balance",
    }
    assert main(["interleaving-report", str(tmp_path / "il"), "--teams", "A"]) == 2


def test_generate_logs_refuses_no_experiments(tmp_path, capsys) -> None:
    try:  # refused by argparse (which exits), before anything is written
        status = main(["generate-logs", str(tmp_path / "none"), "--users", "10", "--experiments", "0"])
    except SystemExit as exited:
        status = int(exited.code or 0)
    assert status == 2
    assert "argument --experiments: must be a positive integer, got 0" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_plan_and_monitor_tables_have_readable_headers() -> None:
    from serpeval.cli.cmd_ab import _monitor_rows, _plan_rows

    plan = [{"metric": "ctr", "baseline": 0.5, "sd_per_unit": 0.4, "units_observed": 1471, "mde": 0.01,
             "relative": True, "units_per_arm": 52556.2, "mde_at_observed": 0.04,
             "rel_mde_at_observed": 0.06, "variance_reduction": 0.1}]
    shown = _plan_rows(plan, "table")[0]
    assert list(shown) == ["metric", "baseline", "sd per unit", "units observed", "MDE", "MDE is", "units per arm",
                           "MDE now", "relative MDE now", "variance reduction"]
    assert (shown["units observed"], shown["MDE is"], shown["units per arm"]) == ("1,471", "relative", "52,557")
    assert _plan_rows(plan, "json") == plan  # machine formats keep every field as it is
    import datetime as dt

    look = [{"look": 1, "end": dt.datetime(2026, 1, 6), "units_control": 309, "p_value": 0.25,
             "always_valid_p": 1.0, "cs_lower": -0.19}]
    assert list(_monitor_rows(look, "table")[0]) == ["look", "end", "units control", "p", "always-valid p",
                                                     "always-valid low"]


def test_triggered_commands(tmp_path, capsys) -> None:
    """generate-logs --changed-queries writes the triggered column; ab --triggered and
    interleaving-report --triggered print both analyses; their JSON equals the API."""
    from serpeval.online.experiments import analyze_ab_triggered, analyze_interleaving_triggered

    ab, il = tmp_path / "ab", tmp_path / "il"
    assert main(["generate-logs", str(ab), "--users", "800", "--changed-queries", "0.3"]) == 0
    assert main(["generate-logs", str(il), "--users", "800", "--changed-queries", "0.3",
                 "--interleaving", "--ignore-shared"]) == 0
    assert pq.read_table(ab / "impressions.parquet").schema.field("triggered").type == pa.bool_()
    teams = pq.read_table(il / "impressions.parquet").column("teams").to_pylist()
    assert any("shared" in t for t in teams)
    capsys.readouterr()
    assert main(["ab", str(ab), "--triggered", "-m", "ctr"]) == 0
    out = capsys.readouterr().out
    assert "triggered x rate" in out
    assert "triggered impressions:" in out
    assert main(["ab", str(ab), "--triggered", "-m", "ctr", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    api = analyze_ab_triggered(ab, metrics=["ctr"])
    assert payload["results"][0]["triggered_effect"] == pytest.approx(api.to_dicts()[0]["triggered_effect"])
    assert payload["trigger_rate"] == pytest.approx(api.trigger_rate)
    assert main(["interleaving-report", str(il), "--triggered", "--resamples", "100", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    api_il = analyze_interleaving_triggered(il, n_resamples=100, rng=0, period=None)
    assert payload["results"][0]["triggered delta"] == pytest.approx(api_il.to_dicts()[0]["triggered delta"])
    assert main(["interleaving-report", str(il), "--triggered", "--over-time"]) == 2
    assert "cannot be combined" in capsys.readouterr().err
    assert main(["ab", str(tmp_path / "ab"), "--triggered", "-m", "user_ctr"]) == 2
    assert "cannot scale user_ctr" in capsys.readouterr().err
