"""The same analyses on local Spark give the same numbers as on DuckDB (real Spark, local mode).

Spark's cost here is per query, not per row, so the logs are small. That serpeval.online's
own session (a fresh process, a new JVM) removes its warehouse folder at exit is checked in
tests/spark/test_early_checks.py, by the fresh process the command line's checks start.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from tests.online.conftest import Jobs

from serpeval.online.experiments import analyze_ab, analyze_interleaving_logs, monitor_ab
from serpeval.online.logs import read_logs
from serpeval.online.simulation import split_clicks
from serpeval.online.simulation.generate import LogGenerator

# one of each kind: ratio of counts, ratio needing click times, per-unit mean (fewer columns,
# less of Spark's per-query code generation)
METRICS = ["ctr", "time_to_first_click", "clicks_per_user"]
REL = 1e-9  # variances come from each engine's own var_samp/covar_samp


def same(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key, value in x.items():
            if isinstance(value, float):
                assert y[key] == pytest.approx(value, rel=REL, abs=1e-15), key
            else:
                assert y[key] == value, key


@pytest.fixture(scope="module")
def small_logs():
    return LogGenerator(800, effect=0.2, pre_days=14).generate(rng=8)


@pytest.fixture(scope="module")
def log_folder(small_logs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ablog")
    pq.write_table(small_logs.impressions, folder / "impressions.parquet")
    pq.write_table(small_logs.pre, folder / "pre.parquet")
    return folder


def test_ab_with_cuped_is_the_same_on_spark(spark, log_folder) -> None:
    duck = analyze_ab(log_folder, metrics=METRICS)
    with Jobs(spark) as jobs:  # (read: no job for the Parquet schemas)
        on_spark = analyze_ab(log_folder, metrics=METRICS, backend="spark")
    assert jobs.ran <= 11
    assert on_spark.backend == "spark"
    assert on_spark.cuped
    same(duck.to_dicts(), on_spark.to_dicts())
    assert duck.exclusions == on_spark.exclusions
    assert duck.variants == on_spark.variants
    assert duck.srm.to_dict() == on_spark.srm.to_dict()


def test_events_layout_from_spark_dataframes(spark, small_logs) -> None:
    """Also a repeated impression id and a click on no impression: Spark counts the distinct
    ids in its exclusion pass and the orphans with the click counts (one query each, the
    orphans through a left join); both must find what DuckDB finds."""
    import pyarrow as pa

    from serpeval.core.errors import InputError

    impressions, clicks = split_clicks(small_logs.impressions)
    impressions = pa.concat_tables([impressions, impressions.slice(0, 1)])  # one id twice
    orphan = pa.table({"impression_id": [-1], "position": [1], "click_seconds": [1.0],
                       "dwell_seconds": [5.0]}, schema=clicks.schema)
    clicks = pa.concat_tables([clicks, orphan])
    frames = spark.createDataFrame(impressions), spark.createDataFrame(clicks)
    logs = read_logs(frames[0], clicks=frames[1])
    assert logs.backend == "spark"
    duck = analyze_ab(impressions, clicks=clicks, metrics=METRICS, duplicates="exclude")
    with Jobs(spark) as jobs:
        on_spark = analyze_ab(logs, metrics=METRICS, duplicates="exclude")
    assert jobs.ran <= 22  # (the orphans counted with the clicks)
    same(duck.to_dicts(), on_spark.to_dicts())
    assert duck.exclusions == on_spark.exclusions
    assert (on_spark.exclusions.duplicate_rows, on_spark.exclusions.orphan_clicks) == (2, 1)
    with pytest.raises(InputError, match="'nope' is not in the log"):
        analyze_ab(logs, "nope")
    # experiment=None: on Spark the names come with the checks' counts (features.prepare)
    from pyspark.sql import functions as F

    two = frames[0].withColumn("experiment", F.when(F.col("impression_id") % 2 == 0, "x")
                               .otherwise(F.col("experiment")))
    with pytest.raises(InputError, match="holds 2 experiments"):
        analyze_ab(read_logs(two, clicks=frames[1]), metrics=METRICS)


def test_monitor_is_the_same_on_spark(spark, log_folder) -> None:
    duck = monitor_ab(log_folder / "impressions.parquet", looks=3).to_dicts()
    with Jobs(spark) as jobs:  # (the time span comes with prepare's counts)
        on_spark = monitor_ab(log_folder / "impressions.parquet", looks=3, backend="spark").to_dicts()
    assert jobs.ran <= 12
    same(duck, on_spark)


def test_interleaving_is_the_same_on_spark(spark) -> None:
    logs = LogGenerator(400, interleaving=True, noise_b=0.8).generate(rng=9)
    duck = analyze_interleaving_logs(logs.impressions, n_resamples=500, rng=1)
    with Jobs(spark) as jobs:  # (labels, width and time span come with prepare's counts; the
        # balance checks' sums with the unit patterns)
        on_spark = analyze_interleaving_logs(logs.impressions, backend="spark", n_resamples=500, rng=1)
    assert jobs.ran <= 10
    # the per-unit patterns come back in the same order, so even the bootstrap is identical
    assert duck.to_dicts() == on_spark.to_dicts()
    assert duck.check_rows() == on_spark.check_rows()
    assert duck.clicks == on_spark.clicks
    # the preference over time: integer sums in both engines, so identical rows
    assert len(duck.over_time_rows()) == 14
    assert duck.over_time_rows() == on_spark.over_time_rows()


def test_absent_team_labels_are_refused_on_spark(spark) -> None:
    """The label count runs in Spark too (unnest -> explode): the same error as on DuckDB."""
    from serpeval.core.errors import OptionError

    logs = LogGenerator(100, interleaving=True).generate(rng=2)
    with pytest.raises(OptionError) as on_duck:
        analyze_interleaving_logs(logs.impressions, teams=("X", "Y"), n_resamples=50)
    with pytest.raises(OptionError) as on_spark:
        analyze_interleaving_logs(logs.impressions, teams=("X", "Y"), backend="spark",
                                  n_resamples=50)
    assert str(on_spark.value) == str(on_duck.value)
    assert "the labels there: 'A' (" in str(on_spark.value)


def test_triggered_analyses_are_the_same_on_spark(spark, tmp_path) -> None:
    """The trigger filter runs in the engine: DuckDB and Spark give the same numbers, and a
    clicks table (events layout) is restricted to the triggered impressions on both."""
    from serpeval.online.experiments import analyze_ab_triggered, analyze_interleaving_triggered

    logs = LogGenerator(600, noise_b=0.5, changed_queries=0.3).generate(rng=10)
    impressions, clicks = split_clicks(logs.impressions)
    pq.write_table(impressions, tmp_path / "impressions.parquet")
    pq.write_table(clicks, tmp_path / "clicks.parquet")
    metrics = ["ctr", "clicks_per_user"]
    duck = analyze_ab_triggered(tmp_path, metrics=metrics)
    with Jobs(spark) as jobs:  # (no orphan count for the clicks of the triggered impressions;
        # the units in both variants kept with the triggered pages by a window, one scan; the
        # clicks joined to the kept pages unrestricted, the join restricting them)
        on_spark = analyze_ab_triggered(tmp_path, metrics=metrics, backend="spark")
    assert jobs.ran <= 31
    same(duck.to_dicts(), on_spark.to_dicts())
    assert (duck.trigger_rate, duck.rates) == (on_spark.trigger_rate, on_spark.rates)
    assert duck.triggered.exclusions == on_spark.triggered.exclusions
    assert duck.triggered.exclusions.orphan_clicks == 0  # clicks on untriggered pages left with them
    same(duck.to_dicts(), analyze_ab_triggered(logs.impressions, metrics=metrics).to_dicts())
    il = LogGenerator(300, interleaving=True, noise_b=0.5, changed_queries=0.3).generate(rng=11)
    duck_il = analyze_interleaving_triggered(il.impressions, n_resamples=300, rng=1, period=None)
    with Jobs(spark) as jobs:
        spark_il = analyze_interleaving_triggered(il.impressions, backend="spark", n_resamples=300, rng=1,
                                                  period=None)
    assert jobs.ran <= 12
    assert duck_il.to_dicts() == spark_il.to_dicts()


def test_units_in_both_variants_and_text_clicks_on_spark(spark, tmp_path) -> None:
    """Issue 27: a unit seen in both variants is left out of the triggered analysis on Spark
    as on DuckDB (counted), and a text click column with items that are not positions is
    refused on both."""
    import csv

    from tests.online.experiments.test_hostile_inputs import _mixed_log

    from serpeval.core.errors import InputError
    from serpeval.online.experiments import analyze_ab_triggered

    duck = analyze_ab_triggered(_mixed_log(), metrics=["ctr"])
    with Jobs(spark) as jobs:
        on_spark = analyze_ab_triggered(_mixed_log(), metrics=["ctr"], backend="spark")
    assert jobs.ran <= 14  # (the mixed unit's untriggered pages kept by a window: no semi-join)
    same(duck.to_dicts(), on_spark.to_dicts())
    assert on_spark.triggered.exclusions.mixed_units == 1
    assert on_spark.trigger_rate == pytest.approx(38 / 57, rel=1e-12)
    path = tmp_path / "log.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["impression_id", "experiment", "variant", "user_id", "n_shown", "clicks"])
        writer.writerows([i, "e", "control" if i % 2 else "treatment", f"u{i}", 10, "1;top" if i % 3 else "2"]
                         for i in range(12))
    for backend in ("duckdb", "spark"):
        with Jobs(spark) as jobs, \
                pytest.raises(InputError, match=r"holds 8 item\(s\) in 8 row\(s\) that are not integer positions"):
            analyze_ab(path, metrics=["ctr"], backend=backend)
    assert jobs.ran <= 6  # (the CSV's schema, prepare's counts with the bad items', one example)
