"""Fixtures of the serve tests: a small corpus, apps on the real embedded engine, a server on a
random loopback port, backends that hang, fail or answer junk."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.conftest import DATA, need

pytest.importorskip("starlette", reason="serve needs the serve extra (pip install '.[serve]')")
pytest.importorskip("uvicorn", reason="serve needs the serve extra (pip install '.[serve]')")
pytest.importorskip("httpx", reason="serve needs the serve extra (pip install '.[serve]')")

from serpeval.engines.base import Hit
from serpeval.serve.backends import Backend

CRANFIELD = DATA / "cranfield"


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory: Any) -> Path:
    """The first 200 Cranfield documents (a fast index for server start-ups)."""
    source = need(CRANFIELD / "corpus.jsonl")
    out = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    with source.open() as src, out.open("w") as dst:
        for line in itertools.islice(src, 200):
            dst.write(line)
    return out


@pytest.fixture(scope="session")
def cranfield_index() -> Any:
    """The whole Cranfield collection, indexed once per session."""
    from serpeval.engines.embedded import EmbeddedIndex

    return EmbeddedIndex.build(need(CRANFIELD / "corpus.jsonl"))


@pytest.fixture(scope="session")
def cranfield_topics() -> list[tuple[str, str]]:
    lines = need(CRANFIELD / "topics.tsv").read_text(encoding="utf-8").splitlines()
    return [(q, text) for q, text in (line.split("\t", 1) for line in lines)]


@pytest.fixture(scope="session")
def cranfield_qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in need(CRANFIELD / "qrels.trec").read_text(encoding="utf-8").splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    return qrels


class Hanging:
    """An engine that blocks until released (a backend that hangs)."""

    name = "hanging"
    params: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self.release = threading.Event()

    def search(self, query: str, k: int) -> list[Hit]:
        self.release.wait(10)
        return []

    def search_many(self, queries: Any, k: int) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def config_hash(self) -> str:
        return "hanging"


class Failing(Hanging):
    """An engine that raises."""

    def search(self, query: str, k: int) -> list[Hit]:
        raise ConnectionError("connection refused by the test")


class Junk(Hanging):
    """An engine that answers junk: ``kind`` picks which."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def search(self, query: str, k: int) -> Any:
        if self.kind == "not a list":
            return {"hits": []}
        if self.kind == "no id":
            return [Hit(None, 1.0)]  # type: ignore[arg-type]
        return [Hit("1", 2.0), Hit("1", 1.0)]  # a document twice


def app_for(config: Any, backends: list[Backend], **kwargs: Any) -> Any:
    from serpeval.serve.app import create_app

    return create_app(config, backends, **kwargs)


def counter_ids(prefix: str = "q") -> Any:
    numbers = itertools.count()
    return lambda: f"{prefix}{next(numbers):06d}"


async def with_client(app: Any, body: Any) -> Any:
    """Run ``body(client)`` against ``app`` in-process (lifespan included)."""
    import httpx

    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
            return await body(client)


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


def free_port() -> int:
    """A loopback port that was free a moment ago (for a ``serpeval serve`` started by a test)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """``app`` under uvicorn in a thread, on a random free port of 127.0.0.1."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


@pytest.fixture
def live_server() -> type[LiveServer]:
    return LiveServer


def click_event(query_id: str, ordinal: int, doc: str, **extra: Any) -> dict[str, Any]:
    event = {"action_name": "click", "query_id": query_id, "client_id": "c", "timestamp": "2026-12-05T01:00:00Z",
             "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": ordinal}}}
    event.update(extra)
    return event


def dumps(obj: Any) -> str:
    return json.dumps(obj)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A real PostgreSQL schema (skips where none listens on 127.0.0.1:5432)."""
    from tests.online.events.conftest import postgres_schema

    yield from postgres_schema()
