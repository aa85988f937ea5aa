"""The log generator: deterministic, well-formed, and sampling around its exact expectations."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from serpeval.core.errors import OptionError
from serpeval.online.simulation.generate import LogGenerator, _click_times, split_clicks, write_logs


def test_same_seed_same_log_and_other_seed_other_log() -> None:
    g = LogGenerator(300, pre_days=7)
    assert g.generate(rng=1).impressions.equals(g.generate(rng=1).impressions)
    assert not g.generate(rng=1).impressions.equals(g.generate(rng=2).impressions)
    big = LogGenerator(120_000)
    whole = big.generate(rng=1).impressions
    chunked = list(big.chunks(rng=1, chunk_users=50_000))
    assert len(chunked) == 3
    assert pa.concat_tables([t for t, _ in chunked]).equals(whole)  # chunk size changes nothing


def test_log_is_well_formed(ab_logs) -> None:
    t, pre = ab_logs.impressions, ab_logs.pre
    ids = np.concatenate(
        [t.column("impression_id").to_numpy(), pre.column("impression_id").to_numpy()]
    )
    assert len(np.unique(ids)) == len(ids)  # unique across the experiment and the pre-period
    clicks = t.column("clicks").combine_chunks()
    flat = pc.list_flatten(clicks).to_numpy()
    assert flat.min() >= 1
    assert flat.max() <= 10
    owner = pc.list_parent_indices(clicks).to_numpy()
    # cascade-family users click top-down: positions rise within an impression, and so do times
    same = owner[1:] == owner[:-1]
    assert (np.diff(flat)[same] > 0).all()
    times = pc.list_flatten(t.column("click_seconds").combine_chunks()).to_numpy()
    assert (np.diff(times)[same] > 0).all()
    assert (times > 0).all()
    assert (pc.list_flatten(t.column("dwell_seconds").combine_chunks()).to_numpy() > 0).all()
    start = dt.datetime(2026, 1, 5)
    ts = t.column("timestamp").to_pylist()
    assert min(ts) >= start
    assert max(ts) < start + dt.timedelta(days=14)
    assert max(pre.column("timestamp").to_pylist()) < start
    assert set(t.column("variant").to_pylist()) == {"control", "treatment"}


def test_click_times_hand_worked() -> None:
    # impression 1 has two clicks: 1 s pause -> t = 1; then dwell 10 + pause 2 -> t = 13.
    # impression 2 has none, impression 3 one click after 3 s.
    times = _click_times(
        np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0]), np.array([2, 0, 1])
    )
    assert times.tolist() == [1.0, 13.0, 3.0]


def test_expected_values_are_exact() -> None:
    # Monte Carlo over the same world: exact click probabilities at 400k sampled (query, user)
    g = LogGenerator(10, effect=0.2)
    world, rng = g.world(), np.random.default_rng(1)
    query = rng.choice(g.n_queries, 400_000, p=world.popularity)
    shift = rng.normal(g.user_mean, g.user_sd, len(query)) + g.effect
    probs = g._model.click_probabilities(world.shown_a[query], shift=shift)
    exact = g.expected("treatment")
    assert exact["ctr"] == pytest.approx(probs.sum(axis=1).mean(), abs=4e-3)
    assert exact["clicks_at_1"] == pytest.approx(probs[:, 0].mean(), abs=2e-3)


def test_sampled_logs_scatter_around_the_expectation() -> None:
    from serpeval.online.logs.features import ALL_EXPERIMENTS, prepare
    from serpeval.online.logs.moments import fetch_moments, unit_table
    from serpeval.online.logs.sources import read_logs

    g = LogGenerator(40 * 3000, experiments=40, effect=0.2)
    prepared = prepare(read_logs(g.generate(rng=3).impressions), ALL_EXPERIMENTS)
    columns = {"impressions", "clicks", "click_at_1"}
    keys, m, _ = fetch_moments(
        unit_table(prepared.features, columns, keys=["experiment"]),
        columns,
        {("clicks", "impressions"), ("click_at_1", "impressions")},
        by=("experiment", "variant"),
    )
    expected = {v: g.expected(v) for v in g.variants}
    for numer, metric in (("clicks", "ctr"), ("click_at_1", "clicks_at_1")):
        exact = np.array([expected[k["variant"]][metric] for k in keys])
        z = (m.ratio(numer, "impressions") - exact) / np.sqrt(
            m.ratio_var(numer, "impressions") / m.n
        )
        assert abs(z.mean()) < 0.4, (metric, z.mean())
        assert 0.7 < z.std() < 1.4, (metric, z.std())


def test_interleaving_log(interleaving_logs) -> None:
    t = interleaving_logs.impressions
    teams = t.column("teams").to_pylist()
    assert all(len(row) == 10 and set(row) <= {"A", "B", "shared"} for row in teams)
    first = np.array([row[0] == "A" for row in teams])
    assert 0.45 < first.mean() < 0.55  # team draft: a coin decides who picks first
    assert "variant" in t.column_names


def test_split_clicks_round_trip(ab_logs) -> None:
    impressions, clicks = split_clicks(ab_logs.impressions)
    assert "clicks" not in impressions.column_names
    assert (
        clicks.num_rows
        == pc.sum(pc.list_value_length(ab_logs.impressions.column("clicks"))).as_py()
    )
    assert clicks.column_names == ["impression_id", "position", "click_seconds", "dwell_seconds"]


def test_write_logs(tmp_path) -> None:
    import pyarrow.parquet as pq

    folder = write_logs(tmp_path / "log", 500, rng=4, pre_days=3, chunk_users=200)
    assert (
        pq.read_table(folder / "impressions.parquet").num_rows
        == LogGenerator(500, pre_days=3).generate(rng=4).impressions.num_rows
    )
    assert (folder / "pre.parquet").exists()


def test_bad_settings() -> None:
    for bad in (
        {"n_users": 0},
        {"impressions_per_user": 0.5},
        {"variants": ("a", "a")},
        {"split": (1.0,)},
        {"interleaving": True, "effect": 0.1},
        {"experiments": 0},
        {"experiments": ("a", "a")},
        {"impressions_per_user": float("nan")},
        {"effect": float("nan")},
        {"days": 0},
        {"days": 2.5},
        {"pre_days": -1},
    ):
        settings = {"n_users": 10, **bad}
        with pytest.raises(OptionError):
            LogGenerator(**settings)
    with pytest.raises(OptionError, match="unknown click model"):
        LogGenerator(10, click_model="clairvoyant")
    with pytest.raises(OptionError, match="unknown variant"):
        LogGenerator(10).expected("nope")


def test_logs_of_a_real_ranker_pair() -> None:
    from serpeval.cli.demo.collection import make_collection
    from serpeval.online.simulation.world import make_world

    c = make_collection(n_queries=20)
    a, b = list(c.runs)
    world = make_world(c.qrels, c.runs[a], c.runs[b], truth=c.true_grades)
    g = LogGenerator(600, pair=world, effect=0.0)
    assert (g.n_queries, g.k, g.levels) == (len(world.query_ids), world.k, world.levels)
    t = g.generate(rng=1).impressions
    assert t.column("query_id").to_numpy().max() < g.n_queries
    flat = pc.list_flatten(t.column("clicks").combine_chunks()).to_numpy()
    assert flat.max() <= g.k
    # the control arm shows ranker A's grades, the treatment ranker B's
    exact = {v: g.expected(v) for v in g.variants}
    shown = g.world()
    assert (
        shown.shown_a
        == np.where(world.a >= 0, np.take_along_axis(world.grades, np.maximum(world.a, 0), 1), -1)
    ).all()
    assert exact["control"] != exact["treatment"]
