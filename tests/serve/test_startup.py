"""What a start of ``serpeval serve`` imports: neither numba (bm25s imports it for a backend
serve never uses) nor pandas (pyarrow imports it on converting a list), 0.1-0.4 s each at
every start; the engines it builds without them score exactly as with them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
