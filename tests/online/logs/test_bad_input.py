"""Bad logs: a clear error, or rows left out and counted — and then exactly those rows."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, OptionError, StatsError
from serpeval.online.experiments import analyze_ab

T0 = dt.datetime(2026, 1, 5)


def log(rows: list[tuple]) -> pa.Table:
    """Rows of (impression_id, variant, user_id, n_shown, clicks[, click_seconds])."""
    return pa.table(
        {
            "impression_id": [r[0] for r in rows],
            "experiment": ["exp"] * len(rows),
            "variant": [r[1] for r in rows],
            "user_id": [r[2] for r in rows],
            "timestamp": [T0 + dt.timedelta(hours=i) for i in range(len(rows))],
            "n_shown": pa.array([r[3] for r in rows], pa.int64()),
            "clicks": pa.array([r[4] for r in rows], pa.list_(pa.int64())),
            "click_seconds": pa.array(
                [r[5] if len(r) > 5 else [1.0] * len(r[4] or []) for r in rows],
                pa.list_(pa.float64()),
            ),
        }
    )


CLEAN = [
    (1, "control", 1, 10, [1]),
    (2, "control", 1, 10, []),
    (3, "control", 2, 10, [2, 5]),
    (4, "control", 3, 10, [3]),
    (5, "treatment", 4, 10, [1, 2]),
    (6, "treatment", 5, 10, []),
    (7, "treatment", 6, 10, [1]),
    (8, "treatment", 6, 10, [4]),
]
METRICS = ["ctr", "abandonment", "mrr", "time_to_first_click"]


def results(table: pa.Table, **options) -> list[dict]:
    return analyze_ab(table, metrics=METRICS, **options).to_dicts()


def editable() -> list[list]:
    """CLEAN as mutable rows with their click times (1.0 s each)."""
    return [[*r, [1.0] * len(r[4])] for r in CLEAN]


def approx_rows(rows: list[dict]) -> list[dict]:
    """Rows compared with a relative tolerance on floats (sums in another order)."""
    return [
        {
            k: pytest.approx(v, rel=1e-12, nan_ok=True) if isinstance(v, float) else v
            for k, v in r.items()
        }
        for r in rows
    ]


def test_missing_columns_name_what_and_how() -> None:
    with pytest.raises(
        InputError, match=r"missing column\(s\) unit \(column 'user_id'\).*--column user_id="
    ):
        analyze_ab(log(CLEAN).drop_columns(["user_id"]))
    with pytest.raises(InputError, match="needs n_shown"):
        analyze_ab(log(CLEAN).drop_columns(["n_shown"]))
    with pytest.raises(InputError, match="needs column 'click_seconds'"):
        analyze_ab(log(CLEAN).drop_columns(["click_seconds"]), metrics=["time_to_first_click"])


def test_mapped_column_names() -> None:
    from serpeval.online.logs import LogSchema

    renamed = log(CLEAN).rename_columns(
        ["iid", "exp", "arm", "uid", "ts", "shown_n", "pos", "secs"]
    )
    schema = LogSchema(
        impression_id="iid",
        experiment="exp",
        variant="arm",
        unit="uid",
        timestamp="ts",
        n_shown="shown_n",
        clicks="pos",
        click_seconds="secs",
    )
    assert results(renamed, schema=schema) == approx_rows(results(log(CLEAN)))
    assert LogSchema.from_pairs(["user_id=uid", "clicks=pos"]) == LogSchema(
        unit="uid", clicks="pos"
    )
    with pytest.raises(OptionError, match="ROLE=COLUMN"):
        LogSchema.from_pairs(["nonsense=x"])


def test_wrong_types() -> None:
    table = log(CLEAN)
    as_text = table.set_column(5, "n_shown", pa.array(["10"] * len(CLEAN)))
    with pytest.raises(
        InputError, match="'n_shown' \\(n_shown\\) has type string; expected integer"
    ):
        analyze_ab(as_text)
    as_float = table.set_column(3, "user_id", pa.array([1.5] * len(CLEAN)))
    with pytest.raises(InputError, match="'user_id' \\(unit\\) has type float64"):
        analyze_ab(as_float)


def test_experiment_not_in_the_log_and_several_experiments() -> None:
    with pytest.raises(InputError, match=r"'exq' is not in the log\. Did you mean 'exp'"):
        analyze_ab(log(CLEAN), "exq")
    two = pa.concat_tables(
        [log(CLEAN), log(CLEAN).set_column(1, "experiment", pa.array(["other"] * 8))]
    )
    with pytest.raises(InputError, match="holds 2 experiments"):
        analyze_ab(two)


def test_variant_without_units() -> None:
    with pytest.raises(InputError, match="variant 'treatment_b' has no units"):
        analyze_ab(log(CLEAN), variants=["control", "treatment", "treatment_b"])
    only_control = log([r for r in CLEAN if r[1] == "control"])
    with pytest.raises(InputError, match="units in only one variant"):
        analyze_ab(only_control)
    one_treated = log([*CLEAN[:4], (5, "treatment", 4, 10, [1])])
    with pytest.raises(StatsError, match="'treatment' has 1 unit"):
        analyze_ab(one_treated)


def test_duplicated_impression_ids() -> None:
    doubled = log([*CLEAN, (3, "control", 2, 10, [2, 5])])
    with pytest.raises(
        DuplicateError, match=r"1 impression id\(s\) appear more than once \(2 rows\), e.g. 3"
    ):
        analyze_ab(doubled)
    res = analyze_ab(doubled, duplicates="exclude", metrics=METRICS)
    assert res.exclusions.duplicate_rows == 2
    assert "2 row(s) with a duplicated impression id excluded" in res.notes
    assert res.to_dicts() == approx_rows(results(log([r for r in CLEAN if r[0] != 3])))


def test_plan_honours_duplicates(tmp_path, capsys) -> None:
    import pyarrow.parquet as pq

    from serpeval.cli.app import main
    from serpeval.online.experiments import plan_ab

    doubled = log([*CLEAN, (3, "control", 2, 10, [2, 5])])
    with pytest.raises(DuplicateError):
        plan_ab(doubled, metrics="ctr")
    planned = plan_ab(doubled, metrics="ctr", duplicates="exclude").to_dicts()[0]
    assert planned == plan_ab(log([r for r in CLEAN if r[0] != 3]), metrics="ctr").to_dicts()[0]
    pq.write_table(doubled, tmp_path / "doubled.parquet")
    argv = ["ab", str(tmp_path / "doubled.parquet"), "--plan", "-m", "ctr", "-f", "json"]
    assert main(argv) == 2
    assert "duplicates='exclude'" in capsys.readouterr().err
    assert main([*argv, "--duplicates", "exclude"]) == 0


def test_duplicated_string_ids_and_unchecked() -> None:
    # string ids take the GROUP BY path (integer ids on DuckDB a bitmap first)
    doubled = log([*CLEAN, (3, "control", 2, 10, [2, 5])])
    as_text = doubled.set_column(
        0, "impression_id", pa.array([f"i{r[0]}" for r in [*CLEAN, CLEAN[2]]])
    )
    with pytest.raises(DuplicateError, match=r"e\.g\. 'i3'"):
        analyze_ab(as_text)
    res = analyze_ab(as_text, duplicates="exclude", metrics=METRICS)
    assert res.exclusions.duplicate_rows == 2
    # unchecked trusts the ids: the repeated page counts twice
    assert analyze_ab(doubled, duplicates="unchecked", metrics=METRICS).exclusions.kept_rows == 9


def test_negative_and_missing_counts_are_excluded_and_counted() -> None:
    bad = log([*CLEAN, (9, "control", 1, -3, []), (10, "treatment", 4, None, [1])])
    res = analyze_ab(bad, metrics=METRICS)
    assert res.exclusions.negative_n_shown == 2
    assert res.exclusions.kept_rows == len(CLEAN)
    assert res.to_dicts() == approx_rows(results(log(CLEAN)))
    missing = log([*CLEAN, (11, "control", None, 10, [1]), (None, "treatment", 5, 10, [2])])
    res = analyze_ab(missing, metrics=METRICS)
    assert res.exclusions.missing_keys == 2
    assert res.to_dicts() == approx_rows(results(log(CLEAN)))


def test_clicks_on_positions_not_shown() -> None:
    # impression 3 logged clicks on 0 and 11 (not shown), impression 7 on -1: excluded, counted
    bad = editable()
    bad[2][4], bad[2][5] = [0, 2, 11, 5], [0.5, 1.0, 2.0, 3.0]
    bad[6][4], bad[6][5] = [-1, 1], [0.2, 1.0]
    res = analyze_ab(log([tuple(r) for r in bad]), metrics=METRICS)
    assert res.exclusions.invalid_clicks == 3
    assert res.exclusions.clicks == 8 + 3
    assert "3 click(s) on positions that were not shown excluded" in res.notes
    # the first *kept* click keeps its own time: 1.0 s for impression 3 and 7 (as in CLEAN)
    assert res.to_dicts() == approx_rows(results(log(CLEAN)))


def test_orphan_clicks_in_the_events_layout() -> None:
    from serpeval.online.simulation import split_clicks

    impressions, clicks = split_clicks(log(CLEAN))
    orphans = pa.table({"impression_id": [99, 98], "position": [1, 2], "click_seconds": [1.0, 2.0]})
    res = analyze_ab(impressions, clicks=pa.concat_tables([clicks, orphans]), metrics=METRICS)
    assert res.exclusions.orphan_clicks == 2
    assert "2 click(s) whose impression is not in the log excluded" in res.notes
    assert res.to_dicts() == approx_rows(results(log(CLEAN)))


def test_negative_click_times_count_as_missing() -> None:
    rows = editable()
    rows[0][5] = [-4.0]
    res = analyze_ab(log([tuple(r) for r in rows]), metrics=["time_to_first_click"])
    assert res.exclusions.negative_times == 1
    # control: times 1.0 (impression 3) and 1.0 (impression 4); the negative one is missing
    assert res.to_dicts()[0]["value_control"] == pytest.approx(1.0)


def test_units_in_two_variants_are_excluded() -> None:
    mixed = log([*CLEAN, (9, "treatment", 1, 10, [1])])  # user 1 was also in control
    res = analyze_ab(mixed, metrics=METRICS)
    assert (res.exclusions.mixed_units, res.exclusions.mixed_unit_rows) == (1, 3)
    # user 1 was the only control user who abandoned a page: relative effects are undefined
    assert res.to_dicts() == approx_rows(results(log([r for r in CLEAN if r[2] != 1])))


def test_monitor_counts_units_in_two_variants() -> None:
    from serpeval.online.experiments import monitor_ab

    mixed = log([*CLEAN, (9, "treatment", 1, 10, [1])])  # user 1 was also in control
    seq = monitor_ab(mixed, metric="ctr", looks=1)
    assert "1 unit(s) seen in more than one variant excluded (3 impressions)" in seq.notes
    assert [r["units_control"] for r in seq.to_dicts()] == [2]
    clean = monitor_ab(log(CLEAN), metric="ctr", looks=1)
    assert not any("more than one variant" in note for note in clean.notes)


def test_empty_log_and_unknown_names() -> None:
    with pytest.raises(EmptyInputError, match="no impressions"):
        analyze_ab(log(CLEAN).slice(0, 0), "exp")
    with pytest.raises(OptionError, match="Did you mean 'abandonment'"):
        analyze_ab(log(CLEAN), metrics=["abandonmnet"])
    with pytest.raises(OptionError, match="unknown backend"):
        analyze_ab(log(CLEAN), backend="oracle")
    with pytest.raises(OptionError, match="duplicates must be"):
        analyze_ab(log(CLEAN), duplicates="keep")
    with pytest.raises(InputError, match="no such file"):
        analyze_ab("/no/such/log.parquet")
    from serpeval.online.logs.sources import is_uri

    # remote locations go to the engine unchecked (Spark: s3a/hdfs; DuckDB: httpfs)
    assert is_uri("s3a://bucket/logs/")
    assert is_uri("https://host/x.parquet")
    assert not is_uri("/tmp/logs")
    assert not is_uri("file:///tmp/logs")


def test_srm_warns_loudly() -> None:
    from serpeval.stats.srm import SampleRatioMismatchWarning

    users = [
        (i, "control" if i < 700 else "treatment", i, 10, [1] if i % 3 else []) for i in range(1000)
    ]
    with pytest.warns(SampleRatioMismatchWarning, match="SAMPLE RATIO MISMATCH"):
        res = analyze_ab(log(users), metrics=["ctr"])
    assert res.srm.mismatch
    assert res.notes[0].startswith("SAMPLE RATIO MISMATCH")
    # the same counts are fine when the design planned 70/30
    fine = analyze_ab(log(users), metrics=["ctr"], split={"control": 0.7, "treatment": 0.3})
    assert not fine.srm.mismatch


class _Quiet(Exception):
    """An exception whose message is empty (str() == "")."""


@pytest.mark.parametrize(("raised", "expected"), [(MemoryError(), MemoryError), (_Quiet(), InputError)])
def test_a_read_failing_without_a_message_is_named(raised: BaseException, expected: type, tmp_path,
                                                   monkeypatch) -> None:
    """Under an address-space limit a read can fail with a MemoryError that carries no message:
    the reader's handler took its first line with splitlines()[0] and raised IndexError, which
    the command line reported as an internal error (exit 70, seen once in CI under ulimit -v).
    A MemoryError now stays one (the command line's "out of memory", exit 2) and an exception
    without a message is named by its type."""
    import duckdb
    import pyarrow.parquet as pq

    path = tmp_path / "impressions.parquet"
    pq.write_table(log([(1, "control", "u1", 3, [1])]), path)

    def fail(*args, **kwargs):
        raise raised

    monkeypatch.setattr(duckdb.DuckDBPyConnection, "read_parquet", fail, raising=False)
    import ibis.backends.duckdb as backend

    monkeypatch.setattr(backend.Backend, "read_parquet", fail)
    with pytest.raises(expected) as caught:
        analyze_ab(path)
    if expected is InputError:
        assert str(caught.value) == f"{path}: could not be read as Parquet (_Quiet: no message)."
