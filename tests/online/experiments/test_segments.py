"""``ab --by`` / ``interleaving-report --by``: per-segment effects with known answers."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from tests.online.conftest import Jobs

from serpeval.cli import main
from serpeval.core.errors import OptionError
from serpeval.online.experiments import analyze_ab, analyze_interleaving_logs
from serpeval.online.experiments.segments import (
    analyze_ab_segments,
    analyze_interleaving_segments,
    cochran_q,
    simpson_check,
)


def make_log(rng: int, users: dict[tuple[str, str], int], ctr: dict[tuple[str, str], float],
             per_user: float = 4.0) -> pa.Table:
    """A nested A/B log: ``users[(segment, variant)]`` users, each with Poisson(per_user) + 1
    impressions of 10 results; an impression gets one click (on position 1..3) with
    probability ``ctr[(segment, variant)]``. Mixed-length Unicode segment names."""
    g = np.random.default_rng(rng)
    rows: dict[str, list] = {k: [] for k in ("impression_id", "experiment", "variant", "user_id",
                                             "n_shown", "clicks", "segment")}
    uid = iid = 0
    for (segment, variant), n in users.items():
        for _ in range(n):
            uid += 1
            for _ in range(g.poisson(per_user) + 1):
                iid += 1
                click = g.random() < ctr[(segment, variant)]
                rows["impression_id"].append(iid)
                rows["experiment"].append("exp")
                rows["variant"].append(variant)
                rows["user_id"].append(uid)
                rows["n_shown"].append(10)
                rows["clicks"].append([int(g.integers(1, 4))] if click else [])
                rows["segment"].append(segment)
    return pa.table({**rows, "clicks": pa.array(rows["clicks"], pa.list_(pa.int32()))})


SEGMENTS = ("de", "fr-CA", "日本")


@pytest.fixture(scope="module")
def one_segment_effect() -> pa.Table:
    """The treatment raises CTR from .30 to .40 in 日本 only."""
    users = {(s, v): 400 for s in SEGMENTS for v in ("control", "treatment")}
    ctr = {(s, v): 0.40 if (s, v) == ("日本", "treatment") else 0.30 for s in SEGMENTS
           for v in ("control", "treatment")}
    return make_log(1, users, ctr)


def test_each_segment_equals_analyze_ab_on_its_rows(one_segment_effect) -> None:
    result = analyze_ab_segments(one_segment_effect, by="segment", metrics=["ctr", "clicks_per_user"])
    for row in result.rows:
        subset = one_segment_effect.filter(pc.equal(one_segment_effect.column("segment"), row.segment))
        alone = analyze_ab(subset, metrics=[row.metric], correction="none").comparisons[0].estimate
        assert row.effect == pytest.approx(float(alone.effect), rel=1e-9)
        assert row.ci_low == pytest.approx(float(alone.ci_lower), rel=1e-9)
        assert row.p_value == pytest.approx(float(alone.p_value), rel=1e-9)
    assert result.multi_segment_users == 0
    assert result.users == 2400


def test_effect_in_one_segment_only_is_found(one_segment_effect) -> None:
    result = analyze_ab_segments(one_segment_effect, by="segment", metrics=["ctr"])
    significant = {r.segment: r.significant for r in result.rows}
    assert significant == {"de": False, "fr-CA": False, "日本": True}
    holm = sorted(r.p_value_corrected for r in result.rows)
    raw = sorted(r.p_value for r in result.rows)
    assert holm[0] == pytest.approx(3 * raw[0])          # Holm: the smallest times 3
    assert result.interactions[0]["p_value"] < 0.05      # the effect differs between segments
    assert not result.simpson


def test_cochran_q_by_hand() -> None:
    # effects 1, 2, 4 with se 1, 1, 2: w = 1, 1, .25; mean = (1 + 2 + 1) / 2.25 = 16/9
    q, df, p = cochran_q([1.0, 2.0, 4.0], [1.0, 1.0, 2.0])
    mean = 16 / 9
    assert q == pytest.approx((1 - mean) ** 2 + (2 - mean) ** 2 + 0.25 * (4 - mean) ** 2)
    from scipy import stats

    assert df == 2
    assert p == pytest.approx(stats.chi2.sf(q, 2))


def test_simpsons_paradox_is_reported() -> None:
    """Treatment is worse by .02 in both segments, but 80% of its users are on desktop
    (CTR ~.6) against 20% of the control's: overall it looks better."""
    users = {("mobile", "control"): 1600, ("desktop", "control"): 400,
             ("mobile", "treatment"): 400, ("desktop", "treatment"): 1600}
    ctr = {("mobile", "control"): 0.22, ("mobile", "treatment"): 0.20,
           ("desktop", "control"): 0.62, ("desktop", "treatment"): 0.60}
    log = make_log(2, users, ctr, per_user=6.0)
    result = analyze_ab_segments(log, by="segment", metrics=["ctr"])
    overall, _ = result.overall[("ctr", "treatment")]
    assert overall > 0.1
    assert all(r.effect < 0 for r in result.rows)
    assert len(result.simpson) == 1
    assert "every segment" in result.simpson[0]
    assert any("SIMPSON" in n for n in result.notes())
    assert result.mix_p < 1e-6
    # the pooled overall effect is the unsegmented analysis (each user in one segment)
    assert overall == pytest.approx(float(analyze_ab(log, metrics=["ctr"]).comparisons[0].estimate.effect))


