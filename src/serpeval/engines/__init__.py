"""Engines: what produces runs (the embedded BM25 index, HTTP search engines).

``base`` defines the :class:`~serpeval.engines.base.Engine` protocol and :class:`Hit`;
``embedded`` the default BM25 engine over a JSONL corpus; ``http`` the generic HTTP engine
with presets for Elasticsearch/OpenSearch, Solr and Vespa. The heavy modules are imported on
first use.
"""

from __future__ import annotations

from serpeval.engines.base import AsyncEngine, Engine, Hit

__all__ = ["AsyncEngine", "Engine", "Hit"]
