"""The sensitivity simulator: exact tables against direct simulation with the serving code,
the sample-size formulas by hand, Monte Carlo power at the planned size, real TREC runs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import norm
from tests.conftest import TREC, need

from serpeval.core.errors import InputError, NothingEvaluatedError, OptionError
from serpeval.online.clicks import click_model
from serpeval.online.interleaving import credit, interleave
from serpeval.online.simulation import sensitivity as engine
from serpeval.online.simulation.simulator import make_world, simulate, synthetic_pair

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d5": 2, "d6": 1},
    "q2": {"e1": 0, "e2": 1, "e3": 0, "e4": 2},
}
RUN_A = {"q1": {"d1": 6, "d2": 5, "d3": 4, "d4": 3, "d6": 2},
         "q2": {"e1": 4, "e2": 3, "e3": 2, "e4": 1}}
RUN_B = {"q1": {"d5": 6, "d4": 5, "d1": 4, "x9": 3},  # x9: retrieved, not judged -> grade 0
         "q2": {"e4": 4, "e2": 3, "e1": 2}}


@pytest.fixture(scope="module")
def world():
    return make_world(QRELS, RUN_A, RUN_B, k=4)


def test_world_codes_and_grades(world) -> None:
    assert world.query_ids == ["q1", "q2"]
    # q1: A = d1 d2 d3 d4 -> codes 0..3; B = d5 d4 d1 x9 -> d4 and d1 share A's codes.
    assert world.a[0].tolist() == [0, 1, 2, 3]
    assert world.b[0].tolist() == [4, 3, 0, 7]
    assert world.grades[0, [0, 1, 2, 3, 4, 7]].tolist() == [2, 0, 1, 0, 2, 0]
    assert world.b[1].tolist() == [3, 1, 0, -1]  # B retrieved only 3 documents for q2
    assert world.levels == 3


def _direct_interleaving(world, model, n: int, seed: int) -> np.ndarray:
    """P(A wins), P(B wins) per query with the serving code, impression by impression."""
    rng = np.random.default_rng(seed)
    out = np.zeros((len(world.query_ids), 2))
    for q in range(len(world.query_ids)):
        a = [d for d in world.a[q].tolist() if d >= 0]
        b = [d for d in world.b[q].tolist() if d >= 0]
        k = min(world.k, len(set(a) | set(b)))
        lists = [interleave([a, b], k=k, rng=rng) for _ in range(n)]
        grades = np.array([[world.grades[q, d] for d in shown.docs] for shown in lists])
        clicks = model.sample(grades, rng=rng)
        outcomes = np.array([credit(shown, np.flatnonzero(c).tolist()).outcome
                             for shown, c in zip(lists, clicks, strict=True)])
        out[q] = (outcomes == 1).mean(), (outcomes == -1).mean()
    return out


@pytest.mark.parametrize("name", ["navigational", "informational", "dbn", "pbm"])
def test_exact_interleaving_table_matches_the_serving_code(world, name: str) -> None:
    model = click_model(name, world.levels)
    tables = engine.build_tables(model, world.a, world.b, world.grades, 0.0, False)
    m = engine.exact_moments(tables)["interleaving"]
    win, loss = ((m.square + m.mean) / 2)[:, 0], ((m.square - m.mean) / 2)[:, 0]
    n = 4000
    direct = _direct_interleaving(world, model, n, seed=1)
    se = np.sqrt(0.25 / n)
    np.testing.assert_allclose(direct[:, 0], win, atol=5 * se)
    np.testing.assert_allclose(direct[:, 1], loss, atol=5 * se)


def test_exact_ab_moments_match_sampling(world) -> None:
    model = click_model("informational", world.levels)
    tables = engine.build_tables(model, world.a, world.b, world.grades, 0.0, False)
    moments = engine.exact_moments(tables)
    grades = np.where(world.a >= 0, np.take_along_axis(world.grades, np.maximum(world.a, 0), 1), -1)
    clicks = model.sample(np.repeat(grades, 50_000, axis=0), rng=3).reshape(2, 50_000, -1)
    count = clicks.sum(axis=2)
    np.testing.assert_allclose(count.mean(axis=1), moments["CTR"][0].mean[:, 0], atol=0.02)
    np.testing.assert_allclose((count**2).mean(axis=1), moments["CTR"][0].square[:, 0], atol=0.06)
    np.testing.assert_allclose((count == 0).mean(axis=1), moments["abandonment"][0].mean[:, 0], atol=0.01)
    np.testing.assert_allclose(clicks[:, :, 0].mean(axis=1), moments["clicks@1"][0].mean[:, 0], atol=0.01)


def test_required_impressions_by_hand(world) -> None:
    """Independent identical impressions (user_sd = 0, one impression per user):
    interleaving N = z² Var(o) / E[o]², A/B N = 2 z² (Var_A + Var_B) / (μ_A - μ_B)²."""
    res = simulate(world=world, click_model="navigational", user_sd=0.0, impressions_per_user=1,
                   mc_impressions=0, rng=0, bootstrap=50)
    model = click_model("navigational", world.levels)
    moments = engine.exact_moments(engine.build_tables(model, world.a, world.b, world.grades, 0.0, False))
    z = norm.ppf(0.975) + norm.ppf(0.8)
    il = moments["interleaving"]
    e, e2 = il.mean.mean(), il.square.mean()  # queries equally likely
    assert res["interleaving"].required == pytest.approx(z**2 * (e2 - e**2) / e**2)
    ma, mb = moments["CTR"]
    var = [x.square.mean() - x.mean.mean() ** 2 for x in (ma, mb)]
    expected = 2 * z**2 * sum(var) / (ma.mean.mean() - mb.mean.mean()) ** 2
    assert res["CTR"].required == pytest.approx(expected)
    assert res.ratio("CTR") == pytest.approx(expected / res["interleaving"].required)


def test_user_clustering_inflates_ab_more_than_interleaving(world) -> None:
    """With heterogeneous users issuing several queries, A/B variance grows with the
    between-user spread; interleaving compares A and B within each impression."""
    plain = simulate(world=world, click_model="informational", user_sd=0.0, impressions_per_user=1,
                     mc_impressions=0, rng=0, bootstrap=50)
    clustered = simulate(world=world, click_model="informational", user_sd=1.5, impressions_per_user=8,
                         mc_impressions=0, rng=0, bootstrap=50)
    growth_ab = clustered["CTR"].required / plain["CTR"].required
    growth_il = clustered["interleaving"].required / plain["interleaving"].required
    assert growth_ab > 1.5
    assert growth_ab > growth_il


def test_monte_carlo_power_at_the_planned_size() -> None:
    qrels, a, b = synthetic_pair(0.03, n_queries=60, rng=5)
    res = simulate(qrels, a, b, click_model="navigational", mc_impressions=4_000_000, replicates=150,
                   rng=2, bootstrap=100, progress=False)
    il = res["interleaving"]
    curve = res.curves["interleaving"]
    at = np.searchsorted(curve.grid, il.required)
    # Simulated experiments at the planned size reach about the planned 80% power.
    power = np.interp(il.required, curve.grid, curve.power)
    assert 0.65 < power < 0.93, (power, curve.grid[at - 1:at + 1], curve.power[at - 1:at + 1])
    assert il.mc_required is not None
    assert 0.6 < il.mc_required / il.required < 1.5
    assert il.agrees
    assert il.effect > 0


def test_a_clearly_better_ranker_wins_everywhere() -> None:
    qrels, good, bad = _clear_pair()
    res = simulate(qrels, bad, good, click_model="navigational", mc_impressions=0, rng=0, bootstrap=50)
    assert res.offline["delta"] > 0   # B - A: the candidate B is the good ranker
    assert res["interleaving"].effect > 0
    assert res["clicks@1"].effect > 0
    assert res["interleaving"].agrees
    assert res["clicks@1"].agrees
    # Navigational users find the relevant results at once on the good ranking and stop:
    # fewer clicks per impression for the better ranker - CTR points the wrong way.
    assert res["CTR"].agrees is False
    assert res["CTR"].effect < 0
    # Both rankings show the same 10 documents and users stop only after a click, so
    # P(no click) is the same product over all 10: abandonment cannot tell them apart.
    assert res["abandonment"].agrees is None
    assert res["abandonment"].required == np.inf
    assert res["interleaving"].required < res["clicks@1"].required < res["CTR"].required


def _clear_pair() -> tuple[dict, dict, dict]:
    """20 queries, 3 relevant documents each: ``good`` ranks them first, ``bad`` last."""
    qrels = {f"q{i}": {f"d{i}_{j}": (2 if j < 3 else 0) for j in range(10)} for i in range(20)}
    good = {q: {d: -j for j, d in enumerate(docs)} for q, docs in qrels.items()}
    bad = {q: {d: j for j, d in enumerate(docs)} for q, docs in qrels.items()}
    return qrels, good, bad


def test_effects_are_b_minus_a_and_relative_to_a(world) -> None:
    """One sign convention: every effect is B - A, relative gaps (B - A) / A; swapping the
    runs negates every effect and needs the same impressions."""
    res = simulate(world=world, click_model="informational", mc_impressions=0, rng=0, bootstrap=50)
    for m in res.methods:
        assert m.effect == pytest.approx(m.value_b - m.value_a, abs=1e-12)
    for metric in ("CTR", "abandonment", "clicks@1"):
        m = res[metric]
        assert m.relative == pytest.approx((m.value_b - m.value_a) / m.value_a)
    assert res["interleaving"].relative is None
    # offline, by hand: q1 nDCG@4 of A and B from the judgments, q2 likewise, then the means
    off = res.offline
    assert off["delta"] == pytest.approx(world.ndcg_b.mean() - world.ndcg_a.mean())
    assert off["relative"] == pytest.approx(off["delta"] / world.ndcg_a.mean())
    swapped = simulate(QRELS, RUN_B, RUN_A, k=4, click_model="informational",
                       mc_impressions=0, rng=0, bootstrap=50)
    assert swapped.offline["delta"] == pytest.approx(-off["delta"])
    for m, s in zip(res.methods, swapped.methods, strict=True):
        assert s.effect == pytest.approx(-m.effect, abs=1e-12)
        assert s.required == pytest.approx(m.required)
        assert s.agrees == m.agrees


def test_bottom_line_names_the_best_right_sign_metric() -> None:
    qrels, good, bad = _clear_pair()
    res = simulate(qrels, bad, good, click_model="navigational", mc_impressions=0, rng=0, bootstrap=200)
    il, at1 = res["interleaving"], res["clicks@1"]
    assert res.best() is at1           # CTR points the wrong way, abandonment sees nothing
    ratio = at1.required / il.required
    assert at1.ratio == pytest.approx(ratio)
    expected = (f"navigational users: team draft needs {math.ceil(il.required):,} impressions; the best "
                f"A/B metric that points the right way (clicks@1) needs {math.ceil(at1.required):,} "
                f"({ratio:.3g}x as many, 95% CI [{at1.ratio_low:.3g}, {at1.ratio_high:.3g}]); CTR "
                "points the wrong way.")
    assert res.bottom_line() == expected
    # A wrong-sign metric is never the best, however few impressions it needs.
    cheap_ctr = dataclasses.replace(res["CTR"], required=1.0, ratio=1.0 / il.required)
    tweaked = dataclasses.replace(res, methods=(il, cheap_ctr, *res.methods[2:]))
    assert tweaked.best() is at1
    # Rows: numbers as numbers; no ratio for the wrong-sign metric.
    rows = {r["metric"]: r for r in res.to_dicts()}
    assert rows["clicks@1"]["impressions needed"] == math.ceil(at1.required)
    assert isinstance(rows["clicks@1"]["needed CI low"], int)
    assert rows["clicks@1"]["ratio to interleaving"] == pytest.approx(ratio)
    assert rows["CTR"]["ratio to interleaving"] is None
    assert rows["CTR"]["agrees with nDCG@10"] == "NO: wrong sign"
    assert rows["abandonment"]["impressions needed"] == float("inf")


def test_bottom_line_without_a_right_sign_metric_or_difference() -> None:
    qrels, good, bad = _clear_pair()
    same = simulate(qrels, good, good, click_model="navigational", mc_impressions=0, rng=0, bootstrap=20)
    assert same.bottom_line() == ("navigational users: team draft sees no difference between A and B; "
                                  "A and B have the same nDCG@10, so no A/B metric has a right way to "
                                  "point.")
    assert same.best() is None
    res = simulate(qrels, bad, good, click_model="navigational", mc_impressions=0, rng=0, bootstrap=20)
    ab = tuple(dataclasses.replace(m, agrees=False) for m in res.methods[1:])
    none = dataclasses.replace(res, methods=(res.methods[0], *ab))
    assert none.best() is None
    assert none.bottom_line().endswith("; no A/B metric points the right way; CTR, abandonment and "
                                       "clicks@1 point the wrong way.")


def test_synthetic_pair_hits_the_gap() -> None:
    qrels, a, b = synthetic_pair(0.01, n_queries=80, rng=1)
    from serpeval.evaluation.evaluate import evaluate

    res = evaluate(qrels, [a, b], ["nDCG@10"])
    ratio = res.aggregate(b.name, "nDCG@10") / res.aggregate(a.name, "nDCG@10") - 1
    assert ratio == pytest.approx(0.01, abs=0.003)
    assert f"{ratio:+.2%}" in b.name


def test_option_errors(world) -> None:
    with pytest.raises(OptionError, match="Did you mean 'navigational'"):
        simulate(world=world, click_model="navigationl")
    with pytest.raises(OptionError, match="alpha"):
        simulate(world=world, alpha=5)
    with pytest.raises(InputError, match="needs qrels, run_a and run_b"):
        simulate(QRELS)
    with pytest.raises(NothingEvaluatedError, match=r"^<dict>, <dict>: no query is judged and "
                                                    r"retrieved by both runs.* run A answers 0 of "
                                                    r"them and run B 2\."):
        make_world(QRELS, {"zz": {"d": 1.0}}, RUN_B)


def test_report_rows_and_plot(world, tmp_path) -> None:
    res = simulate(world=world, click_model="navigational", mc_impressions=200_000, replicates=20,
                   rng=0, bootstrap=50, progress=False)
    rows = res.to_dicts()
    assert [r["metric"] for r in rows] == [
        "interleaving", "CTR", "abandonment", "clicks@1",  # then the designs (test_simulate_designs.py)
        "interleaving (triggered)", "interleaving (ignore shared)",
        "CTR (triggered)", "abandonment (triggered)", "clicks@1 (triggered)"]
    assert any("offline nDCG@4" in line for line in res.notes())
    pytest.importorskip("matplotlib")
    path = res.plot(tmp_path / "power.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_real_robust04_pair() -> None:
    folder = need(TREC / "robust04")
    world = make_world(folder / "qrels.txt.gz", folder / "runs" / "bm25.run.gz",
                       folder / "runs" / "bm25-rm3.run.gz")
    # The reference scores in shared/data/trec/robust04/README.md (pytrec_eval).
    assert world.ndcg_a.mean() == pytest.approx(0.4463, abs=5e-5)
    assert world.ndcg_b.mean() == pytest.approx(0.4639, abs=5e-5)
    assert len(world.query_ids) == 249
    assert world.skipped == {"retrieved but not judged": 1}
    res = simulate(world=world, click_model="informational", mc_impressions=0, rng=0, bootstrap=200)
    assert all(np.isfinite(m.required) for m in res.methods)
    # B - A and relative to A: (0.4639 - 0.4463) / 0.4463 = +3.9% (the README's real-pair table)
    assert res.offline["delta"] == pytest.approx(world.ndcg_b.mean() - world.ndcg_a.mean())
    assert f"{res.offline['relative']:+.1%}" == "+3.9%"


@pytest.mark.parametrize(("folder", "run_a", "run_b", "gap"), [
    ("core18", "title-rm3.run.gz", "desc-rm3.run.gz", "-10.3%"),
    ("dl20-doc", "d_bm25.run.gz", "d_bm25rm3.run.gz", "-0.45%"),
])
def test_readme_real_pair_gaps(folder: str, run_a: str, run_b: str, gap: str) -> None:
    """The nDCG@10 gaps (B - A) / A of the README's real-pair table (bench/sensitivity.py's pairs)."""
    base = need(TREC / folder)
    world = make_world(base / "qrels.txt", base / "runs" / run_a, base / "runs" / run_b)
    relative = (world.ndcg_b.mean() - world.ndcg_a.mean()) / world.ndcg_a.mean()
    assert f"{relative:+.{len(gap.split('.')[1]) - 1}%}" == gap


def test_monte_carlo_statistics_against_scipy() -> None:
    """The prefix t statistics, Welch's df, the critical values, the Wilson CI of the
    simulated power and the analytic power curve, each against scipy / the z-test formula."""
    from scipy import stats

    rng = np.random.default_rng(0)
    x = rng.poisson(2.0, 60).astype(np.float64)
    y = 1.3 * rng.poisson(2.5, 60).astype(np.float64)
    grid = np.array([2, 3, 7, 20, 60])
    t = engine._prefix_t(x - 2.15, grid)
    np.testing.assert_allclose(t, [stats.ttest_1samp(x[:n] - 2.15, 0.0).statistic for n in grid],
                               rtol=1e-9)
    t, df = engine._prefix_welch(x, y, grid)
    ref = [stats.ttest_ind(x[:n], y[:n], equal_var=False) for n in grid]
    np.testing.assert_allclose(t, [r.statistic for r in ref], rtol=1e-9)
    np.testing.assert_allclose(df, [r.df for r in ref], rtol=1e-9)
    np.testing.assert_allclose(engine._t_crit(df, 0.05), stats.t.ppf(0.975, df), rtol=1e-9)
    hits = np.array([0.0, 3.0, 80.0, 150.0])
    power, low, high = engine._wilson(hits, 150, z=norm.ppf(0.975))
    cis = [stats.binomtest(int(h), 150).proportion_ci(0.95, method="wilson") for h in hits]
    np.testing.assert_allclose(power, hits / 150)
    np.testing.assert_allclose(low, [c.low for c in cis], atol=1e-12)
    np.testing.assert_allclose(high, [c.high for c in cis], atol=1e-12)
    # A two-sided z-test whose effect reaches z_total at `required` impressions:
    # power(n) = Φ(z_total sqrt(n / required) - z_α) + Φ(-z_total sqrt(n / required) - z_α).
    z_a, z_total = norm.ppf(0.975), norm.ppf(0.975) + norm.ppf(0.8)
    got = engine.analytic_power(np.array([1000.0, 4000.0]), 1000.0, z_a, z_total)
    np.testing.assert_allclose(got, [0.8 + norm.cdf(-2 * z_a - norm.ppf(0.8)),
                                     norm.cdf(2 * z_total - z_a) + norm.cdf(-2 * z_total - z_a)])
    assert np.isnan(engine.analytic_power(np.array([10.0]), np.inf, z_a, z_total)).all()


def test_progress_is_a_callback_the_library_never_draws(world) -> None:
    """``progress(done, total)`` is called once per simulated experiment, ending at the total;
    the library itself draws nothing (the command line turns the callback into a bar)."""
    calls: list[tuple[int, int]] = []
    simulate(world=world, click_model="navigational", mc_impressions=200_000, replicates=20, rng=0,
             bootstrap=50, progress=lambda done, total: calls.append((done, total)))
    assert calls
    assert [done for done, _ in calls] == list(range(1, len(calls) + 1))
    assert calls[-1][0] == calls[-1][1]
    with pytest.raises(OptionError, match="progress must be a callable"):
        simulate(world=world, click_model="navigational", progress=True)


def test_display_rows_read_the_json_back_unchanged() -> None:
    """The report's rows of a result and of its strict JSON (inf written as null) read the same:
    an unreachable size shows as ``inf`` either way."""
    import json

    from serpeval.core.strict_json import dumps
    from serpeval.report.simulation import display_rows

    qrels, good, bad = _clear_pair()
    res = simulate(qrels, bad, good, click_model="navigational", mc_impressions=0, rng=0, bootstrap=50)
    rows = res.to_dicts()
    back = json.loads(dumps(rows))
    assert back[2]["impressions needed"] is None                 # abandonment: no difference, inf
    assert display_rows(back) == display_rows(rows)
    shown = display_rows(rows)
    assert shown[2]["impressions [95% CI]"] == "inf [inf, inf]"
    assert shown[1]["x interleaving [95% CI]"] == ""                # CTR: wrong sign, no ratio
    at1 = res["clicks@1"]
    assert shown[3]["x interleaving [95% CI]"] == (f"{at1.ratio:.3g} [{at1.ratio_low:.3g}, "
                                                   f"{at1.ratio_high:.3g}]")
    assert shown[3]["relative"] == f"{(at1.value_b - at1.value_a) / at1.value_a:+.2%}"


def test_levels_are_the_truths_scale_not_the_shown_grades(tmp_path) -> None:
    """Judgments graded 0..3 whose top grade no run shows: the users still read grades on the
    4-level scale. Before, the world took its levels from the shown documents (grades 0..2:
    3 levels), so grade 2 was the top of the navigational table (click .95) instead of the
    interpolated 4-level table's 0.633..."""
    from serpeval.online.clicks import grade_table
    from serpeval.online.simulation.simulator import SimulationOptions

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq1 0 d9 3\nq2 0 e1 1\nq2 0 e2 0\n")
    run_a = tmp_path / "a.run"
    run_a.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\nq2 Q0 e1 1 2 a\nq2 Q0 e2 2 1 a\n")
    run_b = tmp_path / "b.run"
    run_b.write_text("q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 e2 1 2 b\nq2 Q0 e1 2 1 b\n")
    world = make_world(qrels, run_a, run_b, k=3)
    assert int(world.grades.max()) == 2  # d9 (grade 3) is in neither top 3
    assert world.levels == 4
    # the same with a truth mapping: its scale, not the shown grades
    truth = {"q1": {"d1": 1, "d3": 2, "d9": 4}, "q2": {"e1": 1}}
    assert make_world(qrels, run_a, run_b, k=3, truth=truth).levels == 5
    # what the users see: B's top document d3 (grade 2) is clicked with the 4-level table's
    # click[2] = interp of (.05, .3, .5, .7, .95) at 8/3 = .5 + (2/3)(.2) = 0.6333
    result = simulate(world=world, options=SimulationOptions(k=3, user_sd=0, impressions_per_user=1,
                                                             mc_impressions=0, bootstrap=10, rng=0))
    assert grade_table("navigational", 4).click[2] == pytest.approx(0.5 + 0.2 * 2 / 3)
    assert result["clicks@1"].value_b == pytest.approx((0.5 + 0.2 * 2 / 3 + 0.05) / 2)  # q1: d3, q2: e2 (grade 0)