@pytest.mark.parametrize("seed", [108, 117, 121])
def test_no_simpsons_paradox_in_an_aa_test_with_the_same_mix(seed) -> None:
    """A/A, 150 users per (segment, arm): the mix is identical (chi-square p = 1). The
    pooled effect (impression-weighted) and the mix-standardised one (unit-weighted) are
    both noise around 0; with these seeds their signs differ, which was reported as
    Simpson's paradox. Without a mix difference there is none."""
    users = {(s, v): 150 for s in ("mobile", "desktop") for v in ("control", "treatment")}
    ctr = {(s, v): 0.2 if s == "mobile" else 0.6 for s, v in users}
    result = analyze_ab_segments(make_log(seed, users, ctr, per_user=2.0), by="segment", metrics=["ctr"])
    overall, _ = result.overall[("ctr", "treatment")]
    _, standardised, _ = simpson_check(overall, [r.effect for r in result.rows], [0.5, 0.5])
    assert np.sign(overall) != np.sign(standardised)    # the case that was flagged
    assert result.mix_p == pytest.approx(1.0)
    assert result.simpson == ()
    assert not any("SIMPSON" in n for n in result.notes())


def test_simpson_check_by_hand() -> None:
    # overall +.1; segments -.02, -.02 with shares .5/.5 -> standardised -.02: paradox
    assert simpson_check(0.1, [-0.02, -0.02], [0.5, 0.5]) == (True, pytest.approx(-0.02), True)
    assert simpson_check(0.1, [0.05, -0.01], [0.5, 0.5])[0] is False


def test_users_in_several_segments_are_counted_and_warned() -> None:
    log = make_log(3, {("a", "control"): 50, ("a", "treatment"): 50}, {("a", "control"): .3, ("a", "treatment"): .3})
    n = log.num_rows
    segment = np.where(np.arange(n) % 2 == 0, "phone", "tablet")
    log = log.set_column(log.column_names.index("segment"), "segment", pa.array(segment))
    result = analyze_ab_segments(log, by="segment", metrics=["ctr"])
    assert result.users == 100
    assert 0 < result.multi_segment_users <= 100
    assert any("appear in several segments" in note for note in result.notes())


def test_units_in_both_variants_are_left_out_of_the_segment_counts() -> None:
    """The units in both variants, the units and those in several segments are counted in one
    query: u3 (both variants, in a and b) is out of every count, u1 and u5 span two segments
    (u5's second one missing)."""
    rows = [("u1", "control", "a"), ("u1", "control", "b"), ("u2", "treatment", "a"),
            ("u3", "control", "a"), ("u3", "treatment", "b"), ("u4", "control", "a"),
            ("u5", "treatment", "b"), ("u5", "treatment", None), ("u6", "treatment", "a")]
    log = pa.table({"impression_id": list(range(len(rows))), "experiment": ["e"] * len(rows),
                    "variant": [r[1] for r in rows], "user_id": [r[0] for r in rows],
                    "n_shown": [10] * len(rows), "clicks": pa.array([[1]] * len(rows), pa.list_(pa.int64())),
                    "segment": [r[2] for r in rows]})
    result = analyze_ab_segments(log, by="segment", metrics=["ctr"])
    assert (result.users, result.multi_segment_users) == (5, 2)
    assert any("1 unit(s) seen in more than one variant excluded (2 impressions)" in n for n in result.notes())


