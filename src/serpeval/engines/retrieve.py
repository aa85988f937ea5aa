"""``retrieve``: topics + an engine -> a run, with its provenance (engine, config hash, time).

Nothing is dropped silently. The result counts and names:

- topics whose text is empty (after stripping): **skipped**, listed (``empty_queries``);
- queries the engine answered with no document: listed (``no_hits``); they are absent from
  the run, so ``evaluate`` reports them as missing queries (or counts them as 0 with ``-c``);
- queries answered with fewer than ``k`` documents (``short_lists``, a count);
- doc ids an HTTP engine returned twice for one query (``duplicates_removed``: the first,
  higher-ranked occurrence is kept);
- queries whose request failed (``failed``: only with ``on_error="skip"``; by default the
  first failure is an :class:`~serpeval.engines.http.EngineError` naming the query).

The run's tag is ``ENGINE:CONFIGHASH:TIME`` (UTC, ``YYYYMMDDTHHMMSSZ``) so every line of the
run file carries its provenance; :meth:`Retrieval.sidecar` has the rest (parameters, counts).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from serpeval.core import strict_json
from serpeval.core.data import Run
from serpeval.core.errors import EmptyInputError, InputError, OptionError
from serpeval.core.progress import progress_callback
from serpeval.core.version import __version__
from serpeval.engines.base import Engine, Hit

__all__ = ["Retrieval", "make_engine", "parse_assignments", "read_queries", "retrieve"]

_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Retrieval:
    """A run and how it was made. ``to_dicts()`` gives the one-row summary a report shows."""

    run: Run
    engine: str
    params: Mapping[str, Any]
    config_hash: str
    started: str
    seconds: float
    k: int
    queries: int
    empty_queries: tuple[str, ...] = ()
    no_hits: tuple[str, ...] = ()
    short_lists: int = 0
    duplicates_removed: int = 0
    failed: tuple[tuple[str, str], ...] = ()
    cached: int = 0
    requests: int = 0
    retries: int = 0
    source: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return self.run.tag

    @property
    def retrieved_queries(self) -> int:
        return self.queries - len(self.empty_queries) - len(self.no_hits) - len(self.failed)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [{
            "engine": self.engine, "config_hash": self.config_hash, "queries": self.queries,
            "retrieved_queries": self.retrieved_queries, "rows": len(self.run), "k": self.k,
            "empty_queries": len(self.empty_queries), "no_hits": len(self.no_hits), "short_lists": self.short_lists,
            "duplicates_removed": self.duplicates_removed, "failed": len(self.failed), "cached": self.cached,
            "seconds": round(self.seconds, 3),
        }]

    def notes(self) -> list[str]:
        """One line per count that is not zero (what the command line shows under the summary)."""
        out = []
        if self.empty_queries:
            out.append(f"{len(self.empty_queries)} topic(s) with an empty query skipped: "
                       f"{_listed(self.empty_queries)}")
        if self.no_hits:
            out.append(f"{len(self.no_hits)} query(ies) retrieved no document (absent from the run; evaluate "
                       f"counts them as missing): {_listed(self.no_hits)}")
        if self.short_lists:
            out.append(f"{self.short_lists} query(ies) retrieved fewer than k={self.k} documents")
        if self.duplicates_removed:
            out.append(f"{self.duplicates_removed} duplicate doc id(s) in the engine's answers removed "
                       "(the first occurrence kept)")
        if self.failed:
            first_msg = self.failed[0][1]
            out.append(f"{len(self.failed)} query(ies) failed and were skipped: {_listed([q for q, _ in self.failed])}"
                       f"; first: {first_msg}")
        if self.cached:
            out.append(f"{self.cached} query(ies) answered from the cache")
        return out

    def sidecar(self) -> dict[str, Any]:
        """The JSON written next to the run (``RUN.json``): provenance and counts."""
        return {
            "serpeval": __version__, "engine": self.engine, "params": dict(self.params),
            "config_hash": self.config_hash, "tag": self.tag, "started": self.started,
            "seconds": round(self.seconds, 3), "k": self.k, "queries": self.queries,
            "retrieved_queries": self.retrieved_queries, "rows": len(self.run),
            "empty_queries": list(self.empty_queries), "no_hits": list(self.no_hits),
            "short_lists": self.short_lists, "duplicates_removed": self.duplicates_removed,
            "failed": [{"query_id": q, "error": m} for q, m in self.failed], "cached": self.cached,
            "requests": self.requests, "retries": self.retries, "source": dict(self.source),
        }

    def write(self, path: str | Path, *, sidecar: bool = True) -> Path:
        """Write the TREC run (atomically) and, by default, ``PATH.json`` next to it."""
        from serpeval.io.outputs import atomic_path
        from serpeval.io.trec import write_trec_run

        target = Path(path)
        with atomic_path(target) as temporary:
            write_trec_run(self.run, temporary)
        if sidecar:
            with atomic_path(target.with_name(target.name + ".json")) as temporary:
                text = strict_json.dumps(self.sidecar(), indent=2, sort_keys=True)
                temporary.write_text(text + "\n", encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                       for k, v in self.to_dicts()[0].items())
        return f"<table>{rows}</table>"


def _listed(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def parse_assignments(items: Sequence[str], option: str = "--param") -> dict[str, str]:
    """``["k1=0.9", "b=0.4"]`` -> ``{"k1": "0.9", "b": "0.4"}`` (values stay text; the engine checks them).

    Raises:
        OptionError: an item without ``=`` or with an empty name, or a name given twice.
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise OptionError(f"{option} {item!r}: expected NAME=VALUE (e.g. {option} k1=0.9).")
        if name in out:
            raise OptionError(f"{option} {name} is given twice ({out[name]!r} and {value.strip()!r}); give it once.")
        out[name] = value.strip()
    return out


