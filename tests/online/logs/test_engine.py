"""The engine layer: per-unit sums equal NumPy's; every input kind and layout, the same numbers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.online.experiments import analyze_ab
from serpeval.online.logs import read_logs
from serpeval.online.logs.features import prepare
from serpeval.online.logs.moments import unit_table
from serpeval.online.simulation import split_clicks

METRICS = [
    "ctr",
    "abandonment",
    "clicks_at_1",
    "mrr",
    "time_to_first_click",
    "long_click_rate",
    "user_ctr",
    "impressions_per_user",
]


def same_results(a: list[dict], b: list[dict], rel: float = 1e-12) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key, value in x.items():
            if isinstance(value, float):
                assert y[key] == pytest.approx(value, rel=rel, abs=1e-15), (x["metric"], key)
            else:
                assert y[key] == value, (x["metric"], key)


@pytest.fixture(scope="module")
def reference(ab_logs) -> list[dict]:
    return analyze_ab(ab_logs.impressions, metrics=METRICS).to_dicts()


def test_unit_sums_equal_numpy(ab_logs, per_unit) -> None:
    prepared = prepare(read_logs(ab_logs.impressions), None)
    columns = {"impressions", "clicks", "abandoned", "click_at_1", "rr"}
    engine = unit_table(prepared.features, columns).to_pyarrow().to_pandas()
    engine = engine.set_index("unit").sort_index()
    expected = per_unit(ab_logs.impressions).set_index("user").sort_index()
    assert list(engine.index) == list(expected.index)
    for column in ("impressions", "clicks", "abandoned", "click_at_1"):
        assert (
            engine[column].to_numpy().tolist() == expected[column].astype(int).to_numpy().tolist()
        )
    np.testing.assert_allclose(engine["rr"].to_numpy(), expected["rr"].to_numpy(), rtol=1e-13)
    assert (engine["variant"].to_numpy() == expected["variant"].to_numpy()).all()
    assert not engine["mixed"].any()


def test_events_layout_equals_nested(ab_logs, reference) -> None:
    impressions, clicks = split_clicks(ab_logs.impressions)
    same_results(
        reference, analyze_ab(impressions, clicks=clicks, metrics=METRICS).to_dicts(), rel=1e-9
    )


def test_dataframes_and_ibis_tables(ab_logs, reference) -> None:
    import polars as pl

    from serpeval.online.logs.sources import duckdb_connection

    same_results(reference, analyze_ab(ab_logs.impressions.to_pandas(), metrics=METRICS).to_dicts())
    same_results(
        reference, analyze_ab(pl.from_arrow(ab_logs.impressions), metrics=METRICS).to_dicts()
    )
    con = duckdb_connection()
    table = con.create_table("mine", ab_logs.impressions)
    same_results(reference, analyze_ab(table, metrics=METRICS).to_dicts())


def test_parquet_file_folder_and_glob(ab_logs, reference, tmp_path) -> None:
    pq.write_table(ab_logs.impressions, tmp_path / "impressions.parquet")
    pq.write_table(ab_logs.pre, tmp_path / "pre.parquet")
    same_results(
        reference, analyze_ab(tmp_path / "impressions.parquet", metrics=METRICS).to_dicts()
    )
    parts = tmp_path / "parts"
    parts.mkdir()
    half = ab_logs.impressions.num_rows // 2
    pq.write_table(ab_logs.impressions.slice(0, half), parts / "a.parquet")
    pq.write_table(ab_logs.impressions.slice(half), parts / "b.parquet")
    same_results(reference, analyze_ab(parts, metrics=METRICS).to_dicts(), rel=1e-9)
    same_results(
        reference, analyze_ab(str(parts / "*.parquet"), metrics=METRICS).to_dicts(), rel=1e-9
    )
    # a log folder brings its pre-period: CUPED switches on by itself
    folder = analyze_ab(tmp_path, metrics=["ctr"])
    assert folder.cuped
    assert folder.to_dicts()[0]["test"] == "CUPED delta-method z"
    explicit = analyze_ab(ab_logs.impressions, pre=ab_logs.pre, metrics=["ctr"])
    same_results(explicit.to_dicts(), folder.to_dicts(), rel=1e-9)


def _csv_ready(table: pa.Table) -> pa.Table:
    """Lists as ``1;3`` text, as a CSV export writes them."""
    frame = table.to_pandas()
    for column in ("clicks", "click_seconds", "dwell_seconds"):
        frame[column] = frame[column].map(lambda values: ";".join(str(v) for v in values.tolist()))
    frame["variant"] = frame["variant"].astype(str)
    frame["experiment"] = frame["experiment"].astype(str)
    return pa.Table.from_pandas(frame, preserve_index=False)


def test_csv_with_lists_as_text(ab_logs, reference, tmp_path) -> None:
    import pyarrow.csv as pcsv

    path = tmp_path / "impressions.csv"
    pcsv.write_csv(_csv_ready(ab_logs.impressions), path)
    same_results(reference, analyze_ab(path, metrics=METRICS).to_dicts(), rel=1e-9)
    # the events layout as two CSV files
    impressions, clicks = split_clicks(ab_logs.impressions)
    events = tmp_path / "events"
    events.mkdir()
    frame = impressions.to_pandas()
    frame["variant"] = frame["variant"].astype(str)
    frame["experiment"] = frame["experiment"].astype(str)
    pcsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), events / "impressions.csv")
    pcsv.write_csv(clicks, events / "clicks.csv")
    same_results(reference, analyze_ab(events, metrics=METRICS).to_dicts(), rel=1e-9)


def test_duckdb_database(ab_logs, reference, tmp_path) -> None:
    import duckdb

    impressions, clicks = split_clicks(ab_logs.impressions)
    path = tmp_path / "logs.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("imp", impressions)
        con.register("clk", clicks)
        con.execute("CREATE TABLE impressions AS SELECT * FROM imp")
        con.execute("CREATE TABLE clicks AS SELECT * FROM clk")
    same_results(reference, analyze_ab(path, metrics=METRICS).to_dicts(), rel=1e-9)


def test_results_render_from_to_dicts(ab_logs) -> None:
    import json

    from serpeval.report.table import render

    res = analyze_ab(ab_logs.impressions, metrics=["ctr", "abandonment"])
    rows = res.to_dicts()
    assert [r["metric"] for r in rows] == ["ctr", "abandonment"]
    assert rows[0]["verdict"] == "better"  # the injected effect (+0.2 logit) is real
    assert rows[1]["effect"] < 0  # fewer abandoned pages (lower is better for abandonment)
    text = render(rows, "markdown")
    assert "| ctr |" in text
    payload = json.loads(json.dumps(res.to_json_dict(), default=str))
    assert payload["srm"]["mismatch"] is False
    assert payload["exclusions"]["kept_rows"] == ab_logs.impressions.num_rows
    assert sum(v["impressions"] for v in res.variants.values()) == ab_logs.impressions.num_rows
    assert repr(res).startswith("ABResults('ranker-v2'")


def test_collect_sorted_is_the_engines_order_by() -> None:
    """Grouped results sorted after collection (sources.collect_sorted) come back in the order
    DuckDB's ORDER BY gives: NULLs last, strings by their UTF-8 bytes (upper case before lower,
    'é' after 'z', '日本' last), then the next key; with pyarrow 18, the lowest allowed, too."""
    from serpeval.online.logs.sources import collect, collect_sorted, duckdb_connection

    con = duckdb_connection()
    rows = pa.table({"segment": ["fr", None, "de", "é", "Z", "de", "日本", None, "a"],
                     "mixed": [False, True, True, False, False, False, True, False, False],
                     "n": [1, 2, 3, 4, 5, 6, 7, 8, 9]})
    expr = con.create_table("grouped", rows)
    expected = collect(expr.order_by(["segment", "mixed"]))
    got = collect_sorted(expr, ["segment", "mixed"])
    assert got.equals(expected)
    assert got.column("segment").to_pylist() == ["Z", "a", "de", "de", "fr", "é", "日本", None, None]
    assert got.column("n").to_pylist() == [5, 9, 6, 3, 1, 4, 7, 8, 2]