def test_missing_column_and_null_segments() -> None:
    log = make_log(4, {("x", "control"): 30, ("x", "treatment"): 30}, {("x", "control"): .3, ("x", "treatment"): .3})
    with pytest.raises(OptionError, match="no column 'country'"):
        analyze_ab_segments(log, by="country")
    nulls = pa.array([None if i % 3 == 0 else "x" for i in range(log.num_rows)], pa.string())
    log = log.set_column(log.column_names.index("segment"), "segment", nulls)
    assert "(missing)" in {r.segment for r in analyze_ab_segments(log, by="segment", metrics=["ctr"]).rows}


def test_interleaving_segments_match_the_log_report(interleaving_logs) -> None:
    table = interleaving_logs.impressions
    users = table.column("user_id").to_numpy()
    table = table.append_column("device", pa.array(np.array(["desktop", "mobile"])[users % 2]))
    result = analyze_interleaving_segments(table, by="device")
    for row in result.rows:
        subset = table.filter(pc.equal(table.column("device"), row.segment))
        alone = analyze_interleaving_logs(subset, n_resamples=2000, rng=0, period=None).analysis
        assert row.effect == pytest.approx(alone.delta, abs=1e-12)
        assert row.units == alone.units
        # the delta-method interval (clustered by user) is close to the user bootstrap
        assert row.ci_low == pytest.approx(alone.ci_low, abs=0.01)
    assert result.multi_segment_users == 0


def test_interleaving_improved_means_the_treatment_b_is_preferred(interleaving_logs) -> None:
    """Ranker B is the better one here: Δ (positive = B preferred, the interleaving report's
    sign) is positive, and the rows say B (the treatment) improved, as A/B rows do."""
    table = interleaving_logs.impressions
    users = table.column("user_id").to_numpy()
    table = table.append_column("device", pa.array(np.array(["desktop", "mobile"])[users % 2]))
    result = analyze_interleaving_segments(table, by="device")
    assert all(r.treatment == "B" and r.control == "A" for r in result.rows)
    assert all(r.effect > 0 and r.value_treatment > 0.5 for r in result.rows)
    assert all(r.improved for r in result.rows)
    assert any(r.significant for r in result.rows)


def test_interleaving_segment_of_one_user_has_no_interval(interleaving_logs) -> None:
    """One unit has no between-unit variance: no p-value, no interval (not a zero-width one)."""
    table = interleaving_logs.impressions
    users = table.column("user_id").to_numpy()
    device = np.where(users == users[0], "solo", "rest")
    result = analyze_interleaving_segments(table.append_column("device", pa.array(device)), by="device")
    solo = next(r for r in result.rows if r.segment == "solo")
    assert solo.units == 1
    assert np.isnan([solo.p_value, solo.ci_low, solo.ci_high, solo.se]).all()
    rest = next(r for r in result.rows if r.segment == "rest")
    assert rest.ci_low < rest.effect < rest.ci_high
    assert any("'solo': 1 unit(s)" in note for note in result.notes())


