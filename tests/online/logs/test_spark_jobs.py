"""How many Spark jobs each analysis runs, and the Parquet schema read without a Spark job
(real Spark, local mode).

On Spark each query costs a fixed ~0.3 s of planning and job scheduling in local mode,
whatever its size, so the number of jobs is what an analysis of a small log costs. The
counts are pinned so that a query added back (a count of its own, a second schema read)
shows here; what the analyses compute is compared with DuckDB in
tests/online/experiments/test_spark.py and test_segments.py.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.online.conftest import jobs

from serpeval.online.logs.sources import parquet_spark_schema, read_logs

#: columns whose Spark type the footer gives (every kind parquet_spark_schema maps)
MAPPED = {
    "i8": pa.array([1, None], pa.int8()), "i16": pa.array([1, 2], pa.int16()),
    "i32": pa.array([1, 2], pa.int32()), "i64": pa.array([1, 2], pa.int64()),
    "f32": pa.array([1, 2], pa.float32()), "f64": pa.array([1.5, None], pa.float64()),
    "flag": pa.array([True, None]), "s": pa.array(["a", None]), "ls": pa.array(["a", "b"], pa.large_string()),
    "day": pa.array([dt.date(2020, 1, 1), None], pa.date32()),
    "ts_utc": pa.array([1, 2], pa.timestamp("us", tz="UTC")),
    "ts_paris_ms": pa.array([1, 2], pa.timestamp("ms", tz="Europe/Paris")),
    "ts_naive": pa.array([1, None], pa.timestamp("us")),
    "positions": pa.array([[1, None], None], pa.list_(pa.int32())),
    "big": pa.array([[1], []], pa.large_list(pa.int64())),
    "teams": pa.array([["A", "B"], None], pa.list_(pa.string())),
    "secs": pa.array([[1.0], []], pa.list_(pa.float64())),
    "dict": pa.array(["x", "y"]).dictionary_encode(),
    "required": pa.array([1, 2], pa.int64()),
    "required_items": pa.array([[1], [2]], pa.list_(pa.field("element", pa.int64(), nullable=False))),
}

#: columns Spark's inference alone types (the schema is then left to it)
LEFT_TO_SPARK = {
    "unsigned": pa.array([1, 2], pa.uint8()),
    "binary": pa.array([b"x", b"y"]),
    "nanoseconds": pa.array([1, 2], pa.timestamp("ns")),
    "timestamps_in_a_list": pa.array([[1], [2]], pa.list_(pa.timestamp("us"))),
    "struct": pa.array([{"a": 1}, {"a": 2}]),
    "decimal": pa.array([1, 2], pa.decimal128(5, 2)),
}


def _table(columns: dict) -> pa.Table:
    table = pa.table(columns)
    if "required" in columns:  # non-nullable fields: Spark still reads them as nullable
        fields = [f.with_nullable(False) if f.name.startswith("required") else f for f in table.schema]
        table = table.cast(pa.schema(fields))
    return table


@pytest.mark.parametrize("compliant", [True, False])
def test_the_footer_schema_is_sparks_own(spark, tmp_path, compliant) -> None:
    """Every mapped type, in a file of each list layout pyarrow writes: the schema from the
    footer equals the one Spark infers (types, nullability, metadata), and reading with it
    runs no Spark job where inferring runs one."""
    path = tmp_path / "mapped.parquet"
    pq.write_table(_table(MAPPED), path, use_compliant_nested_type=compliant)
    before = jobs(spark)
    inferred = spark.read.parquet(str(path)).schema
    assert jobs(spark) == before + 1  # what the footer read saves
    ours = parquet_spark_schema(spark, [str(path)])
    assert ours is not None
    assert ours == inferred
    assert [f.metadata for f in ours.fields] == [f.metadata for f in inferred.fields]
    before = jobs(spark)
    frame = spark.read.schema(ours).parquet(str(path))
    assert jobs(spark) == before
    assert frame.collect() == spark.read.parquet(str(path)).collect()


def test_naive_timestamps_follow_the_sessions_setting(spark, tmp_path) -> None:
    path = tmp_path / "ts.parquet"
    pq.write_table(pa.table({"ts": pa.array([1], pa.timestamp("us"))}), path)
    key = "spark.sql.parquet.inferTimestampNTZ.enabled"
    old = spark.conf.get(key)
    try:
        for value in ("false", "true"):
            spark.conf.set(key, value)
            assert parquet_spark_schema(spark, [str(path)]) == spark.read.parquet(str(path)).schema
    finally:
        spark.conf.set(key, old)


@pytest.mark.parametrize("column", sorted(LEFT_TO_SPARK))
def test_other_types_are_left_to_sparks_inference(spark, tmp_path, column) -> None:
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": [1, 2], column: LEFT_TO_SPARK[column]}), path)
    assert parquet_spark_schema(spark, [str(path)]) is None


def test_other_inputs_are_left_to_spark(spark, tmp_path) -> None:
    table = pa.table({"id": [1, 2]})
    pq.write_table(table, tmp_path / "a.parquet")
    pq.write_table(table, tmp_path / "b.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    pq.write_table(pa.table({"ID": [1], "id": [2]}), tmp_path / "cases.parquet")
    pq.write_table(pa.table({"a b": [1]}), tmp_path / "space.parquet")
    for paths in ([str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")], [str(tmp_path)],
                  [str(tmp_path / "broken.parquet")], [str(tmp_path / "cases.parquet")],
                  [str(tmp_path / "space.parquet")], ["s3a://bucket/a.parquet"]):
        assert parquet_spark_schema(spark, paths) is None, paths
    assert parquet_spark_schema(spark, [str(tmp_path / "a.parquet")]) is not None


def test_a_parquet_log_opens_without_a_spark_job(spark, tmp_path) -> None:
    from serpeval.online.simulation.generate import LogGenerator

    logs = LogGenerator(20).generate(rng=1)
    pq.write_table(logs.impressions, tmp_path / "impressions.parquet")
    before = jobs(spark)
    opened = read_logs(tmp_path / "impressions.parquet", backend="spark")
    assert jobs(spark) == before
    assert opened.impressions.schema() == read_logs(
        spark.read.parquet(str(tmp_path / "impressions.parquet"))).impressions.schema()


def test_orphan_clicks_are_counted_where_they_can_be() -> None:
    """The triggered part's clicks are restricted to its impressions (no orphan there, and no
    query counts them); the whole log's analysis still counts the clicks on no impression
    (with the clicks of the kept pages, in one query)."""
    from serpeval.online.experiments import analyze_ab_triggered
    from serpeval.online.experiments.triggered import triggered_logs
    from serpeval.online.logs.schema import LogSchema
    from serpeval.online.simulation import split_clicks
    from serpeval.online.simulation.generate import LogGenerator

    logs = LogGenerator(60, noise_b=0.5, changed_queries=0.5).generate(rng=3)
    impressions, clicks = split_clicks(logs.impressions)
    orphan = pa.table({"impression_id": [-1, None], "position": [1, 2], "click_seconds": [1.0, 2.0],
                       "dwell_seconds": [5.0, 6.0]}, schema=clicks.schema)
    result = analyze_ab_triggered(impressions, clicks=pa.concat_tables([clicks, orphan]), metrics=["ctr"])
    assert result.untriggered.exclusions.orphan_clicks == 2  # (an id on no page, and none)
    assert result.triggered.exclusions.orphan_clicks == 0
    every, part = triggered_logs(impressions, clicks=clicks)
    assert (every.clicks_matched, part.clicks_matched) == (False, True)
    assert part.with_schema(LogSchema()).clicks_matched
    assert not part.with_schema(LogSchema(impression_id="page")).clicks_matched
    # the kept pages' join takes the clicks before the restriction (the join restricts them);
    # where no restriction is known to be implied, the clicks as they are
    assert part.joined_clicks() is every.clicks
    assert part.clicks is not every.clicks
    assert part.with_schema(LogSchema()).joined_clicks() is every.clicks
    assert part.with_schema(LogSchema(impression_id="page")).joined_clicks() is part.clicks
    assert every.joined_clicks() is every.clicks