def read_queries(topics: str | Path | Mapping[str, str]) -> dict[str, str]:
    """``{query_id: text}`` from a topics file (TSV, JSONL, TREC ``<top>``) or a mapping.

    Raises:
        InputError: a query id holds whitespace (a TREC run cannot carry it), or a text is not a string.
    """
    if isinstance(topics, Mapping):
        out = dict(topics)
        where = "<topics>"
    else:
        from serpeval.engines.topics import read_any_topics

        out = read_any_topics(topics)
        where = str(topics)
    for qid, text in out.items():
        if not isinstance(qid, str):
            raise InputError(f"{where}: query id {qid!r} is {type(qid).__name__}, expected a string; write it as "
                             f"{str(qid)!r}.")
        if not qid or _SPACE.search(qid):
            raise InputError(f"{where}: query id {qid!r} is empty or holds whitespace; a TREC run cannot carry it.")
        if not isinstance(text, str):
            raise InputError(f"{where}: the text of query {qid!r} is {type(text).__name__}, expected a string.")
    return out


def make_engine(engine: Engine | str | Path | Mapping[str, Any] | None = None, *,
                corpus: Any = None, params: Mapping[str, Any] | None = None,
                fields: Sequence[str] | None = None, id_field: str | None = None) -> Engine:
    """The engine ``retrieve`` and ``sweep`` use: an Engine as given; a config file or mapping
    -> an HTTP engine (``params`` override its ``[params]``); None -> the embedded BM25 engine
    over ``corpus`` (a JSONL path, documents, or an :class:`EmbeddedIndex`) with ``params``.

    Raises:
        OptionError: neither an engine nor a corpus, or both.
    """
    if engine is None:
        if corpus is None:
            raise OptionError("give a corpus (--corpus DOCS.jsonl) for the embedded BM25 engine, or an engine "
                              "config (--engine CONFIG) for an HTTP engine.")
        from serpeval.engines.embedded import EmbeddedIndex, parse_params

        given = dict(params or {})
        checked = parse_params(given)  # before the corpus is read: a typo fails at once
        if given.get("delta") is not None and checked["method"] not in ("bm25l", "bm25+"):
            raise OptionError(f"delta={given['delta']!r} applies to method=bm25l and method=bm25+ only; with "
                              f"method={checked['method']} it would be ignored. Add --param method=bm25+ (or bm25l), "
                              "or drop delta.")
        index = corpus if isinstance(corpus, EmbeddedIndex) else EmbeddedIndex.build(
            corpus, fields=fields, id_field=id_field)
        return index.engine(**checked)
    if corpus is not None:
        raise OptionError("give either a corpus (the embedded engine) or an engine config, not both.")
    _no_corpus_options(fields, id_field)
    if isinstance(engine, str | Path):
        from serpeval.engines.http import http_engine, load_engine_config

        return http_engine(load_engine_config(engine), params)
    if isinstance(engine, Mapping):
        from serpeval.engines.http import http_engine

        return http_engine(engine, params)
    if params:
        raise OptionError("params apply to an engine made here (a corpus or a config), not to an Engine object; "
                          "make the engine with its parameters.")
    return engine


