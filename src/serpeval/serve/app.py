"""The ASGI app of ``serpeval serve`` (Starlette; run under uvicorn).

Routes:

- ``GET /search?q=...&user=...&session=...`` → ``{"query_id", "experiment", "variant",
  "interleaved", "hits": [{"id", "team"}, ...]}``. Interleaving: every backend is called
  concurrently (inline ones, which never wait, in turn) under ``deadline_ms``; the lists are
  interleaved with coins seeded by (experiment, query_id). A/B: the user's arm (salted hash)
  answers. When a needed backend fails or is late the control's list is served, the
  impression is logged with ``excluded`` (left out of the analysis, counted), and the answer
  is still 200.
- ``POST /events``: one UBI event, a list, or ``{"events": [...]}``; 200 ``{"written",
  "duplicates", "orphans"}`` only after the commit; 4xx ``{"error": one line}`` for bad input;
  503 with ``Retry-After`` when the store cannot commit.
- ``GET /healthz``, ``GET /metrics`` (Prometheus text), ``GET /openapi.json``.

Every impression is written to ``ubi_queries`` through the group-commit writer without
delaying the answer; an impression that could not be stored is counted
(``serpeval_impressions_lost_total``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from serpeval.core.errors import InputError, SerpevalError
from serpeval.online.events.schema import EVENT_SCHEMA, NO_DOCUMENT, validate_events
from serpeval.online.events.store import EventStore, GroupWriter, StoreUnavailable, query_row
from serpeval.online.events.writer_process import ProcessWriter
from serpeval.serve.backends import Backend, BackendFault
from serpeval.serve.config import ServeConfig
from serpeval.serve.design import assign_variant, derive_seed, interleave_impression

__all__ = ["create_app"]

_MAX_QUERY = 1024
_MAX_ID = 100
_LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class _Metrics:
    """The Prometheus series of one app (its own registry: two apps in one process do not mix)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("serpeval_requests", "HTTP requests by route and status", ["route", "status"],
                                registry=r)
        self.latency = Histogram("serpeval_request_seconds", "request latency by route", ["route"],
                                 buckets=_LATENCY_BUCKETS, registry=r)
        self.backend_latency = Histogram("serpeval_backend_seconds", "backend latency (answers in time)",
                                         ["backend"], buckets=_LATENCY_BUCKETS, registry=r)
        self.backend_faults = Counter("serpeval_backend_faults", "backend errors, timeouts and junk answers",
                                      ["backend", "reason"], registry=r)
        self.impressions = Counter("serpeval_impressions", "impressions served by outcome", ["outcome"], registry=r)
        self.impressions_lost = Counter("serpeval_impressions_lost", "impressions the store could not write",
                                        registry=r)
        self.events_written = Counter("serpeval_events_written", "events committed to the store", registry=r)
        self.events_duplicate = Counter("serpeval_events_duplicate", "events already stored (retries)", registry=r)
        self.events_orphan = Counter("serpeval_events_orphan", "events written whose query_id is unknown",
                                     registry=r)
        self.events_refused = Counter("serpeval_events_refused", "events refused by reason", ["reason"], registry=r)
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}

    def child(self, metric: Any, *values: str) -> Any:
        """``metric.labels(*values)``, looked up once per label set: prometheus_client checks
        the values and takes a lock on every ``labels`` call (a few per request). A series is
        still created at its first use only, so ``/metrics`` lists the same series."""
        key = (id(metric), values)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*values)
        return found


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _text_param(params: Any, name: str, limit: int, required: bool = False) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise InputError(f"parameter {name} is required (e.g. /search?{name}=...).")
        return None
    if len(value) > limit:
        raise InputError(f"parameter {name} is {len(value)} characters long; at most {limit}.")
    if "\x00" in value:  # PostgreSQL's text cannot hold it: the impression could not be stored
        raise InputError(f"parameter {name} holds a NUL character (%00); remove it.")
    return str(value)


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 description of the routes (what fuzzers and clients read)."""

    event = {k: v for k, v in EVENT_SCHEMA.items() if not k.startswith("$")}
    err = {"description": "one-line reason", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "serpeval serve", "version": "1"},
        "paths": {
            "/search": {"get": {
                "parameters": [
                    {"name": "q", "in": "query", "required": True,
                     "schema": {"type": "string", "maxLength": _MAX_QUERY}},
                    {"name": "user", "in": "query", "schema": {"type": "string", "maxLength": _MAX_ID}},
                    {"name": "session", "in": "query", "schema": {"type": "string", "maxLength": _MAX_ID}},
                    {"name": "experiment", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "the list to show"}, "400": err, "404": err}}},
            "/events": {"post": {
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "oneOf": [event, {"type": "array", "items": event}]}}}},
                "responses": {"200": {"description": "committed"}, "400": err, "401": err, "413": err,
                              "415": err, "422": err, "503": err}}},
            "/healthz": {"get": {"responses": {"200": {"description": "alive"}}}},
            "/metrics": {"get": {"responses": {"200": {"description": "Prometheus text"}}}},
        },
    }


def create_app(config: ServeConfig, backends: list[Backend], store: EventStore | None = None, *,
               query_ids: Callable[[], str] | None = None, writer: ProcessWriter | None = None) -> Any:
    """The Starlette app serving ``config``'s experiment with ``backends`` (in the config's order)
    and writing to ``store`` (default: the config's store, written by a child process, see
    :mod:`serpeval.online.events.writer_process`, or by a thread of this one when
    ``config.store_process`` is false; a given ``store`` is written by a thread; a given
    ``writer``, started earlier with ``wait=False``, is waited for here). ``query_ids`` makes
    the query ids (default: random UUID4 hex; tests pass a counter to be reproducible)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    if [b.name for b in backends] != [b.name for b in config.backends]:
        raise InputError("the backends do not match the config's (names and order).")
    metrics = _Metrics()
    state: dict[str, Any] = {"store_ok": True}
    group: GroupWriter | ProcessWriter
    if store is not None:
        group = GroupWriter(store)
        store_kind, store_label = store.kind, store._label()
    elif writer is not None or config.store_process:  # the store's work off the serving process
        group = writer if writer is not None else ProcessWriter(config.store)
        group.ready()
        store_kind, store_label = group.kind, group.label
    else:
        store = EventStore(config.store)
        group = GroupWriter(store)
        store_kind, store_label = store.kind, store._label()
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=max(4, 2 * len(backends)),
                                                     thread_name_prefix="serpeval-backend")
    control = backends[0]
    labels = [b.name for b in backends]
    deadline = config.deadline_ms / 1000.0
    salt = config.salt or config.experiment
    new_query_id = query_ids or (lambda: uuid.uuid4().hex)

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        client = None
        if any(b.is_async for b in backends):
            import httpx

            client = httpx.AsyncClient()
        state["client"] = client
        try:
            yield
        finally:
            if client is not None:
                await client.aclose()
            await asyncio.get_running_loop().run_in_executor(None, group.close)
            executor.shutdown(wait=False, cancel_futures=True)

    async def fetch(backend: Backend, query: str) -> list[str]:
        start = time.perf_counter()
        try:
            ids = await backend.fetch(query, config.k, deadline, client=state.get("client"), executor=executor)
        except BackendFault as fault:
            metrics.child(metrics.backend_faults, backend.name, fault.reason).inc()
            raise
        metrics.child(metrics.backend_latency, backend.name).observe(time.perf_counter() - start)
        return ids

    all_inline = all(b.inline for b in backends)

    async def fetch_all(query: str) -> list[Any]:
        """Every backend's ids or its exception, as ``gather(..., return_exceptions=True)``
        gives them. Inline backends never wait, so gathering them would only run them one
        after the other in tasks of their own: they are called in turn here, without the two
        tasks and loop turns per request."""
        if not all_inline:
            return await asyncio.gather(*(fetch(b, query) for b in backends), return_exceptions=True)
        results: list[Any] = []
        for b in backends:
            try:
                results.append(await fetch(b, query))
            except (Exception, asyncio.CancelledError) as exc:  # what gather returns in its place
                results.append(exc)
        return results

    def log_impression(record: dict[str, Any]) -> None:
        future = group.submit([query_row(record)])

        def done(f: concurrent.futures.Future[Any]) -> None:
            if f.exception() is not None:
                metrics.impressions_lost.inc()
                state["store_ok"] = False

        future.add_done_callback(done)

    async def search(request: Request) -> Response:
        start = time.perf_counter()
        status = 200
        try:
            params = request.query_params
            query = _text_param(params, "q", _MAX_QUERY, required=True)
            user = _text_param(params, "user", _MAX_ID)
            session = _text_param(params, "session", _MAX_ID)
            wanted = params.get("experiment")
            if wanted is not None and wanted != config.experiment:
                status = 404
                return _error(404, f"unknown experiment {wanted[:100]!r}; this service runs {config.experiment!r}.")
            assert query is not None
            body = await _search(query, user, session)
            return JSONResponse(body)
        except InputError as exc:
            status = 400
            return _error(400, str(exc))
        finally:
            metrics.child(metrics.requests, "/search", str(status)).inc()
            metrics.child(metrics.latency, "/search").observe(time.perf_counter() - start)

    async def _search(query: str, user: str | None, session: str | None) -> dict[str, Any]:
        query_id = new_query_id()
        excluded: str | None = None
        interleaving: dict[str, Any] | None = None
        if config.design == "interleaving":
            results = await fetch_all(query)
            faults = [r for r in results if isinstance(r, BaseException)]
            if not faults:
                seed = derive_seed(config.experiment, query_id)
                rankings = [r for r in results if not isinstance(r, BaseException)]
                if any(rankings):
                    shown = interleave_impression(rankings, labels, method=config.method, k=config.k, seed=seed,
                                                  options=config.options)
                    docs, teams, interleaving = list(shown.docs), list(shown.teams), shown.attributes
                    variant = "interleaved"
                else:  # nothing matched anywhere: an empty page, nothing to interleave
                    docs, teams, variant, excluded = [], [], "interleaved", NO_DOCUMENT
            else:
                excluded = "; ".join(str(f) if isinstance(f, BackendFault) else f"{type(f).__name__}"
                                     for f in faults)
                first = results[0]
                docs = [] if isinstance(first, BaseException) else list(first)
                teams = [control.name] * len(docs)
                variant = "control"
        else:
            arm = assign_variant(salt, user or session or query_id, labels, config.weights)
            backend = backends[labels.index(arm)]
            variant = arm
            try:
                docs = await fetch(backend, query)
            except BackendFault as fault:
                excluded = str(fault)
                if backend is control:
                    docs = []
                else:
                    try:
                        docs = await fetch(control, query)
                    except BackendFault as second:
                        excluded += f"; {second}"
                        docs = []
                variant = arm
            teams = [backend.name if excluded is None else control.name] * len(docs)
        outcome = "excluded" if excluded else ("interleaved" if interleaving is not None else "ab")
        metrics.child(metrics.impressions, outcome).inc()
        attributes: dict[str, Any] = {"experiment": config.experiment, "variant": variant, "excluded": excluded}
        if interleaving is not None:
            attributes["interleaving"] = interleaving
        log_impression({
            "query_id": query_id, "application": "serpeval-serve", "client_id": user, "user_id": user,
            "session_id": session, "user_query": query,
            "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="microseconds"),
            "query_response_hit_ids": docs, "query_attributes": attributes,
        })
        return {"query_id": query_id, "experiment": config.experiment, "variant": variant,
                "interleaved": interleaving is not None,
                "hits": [{"id": d, "team": t} for d, t in zip(docs, teams, strict=True)]}

    async def events(request: Request) -> Response:
        start = time.perf_counter()
        response = await _events(request)
        metrics.requests.labels("/events", str(response.status_code)).inc()
        metrics.latency.labels("/events").observe(time.perf_counter() - start)
        return response

    async def _events(request: Request) -> Response:
        if config.api_key:
            given = request.headers.get("authorization", "")
            key = given[7:] if given.lower().startswith("bearer ") else request.headers.get("x-api-key", "")
            import hmac

            if not hmac.compare_digest(key.encode(), config.api_key.encode()):
                metrics.events_refused.labels("unauthorized").inc()
                return _error(401, "missing or wrong API key; send 'Authorization: Bearer <key>'.",
                              {"WWW-Authenticate": "Bearer"})
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in ("application/json", "application/x-ndjson", ""):
            metrics.events_refused.labels("media_type").inc()
            return _error(415, f"content type {kind[:60]!r}; send application/json.")
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > config.max_body_bytes):
            metrics.events_refused.labels("too_large").inc()
            return _error(413, f"body of {declared[:20]} bytes; at most {config.max_body_bytes}.")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > config.max_body_bytes:
                metrics.events_refused.labels("too_large").inc()
                return _error(413, f"body over {config.max_body_bytes} bytes; send smaller batches.")
            chunks.append(chunk)
        raw = b"".join(chunks)
        try:
            payload = json.loads(raw) if kind != "application/x-ndjson" else [
                json.loads(line) for line in raw.splitlines() if line.strip()]
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            metrics.events_refused.labels("malformed").inc()
            return _error(400, f"body is not JSON: {str(exc)[:120]}")
        try:
            rows = validate_events(payload, max_batch=config.max_batch)
        except InputError as exc:
            metrics.events_refused.labels("invalid").inc()
            return _error(422, str(exc))
        future = group.submit([], rows)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), config.write_timeout_s)
        except (StoreUnavailable, TimeoutError) as exc:
            state["store_ok"] = False
            metrics.events_refused.labels("store_unavailable").inc(len(rows))
            message = str(exc) if isinstance(exc, StoreUnavailable) else "the store did not commit in time"
            return _error(503, f"{message.splitlines()[0][:200]}; nothing was acknowledged, retry later.",
                          {"Retry-After": "1"})
        except SerpevalError as exc:  # pragma: no cover - a store-side input error
            metrics.events_refused.labels("invalid").inc()
            return _error(422, str(exc))
        state["store_ok"] = True
        metrics.events_written.inc(result.written)
        metrics.events_duplicate.inc(result.duplicates)
        metrics.events_orphan.inc(result.orphans)
        return JSONResponse({"written": result.written, "duplicates": result.duplicates, "orphans": result.orphans})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok" if state["store_ok"] else "degraded", "store": store_kind,
                             "store_ok": state["store_ok"], "experiment": config.experiment,
                             "design": config.design, "backends": labels})

    async def metrics_route(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def openapi_route(request: Request) -> Response:
        return JSONResponse(openapi())

    middleware = []
    if config.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(Middleware(CORSMiddleware, allow_origins=list(config.cors_origins),
                                     allow_methods=["GET", "POST"], allow_headers=["*"]))

    async def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        return _error(code, f"{request.method} {request.url.path[:100]}: " +
                      ("no such route; see /openapi.json." if code == 404 else "method not allowed."))

    app = Starlette(
        routes=[Route("/search", search, methods=["GET"]), Route("/events", events, methods=["POST"]),
                Route("/healthz", healthz, methods=["GET"]), Route("/metrics", metrics_route, methods=["GET"]),
                Route("/openapi.json", openapi_route, methods=["GET"])],
        middleware=middleware, lifespan=lifespan, exception_handlers={404: not_found, 405: not_found},
    )
    app.state.serpeval = {"metrics": metrics, "writer": group, "store": store, "store_label": store_label,
                          "config": config}
    return app
