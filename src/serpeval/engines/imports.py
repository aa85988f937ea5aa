"""Other tools' judgment files as qrels + topics (+ the engine hints they carry).

Formats (recognised from the content, or named with ``format=``):

``rank_eval``
    An Elasticsearch/OpenSearch ``_rank_eval`` request body:
    ``{"requests": [{"id", "request": {...} | "template_id" + "params", "ratings": [{"_index",
    "_id", "rating"}]}], "metric": {...}}``. The query id is the request's ``id``; its text the
    first string under a ``match``/``match_phrase``/``multi_match``/``query_string``/
    ``simple_query_string`` query (or a template's ``query_string``/``query``/first string
    parameter). The hints: the index (when every rating names one) and the metric.
``srw``
    OpenSearch Search Relevance Workbench judgments (``{"type": "IMPORT_JUDGMENT",
    "judgmentRatings": [{"query", "ratings": [{"docId", "rating"}]}]}``), optionally with a
    query set (``{"querySetQueries": [{"queryText"}]}``, or its NDJSON upload form, one
    ``{"queryText": ...}`` per line) giving the topics. SRW keys judgments by query text: the
    query ids are ``1..n`` in order of first appearance. Ratings are decimal strings
    (``"3.000"``); fractional ones make float qrels.
``quepid``
    A Quepid case export CSV: the *basic* export (``query,docid,rating``, or ``doc_id``; a row
    holding only a query is one with no rated document, skipped and counted) or the *detailed*
    one (``Team Name,Case Name,Case ID,Query Text,Doc ID,Title,Rating,...``); unrated rows
    (empty rating) are skipped and counted. Query ids ``1..n`` by first appearance.
``rre``
    A Rated Ranking Evaluator ratings JSON: ``{"index", "id_field", "topics": [{"description",
    "query_groups": [{"name", "queries": [{"template", "placeholders": {"$query": ...}}],
    "relevant_documents": {...}}]}]}`` (or ``query_groups`` at the top). Every query of a group
    shares the group's judgments. ``relevant_documents`` is ``{doc: {"gain": g}}`` (or
    ``{"rating": g}``, which RRE reads when there is no ``gain``; with neither, RRE's default
    grade 2, counted), ``{doc: g}`` or the older ``{g: [doc, ...]}``. Query ids ``1..n``;
    the group of each query is kept (``groups``) for ``serpeval evaluate --groups``.

A judgment repeated for the same (query, document) is an error if the grades differ and is
counted (``duplicates``) if they agree; every skip is counted in ``skipped``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.core import strict_json
from serpeval.core.errors import DuplicateError, EmptyInputError, OptionError, ParseError

__all__ = ["FORMATS", "Imported", "read_external"]

FORMATS = ("rank_eval", "srw", "quepid", "rre")
_QUERY_KINDS = ("match", "match_phrase", "match_bool_prefix", "multi_match", "query_string", "simple_query_string",
                "combined_fields")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Imported:
    """Qrels and topics read from another tool's file.

    Attributes:
        format: which format was read.
        qrels: the judgments (:class:`~serpeval.core.data.Qrels`).
        topics: ``{query_id: text}``.
        groups: ``{query_id: group}`` where the format has groups (RRE), else empty.
        hints: what the file says about the engine or the measure (index, id field, metric).
        skipped: ``{reason: count}`` of rows left out.
        duplicates: judgments repeated with the same grade (kept once).
        assumed: ``{reason: count}`` of judgments kept with a grade the file does not state
            (RRE: a document with neither ``gain`` nor ``rating`` has RRE's default grade 2).
    """

    format: str
    qrels: Any
    topics: dict[str, str]
    groups: dict[str, str] = field(default_factory=dict)
    hints: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    assumed: dict[str, int] = field(default_factory=dict)

    def notes(self) -> list[str]:
        out = [f"{n} row(s) skipped: {reason}" for reason, n in self.skipped.items() if n]
        out += [f"{n} {reason}" for reason, n in self.assumed.items() if n]
        if self.duplicates:
            out.append(f"{self.duplicates} repeated judgment(s) with the same grade kept once")
        return out

    def write(self, prefix: str | Path) -> list[Path]:
        """``PREFIX.qrels`` (TREC), ``PREFIX.topics.tsv``, ``PREFIX.groups.tsv`` (when there are
        groups) and ``PREFIX.hints.json`` (when there are hints), each written atomically."""
        from serpeval.io.outputs import write_text
        from serpeval.io.trec import write_trec_qrels

        base = str(prefix)
        written = []
        buffer = io.StringIO()
        write_trec_qrels(self.qrels, buffer)
        written.append(write_text(base + ".qrels", buffer.getvalue()))
        written.append(write_text(base + ".topics.tsv", "".join(f"{q}\t{_one_line(t)}\n"
                                                                for q, t in self.topics.items())))
        if self.groups:
            written.append(write_text(base + ".groups.tsv", "".join(f"{q}\t{g}\n" for q, g in self.groups.items())))
        if self.hints:
            hints = strict_json.dumps(self.hints, indent=2, sort_keys=True) + "\n"
            written.append(write_text(base + ".hints.json", hints))
        return written


def _one_line(text: str) -> str:
    return " ".join(text.split())


def read_external(path: str | Path, *, format: str | None = None, query_set: str | Path | None = None) -> Imported:
    """Read another tool's judgments (see the module doc for the formats).

    Args:
        path: the file.
        format: one of :data:`FORMATS`, or None to recognise it from the content.
        query_set: SRW only: the query set (JSON or NDJSON) that gives the topics.

    Raises:
        OptionError: an unknown format, or a format not recognised (with what was found).
        ParseError: the file does not have the format's shape (the message names the place).
        DuplicateError: a (query, document) judged twice with different grades.
        EmptyInputError: no judgment.
    """
    from serpeval.io.inputs import read_input

    raw, label = read_input(path, what="judgments file")
    text = _utf8(raw, label)
    kind = format or _recognise(text, label)
    if kind not in FORMATS:
        raise OptionError(f"format {kind!r} is unknown; choose one of {', '.join(FORMATS)}.")
    if query_set is not None and kind != "srw":
        raise OptionError("a query set goes with SRW judgments (format srw) only.")
    collector = _Collector(label)
    if kind == "srw":
        _srw(text, label, collector, query_set)
    elif kind == "rank_eval":
        _rank_eval(text, label, collector)
    elif kind == "quepid":
        _quepid(text, label, collector)
    else:
        _rre(text, label, collector)
    return collector.result(kind)


def _utf8(raw: bytes, label: str) -> str:
    """The file's text (a byte order mark dropped); bytes that are not UTF-8 are refused,
    naming the line: replaced by U+FFFD they would make two queries one (``caf\xe9`` and
    ``caf\xeb``)."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ParseError(f"{label}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x}); save the file as "
                         "UTF-8.") from None


