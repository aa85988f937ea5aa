"""The rankers behind ``serve``: engines of :mod:`serpeval.engines`, called without blocking the
event loop, each under its own deadline.

- the embedded engine (BM25 over a JSONL corpus) runs inline on the event loop: one query
  costs about 0.1 ms of CPU on Cranfield, less than a hop to a worker thread and back, and
  under the GIL a thread would not run it in parallel anyway, only add waits for the lock to
  the slowest requests (bench/results/serve.md). Its deadline is checked when it returns: a
  late answer is a ``timeout`` fault like any other;
- any other in-process engine (``search`` only, cost unknown) runs in a thread pool, so that a
  hang cannot block the loop;
- an HTTP engine (``asearch``) runs on the app's shared ``httpx.AsyncClient``.

A backend that raises, answers something that is not a list of hits with string ids, repeats
a document, or misses its deadline is a *fault* (:class:`BackendFault`, with a short reason
for the metrics and the impression's ``excluded`` attribute); the app then serves the
control's list. Nothing a backend does becomes a 5xx.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass
from typing import Any

from serpeval.core.errors import OptionError
from serpeval.serve.config import BackendConfig, ServeConfig

__all__ = ["Backend", "BackendFault", "build_backends"]


class BackendFault(Exception):
    """A backend failed, was late or answered junk; ``reason`` is ``timeout``, ``error`` or ``junk``."""

    def __init__(self, backend: str, reason: str, detail: str = "") -> None:
        super().__init__(f"backend {backend}: {reason}{': ' + detail if detail else ''}")
        self.backend = backend
        self.reason = reason


@dataclass
class Backend:
    """One ranker: its team label and engine."""

    name: str
    engine: Any
    is_async: bool
    inline: bool = False

    async def fetch(self, query: str, k: int, deadline_s: float, *, client: Any,
                    executor: concurrent.futures.Executor) -> list[str]:
        """The top ``k`` doc ids, or :class:`BackendFault`."""
        try:
            if self.inline:
                start = time.perf_counter()
                hits = self.engine.search(query, k)
                late = time.perf_counter() - start
                if late > deadline_s:
                    raise BackendFault(self.name, "timeout", f"answered after {1000 * late:.0f} ms")
            elif self.is_async:
                hits = await asyncio.wait_for(self.engine.asearch(client, query, k), deadline_s)
            else:
                loop = asyncio.get_running_loop()
                hits = await asyncio.wait_for(loop.run_in_executor(executor, self.engine.search, query, k),
                                              deadline_s)
        except TimeoutError:
            raise BackendFault(self.name, "timeout") from None
        except (asyncio.CancelledError, BackendFault):
            raise
        except Exception as exc:
            raise BackendFault(self.name, "error", f"{type(exc).__name__}: {str(exc)[:120]}") from None
        return _ids(self.name, hits, k)


def _ids(name: str, hits: Any, k: int) -> list[str]:
    if not isinstance(hits, list):
        raise BackendFault(name, "junk", f"expected a list of hits, got {type(hits).__name__}")
    ids: list[str] = []
    for hit in hits[:k]:
        doc = getattr(hit, "doc_id", None)
        if not isinstance(doc, str) or not doc:
            raise BackendFault(name, "junk", f"a hit without a string doc id ({hit!r:.60})")
        ids.append(doc)
    if len(set(ids)) != len(ids):
        raise BackendFault(name, "junk", "a document appears twice")
    return ids


def _http_engine(config: BackendConfig) -> Any:
    """An HTTP engine of :mod:`serpeval.engines.http` from a backend table: ``kind`` is the
    preset (``elasticsearch``, ``opensearch``, ``solr``, ``vespa``; ``http`` = generic), the
    other keys are the engine config's (url, index, params, request, response, http)."""
    from serpeval.engines.http import http_engine

    preset = "generic" if config.kind == "http" else config.kind
    return http_engine({"preset": preset, "name": config.name, **config.settings,
                        "_source": f"backend {config.name}"})


def _index_key(corpus: str, options: dict[str, Any]) -> tuple[str, str]:
    """The key of an embedded index in :func:`build_backends`'s cache: the corpus path and every
    option passed to :meth:`EmbeddedIndex.build <serpeval.engines.embedded.EmbeddedIndex.build>`
    (``fields``, ``id_field``), as text (a TOML list is not hashable). Two backends share an
    index only when all of it is equal; a backend with ``fields = ["text"]`` next to one with
    ``fields = ["title"]`` on the same file gets its own index, never the other's. Equal
    options written differently (``fields`` left out and ``fields`` naming the fields it
    would default to) build two equal indexes: a wasted build, never a wrong one."""
    return corpus, repr(sorted(options.items()))


def build_backends(config: ServeConfig, *, index_cache: dict[tuple[str, str], Any] | None = None) -> list[Backend]:
    """Engines for every backend of ``config``. Embedded backends with the same corpus and the
    same index options (``fields``, ``id_field``) share one index and differ only in their
    search parameters (``params``: k1, b, ...); see :func:`_index_key`."""
    cache: dict[tuple[str, str], Any] = {} if index_cache is None else index_cache
    default_corpus = next((b.settings.get("corpus") for b in config.backends if b.settings.get("corpus")), None)
    out: list[Backend] = []
    for b in config.backends:
        if b.kind == "embedded":
            from serpeval.engines.embedded import EmbeddedIndex, parse_params

            corpus = b.settings.get("corpus", default_corpus)
            if corpus is None:
                raise OptionError(f"backend {b.name}: an embedded backend needs corpus = \"DOCS.jsonl\".")
            unknown = set(b.settings) - {"corpus", "params", "fields", "id_field"}
            if unknown:
                raise OptionError(f"backend {b.name}: unknown setting(s) {', '.join(sorted(unknown))} of an embedded "
                                  "backend; it takes corpus, params, fields, id_field.")
            options = {"fields": b.settings.get("fields"), "id_field": b.settings.get("id_field")}
            key = _index_key(str(corpus), options)
            if key not in cache:
                cache[key] = EmbeddedIndex.build(str(corpus), **options)
            params = parse_params(dict(b.settings.get("params") or {}))  # unknown names: "did you mean"
            out.append(Backend(b.name, cache[key].engine(**params), is_async=False, inline=True))
        else:
            engine = _http_engine(b)
            out.append(Backend(b.name, engine, is_async=hasattr(engine, "asearch")))
    return out
