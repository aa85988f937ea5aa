"""In-memory logs are read into a DuckDB session of their own on one in-memory database per
process (sources._memory_session): as isolated as a database each, and gone with the session."""

from __future__ import annotations

import gc
import os

import numpy as np
import pyarrow as pa

from serpeval.online.logs import read_logs, sources


def memory_bytes() -> int:
    """What the process's in-memory database holds, over all its sessions."""
    base = sources._MEMORY_DATABASE[0][1]
    return int(base.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchall()[0][0])


def test_each_read_is_a_session_of_its_own() -> None:
    first = read_logs(pa.table({"impression_id": [1, 2], "experiment": ["e", "e"]}))
    second = read_logs(pa.table({"impression_id": [3], "experiment": ["f"]}))
    a, b = first.impressions.get_backend(), second.impressions.get_backend()
    assert a is not b
    assert a.con is not b.con
    assert sources._MEMORY_DATABASE[0][0] == os.getpid()
    name_a, name_b = first.impressions.op().name, second.impressions.op().name
    # a session sees its own temporary tables only
    seen_by_a = {row[0] for row in a.raw_sql("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert name_a in seen_by_a
    assert name_b not in seen_by_a
    assert a.raw_sql("SELECT current_setting('TimeZone')").fetchall() == [("UTC",)]
    assert first.impressions.count().to_pyarrow().as_py() == 2
    assert second.impressions.count().to_pyarrow().as_py() == 1
    # a session's tables go with it (here: garbage-collected with the Logs)
    before = memory_bytes()
    big = read_logs(pa.table({"impression_id": np.arange(500_000)}))
    assert big.impressions.count().to_pyarrow().as_py() == 500_000
    held = memory_bytes()
    assert held - before > 3_000_000
    del big
    gc.collect()
    assert held - memory_bytes() > 3_000_000
