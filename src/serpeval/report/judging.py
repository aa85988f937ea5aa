"""A pool as a file to judge: a TREC judging list, CSV, JSON lines, Quepid's ratings CSV or an
Elasticsearch/OpenSearch ``_rank_eval`` body.

Every format reads back as qrels once filled in (:func:`serpeval.io.read_qrels`):

========== ======================================================================================
format     what is written (``GRADE`` is -1 / empty / null until judged, the grade when simulated)
========== ======================================================================================
trec       ``qid 0 docid GRADE`` (qrels; -1 is trec_eval's "pooled but unjudged", so a partly
           judged list still evaluates)
csv        ``query_id,doc_id,relevance,order,best_rank[,query]`` with a header; ``query`` is the
           topic text when topics are given
tsv        the same with tabs (what a ``.tsv`` name implies, and how such a file is read back)
jsonl      one object per line with the same fields (``relevance`` null until judged)
quepid     ``query,docid,rating``: Quepid's ratings import; ``query`` is the topic text when
           topics are given (Quepid keys queries by text), else the query id
rank-eval  ``{"requests": [{"id", "request", "ratings": [{"_index", "_id", "rating"}]}], "metric"}``:
           the body of ``POST /INDEX/_rank_eval``; ``request`` is a ``multi_match`` on the topic
           text (or the query id without topics): edit it to your own query template
========== ======================================================================================
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from serpeval.core.strict_json import dumps

if TYPE_CHECKING:
    from serpeval.judgments.pool import Pool

__all__ = ["JUDGING_FORMATS", "format_for", "judging_file"]

JUDGING_FORMATS = ("trec", "csv", "tsv", "jsonl", "quepid", "rank-eval")

_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".json": "rank-eval", ".tsv": "tsv"}


def format_for(path: str | None) -> str:
    """The judging format a file name implies (``.csv`` csv, ``.tsv`` tsv, ``.jsonl`` jsonl,
    ``.json`` rank-eval, anything else trec)."""
    if not path:
        return "trec"
    name = path.lower().removesuffix(".gz")
    return next((fmt for suffix, fmt in _SUFFIXES.items() if name.endswith(suffix)), "trec")


def judging_file(pool: Pool, fmt: str = "trec", *, topics: Mapping[str, str] | None = None,
                 index: str = "index", k: int = 10) -> str:
    """The pool as the text of a judging file in ``fmt`` (see the module docstring).

    Args:
        pool: what :func:`serpeval.judgments.pool.pool` returned.
        fmt: one of :data:`JUDGING_FORMATS`.
        topics: ``{query_id: text}``, written next to each query (csv, jsonl, quepid, rank-eval).
        index: the ``_index`` of every rating (rank-eval).
        k: the depth of the ``metric`` (rank-eval).
    """
    topics = topics or {}
    rows = pool.to_dicts()
    graded = pool.simulated
    if fmt == "trec":
        return "".join(f"{r['query_id']} 0 {r['doc_id']} {r['relevance'] if graded else -1}\n" for r in rows)
    if fmt in ("csv", "tsv", "quepid"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n", delimiter="\t" if fmt == "tsv" else ",")
        if fmt == "quepid":
            writer.writerow(["query", "docid", "rating"])
            for r in rows:
                writer.writerow([topics.get(r["query_id"], r["query_id"]), r["doc_id"],
                                 r["relevance"] if graded else ""])
        else:
            writer.writerow(["query_id", "doc_id", "relevance", "order", "best_rank"]
                            + (["query"] if topics else []))
            for r in rows:
                writer.writerow([r["query_id"], r["doc_id"], r["relevance"] if graded else "", r["order"],
                                 r["best_rank"]] + ([topics.get(r["query_id"], "")] if topics else []))
        return buffer.getvalue()
    if fmt == "jsonl":
        lines = []
        for r in rows:
            obj: dict[str, Any] = {"query_id": r["query_id"], "doc_id": r["doc_id"],
                                   "relevance": r["relevance"] if graded else None,
                                   "order": r["order"], "best_rank": r["best_rank"]}
            if topics:
                obj["query"] = topics.get(r["query_id"], "")
            lines.append(dumps(obj, indent=None))
        return "".join(line + "\n" for line in lines)
    if fmt == "rank-eval":
        requests: dict[str, dict[str, Any]] = {}
        for r in rows:
            q = r["query_id"]
            if q not in requests:
                text = topics.get(q, q)
                requests[q] = {"id": q, "request": {"query": {"multi_match": {"query": text}}}, "ratings": []}
            requests[q]["ratings"].append({"_index": index, "_id": r["doc_id"],
                                           "rating": r["relevance"] if graded else None})
        body = {"requests": list(requests.values()),
                "metric": {"dcg": {"k": k, "normalize": True}}}
        return dumps(body) + "\n"
    raise ValueError(f"unknown judging format {fmt!r}; expected one of {', '.join(JUDGING_FORMATS)}")