def _recognise(text: str, label: str) -> str:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ParseError(f"{label}: not valid JSON ({exc}); expected a _rank_eval body, SRW judgments or RRE "
                             "ratings.") from None
        if isinstance(data, dict):
            if "requests" in data:
                return "rank_eval"
            if "judgmentRatings" in data:
                return "srw"
            if "topics" in data or "query_groups" in data:
                return "rre"
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
        raise OptionError(f"{label}: not a recognised judgments file (found keys {keys}); expected 'requests' "
                          "(_rank_eval), 'judgmentRatings' (SRW) or 'topics'/'query_groups' (RRE), or name it with "
                          "--format.")
    first = stripped.splitlines()[0].lower() if stripped else ""
    folded = first.replace(" ", "_")
    if ("doc_id" in folded or "docid" in folded) and ("query" in first):
        return "quepid"
    raise OptionError(f"{label}: not a recognised judgments file (first line {first[:60]!r}); name it with --format "
                      f"({', '.join(FORMATS)}).")


class _Collector:
    def __init__(self, label: str) -> None:
        self.label = label
        self.topics: dict[str, str] = {}
        self.by_text: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.grades: dict[tuple[str, str], float] = {}
        self.where: dict[tuple[str, str], str] = {}
        self.hints: dict[str, Any] = {}
        self.skipped: dict[str, int] = {}
        self.assumed: dict[str, int] = {}
        self.duplicates = 0

    def query(self, text: str, qid: str | None = None) -> str:
        """The id of a query (a new sequential id for a new text when ``qid`` is None)."""
        if qid is None:
            if text in self.by_text:
                return self.by_text[text]
            qid = str(len(self.topics) + 1)
            self.by_text[text] = qid
        elif not qid or _SPACE.search(qid):
            raise ParseError(f"{self.label}: query id {qid!r} is empty or holds whitespace; a TREC file cannot "
                             "carry it.")
        elif qid in self.topics:
            raise DuplicateError(f"{self.label}: query id {qid!r} appears twice.")
        self.topics[qid] = text
        return qid

    def judge(self, qid: str, doc: Any, grade: Any, where: str) -> None:
        if isinstance(doc, int) and not isinstance(doc, bool):
            doc = str(doc)
        if not isinstance(doc, str) or not doc.strip() or _SPACE.search(doc):
            raise ParseError(f"{where}: doc id {doc!r} is empty, not a string or holds whitespace.")
        value = _grade(grade, where)
        key = (qid, doc)
        if key in self.grades:
            if self.grades[key] != value:
                raise DuplicateError(f"{where}: query {qid} judges document {doc} {value:g}, but "
                                     f"{self.where[key]} gave {self.grades[key]:g}; keep one grade.",
                                     query=qid, doc=doc)
            self.duplicates += 1
            return
        self.grades[key] = value
        self.where[key] = where

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def assume(self, reason: str) -> None:
        self.assumed[reason] = self.assumed.get(reason, 0) + 1

    def result(self, kind: str) -> Imported:
        from serpeval.core.data import Qrels

        if not self.grades:
            raise EmptyInputError(f"{self.label}: no judgment found in the {kind} file.")
        qids = [q for q, _ in self.grades]
        docs = [d for _, d in self.grades]
        values = list(self.grades.values())
        integral = all(float(v).is_integer() for v in values)
        import numpy as np
        import pyarrow as pa

        qrels = Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()),
                      np.asarray(values, dtype=np.int64 if integral else np.float64), source=self.label,
                      grades="int" if integral else "float")
        return Imported(format=kind, qrels=qrels, topics=dict(self.topics), groups=dict(self.groups),
                        hints=dict(self.hints), skipped=dict(self.skipped), duplicates=self.duplicates,
                        assumed=dict(self.assumed))


