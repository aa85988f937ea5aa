"""``kill -9`` of a ``serpeval serve`` process under load: every event acknowledged with a 2xx is
in the store after the restart, and none is stored twice."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch_server(corpus: Path, store: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``serpeval serve`` started on a free port (not waited for: :func:`wait_healthy`)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "serpeval", "serve", "--corpus", str(corpus), "--candidate", "k1=1.2,b=0.3",
         "--store", str(store), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, port


def loopback_client(**kwargs: Any) -> Any:
    """An httpx client for the plain-HTTP loopback server: ``verify=False`` only spares loading
    the CA bundle into an SSL context that no ``http://`` request uses (~20 ms of CPU per
    client, several clients a cycle, on the load threads' way to their first batch)."""
    import httpx

    return httpx.Client(verify=False, **kwargs)


def wait_healthy(proc: subprocess.Popen[bytes], port: int) -> None:
    import httpx

    deadline = time.monotonic() + 120
    with loopback_client(timeout=1) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.005)  # a refused connection answers at once and costs ~0.1 ms: poll often
    raise RuntimeError("serve did not answer /healthz within 120 s")


def load(port: int, prefix: str, acked: list[str], stop: threading.Event, loaded: threading.Event) -> None:
    """Post batches of 10 events until the server dies; record the ids of acknowledged batches
    (``loaded`` is set at the first one)."""
    import httpx

    n = 0
    with loopback_client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        while not stop.is_set():
            ids = [f"{prefix}-{n}-{j}" for j in range(10)]
            n += 1
            batch = [{"action_name": "click", "event_id": i, "query_id": "q", "timestamp": "2026-12-05T01:00:00Z",
                      "event_attributes": {"position": {"ordinal": 1}}} for i in ids]
            try:
                answer = client.post("/events", json=batch)
            except httpx.HTTPError:
                return  # the server is gone: this batch was never acknowledged
            if answer.status_code == 200:
                acked.extend(ids)
                loaded.set()


def kill_cycles(corpus: Path, store: Path, cycles: int, seed: int = 0, resend: int = 0,
                overlap: bool = False) -> tuple[list[str], list[str], list[dict[str, int]]]:
    """``cycles`` times: start serve, load it from 3 threads, SIGKILL it mid-load: once each
    thread has had a batch acknowledged (the load is flowing through the writer process's group
    commits), after a random 0-0.3 s (three of its 0.1 s lingers: any phase of a commit). The
    next server starts after the kill (as a supervisor restarts one), or with ``overlap`` before
    it, as soon as the current one answers: it builds its engines while the current one is
    loaded and killed, and its writer process waits for the store's DuckDB lock, which passes
    to it when the killed server's writer has written what it held. With ``resend``, each
    restarted server first gets up to that many events acknowledged before its kill again
    (same ids): the answers are returned, to check they are all duplicates."""
    import random

    rnd = random.Random(seed)
    acked: list[str] = []
    sent_prefixes = []
    resent: list[dict[str, int]] = []
    upcoming: tuple[subprocess.Popen[bytes], int] | None = launch_server(corpus, store)
    running: list[subprocess.Popen[bytes]] = []
    try:
        for cycle in range(cycles):
            assert upcoming is not None
            (proc, port), upcoming = upcoming, None
            running.append(proc)
            wait_healthy(proc, port)
            if overlap and cycle + 1 < cycles:
                upcoming = launch_server(corpus, store)
            if resend and acked:
                sample = acked[-resend:]
                batch = [{"action_name": "click", "event_id": i, "query_id": "q", "timestamp": "2026-12-05T01:00:00Z",
                          "event_attributes": {"position": {"ordinal": 1}}} for i in sample]
                with loopback_client(timeout=30) as client:
                    answer = client.post(f"http://127.0.0.1:{port}/events", json=batch).json()
                resent.append({**answer, "sent": len(sample)})
            stop = threading.Event()
            loaded = [threading.Event() for _ in range(3)]
            threads = [threading.Thread(target=load, args=(port, f"c{cycle}t{t}", acked, stop, loaded[t]))
                       for t in range(3)]
            sent_prefixes += [f"c{cycle}t{t}" for t in range(3)]
            for t in threads:
                t.start()
            under_load = all(flowing.wait(60) for flowing in loaded)
            time.sleep(rnd.uniform(0.0, 0.3))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
            stop.set()
            for t in threads:
                t.join(30)
            if proc.stderr is not None:
                proc.stderr.close()
            assert under_load, f"cycle {cycle}: not every load thread had a batch acknowledged before the kill"
            if not overlap and cycle + 1 < cycles:
                upcoming = launch_server(corpus, store)
    finally:  # a failed cycle leaves no server behind
        for left in [*running, *([upcoming[0]] if upcoming else [])]:
            if left.poll() is None:
                left.kill()
                left.wait(30)
            if left.stderr is not None:
                left.stderr.close()
    return acked, sent_prefixes, resent


