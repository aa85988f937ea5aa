"""A/B and segment analyses where a comparison has no test, and the segment labels.

- No variance: within each arm every unit has the same value, so the standard error of the
  difference is 0; z = effect / 0 is not a p-value of 0 ("better" from 4 users). No p-value,
  no interval, verdict "no test: no variance", left out of the correction and of Cochran's
  Q, and the notes count the family actually corrected.
- A NULL segment value is its own segment, never merged with a real value "(missing)".
- With several treatments the ``ab --by`` table names each row's treatment.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest

from serpeval.cli import main
from serpeval.core.strict_json import dumps
from serpeval.online.experiments import analyze_ab
from serpeval.online.experiments.segments import analyze_ab_segments, analyze_interleaving_segments
from serpeval.report.segments import render_online_segments


def ab_log(users: list[tuple[str, str, list[list[int]], str | None]]) -> pa.Table:
    """``users``: (user, variant, the clicks of each of its impressions, segment)."""
    rows: dict[str, list] = {k: [] for k in ("impression_id", "experiment", "variant", "user_id", "n_shown",
                                             "clicks", "seg")}
    for user, variant, impressions, segment in users:
        for clicks in impressions:
            rows["impression_id"].append(len(rows["impression_id"]) + 1)
            rows["experiment"].append("e")
            rows["variant"].append(variant)
            rows["user_id"].append(user)
            rows["n_shown"].append(10)
            rows["clicks"].append(clicks)
            rows["seg"].append(segment)
    return pa.table({**rows, "clicks": pa.array(rows["clicks"], pa.list_(pa.int32())),
                     "seg": pa.array(rows["seg"], pa.string())})


def test_zero_standard_error_is_no_test_not_p_zero() -> None:
    """The QA log: control never clicks, treatment always clicks on result 1. CTR is 0 for
    every control user and 1 for every treatment user: no variance, no test. The users have
    1, 2, 1, 3 impressions, so impressions_per_user has a variance and a test, and the
    Holm family is that one comparison (its adjusted p equals its p)."""
    log = ab_log([("u1", "control", [[]], None), ("u2", "control", [[], []], None),
                  ("u3", "treatment", [[1]], None), ("u4", "treatment", [[1], [1], [1]], None)])
    res = analyze_ab(log, metrics=["ctr", "impressions_per_user"])
    ctr, ipu = res.comparisons
    assert (ctr.estimate.effect, ctr.estimate.se) == (1.0, 0.0)
    assert math.isnan(ctr.estimate.p_value)
    assert math.isnan(ctr.p_value_adjusted)
    assert math.isnan(ctr.estimate.ci_lower)
    assert math.isnan(ctr.estimate.ci_upper)
    assert ctr.verdict == "no test: no variance"
    assert not ctr.significant
    assert ipu.tested
    assert ipu.p_value_adjusted == pytest.approx(float(ipu.estimate.p_value), rel=1e-12)
    assert any("ctr, treatment vs control: no variance" in n and "left out of the holm correction" in n
               for n in res.notes)
    assert "multiple testing: holm over the 1 comparison(s) with a test (1 of 2 without one: no variance)" \
        in res.rules()
    # strict JSON: null, with the reason
    row = json.loads(dumps(res.to_json_dict()))["results"][0]
    assert row["p_value"] is None
    assert row["ci_lower"] is None
    assert row["p_value_adjusted"] is None
    assert "standard error of the difference is 0" in row["null_reasons"]["p_value"]


def segment_log() -> pa.Table:
    """Segment a: no variance (0 vs 1 in every unit); b and c: a variance; d: one unit."""
    return ab_log([
        ("a1", "control", [[]], "a"), ("a2", "control", [[]], "a"),
        ("a3", "treatment", [[1]], "a"), ("a4", "treatment", [[1]], "a"),
        ("b1", "control", [[1]], "b"), ("b2", "control", [[]], "b"),
        ("b3", "treatment", [[1]], "b"), ("b4", "treatment", [[2]], "b"),
        ("c1", "control", [[1]], "c"), ("c2", "control", [[]], "c"),
        ("c3", "treatment", [[1]], "c"), ("c4", "treatment", [[]], "c"),
        ("d1", "treatment", [[1]], "d"),
    ])


def test_a_segment_without_variance_has_no_test_and_is_out_of_the_family_and_of_q() -> None:
    result = analyze_ab_segments(segment_log(), by="seg", metrics=["ctr"])
    rows = {r.segment: r for r in result.rows}
    a = rows["a"]
    assert a.effect == 1.0
    assert a.se == 0.0
    assert np.isnan([a.p_value, a.p_value_corrected, a.ci_low, a.ci_high]).all()
    assert not a.significant
    assert a.test == ""
    # Holm over b and c only: b's p .3173 (z = .5 / sqrt(.125 + 0)) times 2
    b, c = rows["b"], rows["c"]
    assert b.p_value == pytest.approx(0.31731, abs=1e-5)
    assert b.p_value_corrected == pytest.approx(2 * b.p_value, rel=1e-12)
    assert c.p_value == pytest.approx(1.0)
    interaction = result.interactions[0]
    assert (interaction["df"], interaction["segments"], interaction["left_out"]) == (1, 2, 2)
    notes = result.notes()
    assert any("Holm correction across the 2 segments with a test (of 4;" in n for n in notes)
    assert any("between the 2 segments with a test (2 segment(s) without a test left out)" in n for n in notes)
    assert any(n.startswith("segment 'a': 2 unit(s) in control, 2 in treatment; no variance") and
               n.endswith("no test for ctr") for n in notes)
    payload = json.loads(dumps(result.to_json_dict()))
    assert next(r for r in payload["rows"] if r["segment"] == "a")["p_value"] is None


def test_the_correction_note_counts_the_segments_tested() -> None:
    """All segments tested: the note names them all; some not: the tested count, not 'the 4'."""
    log = segment_log()
    everyone = analyze_ab_segments(log, by="seg", metrics=["clicks_per_user"])
    tested = sum(np.isfinite(r.p_value) for r in everyone.rows)
    assert tested < 4
    assert any(f"across the {tested} segments with a test (of 4;" in n for n in everyone.notes())


def test_an_interleaving_segment_without_variance_has_no_test() -> None:
    """Segment 'flat': B wins every impression of every unit (credit share 1 in each unit): no
    variance, no test (not p = 0 and a significant preference)."""
    rows = [(f"a{u}", [2], "flat") for u in range(4)]
    rows += [(f"b{u}", c, "mixed") for u, c in enumerate([[1], [2], [1], [], [2], [1]])]
    table = pa.table({"impression_id": list(range(1, len(rows) + 1)), "experiment": ["il"] * len(rows),
                      "user_id": [r[0] for r in rows], "n_shown": [2] * len(rows),
                      "clicks": pa.array([r[1] for r in rows], pa.list_(pa.int32())),
                      "teams": [["A", "B"]] * len(rows), "device": [r[2] for r in rows]})
    result = analyze_interleaving_segments(table, by="device")
    flat = next(r for r in result.rows if r.segment == "flat")
    assert flat.effect == 0.5
    assert flat.se == 0.0
    assert np.isnan([flat.p_value, flat.p_value_corrected, flat.ci_low, flat.ci_high]).all()
    assert not flat.significant
    mixed = next(r for r in result.rows if r.segment == "mixed")
    assert mixed.p_value_corrected == pytest.approx(mixed.p_value, rel=1e-12)   # a family of one
    assert result.interactions[0]["left_out"] == 1
    notes = result.notes()
    assert any("across the 1 segments with a test (of 2;" in n for n in notes)
    assert any(n.startswith("segment 'flat': 4 unit(s); no variance") for n in notes)


def test_a_null_segment_is_not_merged_with_a_real_value_missing() -> None:
    """20 users per arm with the text "(missing)", 20 with NULL: two segments of 40 units."""
    users = []
    for i in range(20):
        for variant in ("control", "treatment"):
            users.append((f"m{variant}{i}", variant, [[1] if i % 2 else []], "(missing)"))
            users.append((f"n{variant}{i}", variant, [[1] if i % 3 else []], None))
    users.append(("both", "control", [[1]], None))          # one user in the NULL and the "(missing)"
    users.append(("both", "control", [[]], "(missing)"))    # segments: in two segments
    result = analyze_ab_segments(ab_log(users), by="seg", metrics=["ctr"])
    rows = {r.segment: r for r in result.rows}
    assert set(rows) == {"(missing)", "(NULL)"}
    assert (rows["(missing)"].units, rows["(NULL)"].units) == (41, 41)
    assert rows["(NULL)"].value_control == pytest.approx(14 / 21)       # 13 of u0..19 (i % 3) + both
    assert result.multi_segment_users == 1
    assert any("NULL values of 'seg' are the segment '(NULL)'" in n for n in result.notes())
    # without the clash, NULL keeps its label
    plain = [(u, v, c, None if s is None else "x") for u, v, c, s in users]
    labels = {r.segment for r in analyze_ab_segments(ab_log(plain), by="seg", metrics=["ctr"]).rows}
    assert labels == {"x", "(missing)"}


def test_the_by_table_names_the_treatment_of_each_row_when_there_are_several() -> None:
    users = [(f"{v}{i}", v, [[1] if i % 2 else [], [] if i % 3 else [2]], "ab"[i % 2])
             for v in ("control", "t1", "t2") for i in range(8)]
    result = analyze_ab_segments(ab_log(users), by="seg", metrics=["ctr"])
    for fmt in ("table", "markdown"):
        text = render_online_segments(result, fmt)
        header = next(line for line in text.splitlines() if "segment" in line and "metric" in line)
        assert "treatment" in header
        assert "treatment value" in header
        assert sum(" t1 " in line for line in text.splitlines()) == 2
        assert sum(" t2 " in line for line in text.splitlines()) == 2
    assert {r["treatment"] for r in result.to_dicts()} == {"t1", "t2"}
    one = analyze_ab_segments(ab_log([u for u in users if u[1] != "t2"]), by="seg", metrics=["ctr"])
    header = next(line for line in render_online_segments(one, "markdown").splitlines() if "segment" in line
                  and "metric" in line)
    assert "treatment value" not in header    # one treatment: the layout as before


def test_the_ab_table_says_no_test_not_nan(tmp_path, capsys) -> None:
    """The QA command: ``ab tinya.csv -m ctr -m clicks_per_user -m abandonment`` printed
    effect +-1, CI [1, 1], p 0 and "better" for every metric."""
    path = tmp_path / "tinya.csv"
    path.write_text("impression_id,experiment,variant,user_id,n_shown,clicks\n1,e,control,u1,10,\n"
                    "2,e,control,u2,10,\n3,e,treatment,u3,10,[1]\n4,e,treatment,u4,10,[1]\n")
    capsys.readouterr()
    assert main(["ab", str(path), "-m", "ctr", "-m", "clicks_per_user", "-m", "abandonment", "-f", "markdown"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ctr") or line.startswith("| clicks")
            or line.startswith("| abandonment")]
    assert len(rows) == 3
    for row in rows:
        assert "[no interval] |" in row
        assert row.endswith("| n/a | n/a | no test: no variance |")
    assert "nan" not in out
    assert "better" not in out
    assert "holm over the 0 comparison(s) with a test (3 of 3 without one: no variance)" in out