def _grade(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise ParseError(f"{where}: rating {value!r} is not a number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParseError(f"{where}: rating {value!r} is not a number.") from None
    if not math.isfinite(number):
        raise ParseError(f"{where}: rating {value!r} is not finite.")
    return number


def _load(text: str, label: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ParseError(f"{label}: not valid JSON ({exc}).") from None


def _need(mapping: Any, key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(mapping, dict) or not isinstance(mapping.get(key), kind):
        found = type(mapping.get(key)).__name__ if isinstance(mapping, dict) and key in mapping else "nothing"
        raise ParseError(f"{where}: expected {what} at {key!r}, found {found}.")
    return mapping[key]


# ---------------------------------------------------------------------- Elasticsearch _rank_eval


def _query_text(request: Any) -> str | None:
    """The user's text in a query DSL: the first string under a full-text query."""
    if isinstance(request, dict):
        for key, value in request.items():
            if key in _QUERY_KINDS and isinstance(value, dict):
                if isinstance(value.get("query"), str):
                    return value["query"]
                for inner in value.values():
                    if isinstance(inner, str):
                        return inner
                    if isinstance(inner, dict) and isinstance(inner.get("query"), str):
                        return inner["query"]
            found = _query_text(value)
            if found is not None:
                return found
    elif isinstance(request, list):
        for item in request:
            found = _query_text(item)
            if found is not None:
                return found
    return None


def _rank_eval(text: str, label: str, out: _Collector) -> None:
    data = _load(text, label)
    requests = _need(data, "requests", list, label, "a list of requests")
    indexes: set[str] = set()
    for n, item in enumerate(requests, 1):
        where = f"{label}: requests[{n - 1}]"
        qid = _need(item, "id", str, where, "the request id")
        if isinstance(item.get("request"), dict):
            query = _query_text(item["request"])
        elif isinstance(item.get("params"), dict):
            params = item["params"]
            query = next((params[k] for k in ("query_string", "query", "q", "text") if isinstance(params.get(k), str)),
                         next((v for v in params.values() if isinstance(v, str)), None))
        else:
            raise ParseError(f"{where}: expected a 'request' or 'template_id' with 'params'.")
        if query is None:
            out.skip("requests whose query text could not be found (no match/query_string query)")
            query = ""
        qid = out.query(query, qid)
        ratings = _need(item, "ratings", list, where, "a list of ratings")
        for r, rating in enumerate(ratings):
            at = f"{where}.ratings[{r}]"
            if not isinstance(rating, dict):
                raise ParseError(f"{at}: expected an object with _id and rating.")
            if isinstance(rating.get("_index"), str):
                indexes.add(rating["_index"])
            out.judge(qid, rating.get("_id"), rating.get("rating"), at)
    if len(indexes) == 1:
        out.hints["index"] = indexes.pop()
    if isinstance(data.get("metric"), dict):
        out.hints["metric"] = data["metric"]
    if isinstance(data.get("templates"), list):
        out.hints["templates"] = data["templates"]


# ---------------------------------------------------------------------- OpenSearch SRW


def _srw(text: str, label: str, out: _Collector, query_set: str | Path | None = None) -> None:
    if query_set is not None:
        from serpeval.io.inputs import read_input

        raw, set_label = read_input(query_set, what="query set")
        set_text = _utf8(raw, set_label)
        stripped = set_text.strip()
        entries: list[Any]
        try:
            loaded = json.loads(stripped)
            entries = loaded.get("querySetQueries", []) if isinstance(loaded, dict) else []
            if isinstance(loaded, dict) and "queryText" in loaded:
                entries = [loaded]
        except ValueError:
            from serpeval.io.reading import text_lines

            entries = []
            for number, line in enumerate(text_lines(stripped), 1):  # LF, CRLF or CR only
                if line.strip():
                    try:
                        entries.append(json.loads(line))
                    except ValueError as exc:
                        raise ParseError(f"{set_label}:{number}: not valid JSON ({exc}).") from None
        for n, entry in enumerate(entries):
            query = _need(entry, "queryText", str, f"{set_label}: query {n + 1}", "the query text")
            out.query(query)
        if not out.topics:
            raise EmptyInputError(f"{set_label}: no query in the query set; expected querySetQueries or one "
                                  '{"queryText": ...} per line.')
    data = _load(text, label)
    ratings_list = _need(data, "judgmentRatings", list, label, "a list of judgment ratings")
    known = set(out.by_text)
    for n, item in enumerate(ratings_list):
        where = f"{label}: judgmentRatings[{n}]"
        query = _need(item, "query", str, where, "the query text")
        if query_set is not None and query not in known:
            out.skip("judged queries not in the query set")
            continue
        qid = out.query(query)
        for r, rating in enumerate(_need(item, "ratings", list, where, "a list of ratings")):
            at = f"{where}.ratings[{r}]"
            if not isinstance(rating, dict):
                raise ParseError(f"{at}: expected an object with docId and rating.")
            out.judge(qid, rating.get("docId"), rating.get("rating"), at)
    if isinstance(data.get("type"), str):
        out.hints["judgment_type"] = data["type"]


# ---------------------------------------------------------------------- Quepid


def _quepid(text: str, label: str, out: _Collector) -> None:
    rows = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(rows)]
    except StopIteration:
        raise EmptyInputError(f"{label}: the Quepid export is empty.") from None
    folded = [h.lower().replace(" ", "_") for h in header]
    try:
        q_col = folded.index("query") if "query" in folded else folded.index("query_text")
        d_col = folded.index("doc_id") if "doc_id" in folded else folded.index("docid")
        r_col = folded.index("rating")
    except ValueError:
        raise ParseError(f"{label}:1: expected Quepid's columns query (or Query Text), doc_id (docid, Doc ID) "
                         f"and rating (Rating); found {', '.join(header)}.") from None
    case = folded.index("case_name") if "case_name" in folded else None
    for number, row in enumerate(rows, 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) == 1 and q_col == 0:  # the basic export's row of a query with no rated document
            out.skip("queries with no rated document")
            continue
        if len(row) <= max(q_col, d_col, r_col):
            raise ParseError(f"{label}:{number}: {len(row)} columns, expected at least {max(q_col, d_col, r_col) + 1}.")
        if case is not None and len(row) > case:
            out.hints.setdefault("case", row[case])
        rating = row[r_col].strip()
        if not rating:
            out.skip("unrated documents (empty rating)")
            continue
        qid = out.query(row[q_col])
        out.judge(qid, row[d_col].strip(), rating, f"{label}:{number}")


# ---------------------------------------------------------------------- RRE


def _rre(text: str, label: str, out: _Collector) -> None:
    data = _load(text, label)
    if not isinstance(data, dict):
        raise ParseError(f"{label}: expected an object with topics or query_groups.")
    for key in ("index", "id_field", "corpora_file"):
        if isinstance(data.get(key), str):
            out.hints[key] = data[key]
    topics = data.get("topics")
    groups: list[tuple[str, Any]] = []
    if isinstance(topics, list):
        for t, topic in enumerate(topics):
            for g, group in enumerate(_need(topic, "query_groups", list, f"{label}: topics[{t}]", "query groups")):
                groups.append((f"{label}: topics[{t}].query_groups[{g}]", group))
    elif isinstance(data.get("query_groups"), list):
        groups = [(f"{label}: query_groups[{g}]", group) for g, group in enumerate(data["query_groups"])]
    else:
        raise ParseError(f"{label}: expected 'topics' (a list) or 'query_groups' (a list).")
    for where, group in groups:
        name = group.get("name") if isinstance(group, dict) else None
        judgments = _rre_judgments(_need(group, "relevant_documents", dict, where, "relevant_documents"), where, out)
        for n, query in enumerate(_need(group, "queries", list, where, "a list of queries")):
            at = f"{where}.queries[{n}]"
            placeholders = _need(query, "placeholders", dict, at, "placeholders")
            text_value = placeholders.get("$query", next((v for v in placeholders.values() if isinstance(v, str)),
                                                         None))
            if not isinstance(text_value, str):
                raise ParseError(f"{at}: no $query placeholder (nor any text placeholder).")
            qid = out.query(text_value, str(len(out.topics) + 1))
            if isinstance(name, str):
                out.groups[qid] = " ".join(name.split())
            template = query.get("template")
            if isinstance(template, str) and template not in out.hints.setdefault("templates", []):
                out.hints["templates"].append(template)
            for doc, gain in judgments:
                out.judge(qid, doc, gain, f"{where}.relevant_documents")


#: RRE's grade of a judged document that states neither ``gain`` nor ``rating``
#: (``MetricClassConfigurationManager.defaultMissingGrade``, 2 unless RRE is configured otherwise).
RRE_MISSING_GRADE = 2


def _rre_judgments(relevant: Mapping[str, Any], where: str, out_counts: _Collector | None = None
                   ) -> list[tuple[str, Any]]:
    """``[(doc, grade)]`` of a query group's ``relevant_documents``. A document's grade is its
    ``gain``, else its ``rating`` (RRE's ``Func.gainOrRatingNode``), else RRE's missing grade
    (:data:`RRE_MISSING_GRADE`, counted)."""
    out: list[tuple[str, Any]] = []
    for key, value in relevant.items():
        if isinstance(value, dict):
            if "gain" in value:
                out.append((key, value["gain"]))
            elif "rating" in value:
                out.append((key, value["rating"]))
            else:
                out.append((key, RRE_MISSING_GRADE))
                if out_counts is not None:
                    out_counts.assume(f"judged documents with neither gain nor rating given RRE's default grade "
                                      f"{RRE_MISSING_GRADE}")
        elif isinstance(value, list):              # the older form: {gain: [doc, ...]}
            out.extend((str(doc), key) for doc in value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out.append((key, value))
        else:
            raise ParseError(f"{where}.relevant_documents: document {key!r} has {value!r}; expected "
                             '{"gain": N}, a number, or a list of documents under a gain.')
    return out
