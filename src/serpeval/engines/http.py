"""HTTP engines: a generic JSON search endpoint and presets for Elasticsearch/OpenSearch, Solr, Vespa.

An :class:`HttpEngine` sends one request per query (Elasticsearch/OpenSearch: batches through
``_msearch``), with a bounded number of requests in flight, a rate limit, a per-request
timeout, retries with exponential backoff (timeouts, connection errors, HTTP 429 and 5xx) and
a resumable cache (a JSON-lines file keyed by the config hash, the query and ``k``).

The request is a **template**: every string in it (URL path, query-string values, JSON body
keys and values, NDJSON header) may hold ``{{query}}``, ``{{size}}`` and ``{{name}}`` for any
named parameter. A string that is exactly one placeholder takes the parameter's own type
(``"size": "{{size}}"`` sends the number 10); inside a longer string the value is inserted
as text. A placeholder without a value is refused when the engine is made, naming it; so is
a parameter given to :func:`http_engine` (``--param``, a swept value) that no placeholder
reads, and ``query`` or ``size`` given as a parameter (they are the topic text and ``k``).

The response is read by dotted **paths**: ``hits`` to the list of hits, ``id`` and ``score``
inside a hit (``hits.hits``, ``_id``, ``_score`` for Elasticsearch). ``id_pattern``, a regular
expression with one group, extracts the doc id from the id string (Vespa's
``id:ns:type::doc-1`` -> ``doc-1``).

Presets (the request and response shapes of the engines' published APIs):

==================  ==================================================================  ===========================
preset              request                                                             hits / id / score
==================  ==================================================================  ===========================
``elasticsearch``   ``POST {url}/{index}/_search`` body ``{"query": {"match": {field:    ``hits.hits`` / ``_id`` /
(``opensearch``)    query}}, "size": k, "_source": false}``; batched: ``POST                ``_score``; ``_msearch``:
                    {url}/{index}/_msearch``, NDJSON ``{}`` header + body per query      ``responses[i]``
``solr``            ``GET {url}/solr/{collection}/select?q=...&defType=edismax&qf=...      ``response.docs`` / ``id`` /
                    &rows=k&fl=id,score&wt=json``                                        ``score``
``vespa``           ``POST {url}/search/`` body ``{"yql": "select * from sources * where  ``root.children`` / ``id``
                    userQuery()", "query": ..., "hits": k, "ranking": ...}``              (``::`` suffix) /
                                                                                         ``relevance``
==================  ==================================================================  ===========================

What counts, never silently: a list shorter than ``k`` (counted per query), a doc id twice in
one answer (the first, higher-ranked occurrence kept, the others counted), a query that fails
after its retries (an :class:`EngineError` naming the query and the engine's answer, or with
``on_error="skip"`` a counted, reported skip).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from serpeval.core import strict_json
from serpeval.core.errors import InputError, OptionError, SerpevalError
from serpeval.engines.base import Hit

if TYPE_CHECKING:
    import httpx

__all__ = [
    "PRESETS",
    "EngineError",
    "Fetched",
    "HttpEngine",
    "http_engine",
    "load_engine_config",
]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class EngineError(SerpevalError):
    """A search engine did not answer a query usefully (after retries); the message names the
    engine, the query and the engine's answer."""


