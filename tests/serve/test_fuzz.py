"""Bad input over real HTTP: Hypothesis-generated requests never get a 5xx, and every 4xx body is
one line; an HTTP backend (a real server on loopback) that hangs, fails or answers junk never
turns into a 5xx either."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.serve.conftest import LiveServer, app_for

from serpeval.serve.backends import build_backends
from serpeval.serve.config import BackendConfig, ServeConfig, quick_config


@pytest.fixture(scope="module")
def server(tmp_path_factory: Any, small_corpus: Path) -> Iterator[Any]:
    import httpx

    folder = tmp_path_factory.mktemp("fuzz")
    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", str(folder / "events.duckdb"), max_batch=50,
                          max_body_bytes=100_000)
    with LiveServer(app_for(config, build_backends(config))) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
ACTIONS = st.sampled_from(["click", "impression", "add_to_cart", "purchase", "", "x" * 101])
events = st.fixed_dictionaries(
    {"action_name": ACTIONS | json_values, "timestamp": st.sampled_from(["2026-12-05T01:00:00Z", "2026-13-40", ""])
     | json_values},
    optional={"query_id": st.text(max_size=120) | json_values, "event_id": st.text(max_size=120) | json_values,
              "client_id": st.text(max_size=20),
              "event_attributes": st.fixed_dictionaries({}, optional={
                  "position": st.fixed_dictionaries({}, optional={"ordinal": st.integers(-5, 10**6) | json_values,
                                                                  "xy": json_values}),
                  "object": st.fixed_dictionaries({}, optional={"object_id": st.text(max_size=300) | json_values}),
              }) | json_values},
)
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


def check(answer: Any) -> None:
    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        error = answer.json()["error"]
        assert isinstance(error, str)
        assert "\n" not in error


@SETTINGS
@given(body=st.one_of(events, st.lists(events, max_size=60), json_values))
def test_fuzzed_events_never_5xx(server: Any, body: Any) -> None:
    check(server.post("/events", content=json.dumps(body)))


@SETTINGS
@given(raw=st.binary(max_size=300), kind=st.sampled_from(["application/json", "text/plain", "application/x-ndjson",
                                                           "application/json; charset=latin-1"]))
def test_fuzzed_bytes_never_5xx(server: Any, raw: bytes, kind: str) -> None:
    check(server.post("/events", content=raw, headers={"content-type": kind}))


@SETTINGS
@given(params=st.dictionaries(st.sampled_from(["q", "user", "session", "experiment", "other"]),
                              st.text(max_size=1100), max_size=5))
def test_fuzzed_searches_never_5xx(server: Any, params: dict[str, str]) -> None:
    check(server.get("/search", params=params))


def test_large_bodies_and_methods(server: Any) -> None:
    check(server.post("/events", content=b"[" + b"1," * 5_000_000 + b"1]"))  # 10 MB
    assert server.post("/events", content=b"x" * 200_000).status_code == 413
    answer = server.delete("/events")
    assert answer.status_code == 405
    assert answer.json() == {"error": "DELETE /events: method not allowed."}


# ---------------------------------------------------------------- a real HTTP backend


def backend_app() -> Any:
    """A search engine on loopback: 'hang' sleeps, 'fail' answers 500, 'junk' answers no list,
    'twice' a document twice."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def search(request: Any) -> Any:
        q = request.query_params.get("q", "")
        if q == "hang":
            await asyncio.sleep(1)
        if q == "fail":
            return Response("boom", status_code=500)
        if q == "junk":
            return JSONResponse({"hits": "nope"})
        if q == "twice":  # a document twice: a fault on the serving path, not repaired
            return JSONResponse({"hits": [{"id": "d1", "score": 2}, {"id": "d1", "score": 1}]})
        return JSONResponse({"hits": [{"id": f"d{i}", "score": 10 - i} for i in range(10)]})

    return Starlette(routes=[Route("/search", search)])


@pytest.fixture(scope="module")
def faulty_http_serve(tmp_path_factory: Any, small_corpus: Path) -> Iterator[Any]:
    """serve (A: embedded, B: the HTTP engine above, 300 ms deadline) and the engine, each on a
    loopback port, started once for the module."""
    import httpx

    folder = tmp_path_factory.mktemp("http-backend")
    with LiveServer(backend_app()) as engine_server:
        http = {"url": engine_server.url, "request": {"method": "GET", "path": "/search",
                                                      "query_params": {"q": "{{query}}", "n": "{{size}}"}},
                "response": {"hits": "hits", "id": "id", "score": "score"}, "http": {"retries": 0}}
        config = ServeConfig((BackendConfig("A", "embedded", {"corpus": str(small_corpus)}),
                              BackendConfig("B", "http", http)), store=str(folder / "e.duckdb"), deadline_ms=300)
        backends = build_backends(config)
        assert backends[1].is_async
        with LiveServer(app_for(config, backends)) as live, httpx.Client(base_url=live.url, timeout=30) as client:
            yield client


def fault_count(client: Any, reason: str) -> float:
    """The value of serpeval_backend_faults_total for backend B and ``reason`` (0 before the first)."""
    prefix = f'serpeval_backend_faults_total{{backend="B",reason="{reason}"}} '
    lines = [line for line in client.get("/metrics").text.splitlines() if line.startswith(prefix)]
    return float(lines[0][len(prefix):]) if lines else 0.0


@pytest.mark.parametrize("query", ["hang", "fail", "junk", "twice"])
def test_http_backend_faults_serve_the_control(faulty_http_serve: Any, query: str) -> None:
    client = faulty_http_serve
    reason = {"hang": "timeout", "fail": "error", "junk": "error", "twice": "error"}[query]
    before = {r: fault_count(client, r) for r in ("timeout", "error")}
    good = client.get("/search", params={"q": "wing"}).json()
    bad = client.get("/search", params={"q": query})
    after = {r: fault_count(client, r) for r in ("timeout", "error")}
    assert good["interleaved"] is True
    assert "B" in {h["team"] for h in good["hits"]}
    assert bad.status_code == 200
    assert bad.json()["variant"] == "control"
    assert after[reason] == before[reason] + 1  # this fault, counted once under its reason
    other = "error" if reason == "timeout" else "timeout"
    assert after[other] == before[other]
