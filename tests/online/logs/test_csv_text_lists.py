"""CSV logs write list columns as text (``1;3``, ``[1, 3]``). A column whose values are all one
position (``1``) or empty is still a list column: it is read as text (DuckDB's sniffer would
type it as an integer and the log would be refused), and gives the same analysis as the same
log in Parquet. A refused column's message suggests a cast to the type it needs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from serpeval.core.errors import InputError
from serpeval.online.experiments import analyze_ab
from serpeval.online.experiments.triggered import analyze_ab_triggered
from serpeval.online.logs.sources import read_logs

HEADER = "impression_id,experiment,variant,user_id,n_shown,clicks,click_seconds,dwell_seconds"
#: per user: variant; per page: clicks as written in the CSV ("" = none), n_shown 10
PAGES = [
    (1, "control", 1, "1", "2.5", "40"), (2, "control", 1, "", "", ""),
    (3, "control", 2, "1", "3", "10"), (4, "control", 3, "", "", ""),
    (5, "treatment", 4, "1", "1.5", "35"), (6, "treatment", 4, "1", "2", "5"),
    (7, "treatment", 5, "", "", ""), (8, "treatment", 6, "1", "4", "31"),
]


def _csv(path: Path, rows=PAGES) -> Path:
    lines = [HEADER, *(f"{i},e,{v},{u},10,{c},{s},{d}" for i, v, u, c, s, d in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _parquet(path: Path, rows=PAGES) -> Path:
    def lst(text: str, kind):
        return [kind(text)] if text else []

    pq.write_table(pa.table({
        "impression_id": [r[0] for r in rows], "experiment": ["e"] * len(rows),
        "variant": [r[1] for r in rows], "user_id": [r[2] for r in rows], "n_shown": [10] * len(rows),
        "clicks": [lst(r[3], int) for r in rows], "click_seconds": [lst(r[4], float) for r in rows],
        "dwell_seconds": [lst(r[5], float) for r in rows],
    }), path)
    return path


METRICS = ["ctr", "abandonment", "mrr", "time_to_first_click", "long_click_rate"]


def assert_same_rows(got: list[dict], expected: list[dict]) -> None:
    """The same rows, floats to 1e-12: DuckDB's parallel float sums are not bit-reproducible
    from one query to the next (last digits of the relative interval)."""
    assert got == [{k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}
                   for row in expected]


def test_a_csv_of_single_positions_is_read_as_lists(tmp_path) -> None:
    logs = read_logs(_csv(tmp_path / "log.csv"))
    assert all(logs.impressions.schema()[c].is_string()
               for c in ("clicks", "click_seconds", "dwell_seconds"))
    got = analyze_ab(tmp_path / "log.csv", metrics=METRICS)
    expected = analyze_ab(_parquet(tmp_path / "log.parquet"), metrics=METRICS)
    assert_same_rows(got.to_dicts(), expected.to_dicts())
    assert got.exclusions.to_dict() == expected.exclusions.to_dict()
    assert got.exclusions.clicks == 5


def test_a_log_folder_csv_with_a_pre_period_and_a_tsv(tmp_path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    _csv(folder / "impressions.csv")
    _csv(folder / "pre.csv")
    opened = read_logs(folder)
    assert opened.pre.schema()["clicks"].is_string()
    tsv = tmp_path / "log.tsv"
    tsv.write_text((tmp_path / "logs" / "impressions.csv").read_text().replace(",", "\t"))
    assert read_logs(tsv).impressions.schema()["clicks"].is_string()
    assert_same_rows(analyze_ab(tsv, metrics=["ctr"]).to_dicts(),
                     analyze_ab(folder / "impressions.csv", metrics=["ctr"]).to_dicts())


def test_renamed_list_columns_are_read_as_text(tmp_path) -> None:
    from serpeval.online.logs.schema import LogSchema

    path = tmp_path / "log.csv"
    _csv(path)
    path.write_text(path.read_text().replace(",clicks,", ",pos,", 1))
    opened = read_logs(path, schema=LogSchema(clicks="pos"))
    assert opened.impressions.schema()["pos"].is_string()


def test_an_events_clicks_table_keeps_its_numeric_columns(tmp_path) -> None:
    """The clicks table of the events layout holds one click per row: scalars, typed as such."""
    imps = tmp_path / "impressions.csv"
    imps.write_text("impression_id,experiment,variant,user_id,n_shown\n"
                    + "".join(f"{i},e,{'control' if i < 5 else 'treatment'},{i},10\n" for i in range(1, 9)))
    clicks = tmp_path / "clicks.csv"
    clicks.write_text("impression_id,position,click_seconds,dwell_seconds\n1,1,2.5,40\n5,1,1.5,35\n")
    opened = read_logs(imps, clicks=clicks)
    assert opened.clicks.schema()["click_seconds"].is_floating()
    res = analyze_ab(imps, clicks=clicks, metrics=["ctr", "time_to_first_click"])
    assert res.exclusions.clicks == 2


def test_a_refused_column_gets_a_cast_to_its_own_type(tmp_path) -> None:
    path = tmp_path / "log.parquet"
    _parquet(path)
    table = pq.read_table(path).append_column("triggered", pa.array([1, 0] * 4))
    pq.write_table(table, path)
    with pytest.raises(InputError, match=r"column 'triggered' \(triggered\) has type int64; "
                       r"expected boolean\. .*CAST\(triggered AS BOOLEAN\)") as info:
        analyze_ab_triggered(path, metrics=["ctr"])
    assert "BIGINT" not in str(info.value)
    table = pq.read_table(path).drop_columns(["triggered"])
    table = table.set_column(table.schema.get_field_index("clicks"), "clicks",
                             pa.array([1.0] * 8))
    pq.write_table(table, path)
    with pytest.raises(InputError, match=r"CAST\(clicks AS BIGINT\[\]\)"):
        analyze_ab(path, metrics=["ctr"])


def test_spark_reads_the_list_columns_as_text_too(spark, tmp_path) -> None:
    """Spark's CSV inference types ``1`` as an integer as well: the same re-read as text."""
    path = _csv(tmp_path / "log.csv")
    opened = read_logs(path, backend="spark")
    assert all(opened.impressions.schema()[c].is_string()
               for c in ("clicks", "click_seconds", "dwell_seconds"))
    on_spark = analyze_ab(path, metrics=METRICS, backend="spark").to_dicts()
    duck = analyze_ab(path, metrics=METRICS).to_dicts()
    assert on_spark == [{k: pytest.approx(v, rel=1e-9, nan_ok=True) if isinstance(v, float) else v
                         for k, v in row.items()} for row in duck]