def open_after_kill(store: Path) -> Any:
    """The store, once the killed server's writer process has written what it held and exited
    (until then it holds the DuckDB file's lock): the wait serve's own next writer makes."""
    from serpeval.online.events.writer_process import _open_store

    return _open_store(str(store), 60.0)


def check_store(store: Path, acked: list[str], prefixes: list[str]) -> None:
    s = open_after_kill(store)
    stored = s.read("ubi_events").column("event_id").to_pylist()
    s.close()
    assert len(stored) == len(set(stored))  # none twice
    missing = set(acked) - set(stored)
    assert not missing, f"{len(missing)} acknowledged events lost, e.g. {sorted(missing)[:3]}"
    assert all(e.split("-")[0] in prefixes for e in stored)  # nothing that was never sent


def test_kill_9_under_load_loses_no_acknowledged_event(tmp_path: Path, small_corpus: Path) -> None:
    store = tmp_path / "events.duckdb"
    cycles = int(os.environ.get("SERPEVAL_KILL_CYCLES", "3"))
    acked, prefixes, resent = kill_cycles(small_corpus, store, cycles=cycles, resend=50)
    assert len(acked) > 0
    check_store(store, acked, prefixes)
    # each restarted server took events acknowledged before the last kill again: duplicates, not new rows
    assert len(resent) >= 1
    for r in resent:
        assert r["sent"] > 0
        assert {k: v for k, v in r.items() if k != "sent"} == {"written": 0, "duplicates": r["sent"], "orphans": 0}


@pytest.mark.slow
def test_kill_9_twenty_times(tmp_path: Path, small_corpus: Path) -> None:
    """Each next server started as soon as the current one answers: it builds its engines while
    the current one is loaded and killed, its writer waiting for the store's lock (the test
    above restarts after the kill); a restart after the kill would add a start-up to each cycle."""
    store = tmp_path / "events.duckdb"
    acked, prefixes, _ = kill_cycles(small_corpus, store, cycles=20, seed=1, overlap=True)
    check_store(store, acked, prefixes)


_HOLDER = r"""
import sys, time
import duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE held (x INTEGER)")
print("held", flush=True)
sys.stdin.readline()  # the test's first open has met the lock
time.sleep(float(sys.argv[2]))
con.execute("INSERT INTO held VALUES (1)")
con.close()
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX record locks")
def test_the_next_writer_opens_the_store_once_the_lock_is_free(tmp_path: Path, monkeypatch: Any) -> None:
    """A new writer facing the DuckDB lock of another process (a killed server's writer, still
    writing what it held) probes the lock instead of trying to open the store every 50 ms: two
    opens in all, the one that met the lock and the one once it was free, and the holder kept
    its lock (and wrote) until it let go."""
    from serpeval.online.events import writer_process
    from serpeval.online.events.writer_process import _open_store

    path = tmp_path / "e.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), "0.3"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    assert holder.stdin is not None
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    opens: list[str] = []
    real = writer_process.EventStore

    def counted(target: str) -> Any:
        try:
            opened = real(target)
        except Exception as exc:
            opens.append(type(exc).__name__)
            raise
        else:
            opens.append("opened")
            return opened
        finally:
            if len(opens) == 1:  # the holder lets go 0.3 s after the first open, which met its lock
                holder.stdin.write(b"go\n")
                holder.stdin.close()

    monkeypatch.setattr(writer_process, "EventStore", counted)  # the name _open_store calls
    store = _open_store(str(path), 30.0)
    try:
        assert holder.wait(30) == 0
        # the open that met the lock, then one once it was free (polling every 50 ms made ~6)
        assert opens == ["StoreUnavailable", "opened"]
        assert store._con.execute("SELECT count(*) FROM held").fetchone() == (1,)
    finally:
        store.close()
        holder.stdout.close()
