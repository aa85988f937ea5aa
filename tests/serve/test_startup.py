"""What a start of ``serpeval serve`` imports: neither numba (bm25s imports it for a backend
serve never uses) nor pandas (pyarrow imports it on converting a list), 0.1-0.4 s each at
every start; the engines it builds without them score exactly as with them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
from tests.faults.helpers import serpeval_env
from tests.serve.conftest import free_port

CHILD = r"""
import json, sys
import uvicorn
from serpeval.cli import main

seen = {}
uvicorn.Server.run = lambda server, sockets=None: (setattr(server, "started", True), seen.update(
    heavy=sorted(m for m in ("numba", "pandas") if m in sys.modules)))
corpus, store, port = sys.argv[1], sys.argv[2], sys.argv[4]
assert main(["serve", "--corpus", corpus, "--candidate", "k1=1.2,b=0.3", "--store", store, "--port", port]) == 0
from serpeval.engines.embedded import EmbeddedIndex

import bm25s
engine = EmbeddedIndex.build(corpus).engine(k1=1.2, b=0.3)
hits = [[[h.doc_id, repr(h.score)] for h in q] for q in engine.search_many(json.loads(sys.argv[3]), 20)]
print(json.dumps({**seen, "bm25s_numba": bm25s.NUMBA_AVAILABLE, "hits": hits}))
"""


def test_serve_starts_without_numba_or_pandas_and_scores_the_same(small_corpus: Path, tmp_path: Path) -> None:
    import importlib.util

    from serpeval.engines.embedded import EmbeddedIndex

    # both are installed here (else the checks below would hold whatever serve imports)
    assert all(importlib.util.find_spec(m) is not None for m in ("numba", "pandas"))
    queries = ["wing flow", "boundary layer", "supersonic heat transfer", "slip stream", "zzz unknown"]
    out = subprocess.run([sys.executable, "-c", CHILD, str(small_corpus), str(tmp_path / "e.duckdb"),
                          json.dumps(queries), str(free_port())], capture_output=True, text=True, timeout=120,
                         check=True)
    child = json.loads(out.stdout.splitlines()[-1])
    assert child["heavy"] == []
    assert child["bm25s_numba"] is False  # bm25s was imported with numba hidden (this process has it)
    engine = EmbeddedIndex.build(small_corpus).engine(k1=1.2, b=0.3)
    expected = [[[h.doc_id, repr(h.score)] for h in q] for q in engine.search_many(queries, 20)]
    assert child["hits"] == expected  # bit for bit, ties included
    assert sum(map(len, expected)) > 40


def test_ctrl_c_stops_a_real_serve_with_status_0_and_keeps_the_event(small_corpus: Path, tmp_path: Path) -> None:
    """A real ``serpeval serve`` on loopback, stopped as the docs say (Ctrl-C, SIGINT): status 0,
    no "interrupted" line, and the event acknowledged before is in the store. (uvicorn's
    Server.run raises the interrupt again after its clean shutdown; serve must end with 0, as
    it did under uvicorn.run.) Bounded: 60 s for the start, 30 s for the stop."""
    port, store = free_port(), tmp_path / "events.duckdb"
    server = subprocess.Popen([sys.executable, "-m", "serpeval", "serve", "--corpus", str(small_corpus),
                               "--candidate", "k1=1.2,b=0.3", "--store", str(store), "--port", str(port)],
                              stderr=subprocess.PIPE, text=True, env=serpeval_env())
    try:
        assert server.stderr is not None
        deadline = time.monotonic() + 60
        lines = []
        while time.monotonic() < deadline:
            line = server.stderr.readline()
            lines.append(line)
            if " on http://127.0.0.1:" in line or not line:
                break
        assert " on http://127.0.0.1:" in lines[-1], "".join(lines)
        event = json.dumps({"action_name": "click", "timestamp": "2026-12-05T01:20:00Z", "event_id": "keep-me"})
        request = urllib.request.Request(f"http://127.0.0.1:{port}/events", data=event.encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.loads(answer.read())["written"] == 1
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
        rest = server.stderr.read()
        assert "interrupted" not in rest, rest
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM ubi_events WHERE event_id = 'keep-me'").fetchone() == (1,)
