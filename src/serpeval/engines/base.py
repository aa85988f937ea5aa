"""The interface every engine offers: what ``retrieve``, ``sweep`` and ``serve`` call.

An engine answers a query string with a ranked list of :class:`Hit` (document id, score),
best first, at most ``k`` long. ``search_many`` answers a batch in the same order (an
embedded index scores a batch in one vectorized pass; an HTTP engine sends it batched or
concurrently). ``config_hash`` identifies the engine's configuration (its kind, its
parameters, for the embedded engine the corpus and fields; never the time): two engines with
the same hash return the same hits, which is what the run's tag and the HTTP cache key on.

HTTP engines also offer ``asearch(client, query, k)`` on an ``httpx.AsyncClient`` for a
serving path (``serpeval serve``) that already runs an event loop.

Ties: an engine returns hits by score descending and, among equal scores, by doc id
descending in byte order (serpeval's tie rule, :mod:`serpeval.ranking`), so a run written
with its scores evaluates the same however it is re-sorted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx

__all__ = ["AsyncEngine", "Engine", "Hit"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved document: its id (the corpus's id field) and the engine's score."""

    doc_id: str
    score: float


@runtime_checkable
class Engine(Protocol):
    """What produces a ranked list for a query (embedded BM25, an HTTP search engine)."""

    name: str
    params: Mapping[str, Any]

    def search(self, query: str, k: int) -> list[Hit]:
        """The top ``k`` hits for ``query``, best first (fewer when fewer documents match)."""
        ...

    def search_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """``[search(q, k) for q in queries]``, computed in one batch where the engine can."""
        ...

    def config_hash(self) -> str:
        """A short stable hex digest of the configuration (kind, parameters, index identity)."""
        ...


@runtime_checkable
class AsyncEngine(Engine, Protocol):
    """An engine that can also search on a caller's ``httpx.AsyncClient`` (HTTP engines)."""

    async def asearch(self, client: httpx.AsyncClient, query: str, k: int) -> list[Hit]:
        """``search(query, k)`` as one request on ``client`` (no cache, no retries of its own)."""
        ...