def test_cli_ab_and_interleaving_by(one_segment_effect, interleaving_logs, tmp_path, capsys) -> None:
    pq.write_table(one_segment_effect, tmp_path / "ab.parquet")
    assert main(["ab", str(tmp_path / "ab.parquet"), "-m", "ctr", "--by", "segment", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["segment"] for r in payload["segments"]["rows"]] == ["de", "fr-CA", "日本"]
    assert main(["ab", str(tmp_path / "ab.parquet"), "-m", "ctr", "--by", "segment"]) == 0
    assert "A/B effects by segment" in capsys.readouterr().out
    table = interleaving_logs.impressions
    table = table.append_column("device", pa.array(np.array(["d", "m"])[table.column("user_id").to_numpy() % 2]))
    pq.write_table(table, tmp_path / "il.parquet")
    assert main(["interleaving-report", str(tmp_path / "il.parquet"), "--by", "device", "--resamples", "100",
                 "-f", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("metric,treatment,control,segment")
    assert len(lines) == 3
    assert main(["ab", str(tmp_path / "ab.parquet"), "--by", "segment", "--plan"]) == 2


def test_duckdb_equals_spark_on_ab_by(spark, one_segment_effect, tmp_path) -> None:
    pq.write_table(one_segment_effect.slice(0, 3000), tmp_path / "ab.parquet")
    duck = analyze_ab_segments(tmp_path / "ab.parquet", by="segment", metrics=["ctr", "clicks_per_user"])
    with Jobs(spark) as jobs:  # (mixed units, units and multi-segment units: one query)
        on_spark = analyze_ab_segments(tmp_path / "ab.parquet", by="segment", metrics=["ctr", "clicks_per_user"],
                                       backend="spark")
    assert jobs.ran <= 10
    assert on_spark.backend == "spark"
    for a, b in zip(duck.to_dicts(), on_spark.to_dicts(), strict=True):
        for key, value in a.items():
            assert b[key] == (pytest.approx(value, rel=1e-9) if isinstance(value, float) else value), key
    assert (duck.users, duck.multi_segment_users, duck.mix) == (on_spark.users, on_spark.multi_segment_users,
                                                               on_spark.mix)


def test_duckdb_equals_spark_on_interleaving_by(spark, interleaving_logs, tmp_path) -> None:
    table = interleaving_logs.impressions.slice(0, 3000)
    table = table.append_column("device", pa.array(np.array(["d", "m"])[table.column("user_id").to_numpy() % 2]))
    pq.write_table(table, tmp_path / "il.parquet")
    duck = analyze_interleaving_segments(tmp_path / "il.parquet", by="device")
    with Jobs(spark) as jobs:
        on_spark = analyze_interleaving_segments(tmp_path / "il.parquet", by="device", backend="spark")
    assert jobs.ran <= 10
    for a, b in zip(duck.to_dicts(), on_spark.to_dicts(), strict=True):
        assert b["effect"] == pytest.approx(a["effect"], rel=1e-9)
        assert b["ci_low"] == pytest.approx(a["ci_low"], rel=1e-9)


@pytest.mark.parametrize("command", ["ab", "interleaving-report"])
def test_by_with_latex_is_refused(command, tmp_path, capsys) -> None:
    """The per-segment analysis has no LaTeX layout: it was appended to the LaTeX as a text table."""
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"user_id": [1]}), path)   # refused before the log is read
    assert main([command, str(path), "--by", "device", "-f", "latex"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--by has no LaTeX layout" in err


def test_segment_delta_is_b_minus_a_as_the_doc_says() -> None:
    """Issue 27, item 10: docs/segments.md described the interleaving segment Δ as
    (wins of A + ties / 2) / impressions - 1/2. By hand, segment 'x': 4 impressions with B
    winning 2, A 1, one tie: (2 + 1/2) / 4 - 1/2 = +0.125 (B preferred, positive)."""
    from pathlib import Path

    from serpeval.online.experiments.segments import analyze_interleaving_segments

    rows = [  # (user, clicks, teams of the 3 shown results)
        ("u1", [2], ["A", "B", "A"]), ("u1", [3], ["B", "A", "B"]), ("u2", [1], ["A", "B", "A"]),
        ("u3", [], ["B", "A", "B"]),
    ]
    table = pa.table({
        "impression_id": list(range(4)), "user_id": [r[0] for r in rows], "n_shown": [3] * 4,
        "clicks": pa.array([r[1] for r in rows], pa.list_(pa.int64())),
        "teams": [r[2] for r in rows], "device": ["x"] * 4,
    })
    res = analyze_interleaving_segments(table, by="device")
    assert res.rows[0].effect == pytest.approx((2 + 0.5) / 4 - 0.5, abs=1e-15)
    doc = " ".join((Path(__file__).resolve().parents[3] / "docs" / "segments.md").read_text(
        encoding="utf-8").split())
    assert "Δ (B − A) = (wins of B + ties / 2) / impressions - 1/2" in doc
    assert "wins of A + ties / 2" not in doc
