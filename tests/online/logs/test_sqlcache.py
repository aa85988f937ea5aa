"""The compiled-SQL cache of DuckDB analyses (serpeval.online.logs.sqlcache): an analysis of the
same shape compiles nothing new and runs exactly the SQL ibis compiles (the whole online suite
passes through it); what the cache cannot run goes through ibis."""

from __future__ import annotations

import warnings
from typing import Any

import pyarrow as pa

from serpeval.online.experiments import analyze_ab, analyze_interleaving_logs
from serpeval.online.logs import read_logs, sqlcache
from serpeval.online.simulation import generate_logs, split_clicks

#: experiment names a literal's quoting must survive
NAMES = ("ranker-v2", "it's \"new\"\\'; DROP TABLE x; --é\n\t")


def renamed(table: pa.Table, name: str) -> pa.Table:
    column = pa.array([name] * table.num_rows)
    return table.set_column(table.schema.get_field_index("experiment"), "experiment", column)


def ab_rows(log: pa.Table, name: str) -> list[dict[str, Any]]:
    return analyze_ab(renamed(log, name), name, metrics=["ctr", "mrr", "abandonment"]).to_dicts()


def interleaving_rows(log: pa.Table, clicks: pa.Table, name: str) -> list[dict[str, Any]]:
    return analyze_interleaving_logs(renamed(log, name), clicks=clicks, experiment=name, n_resamples=200,
                                     rng=3, period="day").to_dicts()


def test_same_shape_compiles_once(monkeypatch: Any) -> None:
    ab = generate_logs(300, rng=5).impressions
    imp, clicks = split_clicks(generate_logs(60, interleaving=True, impressions_per_user=2.5, rng=1).impressions)
    compiled: list[str] = []
    compile_sql = sqlcache._compile
    monkeypatch.setattr(sqlcache, "_compile", lambda *a: compiled.append("x") or compile_sql(*a))
    ran: list[Any] = []
    run = sqlcache.run
    monkeypatch.setattr(sqlcache, "run", lambda expr: ran.append(result := run(expr)) or result)
    results = []
    for name in NAMES:
        before = len(compiled)
        del ran[:]
        rows = [*ab_rows(ab, name), *interleaving_rows(imp, clicks, name)]
        results.append(repr([{k: v for k, v in row.items() if k != "experiment"} for row in rows]))
        assert len(ran) >= 8  # every query through the cache (8: the orphans count with the clicks,
        # the interleaving balance sums with the unit patterns)
        assert None not in ran
        # the first name compiles every query (unless an earlier test did); the second (other
        # tables, another experiment name) none
        assert len(compiled) == before or name == NAMES[0]
    # the same log under another experiment name: the same numbers, bit for bit
    assert results[0] == results[1]


def test_the_sql_is_what_ibis_compiles() -> None:
    log = generate_logs(50, rng=2).impressions
    for name in NAMES:
        t = read_logs(renamed(log, name)).impressions
        backend = t.get_backend()
        f = t.filter((t.experiment == name) & t.variant.isin(["control", name]))
        expr = f.group_by("variant").aggregate(n=f.count(), users=f.user_id.nunique()).order_by("variant")
        assert sqlcache.sql(expr) == backend.compile(expr.as_table())
        got, want = sqlcache.run(expr), expr.to_pyarrow()
        assert got.schema == want.schema
        assert got.to_pylist() == want.to_pylist()
        assert sum(r["n"] for r in got.to_pylist()) == log.column("variant").to_pylist().count("control") > 0
    # a string that only an equality test reads is a parameter: one entry for all names
    shapes = {k for k in sqlcache._CACHE if any(name in repr(k) for name in NAMES)}
    assert not shapes
    # one that something else reads (here a prefix test) stays in the key, with its SQL
    for prefix in ("con", "tre'"):
        f = t.filter(t.variant.startswith(prefix))
        expr = f.aggregate(n=f.count())
        assert sqlcache.sql(expr) == backend.compile(expr.as_table())
        assert sqlcache.run(expr).equals(expr.to_pyarrow())


def test_what_needs_ibis_hooks_goes_through_ibis() -> None:
    import ibis

    memtable = ibis.memtable(pa.table({"a": [1, 2, 3]}))
    con = read_logs(generate_logs(20, rng=2).impressions).impressions.get_backend()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        on_duckdb = con.create_table("sqlcache_t", pa.table({"a": [1, 2, 3]}), temp=True)
        assert sqlcache.run(memtable.aggregate(s=memtable.a.sum())) is None  # an in-memory table
        joined = on_duckdb.join(memtable, "a")
        assert sqlcache.run(joined) is None
        assert sqlcache.run(on_duckdb.aggregate(s=on_duckdb.a.sum())).to_pylist() == [{"s": 6}]

        @ibis.udf.scalar.builtin
        def abs(x: int) -> int:  # DuckDB's own function, called as a UDF
            ...

        assert sqlcache.run(on_duckdb.select(b=abs(on_duckdb.a))) is None
    assert sqlcache.run(ibis.table({"a": "int64"}, name="unbound").count().as_table()) is None