#: The presets: request template, response paths and defaults of each engine family.
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "elasticsearch": {
        "request": {"method": "POST", "path": "/{{index}}/_search",
                    "body": {"query": {"match": {"{{field}}": "{{query}}"}}, "size": "{{size}}", "_source": False}},
        "batch": {"path": "/{{index}}/_msearch", "header": {}},
        "response": {"hits": "hits.hits", "id": "_id", "score": "_score"},
        "params": {"field": "text"},
    },
    "solr": {
        "request": {"method": "GET", "path": "/solr/{{collection}}/select",
                    "query_params": {"q": "{{query}}", "defType": "edismax", "qf": "{{qf}}", "rows": "{{size}}",
                                     "fl": "{{id_field}},score", "wt": "json"}},
        "response": {"hits": "response.docs", "id": "{{id_field}}", "score": "score"},
        "params": {"qf": "text", "id_field": "id"},
    },
    "vespa": {
        "request": {"method": "POST", "path": "/search/",
                    "body": {"yql": "select * from sources * where userQuery()", "query": "{{query}}",
                             "hits": "{{size}}", "ranking": "{{ranking}}"}},
        "response": {"hits": "root.children", "id": "id", "score": "relevance", "errors": "root.errors",
                     "id_pattern": r"^id:[^:]*:[^:]*:[^:]*:(.*)$"},
        "params": {"ranking": "default"},
    },
})
_ALIASES = {"opensearch": "elasticsearch", "es": "elasticsearch", "os": "elasticsearch", "generic": None}

_HTTP_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "concurrency": 8, "rate": 0.0, "timeout": 10.0, "retries": 3, "backoff": 0.5, "batch": 0,
})


@dataclass
class Fetched:
    """What a batch of requests gave: the hits per query (None where a query failed and
    ``on_error="skip"``) and the counts a run's report shows."""

    hits: list[list[Hit] | None]
    requests: int = 0
    retries: int = 0
    cached: int = 0
    duplicates_removed: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)  # (query position, message)


