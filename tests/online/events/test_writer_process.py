"""The store written from a child process (``ProcessWriter``): the same results as the
in-process group writer on both stores, acknowledgements only after the commit, a dead child
is a 503 and then a new child, a killed server leaves no writer behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from tests.online.events.test_store import click, impression

from serpeval.core.errors import InputError
from serpeval.online.events.schema import validate_events
from serpeval.online.events.store import GroupWriter, StoreUnavailable, open_store, query_row
from serpeval.online.events.writer_process import ProcessWriter


def _jobs() -> list[tuple[list[Any], list[Any]]]:
    """Impressions, then events for them (some retried, one orphan), in several requests."""
    return [
        ([query_row(impression("q1")), query_row(impression("q2", ("d9",)))], []),
        ([], validate_events([click("q1", event_id="e1"), click("q2", event_id="e2")])),
        ([], validate_events([click("q1", event_id="e1"), click("nowhere", event_id="e3")])),
        ([query_row(impression("q1"))], validate_events([click("q2", event_id="e2"), click(None, event_id="e4")])),
    ]


def test_same_results_and_rows_as_the_thread_writer(store_url: str, tmp_path: Path) -> None:
    process = ProcessWriter(store_url)
    try:
        assert process.kind == ("postgresql" if store_url.startswith("postgresql") else "duckdb")
        assert "secret" not in process.label
        got = [process.submit(q, e).result(timeout=60) for q, e in _jobs()]
    finally:
        process.close()
    other = str(tmp_path / "thread.duckdb")
    thread = GroupWriter(open_store(other))
    try:
        expected = [thread.submit(q, e).result(timeout=60) for q, e in _jobs()]
    finally:
        thread.close()
    assert got == expected
    assert [r.written for r in got] == [0, 2, 1, 1]
    assert [r.duplicates for r in got] == [0, 0, 1, 1]
    assert [r.orphans for r in got] == [0, 0, 1, 0]
    tables = []
    for url in (store_url, other):
        store = open_store(url)
        tables.append((store.read("ubi_queries"), store.read("ubi_events").drop_columns(["received_at"])))
        store.close()
    assert tables[0][0].equals(tables[1][0])
    assert tables[0][1].equals(tables[1][1])


def test_many_concurrent_requests_are_grouped_and_each_answered(tmp_path: Path) -> None:
    writer = ProcessWriter(str(tmp_path / "e.duckdb"))
    try:
        futures = [writer.submit([query_row(impression(f"q{i}"))],
                                 validate_events([click(f"q{i}", event_id=f"e{i}"), click(f"q{i}", event_id=f"e{i}")]))
                   for i in range(300)]
        results = [f.result(timeout=60) for f in futures]
    finally:
        writer.close()
    assert all((r.written, r.duplicates, r.orphans, r.queries) == (1, 1, 0, 1) for r in results)
    assert open_store(tmp_path / "e.duckdb").counts() == {"impressions": 300, "events": 300, "orphans": 0}


def test_a_dead_writer_is_a_503_then_a_new_one_takes_over(tmp_path: Path) -> None:
    writer = ProcessWriter(str(tmp_path / "e.duckdb"))
    try:
        assert writer.submit([], validate_events(click(event_id="before"))).result(timeout=60).written == 1
        child = writer._child
        assert child is not None
        child.send_signal(signal.SIGSTOP)  # frozen: the next job is sent but never answered
        pending = writer.submit([], validate_events(click(event_id="lost")))
        time.sleep(0.2)
        child.kill()
        with pytest.raises(StoreUnavailable, match=r"the writer process ended .* nothing was acknowledged"):
            pending.result(timeout=60)
        # the next write starts a new child, which writes it
        assert writer.submit([], validate_events(click(event_id="after"))).result(timeout=60).written == 1
        assert writer._child is not None
        assert writer._child is not child
    finally:
        writer.close()
    events = open_store(tmp_path / "e.duckdb").read("ubi_events").column("event_id").to_pylist()
    assert sorted(events) == ["after", "before"]


def test_bad_targets_fail_at_start_with_the_stores_own_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        ProcessWriter(str(tmp_path / "missing" / "e.duckdb"))
    with pytest.raises(StoreUnavailable, match=r"postgresql://127.0.0.1:9/x: cannot open"):
        ProcessWriter("postgresql://nobody:secret@127.0.0.1:9/x")


def test_started_early_it_opens_the_store_meanwhile_and_ready_raises_its_errors(tmp_path: Path) -> None:
    """serve starts the writer before building its engines (``wait=False``), then waits."""
    early = ProcessWriter(str(tmp_path / "missing" / "e.duckdb"), wait=False)
    with pytest.raises(InputError, match="does not exist"):
        early.ready()
    early.close()
    unused = ProcessWriter(str(tmp_path / "e.duckdb"), wait=False)
    unused.close()  # never made ready: the child is stopped, nothing was written
    early = ProcessWriter(str(tmp_path / "e.duckdb"), wait=False)
    with pytest.raises(StoreUnavailable, match="not ready"):
        early.submit([], validate_events(click(event_id="too-soon"))).result(timeout=5)
    early.ready()
    try:
        assert early.submit([], validate_events(click(event_id="e"))).result(timeout=60).written == 1
    finally:
        early.close()


_SERVER = textwrap.dedent("""
    import sys
    from tests.online.events.test_store import click
    from serpeval.online.events.schema import validate_events
    from serpeval.online.events.writer_process import ProcessWriter
    writer = ProcessWriter(sys.argv[1])
    writer.submit([], validate_events(click(event_id="acked"))).result(timeout=60)
    print(writer._child.pid, flush=True)
    sys.stdin.read()  # until killed
""")


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie has: it waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")
def test_a_killed_server_leaves_no_writer_behind_and_the_store_reopens(tmp_path: Path) -> None:
    store = tmp_path / "e.duckdb"
    root = Path(__file__).resolve().parents[3]
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(store)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert server.stdout is not None
    child = int(server.stdout.readline())
    os.kill(child, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole group: the writer ignores it
    time.sleep(0.3)
    assert _running(child)
    server.kill()  # kill -9 of the server: the writer sees the end of its stdin and exits
    server.wait(30)
    server.stdout.close()
    server.stdin.close()  # type: ignore[union-attr]
    deadline = time.monotonic() + 30
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(child), "the writer process outlived the server"
    writer = ProcessWriter(str(store))  # the DuckDB lock is free again
    try:
        assert writer.submit([], validate_events(click(event_id="acked"))).result(timeout=60).duplicates == 1
    finally:
        writer.close()
