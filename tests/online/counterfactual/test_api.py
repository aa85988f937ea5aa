"""serpeval.online.counterfactual: reading logs, bad input, diagnostics, the result object."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from serpeval.core.errors import EmptyInputError, InputError, OptionError
from serpeval.online.counterfactual import MIN_SUPPORT, CounterfactualResult, counterfactual, read_log
from serpeval.online.interleaving import ab_propensities, propensities
from serpeval.online.simulation.counterfactual import (
    by_grade,
    log_table,
    perturbed,
    simulate_log,
    synthetic_pool,
    true_value,
)


@pytest.fixture(scope="module")
def pool():
    p = synthetic_pool(30, k=3, pool_size=12, noises={"A": 1.5, "B": 1.0, "far": 0.2}, rng=1)
    p = by_grade(p, ("A", "B"), "C", noise=0.8, rng=2)
    return perturbed(p, "B", "D", swaps=1, rng=3)


@pytest.fixture(scope="module")
def log(pool):
    return simulate_log(pool, 6000, "navigational", rng=4)


@pytest.fixture(scope="module")
def table(log):
    return log_table(log, experiment="exp-1")


def test_log_table_round_trip_and_propensities(tmp_path, log, table) -> None:
    path = tmp_path / "log.parquet"
    pq.write_table(table, path)
    back = read_log(path)
    assert back.design == "probabilistic"
    assert back.experiment == "exp-1"
    np.testing.assert_array_equal(back.clicks, log.clicks)
    for i in (0, 7, 123):  # the logged propensities are the serving-time function's
        rankings = table.column("logging_rankings")[i].as_py()
        shown = table.column("shown")[i].as_py()
        p = propensities(rankings, shown)
        assert table.column("propensity")[i].as_py() == pytest.approx(p.list_probability, rel=1e-12)
        assert table.column("position_propensities")[i].as_py() == pytest.approx(list(p.positions), rel=1e-12)
    a = counterfactual(log, {"B": _lists(log, table, 1)}, k=2, estimators=["snips", "interleaved"])
    b = counterfactual(path, {"B": _lists(log, table, 1)}, k=2, estimators=["snips", "interleaved"])
    assert [e.value for e in a.estimates] == pytest.approx([e.value for e in b.estimates], rel=1e-12)


def _lists(log, table, ranker: int) -> dict[str, list[str]]:
    return {q: [log.context_docs[c][d] for d in log.context_rankings[c][ranker]] for c, q in enumerate(log.contexts)}


def test_estimates_result_object_and_sentence(pool, log) -> None:
    res = counterfactual(log, {n: pool.lists(n) for n in ("B", "C", "D", "far")}, k=2)
    assert isinstance(res, CounterfactualResult)
    rows = res.to_dicts()
    assert {r["candidate"] for r in rows} == {"B", "C", "D", "far"}
    assert all(("refused" in r) and ("ess" in r or r["refused"]) for r in rows)
    far = [e for e in res.estimates if e.candidate == "far"]
    assert all(e.refused for e in far if e.estimator != "dr")  # thin support: no number
    assert all(e.value is None for e in far if e.refused)
    b = res.get("B", "snips")
    assert b.refused is None
    assert abs(b.value - true_value(pool, "B", k=2)) < 4 * b.se
    assert b.low == pytest.approx(b.value - 1.959963984540054 * b.se)
    ranking = res.ranking()
    assert ranking[-1]["verdict"] in ("no estimate", "worse", "undecided", "better")
    sentence = res.recommendation()
    assert sentence.endswith(".")
    assert "far" in sentence  # named as not judgeable
    assert "<table" in res._repr_html_()
    assert res.impressions == 6000


def test_ab_design(pool) -> None:
    log = simulate_log(pool, 4000, "navigational", design="ab", shares=(0.5, 0.5), rng=5)
    table = log_table(log)
    i = 3
    p = ab_propensities(table.column("logging_rankings")[i].as_py(), [0.5, 0.5], table.column("shown")[i].as_py())
    assert table.column("propensity")[i].as_py() == pytest.approx(p.list_probability)
    res = counterfactual(table, {"A": pool.lists("A"), "C": pool.lists("C")}, k=3)
    a = res.get("A", "ips")
    # on-policy: IPS of arm A is the clicks on A's impressions over the share: mean(2 * clicks * [arm A])
    arm_a = np.all(log.shown == np.array([r[0] + [-1] * (3 - len(r[0])) for r in log.context_rankings])[log.context],
                   axis=1)
    assert a.value == pytest.approx(float((log.clicks.sum(axis=1) * arm_a / p_share(log, arm_a)).mean()), rel=1e-9)
    assert "interleaved" not in {e.estimator for e in res.estimates}  # not offered for an A/B log
    asked = counterfactual(table, {"A": pool.lists("A")}, estimators=["interleaved"])
    assert asked.get("A", "interleaved").refused == "the interleaved comparison needs a probabilistic-interleaving log"


def p_share(log, arm_a) -> np.ndarray:
    # both arms show the same list on some queries: the propensity is then 1
    arm_b = np.all(log.shown == np.array([r[1] + [-1] * (3 - len(r[1])) for r in log.context_rankings])[log.context],
                   axis=1)
    return np.where(arm_a & arm_b, 1.0, 0.5)


def test_bad_input(tmp_path, pool, log, table) -> None:
    with pytest.raises(InputError, match=r"no logging propensities .* deterministic logging"):
        counterfactual(table.drop_columns(["logging_design"]), {"B": pool.lists("B")})
    mixed = pa.concat_tables([table, table.set_column(table.schema.get_field_index("experiment"), "experiment",
                                                      pa.array(["exp-2"] * table.num_rows).dictionary_encode())])
    with pytest.raises(InputError, match="mixes 2 experiments"):
        counterfactual(mixed, {"B": pool.lists("B")})
    one = counterfactual(mixed, {"B": pool.lists("B")}, experiment="exp-2", k=2, estimators=["snips"])
    assert one.skipped == {"other experiments": table.num_rows}
    with pytest.raises(InputError, match="no experiment 'nope'"):
        counterfactual(mixed, {"B": pool.lists("B")}, experiment="nope")
    wrong = table.set_column(table.schema.get_field_index("propensity"), "propensity",
                             pc.multiply(table.column("propensity"), 1.5))
    with pytest.raises(InputError, match=r"row 1: logged propensity .* differs"):
        counterfactual(wrong, {"B": pool.lists("B")})
    no_clicks = table.set_column(table.schema.get_field_index("clicks"), "clicks",
                                 pa.array([[]] * table.num_rows, pa.list_(pa.int32())))
    res = counterfactual(no_clicks, {"B": pool.lists("B")})
    assert all(e.refused.startswith("the log has no clicks") for e in res.estimates)
    never = {q: [f"unseen-{i}" for i in range(3)] for q in pool.queries}
    res = counterfactual(log, {"new": never}, k=2)
    assert all(e.refused for e in res.estimates)
    assert res.get("new", "snips").refused.startswith("none of the candidate's top-k documents")
    res = counterfactual(log, {"other": {"zz": ["a"]}})
    assert res.get("other", "snips").refused == "the candidate ranks none of the log's queries"
    with pytest.raises(OptionError, match="unknown metric"):
        counterfactual(log, {"B": pool.lists("B")}, metric="dwell")
    with pytest.raises(OptionError, match="unknown estimator"):
        counterfactual(log, {"B": pool.lists("B")}, estimators=["magic"])
    with pytest.raises(OptionError, match="against must name a logging ranker"):
        counterfactual(log, {"B": pool.lists("B")}, against="Z")
    with pytest.raises(OptionError, match="k must be an integer from 1 to 3"):
        counterfactual(log, {"B": pool.lists("B")}, k=9)
    with pytest.raises(EmptyInputError):
        counterfactual(table.slice(0, 0), {"B": pool.lists("B")})
    team = table.set_column(table.schema.get_field_index("logging_design"), "logging_design",
                            pa.array(["team_draft"] * table.num_rows))
    with pytest.raises(InputError, match="one design with exact propensities"):
        counterfactual(team, {"B": pool.lists("B")})
    stray = table.set_column(table.schema.get_field_index("shown"), "shown",
                             pa.array([["nowhere", "x", "y"]] * table.num_rows))
    with pytest.raises(InputError, match="row 1: shown document 'nowhere' at position 1 is in none"):
        counterfactual(stray.drop_columns(["propensity"]), {"B": pool.lists("B")})
    with pytest.raises(InputError, match="no such log file"):
        read_log(tmp_path / "missing.parquet")


def test_thin_support_warns_for_dr_and_refuses_design_estimators(pool, log) -> None:
    res = counterfactual(log, {"far": pool.lists("far")}, k=3)
    snips = res.get("far", "snips")
    assert snips.refused is not None
    support = snips.diagnostics["support"]
    assert support < MIN_SUPPORT
    assert f"{support:.0%}" in snips.refused


def test_ctr_metric(pool, log) -> None:
    res = counterfactual(log, {"B": pool.lists("B")}, metric="ctr", k=2)
    assert "iips" not in {e.estimator for e in res.estimates}  # not offered for ctr
    asked = counterfactual(log, {"B": pool.lists("B")}, metric="ctr", k=2, estimators=["iips"])
    assert asked.get("B", "iips").refused.endswith("needs an additive metric (clicks), not ctr")
    est = res.get("B", "snips")
    assert abs(est.value - true_value(pool, "B", metric="ctr", k=2)) < 4 * est.se  # coverage: test_validation


def test_the_package_is_the_api(pool, log) -> None:
    from serpeval.online import counterfactual as package

    res = package(log, {"B": pool.lists("B")}, k=2, estimators=["snips"])
    assert res.get("B", "snips").value == counterfactual(log, {"B": pool.lists("B")}, k=2,
                                                         estimators=["snips"]).get("B", "snips").value


def test_pseudo_inverse_refuses_a_union_too_large_for_exact_moments() -> None:
    wide = synthetic_pool(5, k=8, pool_size=30, noises={"A": 3.0, "B": 3.0}, rng=9)
    log = simulate_log(wide, 500, "pbm", rng=1)
    res = counterfactual(log, {"B": wide.lists("B")}, estimators=["pseudo_inverse"])
    assert res.get("B", "pseudo_inverse").refused.startswith("the pseudo-inverse needs the design's exact second")
