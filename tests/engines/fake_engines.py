"""A real HTTP server on 127.0.0.1 that answers like Elasticsearch/OpenSearch, Solr and Vespa.

The answers come from the embedded BM25 engine over a corpus, so a run fetched over HTTP can
be compared with the embedded engine's own. Each endpoint checks that the request has the
documented shape and answers HTTP 400 (as the engines do) when it has not:

- ``POST /{index}/_search``: JSON body ``{"query": {"match": {FIELD: TEXT}}, "size": N, ...}``;
  answer ``{"took", "timed_out", "_shards", "hits": {"total": {"value", "relation"},
  "max_score", "hits": [{"_index", "_id", "_score"}]}}`` (Elasticsearch search API reference).
- ``POST /{index}/_msearch``: ``Content-Type: application/x-ndjson``, header line + body line per
  search, the last line ending with a newline; answer ``{"took", "responses": [search answer
  + "status": 200, ...]}`` (Elasticsearch multi search API).
- ``GET /solr/{collection}/select?q=..&rows=N&fl=id,score&wt=json``: answer
  ``{"responseHeader": {"status": 0, "QTime", "params"}, "response": {"numFound", "start",
  "maxScore", "numFoundExact", "docs": [{"id", "score"}]}}`` (Solr JSON response writer).
- ``POST /search/``: JSON body with ``yql`` (``userQuery()``), ``query``, ``hits``; answer
  ``{"root": {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount"}, "coverage": {...},
  "children": [{"id": "id:ns:doc::ID", "relevance", "source", "fields": {"documentid"}}]}}``
  (Vespa default JSON result format).

Fault injection by query text: ``__500__`` (HTTP 500 with an error body), ``__slow__`` (answers
after ``slow`` seconds), ``__notjson__`` (an HTML page), ``__dup__`` (the first hit twice),
``__flaky__`` (HTTP 503 the first ``flaky`` times it is asked, then a normal answer).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from serpeval.engines.base import Engine, Hit


class FakeEngines:
    """``with FakeEngines(engine) as server: server.url``; ``server.requests`` counts paths."""

    def __init__(self, engine: Engine, *, slow: float = 2.0, flaky: int = 2, index: str = "docs") -> None:
        self.engine = engine
        self.slow = slow
        self.flaky = flaky
        self.index = index
        self.requests: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                outer._handle(self, "GET")

            def do_POST(self) -> None:
                outer._handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FakeEngines:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------ dispatch

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self.lock:
            self.requests[parts.path] += 1
        try:
            if method == "POST" and parts.path == f"/{self.index}/_search":
                status, answer = self._es_search(json.loads(body))
            elif method == "POST" and parts.path == f"/{self.index}/_msearch":
                status, answer = self._es_msearch(handler.headers.get("Content-Type", ""), body)
            elif method == "GET" and parts.path == f"/solr/{self.index}/select":
                status, answer = self._solr(parse_qs(parts.query))
            elif method == "POST" and parts.path == "/search/":
                status, answer = self._vespa(json.loads(body))
            else:
                status, answer = 404, {"error": f"no handler for {method} {parts.path}"}
        except _Fault as fault:
            status, answer = fault.status, fault.answer
        except (ValueError, KeyError, TypeError) as exc:
            status, answer = 400, {"error": {"type": "parsing_exception", "reason": str(exc)}, "status": 400}
        data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/html" if isinstance(answer, bytes) else "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _hits(self, query: str, size: int) -> list[Hit]:
        with self.lock:
            self.asked[query] += 1
            asked = self.asked[query]
        if "__500__" in query:
            raise _Fault(500, {"error": {"type": "search_phase_execution_exception", "reason": "all shards failed"},
                               "status": 500})
        if "__slow__" in query:
            time.sleep(self.slow)
        if "__notjson__" in query:
            raise _Fault(200, b"<html><body>Service temporarily unavailable</body></html>")
        if "__flaky__" in query and asked <= self.flaky:
            raise _Fault(503, {"error": "overloaded, try again"})
        text = query.replace("__dup__", "").replace("__slow__", "").replace("__flaky__", "")
        hits = self.engine.search(text, size) if text.strip() else []
        if "__dup__" in query and hits:
            hits = [hits[0], *hits[: size - 1]]
        return hits

    # ------------------------------------------------------------------ Elasticsearch / OpenSearch

    def _es_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        match = body["query"]["match"]
        if not isinstance(match, dict) or len(match) != 1:
            raise ValueError("[match] query malformed, expected one field")
        (text,) = match.values()
        size = body.get("size", 10)
        if not isinstance(size, int):
            raise ValueError(f"[size] must be a number, found {size!r}")
        hits = self._hits(text if isinstance(text, str) else text["query"], size)
        return {
            "took": 1, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits), "relation": "eq"},
                     "max_score": hits[0].score if hits else None,
                     "hits": [{"_index": self.index, "_id": h.doc_id, "_score": h.score} for h in hits]},
        }

    def _es_search(self, body: dict[str, Any]) -> tuple[int, Any]:
        return 200, self._es_answer(body)

    def _es_msearch(self, content_type: str, body: bytes) -> tuple[int, Any]:
        if not content_type.startswith("application/x-ndjson"):
            raise ValueError(f"_msearch needs Content-Type application/x-ndjson, found {content_type!r}")
        if not body.endswith(b"\n"):
            raise ValueError("The msearch request must be terminated by a newline [\\n]")
        lines = body.decode().split("\n")[:-1]
        if len(lines) % 2:
            raise ValueError("_msearch: a header line without its body")
        responses = []
        for header, search in zip(lines[::2], lines[1::2], strict=True):
            json.loads(header)
            try:
                responses.append({**self._es_answer(json.loads(search)), "status": 200})
            except _Fault as fault:
                if isinstance(fault.answer, bytes):
                    raise
                responses.append({"error": fault.answer.get("error"), "status": fault.status})
        return 200, {"took": 1, "responses": responses}

    # ------------------------------------------------------------------ Solr

    def _solr(self, params: dict[str, list[str]]) -> tuple[int, Any]:
        if params.get("wt", ["json"])[0] != "json":
            raise ValueError("wt must be json")
        fl = params["fl"][0].split(",")
        if "score" not in fl:
            raise ValueError("fl must ask for score")
        rows = int(params.get("rows", ["10"])[0])
        hits = self._hits(params["q"][0], rows)
        return 200, {
            "responseHeader": {"status": 0, "QTime": 1, "params": {k: v[0] for k, v in params.items()}},
            "response": {"numFound": len(hits), "start": 0, "maxScore": hits[0].score if hits else 0.0,
                         "numFoundExact": True, "docs": [{"id": h.doc_id, "score": h.score} for h in hits]},
        }

    # ------------------------------------------------------------------ Vespa

    def _vespa(self, body: dict[str, Any]) -> tuple[int, Any]:
        if "userQuery()" not in body["yql"]:
            raise ValueError("yql must use userQuery() for the query parameter")
        hits = self._hits(body["query"], int(body.get("hits", 10)))
        root: dict[str, Any] = {
            "id": "toplevel", "relevance": 1.0, "fields": {"totalCount": len(hits)},
            "coverage": {"coverage": 100, "documents": 1400, "full": True, "nodes": 1, "results": 1,
                         "resultsFull": 1},
        }
        if hits:  # Vespa leaves children out when nothing matched
            root["children"] = [{"id": f"id:ns:doc::{h.doc_id}", "relevance": h.score, "source": "content",
                                 "fields": {"documentid": f"id:ns:doc::{h.doc_id}"}} for h in hits]
        return 200, {"root": root}


class _Fault(Exception):
    def __init__(self, status: int, answer: Any) -> None:
        super().__init__(status)
        self.status = status
        self.answer = answer
