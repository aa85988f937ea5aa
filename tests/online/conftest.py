"""Shared A/B fixtures: small generated logs (session-scoped, deterministic) and helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("ibis", reason="the A/B analysis needs the ab extra (pip install '.[test]')")
pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (pip install '.[test]')")


@pytest.fixture(scope="session")
def ab_logs() -> Any:
    """4,000 users, a known effect (logit shift 0.2), a 14-day pre-period."""
    from serpeval.online.simulation.generate import LogGenerator

    return LogGenerator(4_000, effect=0.2, pre_days=14).generate(rng=5)


@pytest.fixture(scope="session")
def interleaving_logs() -> Any:
    """1,500 users seeing team-draft interleavings of ranker A and a better ranker B."""
    from serpeval.online.simulation.generate import LogGenerator

    return LogGenerator(1_500, interleaving=True, noise_b=0.8).generate(rng=6)


def outcomes_from_lists(table: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-impression outcome (+1 A, -1 B, 0 tie) and user, straight from the Python lists."""
    teams = table.column("teams").to_pylist()
    clicks = table.column("clicks").to_pylist()
    a = np.array([sum(t[p - 1] == "A" for p in c) for t, c in zip(teams, clicks, strict=True)])
    b = np.array([sum(t[p - 1] == "B" for p in c) for t, c in zip(teams, clicks, strict=True)])
    return np.sign(a - b), table.column("user_id").to_numpy()


@pytest.fixture(scope="session")
def il_outcomes() -> Any:
    """:func:`outcomes_from_lists`, for tests (test modules cannot import each other)."""
    return outcomes_from_lists


def per_unit_numpy(impressions: Any, pre: Any = None) -> Any:
    """Per-user sums computed with NumPy straight from the Arrow lists (independent of ibis).

    Columns: variant, clicks, impressions, abandoned, click_at_1, rr (and pre_* sums).
    All generated clicks are on shown positions, in click order.
    """
    import pandas as pd
    import pyarrow.compute as pc

    def sums(table: Any) -> pd.DataFrame:
        clicks = table.column("clicks").combine_chunks()
        n_clicks = pc.list_value_length(clicks).to_numpy(zero_copy_only=False)
        flat = pc.list_flatten(clicks).to_numpy()
        first = np.zeros(len(n_clicks))
        starts = np.cumsum(n_clicks) - n_clicks
        has = n_clicks > 0
        first[has] = flat[starts[has]]
        at1 = np.zeros(len(n_clicks))
        owner = pc.list_parent_indices(clicks).to_numpy()
        np.add.at(at1, owner[flat == 1], 1)
        frame = pd.DataFrame(
            {
                "user": table.column("user_id").to_numpy(),
                "impressions": 1,
                "clicks": n_clicks,
                "abandoned": (n_clicks == 0).astype(int),
                "click_at_1": (at1 > 0).astype(int),
                "rr": np.where(has, 1.0 / np.where(has, first, 1), 0.0),
            }
        )
        if "variant" in table.column_names:
            frame["variant"] = table.column("variant").to_pandas().astype(str).to_numpy()
        return frame

    frame = sums(impressions)
    units = frame.groupby("user").agg(
        variant=("variant", "first"),
        impressions=("impressions", "sum"),
        clicks=("clicks", "sum"),
        abandoned=("abandoned", "sum"),
        click_at_1=("click_at_1", "sum"),
        rr=("rr", "sum"),
    )
    if pre is not None:
        before = (
            sums(pre)
            .groupby("user")[["impressions", "clicks", "abandoned", "click_at_1", "rr"]]
            .sum()
        )
        units = units.join(before.add_prefix("pre_"), how="left").fillna(0.0)
    return units.reset_index()


@pytest.fixture(scope="session")
def per_unit() -> Any:
    """:func:`per_unit_numpy`, for tests (test modules cannot import each other)."""
    return per_unit_numpy


class Jobs:
    """Spark jobs started inside a ``with`` block (job ids are consecutive). Each costs a fixed
    ~0.1-0.3 s in local mode whatever the log's size, so an analysis's count is pinned (at
    most, as measured): a query added back shows as a failure here."""

    def __init__(self, spark) -> None:
        self.tracker = spark.sparkContext.statusTracker()

    def _next(self) -> int:
        return max(self.tracker.getJobIdsForGroup(None), default=-1) + 1

    def __enter__(self) -> Jobs:
        self.start = self._next()
        return self

    def __exit__(self, *exc) -> None:
        self.ran = self._next() - self.start


def jobs(spark) -> int:
    """Spark jobs started so far."""
    return Jobs(spark)._next()