def _no_corpus_options(fields: Sequence[str] | None, id_field: str | None) -> None:
    """Refuse the corpus options with an engine that has no corpus here (they would be ignored)."""
    given = [option for option, value in (("--fields (fields=)", fields), ("--id-field (id_field=)", id_field))
             if value]
    if given:
        raise OptionError(f"{' and '.join(given)} choose what the embedded engine indexes from --corpus; an "
                          "engine given by --engine (engine=) searches its own index: name its field in the engine "
                          "config ([params] field = ..., Solr: qf = ...) or with --param, and drop "
                          + " and ".join(given) + ".")


def retrieve(
    topics: str | Path | Mapping[str, str],
    engine: Engine | str | Path | Mapping[str, Any] | None = None,
    *,
    corpus: Any = None,
    params: Mapping[str, Any] | None = None,
    k: int = 1000,
    fields: Sequence[str] | None = None,
    id_field: str | None = None,
    name: str | None = None,
    on_error: str = "raise",
    progress: Any = None,
) -> Retrieval:
    """Run every topic through an engine and return the run with its provenance.

    Args:
        topics: a topics file (TSV ``qid<TAB>text``, JSONL, TREC ``<top>``; ``.gz`` ok) or ``{qid: text}``.
        engine: None (the embedded BM25 engine over ``corpus``), an engine config file (TOML/JSON)
            or mapping (an HTTP engine), or any :class:`~serpeval.engines.base.Engine`.
        corpus: the JSONL corpus (or documents, or an ``EmbeddedIndex``) of the embedded engine.
        params: engine parameters (embedded: ``k1``, ``b``, ``method``, ``delta``; HTTP: template
            parameters); strings are accepted.
        k: documents per query (default 1000, trec_eval's depth).
        name: the run's display name (default the engine's name).
        on_error: ``"raise"`` (default: the first failed query is an error naming it) or
            ``"skip"`` (failed queries counted and listed in the result, HTTP engines).
        progress: a ``progress(done, total)`` callback.

    Examples:
        >>> import serpeval
        >>> docs = [{"id": "d1", "text": "wing lift"}, {"id": "d2", "text": "heat transfer"}]
        >>> r = serpeval.retrieve({"q1": "lift of a wing", "q2": ""}, corpus=docs, k=10)
        >>> r.run.to_dict()["q1"].keys(), r.empty_queries
        (dict_keys(['d1']), ('q2',))
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise OptionError(f"k={k!r}: documents per query must be an integer >= 1.")
    report = progress_callback(progress)
    queries = read_queries(topics)
    made = make_engine(engine, corpus=corpus, params=params, fields=fields, id_field=id_field)
    started = datetime.now(UTC)
    clock = time.perf_counter()
    qids = [q for q, text in queries.items() if text.strip()]
    empty = tuple(q for q, text in queries.items() if not text.strip())
    texts = [queries[q] for q in qids]
    extra: dict[str, Any] = {}
    from serpeval.engines.embedded import BM25Engine

    if isinstance(made, BM25Engine):
        columns = _embedded_columns(made, qids, texts, k, report)
        extra["source"] = {"corpus": made.index.source, "documents": len(made.index), "fields": list(made.index.fields),
                           "id_field": made.index.id_field, "stemmer": made.index.stemmer,
                           "stopwords": made.index.stopwords}
    else:
        columns = _engine_columns(made, qids, texts, k, report, on_error, extra)
    run_q, run_d, run_s, counts = columns
    seconds = time.perf_counter() - clock
    config_hash = made.config_hash()
    tag = f"{made.name}:{config_hash}:{started.strftime('%Y%m%dT%H%M%SZ')}"
    failed_positions = {i for i, _ in extra.get("failures", [])}
    no_hits = tuple(q for i, (q, c) in enumerate(zip(qids, counts, strict=True))
                    if c == 0 and i not in failed_positions)
    short = int(sum(1 for c in counts if 0 < c < k))
    failures = extra.get("failures", [])
    if not len(run_s):
        first = f"; first failure: {failures[0][1]}" if failures else ""
        raise EmptyInputError(
            f"engine {made.name!r} retrieved no document for any of the {len(queries)} topic(s) ({len(empty)} empty, "
            f"{len(no_hits)} with no hit, {len(failures)} failed){first}; there is no run to write.")

    def column(values: Any) -> Any:
        return values if isinstance(values, pa.Array) else pa.array(values, pa.string())

    run = Run(column(run_q), column(run_d), run_s, name=name or made.name, tag=tag,
              source=f"<{made.name} engine>")
    return Retrieval(
        run=run, engine=made.name, params=dict(made.params), config_hash=config_hash,
        started=started.isoformat(timespec="seconds"), seconds=seconds, k=k, queries=len(queries),
        empty_queries=empty, no_hits=no_hits, short_lists=short,
        duplicates_removed=extra.get("duplicates", 0),
        failed=tuple((qids[i], m) for i, m in failures), cached=extra.get("cached", 0),
        requests=extra.get("requests", 0), retries=extra.get("retries", 0), source=extra.get("source", {}),
    )


_BATCH = 256


def _embedded_columns(engine: Any, qids: list[str], texts: list[str], k: int, report: Any
                      ) -> tuple[Any, Any, np.ndarray, list[int]]:

    report(0, len(qids))
    q_parts, d_parts, s_parts, counts = [], [], [], []
    for start in range(0, len(texts), _BATCH):
        ranking = engine.rank(texts[start:start + _BATCH], k)
        q_col, d_col, s_col = engine.index.run_columns(ranking, qids[start:start + _BATCH])
        q_parts.append(q_col)
        d_parts.append(d_col)
        s_parts.append(s_col)
        counts.extend(ranking.counts().tolist())
        report(min(start + _BATCH, len(texts)), len(texts))
    if not q_parts:
        return [], [], np.zeros(0, np.float64), counts
    return (pa.concat_arrays(q_parts), pa.concat_arrays(d_parts), np.concatenate(s_parts), counts)


def _engine_columns(engine: Engine, qids: list[str], texts: list[str], k: int, report: Any, on_error: str,
                    extra: dict[str, Any]) -> tuple[Any, Any, np.ndarray, list[int]]:
    fetch = getattr(engine, "fetch", None)
    if fetch is not None:
        fetched = fetch(texts, k, on_error=on_error, progress=report)
        lists: list[list[Hit] | None] = fetched.hits
        extra.update(duplicates=fetched.duplicates_removed, failures=fetched.failures, cached=fetched.cached,
                     requests=fetched.requests, retries=fetched.retries)
    else:
        report(0, len(texts))
        lists = list(engine.search_many(texts, k))
        report(len(texts), len(texts))
        if len(lists) != len(texts):
            raise InputError(f"engine {engine.name!r} answered {len(lists)} lists for {len(texts)} queries.")
    run_q: list[str] = []
    run_d: list[str] = []
    run_s: list[float] = []
    counts = []
    for qid, hits in zip(qids, lists, strict=True):
        hits = hits or []
        hits = hits[:k]
        seen: set[str] = set()
        for hit in hits:
            if not hit.doc_id or _SPACE.search(hit.doc_id):
                raise InputError(f"engine {engine.name!r}, query {qid}: doc id {hit.doc_id!r} is empty or holds "
                                 "whitespace; a TREC run cannot carry it.")
            if not math.isfinite(hit.score):
                raise InputError(f"engine {engine.name!r}, query {qid}: doc {hit.doc_id} has score {hit.score}; "
                                 "a run needs finite scores.")
            if hit.doc_id in seen:
                extra["duplicates"] = extra.get("duplicates", 0) + 1
                continue
            seen.add(hit.doc_id)
            run_q.append(qid)
            run_d.append(hit.doc_id)
            run_s.append(hit.score)
        counts.append(len(seen))
    return run_q, run_d, np.asarray(run_s, dtype=np.float64), counts
