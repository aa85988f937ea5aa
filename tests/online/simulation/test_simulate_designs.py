"""The simulator's variance-reducing designs: triggered interleaving and A/B tests, team
draft with ignore_shared. Triggered and untriggered estimates agree in expectation (after
scaling by the trigger rate) and the triggered ones vary less: exactly in the engine, and in
simulated experiments whose spread is compared with the exact formula."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.online.clicks import click_model, kernel
from serpeval.online.simulation import sensitivity as engine
from serpeval.online.simulation.simulator import make_world, simulate, synthetic_pair

Z = 4.0


def _half_changed(n_queries: int = 8, seed: int = 3):
    """Eight queries with six graded documents each; ranker B reverses A's top three on the
    odd queries and equals A on the even ones (trigger rate 1/2)."""
    rng = np.random.default_rng(seed)
    qrels, run_a, run_b = {}, {}, {}
    for q in range(n_queries):
        docs = [f"q{q}-d{i}" for i in range(6)]
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs, rng.integers(0, 3, 6), strict=True)}
        run_a[f"q{q}"] = {d: 6.0 - i for i, d in enumerate(docs)}
        order = [2, 1, 0, 3, 4, 5] if q % 2 else list(range(6))
        run_b[f"q{q}"] = {docs[j]: 6.0 - i for i, j in enumerate(order)}
    return make_world(qrels, run_a, run_b, k=4)


@pytest.fixture(scope="module")
def designs():
    qrels, a, b = synthetic_pair(0.02, n_queries=60, rng=4)
    return {model: simulate(qrels, a, b, click_model=model, mc_impressions=0, bootstrap=100, rng=0)
            for model in ("navigational", "informational", "pbm")}


@pytest.mark.parametrize("model", ["navigational", "informational", "pbm"])
def test_triggered_rows_keep_the_effect_and_need_fewer_impressions(designs, model: str) -> None:
    """The triggered effect, scaled to all impressions, equals the untriggered one (on
    identical lists A/B arms are identical and team draft's outcome is a fair coin); for
    interleaving Var S' = Var S - m Σ_t w_t mean_q(1{untriggered} E[o²]) <= Var S, so it never
    needs more impressions."""
    res = designs[model]
    world = res.world
    rate = float((world.a != world.b).any(axis=1).mean())
    for base in ("interleaving", "CTR", "abandonment", "clicks@1"):
        plain, triggered = res[base], res[f"{base} (triggered)"]
        assert triggered.design == "triggered"
        assert triggered.trigger_rate == pytest.approx(rate)
        assert triggered.effect == pytest.approx(plain.effect, abs=1e-12)
    assert res["interleaving (triggered)"].required <= res["interleaving"].required * (1 + 1e-12)
    assert res["interleaving (ignore shared)"].design == "ignore shared"
    assert [m.metric for m in res.methods[:4]] == ["interleaving", "CTR", "abandonment", "clicks@1"]


def test_ignore_shared_row_matches_a_simulation_with_ignore_shared(designs) -> None:
    res = designs["navigational"]
    qrels, a, b = synthetic_pair(0.02, n_queries=60, rng=4)
    direct = simulate(qrels, a, b, click_model="navigational", ignore_shared=True, mc_impressions=0,
                      bootstrap=100, rng=0)
    assert res["interleaving (ignore shared)"].required == pytest.approx(direct["interleaving"].required)
    assert res["interleaving (ignore shared)"].effect == pytest.approx(direct["interleaving"].effect)


def test_triggered_ab_matches_simulated_experiments() -> None:
    """Simulated A/B experiments (users of random type, m impressions on uniform queries,
    clicks from the click model): per replicate the untriggered CTR difference and the
    triggered one, r (R_A - R_B) over triggered impressions. Their means agree with the
    exact effect within 4 standard errors of a mean of R replicates; the variance of the
    triggered estimate matches the exact formula within 4 standard errors of a sample
    variance (sqrt(2 / (R - 1)) relative, for normal estimates), and is below the
    untriggered one."""
    world = _half_changed()
    model = click_model("navigational", world.levels)
    users, m, replicates, z = 300, 4, 800, 2.0
    tables = engine.build_tables(model, world.a, world.b, world.grades, 1.0, False)
    moments = engine.exact_moments(tables)
    triggered = (world.a != world.b).any(axis=1)
    r = float(triggered.mean())
    uniform = np.full(len(triggered), 1 / len(triggered))
    n_needed, effect = engine.required_triggered_ab(moments, "CTR", triggered, uniform, tables.type_weights, m, z)
    # N = 2 m z² V / (m e)²  ->  Var(estimate with `users` per arm) = V / (users m²)
    predicted = float(n_needed) * float(effect) ** 2 / (2 * z**2) / (users * m)

    rng = np.random.default_rng(7)
    n_t = tables.n_types
    plain, trig = np.empty(replicates), np.empty(replicates)
    for start in range(0, replicates, 100):
        reps = min(100, replicates - start)
        per_arm = []
        for cells in tables.ab_cells:
            types = rng.choice(n_t, size=reps * users, p=tables.type_weights)
            queries = rng.integers(0, len(triggered), size=reps * users * m)
            cols = queries * n_t + np.repeat(types, m)
            clicks = kernel.sample_clicks(*(c[:, cols] for c in cells), rng).sum(axis=0)
            x = clicks.reshape(reps, users * m).astype(np.float64)
            flag = triggered[queries].reshape(reps, users * m)
            per_arm.append((x.mean(axis=1), (x * flag).sum(axis=1) / flag.sum(axis=1)))
        plain[start:start + reps] = per_arm[0][0] - per_arm[1][0]
        trig[start:start + reps] = r * (per_arm[0][1] - per_arm[1][1])
    for estimates in (plain, trig):
        assert abs(estimates.mean() - float(effect)) <= Z * estimates.std(ddof=1) / np.sqrt(replicates)
    relative = np.sqrt(2 / (replicates - 1))
    assert abs(trig.var(ddof=1) / predicted - 1) <= Z * relative
    assert trig.var(ddof=1) < plain.var(ddof=1)


def test_triggered_rows_compare_like_with_like() -> None:
    """Issue 27, item 10. Before: a triggered row mixed the effect per impression of the
    population with values among triggered impressions only (B - A != effect), and a
    triggered A/B row's ratio divided by the *untriggered* team draft's impressions.

    Reference, worked from the world itself: on the half-changed world (trigger rate 1/2)
    untriggered queries have identical lists, so the population values of both A/B arms are
    the all-impressions row's values, and team draft's untriggered impressions are ties:
    its population shares of wins are half of those among the triggered queries.
    """
    world = _half_changed()
    res = simulate(world=world, click_model="informational", mc_impressions=0, bootstrap=50, rng=0)
    rate = float((world.a != world.b).any(axis=1).mean())
    assert rate == 0.5
    plain_il, trig_il = res["interleaving"], res["interleaving (triggered)"]
    # team draft on the triggered queries only: P(A wins) - P(B wins) = plain effect / rate
    assert trig_il.value_a - trig_il.value_b == pytest.approx(-trig_il.effect, abs=1e-12)
    assert trig_il.effect == pytest.approx(plain_il.effect, abs=1e-12)
    for metric in ("CTR", "abandonment", "clicks@1"):
        plain, trig = res[metric], res[f"{metric} (triggered)"]
        assert trig.value_b - trig.value_a == pytest.approx(trig.effect, abs=1e-12)
        assert (trig.value_a, trig.value_b) == pytest.approx((plain.value_a, plain.value_b), abs=1e-12)
        assert trig.relative == pytest.approx(plain.relative, rel=1e-9)
        assert trig.ratio == pytest.approx(trig.required / trig_il.required, rel=1e-12)
    rows = {r["metric"]: r for r in res.to_dicts()}
    for metric in ("CTR (triggered)", "abandonment (triggered)", "clicks@1 (triggered)"):
        if rows[metric]["ratio to interleaving"] is not None:
            assert rows[metric]["ratio to interleaving"] == pytest.approx(
                res[metric].required / trig_il.required, rel=1e-12)