def load_engine_config(path: str | Path) -> dict[str, Any]:
    """Read an engine config (TOML, or JSON when the name ends in ``.json``).

    Raises:
        InputError: unreadable, not TOML/JSON, or not a table at the top.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{source}: cannot read the engine config ({exc.strerror or exc}).") from None
    try:
        if source.suffix.lower() == ".json":
            config = json.loads(text)
        else:
            import tomllib

            config = tomllib.loads(text)
    except (ValueError, json.JSONDecodeError) as exc:
        kind = "JSON" if source.suffix.lower() == ".json" else "TOML"
        raise InputError(f"{source}: not valid {kind} ({exc}); see docs/how-to/retrieve-and-sweep.md for the "
                         "engine config format.") from None
    if not isinstance(config, dict):
        raise InputError(f"{source}: an engine config is a table of settings, found {type(config).__name__}.")
    config.setdefault("_source", str(source))
    return config


def http_engine(config: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> HttpEngine:
    """An :class:`HttpEngine` from a config mapping (:func:`load_engine_config`'s result), with
    ``params`` overriding the config's ``[params]`` (``--param name=value``).

    Config keys: ``preset`` (``elasticsearch``, ``opensearch``, ``solr``, ``vespa`` or
    ``generic``), ``url``, ``name``, ``index`` / ``collection`` (shorthands for those
    parameters), ``[params]``, ``[request]`` (``method``, ``path``, ``query_params``,
    ``body``, ``headers``), ``[batch]`` (``path``, ``header``: an ``_msearch``-style NDJSON
    batch), ``[response]`` (``hits``, ``id``, ``score``, ``errors``, ``id_pattern``) and
    ``[http]`` (``concurrency``, ``rate`` requests/s (0 = no limit), ``timeout`` seconds,
    ``retries``, ``backoff`` seconds, ``batch`` queries per batched request, ``cache`` a file).

    Raises:
        OptionError: an unknown key or preset, a missing url or response path, a template
            placeholder without a value, a ``params`` name no placeholder reads (or ``query``,
            ``size``), a bad number, ``batch > 0`` for an engine without a batched request.
    """
    where = config.get("_source", "engine config")
    known = {"preset", "url", "name", "index", "collection", "params", "request", "batch", "response", "http",
             "_source"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise OptionError(f"{where}: unknown key(s) {', '.join(unknown)}; an engine config takes "
                          f"{', '.join(sorted(known - {'_source'}))}.")
    preset_name = str(config.get("preset", "generic")).lower()
    if preset_name not in PRESETS and preset_name not in _ALIASES:
        raise OptionError(f"{where}: preset {preset_name!r} is unknown; choose one of "
                          f"{', '.join([*PRESETS, 'opensearch', 'generic'])}.")
    base_name = _ALIASES.get(preset_name, preset_name)
    preset: Mapping[str, Any] = PRESETS[base_name] if base_name else {}
    url = config.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise OptionError(f"{where}: url must be an http:// or https:// address of the engine, found {url!r}.")
    merged_params: dict[str, Any] = dict(preset.get("params", {}))
    for key in ("index", "collection"):
        if key in config:
            merged_params[key] = config[key]
    merged_params.update(config.get("params", {}))
    merged_params.update(params or {})
    request = {**preset.get("request", {}), **config.get("request", {})}
    response = {**preset.get("response", {}), **config.get("response", {})}
    batch_cfg = config.get("batch", preset.get("batch"))
    http = {**_HTTP_DEFAULTS, **config.get("http", {})}
    if params:  # a parameter no placeholder reads would be recorded as applied, and change nothing
        used = _placeholders([request, batch_cfg, response])
        for name in params:
            if name in ("query", "size"):
                raise OptionError(f"{where}: parameter {name!r} cannot be set: {{{{{name}}}}} is "
                                  f"{'the topic text' if name == 'query' else 'k, the documents per query (-k)'}.")
            if name not in used:
                import difflib

                names = sorted(used - {"query", "size"})
                close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise OptionError(
                    f"{where}: parameter {name!r} is not used: the request template has no {{{{{name}}}}}; its "
                    f"parameters are {', '.join(names) or 'none'}.{hint}")
    unknown_http = sorted(set(http) - {*_HTTP_DEFAULTS, "cache", "headers"})
    if unknown_http:
        raise OptionError(f"{where}: unknown [http] key(s) {', '.join(unknown_http)}; it takes "
                          f"{', '.join([*_HTTP_DEFAULTS, 'cache', 'headers'])}.")
    batch_size = _number(http, "batch", str(where), integer=True)
    if batch_size > 0 and not batch_cfg:
        raise OptionError(f"{where}: [http] batch = {batch_size}, but this engine has no batched request (only the "
                          "elasticsearch/opensearch presets have one, _msearch; a generic engine needs a [batch] "
                          "table with path and header); remove batch or set it to 0.")
    return HttpEngine(
        url=url.rstrip("/"), request=request, response=response, params=merged_params,
        batch=batch_cfg if batch_size > 0 else None,
        name=str(config.get("name") or preset_name), http=http, where=str(where),
    )


class HttpEngine:
    """A search engine behind HTTP (an :class:`~serpeval.engines.base.AsyncEngine`).

    Made by :func:`http_engine`. ``params`` are the named template parameters.
    """

    def __init__(self, *, url: str, request: Mapping[str, Any], response: Mapping[str, Any],
                 params: Mapping[str, Any], batch: Mapping[str, Any] | None, name: str, http: Mapping[str, Any],
                 where: str = "engine config") -> None:
        self.url = url
        self.name = name
        self.where = where
        self.params: Mapping[str, Any] = MappingProxyType(dict(params))
        self._request = dict(request)
        self._batch = dict(batch) if batch else None
        self.concurrency = _number(http, "concurrency", where, integer=True, minimum=1)
        self.rate = _number(http, "rate", where, minimum=0)
        self.timeout = _number(http, "timeout", where, minimum=0.001)
        self.retries = _number(http, "retries", where, integer=True, minimum=0)
        self.backoff = _number(http, "backoff", where, minimum=0)
        self.batch_size = _number(http, "batch", where, integer=True, minimum=0) if batch else 0
        self.cache_path = Path(http["cache"]) if http.get("cache") else None
        self.headers = dict(http.get("headers") or {})
        method = str(self._request.get("method", "POST")).upper()
        if method not in ("GET", "POST"):
            raise OptionError(f"{where}: request method {method!r}; expected GET or POST.")
        self._request["method"] = method
        if "path" not in self._request:
            raise OptionError(f"{where}: [request] needs a path (e.g. \"/my-index/_search\").")
        resolved = {k: _substitute(v, self.params) if isinstance(v, str) else v for k, v in response.items()}
        for key in ("hits", "id", "score"):
            if not isinstance(resolved.get(key), str) or not resolved[key]:
                raise OptionError(f"{where}: [response] needs {key!r}, a dotted path "
                                  "(e.g. hits = \"hits.hits\", id = \"_id\", score = \"_score\").")
        self._hits_path = _path(resolved["hits"])
        self._id_path = _path(resolved["id"])
        self._score_path = _path(resolved["score"])
        self._errors_path = _path(resolved["errors"]) if resolved.get("errors") else None
        try:
            self._id_pattern = re.compile(resolved["id_pattern"]) if resolved.get("id_pattern") else None
        except re.error as exc:
            raise OptionError(f"{where}: id_pattern {resolved['id_pattern']!r} is not a regular expression ({exc}).") \
                from None
        self._response = resolved
        missing = sorted(_placeholders([self._request, self._batch, response]) - {"query", "size"} - set(self.params))
        if missing:
            raise OptionError(
                f"{where}: the request template uses {', '.join('{{' + m + '}}' for m in missing)} but no value "
                f"is given; add {' and '.join(repr(m) for m in missing)} under [params] or pass "
                f"--param {missing[0]}=VALUE."
            )
        self._cache: dict[str, list[list[Any]]] | None = None
        self._cache_lock = threading.Lock()
        self._hash: str | None = None

    def __repr__(self) -> str:
        return f"HttpEngine({self.name!r}, {self.url})"

    # ------------------------------------------------------------------ identity

    def config_hash(self) -> str:
        """Digest of the URL, the request template, the response paths and the parameters."""
        text = strict_json.compact({"engine": "http", "url": self.url, "request": self._request, "batch": self._batch,
                                    "response": self._response, "params": dict(self.params)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    # ------------------------------------------------------------------ requests

    def build_request(self, query: str, k: int) -> dict[str, Any]:
        """The request for one query: ``method``, ``url``, ``params`` (query string), ``json``."""
        values = {**self.params, "query": query, "size": k}
        request = _substitute(self._request, values)
        built: dict[str, Any] = {"method": request["method"], "url": self.url + request["path"]}
        if request.get("query_params"):
            built["params"] = {k2: _text(v) for k2, v in request["query_params"].items()}
        if "body" in request and request["method"] == "POST":
            built["json"] = request["body"]
        if request.get("headers"):
            built["headers"] = {k2: str(v) for k2, v in request["headers"].items()}
        return built

    def build_batch(self, queries: Sequence[str], k: int) -> dict[str, Any]:
        """One ``_msearch``-style request: NDJSON header + body per query."""
        assert self._batch is not None
        lines = []
        for query in queries:
            values = {**self.params, "query": query, "size": k}
            lines.append(strict_json.compact(_substitute(self._batch.get("header", {}), values)))
            lines.append(strict_json.compact(_substitute(self._request.get("body", {}), values)))
        path = _substitute(self._batch["path"], dict(self.params))
        return {"method": "POST", "url": self.url + path, "content": ("\n".join(lines) + "\n").encode(),
                "headers": {"Content-Type": "application/x-ndjson"}}

    def parse_hits(self, answer: Any, query: str, k: int) -> tuple[list[Hit], int]:
        """Hits from one search answer (a parsed JSON object), duplicates removed (counted).

        Raises:
            EngineError: the answer reports errors, or lacks the hits list, an id or a score.
        """
        if self._errors_path is not None:
            errors = _get(answer, self._errors_path)
            if errors:
                raise EngineError(self._say(query, f"the engine reported errors: {_short(errors)}"))
        items = _get(answer, self._hits_path)
        if items is None and self._hits_path and self._hits_path[-1] == "children":
            items = [] if isinstance(_get(answer, self._hits_path[:-1]), dict) else None  # Vespa: no hits, no list
        if not isinstance(items, list):
            raise EngineError(self._say(query, f"no hit list at {'.'.join(self._hits_path)!r} in the answer "
                                               f"{_short(answer)}; set [response] hits to its path."))
        hits: list[Hit] = []
        seen: set[str] = set()
        duplicates = 0
        for position, item in enumerate(items[:k] if len(items) > k else items, 1):
            doc = _get(item, self._id_path)
            score = _get(item, self._score_path)
            if isinstance(doc, int) and not isinstance(doc, bool):
                doc = str(doc)
            if not isinstance(doc, str) or not doc:
                raise EngineError(self._say(query, f"hit {position} has no id at {'.'.join(self._id_path)!r}: "
                                                   f"{_short(item)}"))
            if self._id_pattern is not None:
                match = self._id_pattern.match(doc)
                if match is None:
                    raise EngineError(self._say(query, f"hit {position}'s id {doc!r} does not match id_pattern "
                                                       f"{self._id_pattern.pattern!r}"))
                doc = match.group(1)
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise EngineError(self._say(query, f"hit {position} ({doc}) has no finite score at "
                                                   f"{'.'.join(self._score_path)!r}: {_short(item)}"))
            if doc in seen:
                duplicates += 1
                continue
            seen.add(doc)
            hits.append(Hit(doc, float(score)))
        return hits, duplicates

    def _say(self, query: str, what: str) -> str:
        return f"engine {self.name!r} ({self.url}), query {query!r}: {what}"

    # ------------------------------------------------------------------ async paths

    async def asearch(self, client: httpx.AsyncClient, query: str, k: int) -> list[Hit]:
        """One query as one request on ``client`` (no cache, no retries): for a serving path,
        where an answer holding a document twice is refused (:class:`EngineError`), not
        repaired as the batch path repairs it (counted): serve shows the control's list and
        leaves such an impression out, as for any other faulty answer."""
        answer = await self._send(client, self.build_request(query, k), query)
        hits, duplicates = self.parse_hits(answer, query, k)
        if duplicates:
            raise EngineError(self._say(query, f"the answer holds {duplicates} document(s) a second time"))
        return hits

    def _interpret(self, status: int, content_type: str, text: str, query: str) -> Any:
        """The parsed answer, or the error its status or body calls for (both transports)."""
        if status == 429 or status >= 500:
            raise _Retryable(self._say(query, f"HTTP {status}: {_short(text)}"))
        if status >= 400:
            raise EngineError(self._say(query, f"HTTP {status}: {_short(text)}"))
        try:
            return json.loads(text)
        except ValueError:
            raise EngineError(self._say(query, f"the answer is not JSON (Content-Type {content_type or 'none'!r}): "
                                               f"{_short(text)}")) from None

    def _timeout(self, query: str) -> _Retryable:
        return _Retryable(self._say(query, f"no answer within the {self.timeout:g} s timeout"))

    def _unreachable(self, query: str, exc: Exception) -> _Retryable:
        return _Retryable(self._say(query, f"cannot connect ({exc.__class__.__name__}: {exc})"))

    def _give_up(self, exc: Exception) -> EngineError:
        tries = f" (after {self.retries} retr{'y' if self.retries == 1 else 'ies'})" if self.retries else ""
        return EngineError(f"{exc}{tries}")

    def _plan(self, queries: Sequence[str], k: int, on_error: str) -> tuple[Fetched, list[list[int]]]:
        """The cached answers, and the groups of queries (one, or an ``_msearch`` batch) to ask."""
        if on_error not in ("raise", "skip"):
            raise OptionError(f"on_error={on_error!r}; expected 'raise' or 'skip'.")
        out = Fetched(hits=[None] * len(queries))
        cache = self._load_cache()
        todo: list[int] = []
        for i, query in enumerate(queries):
            cached = cache.get(self._key(query, k))
            if cached is not None:
                out.hits[i] = [Hit(d, s) for d, s in cached]
                out.cached += 1
            else:
                todo.append(i)
        if self._batch is not None and self.batch_size > 0:
            groups = [todo[i:i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
        else:
            groups = [[i] for i in todo]
        return out, groups

    def _group_request(self, queries: Sequence[str], group: list[int], k: int) -> dict[str, Any]:
        if self._batch is not None and self.batch_size > 0:
            return self.build_batch([queries[i] for i in group], k)
        return self.build_request(queries[group[0]], k)

    def _group_answers(self, answer: Any, queries: Sequence[str], group: list[int]) -> list[Any]:
        if self._batch is not None and self.batch_size > 0:
            return _batch_answers(answer, len(group), self._say(queries[group[0]], ""))
        return [answer]

    def _absorb(self, out: Fetched, queries: Sequence[str], group: list[int], answers: list[Any], k: int,
                on_error: str) -> None:
        """Parse a group's answers into ``out`` (errors raised, or counted with ``on_error="skip"``)."""
        for i, answer in zip(group, answers, strict=True):
            try:
                if isinstance(answer, dict) and answer.get("error") is not None and "hits" not in answer:
                    raise EngineError(self._say(queries[i], f"the engine answered with an error (status "
                                                            f"{answer.get('status', '?')}): {_short(answer['error'])}"))
                hits, duplicates = self.parse_hits(answer, queries[i], k)
            except EngineError as exc:
                if on_error == "raise":
                    raise
                out.failures.append((i, str(exc)))
                continue
            out.hits[i] = hits
            out.duplicates_removed += duplicates
            self._store(queries[i], k, hits)

    # ------------------------------------------------------------------ async (httpx)

    async def _send(self, client: httpx.AsyncClient, request: Mapping[str, Any], query: str) -> Any:
        import httpx

        try:
            response = await client.request(**request, timeout=self.timeout)
        except httpx.TimeoutException:
            raise self._timeout(query) from None
        except httpx.TransportError as exc:
            raise self._unreachable(query, exc) from None
        return self._interpret(response.status_code, response.headers.get("content-type", ""), response.text, query)

    async def _with_retries(self, client: httpx.AsyncClient, request: Mapping[str, Any], query: str,
                            limiter: _RateLimiter, counts: Fetched) -> Any:
        for attempt in range(self.retries + 1):
            await limiter.wait()
            counts.requests += 1
            try:
                return await self._send(client, request, query)
            except _Retryable as exc:
                if attempt == self.retries:
                    raise self._give_up(exc) from None
                counts.retries += 1
                await asyncio.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def afetch(self, queries: Sequence[str], k: int, *, on_error: str = "raise",
                     progress: Callable[[int, int], None] | None = None,
                     client: httpx.AsyncClient | None = None) -> Fetched:
        """:meth:`fetch` on an event loop (httpx): for callers that already run one (``serve``)."""
        import httpx

        out, groups = self._plan(queries, k, on_error)
        done = out.cached
        if progress is not None:
            progress(done, len(queries))
        limiter = _RateLimiter(self.rate)
        semaphore = asyncio.Semaphore(self.concurrency)
        own = client is None
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        session = client or httpx.AsyncClient(limits=limits, headers=self.headers)

        async def one(group: list[int]) -> None:
            nonlocal done
            async with semaphore:
                try:
                    answer = await self._with_retries(session, self._group_request(queries, group, k),
                                                      queries[group[0]], limiter, out)
                    answers = self._group_answers(answer, queries, group)
                except EngineError as exc:
                    if on_error == "raise":
                        raise
                    out.failures.extend((i, str(exc)) for i in group)
                    answers = []
                self._absorb(out, queries, group[:len(answers)], answers, k, on_error)
                done += len(group)
                if progress is not None:
                    progress(done, len(queries))

        try:
            async with asyncio.TaskGroup() as tasks:  # the first error cancels the requests still out
                for group in groups:
                    tasks.create_task(one(group))
        except ExceptionGroup as group_error:
            first = group_error.exceptions[0]
            while isinstance(first, ExceptionGroup):
                first = first.exceptions[0]
            raise first from None
        finally:
            if own:
                await session.aclose()
        out.failures.sort()
        return out

    # ------------------------------------------------------------------ threads (urllib3)

    def _send_sync(self, pool: Any, request: Mapping[str, Any], query: str) -> Any:
        import urllib3

        url = request["url"]
        if request.get("params"):
            from urllib.parse import urlencode

            url += ("&" if "?" in url else "?") + urlencode(request["params"])
        headers = {**self.headers, **(request.get("headers") or {})}
        body = request.get("content")
        if "json" in request:
            body = strict_json.compact(request["json"]).encode()
            headers.setdefault("Content-Type", "application/json")
        try:
            response = pool.request(request["method"], url, body=body, headers=headers or None, retries=False,
                                    timeout=urllib3.Timeout(total=self.timeout), preload_content=True)
        except urllib3.exceptions.NewConnectionError as exc:  # a subclass of ConnectTimeoutError: first
            raise self._unreachable(query, exc) from None
        except urllib3.exceptions.TimeoutError:
            raise self._timeout(query) from None
        except urllib3.exceptions.HTTPError as exc:
            raise self._unreachable(query, exc) from None
        text = response.data.decode(_charset(response.headers.get("content-type", "")), "replace")
        return self._interpret(response.status, response.headers.get("content-type", ""), text, query)

    def fetch(self, queries: Sequence[str], k: int, *, on_error: str = "raise",
              progress: Callable[[int, int], None] | None = None) -> Fetched:
        """Every query's hits: through the cache, ``concurrency`` requests in flight (threads
        sharing one urllib3 connection pool: about 4x the throughput of an httpx event loop on
        the machines measured, bench/results/engine.md), retries with backoff, the rate limit.

        Raises:
            EngineError: with ``on_error="raise"``, the first query that failed (the requests
                not yet sent are not sent).
        """

        import urllib3

        out, groups = self._plan(queries, k, on_error)
        done = out.cached
        if progress is not None:
            progress(done, len(queries))
        pool = urllib3.PoolManager(maxsize=self.concurrency, block=True)
        limiter = _SyncRateLimiter(self.rate)
        stop = threading.Event()
        lock = threading.Lock()

        def work(group: list[int]) -> None:
            nonlocal done
            if stop.is_set():
                return
            request = self._group_request(queries, group, k)
            try:
                answer = None
                for attempt in range(self.retries + 1):
                    limiter.wait()
                    with lock:
                        out.requests += 1
                    try:
                        answer = self._send_sync(pool, request, queries[group[0]])
                        break
                    except _Retryable as exc:
                        if attempt == self.retries:
                            raise self._give_up(exc) from None
                        with lock:
                            out.retries += 1
                        time.sleep(self.backoff * 2**attempt)
                answers = self._group_answers(answer, queries, group)
            except EngineError as exc:
                if on_error == "raise":
                    stop.set()
                    raise
                with lock:
                    out.failures.extend((i, str(exc)) for i in group)
                answers = []
            with lock:
                try:
                    self._absorb(out, queries, group[:len(answers)], answers, k, on_error)
                except EngineError:
                    stop.set()
                    raise
                done += len(group)
                if progress is not None:
                    progress(done, len(queries))

        try:
            with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="serpeval-http") as workers:
                futures = [workers.submit(work, group) for group in groups]
                wait(futures)
            for future in futures:
                error = future.exception()
                if error is not None:
                    raise error
        finally:
            pool.clear()
        out.failures.sort()
        return out

    def search(self, query: str, k: int) -> list[Hit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        fetched = self.fetch(queries, k)
        return [hits or [] for hits in fetched.hits]

    # ------------------------------------------------------------------ cache

    def _key(self, query: str, k: int) -> str:
        if self._hash is None:
            self._hash = self.config_hash()
        return hashlib.sha256(f"{self._hash}\x00{k}\x00{query}".encode()).hexdigest()[:24]

    def _load_cache(self) -> dict[str, list[list[Any]]]:
        with self._cache_lock:
            if self._cache is None:
                self._cache = {}
                if self.cache_path is not None and self.cache_path.exists():
                    for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                        try:
                            record = json.loads(line)
                            self._cache[record["key"]] = record["hits"]
                        except (ValueError, KeyError, TypeError):
                            continue  # a line cut by an interrupted write: that query is asked again
            return self._cache

    def _store(self, query: str, k: int, hits: list[Hit]) -> None:
        key = self._key(query, k)
        pairs = [[h.doc_id, h.score] for h in hits]
        with self._cache_lock:
            if self._cache is not None:
                self._cache[key] = pairs
            if self.cache_path is not None:
                with self.cache_path.open("a", encoding="utf-8") as handle:
                    handle.write(strict_json.compact({"key": key, "query": query, "k": k, "hits": pairs}) + "\n")


class _Retryable(EngineError):
    """A failure worth another try: a timeout, a connection error, HTTP 429 or 5xx."""


class _SyncRateLimiter:
    """At most ``rate`` request starts per second across threads (0: no limit), spaced evenly."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            delay = self.next - now
            self.next = max(now, self.next) + self.interval
        if delay > 0:
            time.sleep(delay)


def _charset(content_type: str) -> str:
    """The answer's declared charset; UTF-8 when none is declared or Python does not know it."""
    import codecs

    match = re.search(r"charset=([\w.-]+)", content_type, re.IGNORECASE)
    if match is None:
        return "utf-8"
    try:
        return codecs.lookup(match.group(1)).name
    except LookupError:
        return "utf-8"


class _RateLimiter:
    """At most ``rate`` request starts per second (0: no limit), spaced evenly."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next - now
            self.next = max(now, self.next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def _batch_answers(batch: Any, expected: int, prefix: str) -> list[Any]:
    responses = batch.get("responses") if isinstance(batch, dict) else None
    if not isinstance(responses, list) or len(responses) != expected:
        found = "no responses list" if not isinstance(responses, list) else f"{len(responses)} responses"
        raise EngineError(f"{prefix}the batched (_msearch) answer should hold {expected} responses, found {found}: "
                          f"{_short(batch)}")
    return responses


def _number(http: Mapping[str, Any], key: str, where: str, *, integer: bool = False, minimum: float = 0) -> Any:
    value: Any = http.get(key)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= minimum
    if integer:
        ok = ok and float(value).is_integer()
    if not ok:
        kind = "an integer" if integer else "a number"
        raise OptionError(f"{where}: [http] {key} = {value!r}; expected {kind} >= {minimum:g}.")
    return int(value) if integer else float(value)


def _path(dotted: str) -> list[str]:
    return [part for part in dotted.split(".") if part]


def _get(obj: Any, path: Sequence[str]) -> Any:
    for part in path:
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def _placeholders(template: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(template, str):
        found.update(_PLACEHOLDER.findall(template))
    elif isinstance(template, dict):
        for key, value in template.items():
            found |= _placeholders(key) | _placeholders(value)
    elif isinstance(template, list | tuple):
        for value in template:
            found |= _placeholders(value)
    return found


def _substitute(template: Any, values: Mapping[str, Any]) -> Any:
    """Fill ``{{name}}`` placeholders; a string that is exactly one placeholder takes the value's type."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template.strip())
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]) if m.group(1) in values else m.group(0),
                                template)
    if isinstance(template, dict):
        return {_text(_substitute(k, values)): _substitute(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [_substitute(v, values) for v in template]
    return template


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else strict_json.quote(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."
