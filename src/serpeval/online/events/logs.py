"""What the store holds, as the log tables the A/B and interleaving analyses read.

:func:`read_event_logs` opens an event store (a DuckDB file with ``ubi_queries``, a
``postgresql://`` URL) or UBI exports (NDJSON files of ``ubi_queries`` and ``ubi_events`` as
OpenSearch exports them: one JSON document per line, bare or wrapped in ``_source``; a folder
holding ``ubi_queries*.ndjson`` and ``ubi_events*.ndjson``, or the queries file with the
events file next to it) and returns the impressions and clicks in the layout of
:mod:`serpeval.online.logs.schema`:

- impressions: ``impression_id`` (= ``query_id``), ``experiment``, ``variant``, ``user_id``
  (the event's ``user_id``, else ``client_id``, else ``session_id``), ``query_id`` (the query
  text, stripped and lower-cased: what "per query" means to the analysis), ``timestamp``,
  ``shown``, ``n_shown``, ``teams``;
- clicks (events layout): ``impression_id``, ``position`` (1-based: ``position.ordinal``, else
  the rank of ``object.object_id`` in the shown list).

Interleaving impressions that were **excluded** (a backend failed or was late: the user saw
the control's list) are left out of the interleaving log and counted, as are clicks that
cannot be placed (orphans: unknown ``query_id``; an object id that was not shown; an ordinal
beyond the list; clicks on excluded impressions). Every count is in :class:`EventLogs`.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.core import strict_json
from serpeval.core.errors import InputError
from serpeval.online.events.schema import NO_DOCUMENT, parse_timestamp
from serpeval.online.events.store import is_postgres_url, open_store

__all__ = ["EventLogs", "is_event_source", "read_event_logs", "read_records", "team_credits"]

_NDJSON = (".ndjson", ".jsonl", ".json")


@dataclass(frozen=True)
class EventLogs:
    """Impressions and clicks read from an event store or UBI export, with what was left out.

    Attributes:
        impressions: pyarrow Table in the log layout (interleaved impressions, or A/B ones).
        clicks: pyarrow Table (``impression_id``, ``position``).
        source: where it was read from.
        counts: ``impressions read``, ``events read``, ``clicks read``, ``impressions used``,
            ``clicks used``, and each reason an impression or click was left out.
        rankers: the interleaved impressions' ranker labels (``interleaving.rankers``; every
            impression of the experiment has the same ones, else an error); empty for A/B.
        methods: the interleaving methods of the impressions used, sorted.
    """

    impressions: Any
    clicks: Any
    source: str
    counts: dict[str, int] = field(default_factory=dict)
    rankers: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """One line per count, for the report."""
        c = self.counts
        lines = [f"read {c['impressions read']} impressions and {c['events read']} events "
                 f"({c['clicks read']} clicks) from {self.source}; analysed {c['impressions used']} "
                 f"impressions and {c['clicks used']} clicks"]
        lines += [f"{k}: {v}" for k, v in c.items()
                  if v and k not in ("impressions read", "events read", "clicks read", "impressions used",
                                     "clicks used")]
        return lines


def is_event_source(source: Any) -> bool:
    """Whether ``source`` is an event store or UBI export (rather than a log in the log layout)."""
    if is_postgres_url(source):
        return True
    if not isinstance(source, (str, Path)):
        return False
    path = Path(source)
    if path.is_dir():
        return any(path.glob("ubi_queries*"))
    if path.suffix.lower() in _NDJSON and path.name.startswith("ubi_queries"):
        return True
    if path.suffix.lower() in (".duckdb", ".db") and path.is_file():
        import duckdb

        try:
            con = duckdb.connect(str(path), read_only=True)
        except Exception:
            return False
        try:
            names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        finally:
            con.close()
        return "ubi_queries" in names
    return False


def _read_ndjson(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg}); expected one UBI document per "
                                 "line.") from None
            if isinstance(doc, dict) and isinstance(doc.get("_source"), dict):
                doc = doc["_source"]
            if not isinstance(doc, dict):
                raise InputError(f"{path}:{number}: expected a JSON object; got {type(doc).__name__}.")
            rows.append(doc)
    return rows


def _export_files(path: Path) -> tuple[list[Path], list[Path]]:
    if path.is_dir():
        return sorted(path.glob("ubi_queries*")), sorted(path.glob("ubi_events*"))
    events = sorted(path.parent.glob("ubi_events*"))
    return [path], events


def _records_from_export(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    query_files, event_files = _export_files(path)
    queries = [doc for f in query_files for doc in _read_ndjson(f)]
    events = [doc for f in event_files for doc in _read_ndjson(f)]
    for doc in queries:
        attrs = doc.get("query_attributes")
        if isinstance(attrs, str):  # an export that kept the attributes as JSON text
            doc["query_attributes"] = json.loads(attrs)
    return queries, events


def _records_from_store(source: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    store = open_store(source)
    try:
        # only the columns used become Python objects: an event's two time-zoned timestamps
        # (never used here) cost two hundred times as much CPU to convert as its body
        q = store.read("ubi_queries").select(["query_id", "user_query", "client_id", "user_id", "session_id",
                                              "ts", "hit_ids", "query_attributes"]).to_pylist()
        bodies = store.read("ubi_events").column("body").to_pylist()
    finally:
        store.close()
    queries = [{"query_id": r["query_id"], "user_query": r["user_query"], "client_id": r["client_id"],
                "user_id": r["user_id"], "session_id": r["session_id"], "timestamp": r["ts"],
                "query_response_hit_ids": json.loads(r["hit_ids"]),
                "query_attributes": json.loads(r["query_attributes"])} for r in q]
    events = [json.loads(body) for body in bodies]
    return queries, events


def read_records(source: str | Path) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """``(label, queries, events)``: the UBI records of a store or export, as dicts (queries with
    ``query_attributes`` parsed; events as they were posted)."""
    if is_postgres_url(source):
        from urllib.parse import urlsplit

        parts = urlsplit(str(source))
        queries, events = _records_from_store(str(source))
        return f"postgresql://{parts.hostname or ''}{parts.path}", queries, events
    path = Path(source)
    if not path.exists():
        raise InputError(f"{source}: no such store or UBI export; expected a DuckDB file, a postgresql:// URL, "
                         "a ubi_queries NDJSON file or a folder of UBI exports.")
    if path.suffix.lower() in (".duckdb", ".db"):
        queries, events = _records_from_store(str(source))
    else:
        queries, events = _records_from_export(path)
    return str(source), queries, events


def read_event_logs(source: str | Path, experiment: str | None = None, *, design: str = "interleaving") -> EventLogs:
    """Read a store or export as log tables (see the module docstring).

    Args:
        source: a DuckDB store file, a ``postgresql://`` URL, a ``ubi_queries`` NDJSON file or
            a folder of UBI exports.
        experiment: keep only this experiment (default: the source's only one; several is an
            error naming them).
        design: ``interleaving`` (the interleaved impressions, with teams) or ``ab`` (the
            A/B impressions, one variant each).
    """

    import pyarrow as pa

    label, queries, events = read_records(source)
    experiments = sorted({str((q.get("query_attributes") or {}).get("experiment")) for q in queries
                          if (q.get("query_attributes") or {}).get("experiment") is not None})
    if experiment is None:
        if len(experiments) > 1:
            raise InputError(f"{label} holds {len(experiments)} experiments ({', '.join(experiments)}); "
                             "name one with --experiment.")
        experiment = experiments[0] if experiments else None
    elif experiment not in experiments:
        raise InputError(f"{label}: no impressions of experiment {experiment!r}; it holds "
                         f"{', '.join(experiments) or 'none'}.")
    counts = {"impressions read": len(queries), "events read": len(events), "clicks read": 0,
              "impressions used": 0, "clicks used": 0, "impressions of other experiments": 0,
              "impressions without the experiment attributes": 0,
              "impressions excluded (backend failure or lateness)": 0,
              "impressions excluded (no backend returned a document)": 0, "A/B impressions (not interleaved)": 0,
              "interleaved impressions (not A/B)": 0, "orphan clicks (unknown query_id)": 0,
              "clicks on excluded impressions": 0, "clicks that could not be placed": 0,
              "duplicate clicks (same event id)": 0}
    rows: dict[str, dict[str, Any]] = {}
    ranker_lists: dict[tuple[str, ...], str] = {}  # each distinct rankers list -> the first impression with it
    methods: set[str] = set()
    seen_excluded: set[str] = set()
    known: set[str] = set()
    for q in queries:
        qid = str(q["query_id"])
        known.add(qid)
        attrs = q.get("query_attributes") or {}
        if "experiment" not in attrs:
            counts["impressions without the experiment attributes"] += 1
            continue
        if attrs["experiment"] != experiment:
            counts["impressions of other experiments"] += 1
            continue
        inter = attrs.get("interleaving")
        if attrs.get("excluded"):
            counts["impressions excluded (no backend returned a document)" if attrs["excluded"] == NO_DOCUMENT
                   else "impressions excluded (backend failure or lateness)"] += 1
            seen_excluded.add(qid)
            continue
        if design == "interleaving" and inter is None:
            counts["A/B impressions (not interleaved)"] += 1
            continue
        if design == "ab" and inter is not None:
            counts["interleaved impressions (not A/B)"] += 1
            continue
        if inter is not None:
            ranker_lists.setdefault(tuple(str(r) for r in inter.get("rankers") or ()), qid)
            methods.add(str(inter.get("method")))
        stamp = q.get("timestamp")
        if not isinstance(stamp, dt.datetime):
            stamp = parse_timestamp(str(stamp), f"{label}: query {qid}")
        shown = [str(d) for d in q.get("query_response_hit_ids") or []]
        user = q.get("user_id") or q.get("client_id") or q.get("session_id") or qid
        rows[qid] = {"impression_id": qid, "experiment": experiment, "variant": str(attrs["variant"]),
                     "user_id": str(user), "query_id": " ".join(str(q.get("user_query", "")).lower().split()),
                     "timestamp": stamp.astimezone(dt.UTC), "shown": shown, "n_shown": len(shown),
                     "teams": list(inter["teams"]) if inter is not None else None}
    click_rows: list[tuple[str, int]] = []
    seen_events: set[str] = set()
    for e in events:
        if e.get("action_name") != "click":
            continue
        counts["clicks read"] += 1
        eid = e.get("event_id") or strict_json.compact(e, sort_keys=True)
        if eid in seen_events:
            counts["duplicate clicks (same event id)"] += 1
            continue
        seen_events.add(eid)
        given = e.get("query_id")
        if given is None or str(given) not in known:
            counts["orphan clicks (unknown query_id)"] += 1
            continue
        qid = str(given)
        if qid in seen_excluded:
            counts["clicks on excluded impressions"] += 1
            continue
        row = rows.get(qid)
        if row is None:  # another experiment, or the other design
            continue
        attrs = e.get("event_attributes") or {}
        ordinal = (attrs.get("position") or {}).get("ordinal")
        object_id = (attrs.get("object") or {}).get("object_id")
        if isinstance(ordinal, int) and 1 <= ordinal <= row["n_shown"]:
            position = ordinal
        elif object_id is not None and str(object_id) in row["shown"]:
            position = row["shown"].index(str(object_id)) + 1
        else:
            counts["clicks that could not be placed"] += 1
            continue
        click_rows.append((qid, position))
    if len(ranker_lists) > 1:
        (first, at), (second, where) = list(ranker_lists.items())[:2]
        raise InputError(f"{label}: experiment {experiment!r} interleaves different rankers in different "
                         f"impressions ({list(first)} in {at}, {list(second)} in {where}); analyse one "
                         "configuration per experiment name.")
    counts["impressions used"] = len(rows)
    counts["clicks used"] = len(click_rows)
    values = list(rows.values())
    impressions = pa.table({
        "impression_id": pa.array([r["impression_id"] for r in values], pa.string()),
        "experiment": pa.array([r["experiment"] for r in values], pa.string()),
        "variant": pa.array([r["variant"] for r in values], pa.string()),
        "user_id": pa.array([r["user_id"] for r in values], pa.string()),
        "query_id": pa.array([r["query_id"] for r in values], pa.string()),
        "timestamp": pa.array([r["timestamp"] for r in values], pa.timestamp("us", tz="UTC")),
        "shown": pa.array([r["shown"] for r in values], pa.list_(pa.string())),
        "n_shown": pa.array([r["n_shown"] for r in values], pa.int64()),
        **({"teams": pa.array([r["teams"] for r in values], pa.list_(pa.string()))} if design == "interleaving"
           else {}),
    })
    clicks = pa.table({"impression_id": pa.array([c[0] for c in click_rows], pa.string()),
                       "position": pa.array([c[1] for c in click_rows], pa.int64())})
    rankers = next(iter(ranker_lists), ())
    return EventLogs(impressions, clicks, label, counts, rankers, tuple(sorted(methods)))



def team_credits(logs: EventLogs) -> Any:
    """``[impressions, rankers]`` clicks credited to each ranker's team (``logs.rankers`` order).

    Team draft (inter/multi)leaving: a click is credited to the team that put the clicked
    document there (``interleaving.teams``), once per clicked position however often it was
    clicked (as :func:`~serpeval.online.interleaving.credit`); a ``shared`` document credits
    nobody. Row ``n`` is
    the ``n``-th impression of ``logs.impressions``; an impression without a click is a zero row.
    Refuses other methods: probabilistic multileaving's preferences are marginalised over the
    coins, which the logged teams alone do not give.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not logs.rankers or logs.impressions.num_rows == 0:
        raise InputError(f"{logs.source}: no interleaved impressions to analyse.")
    if logs.methods != ("team_draft",):
        raise InputError(f"{logs.source}: multileaving analysis from the logged teams needs team draft "
                         f"impressions; found {', '.join(logs.methods)}.")
    credits = np.zeros((logs.impressions.num_rows, len(logs.rankers)), dtype=np.float64)
    clicks = logs.clicks
    if clicks.num_rows:
        teams = logs.impressions.column("teams").combine_chunks()
        # every click of EventLogs is on a used impression, at a position within its list
        row = pc.index_in(clicks.column("impression_id"),
                          value_set=logs.impressions.column("impression_id")).to_numpy(zero_copy_only=False)
        # each clicked position of an impression once: a result clicked twice (two click
        # events) credits its team once, as credit() does at serving time
        row, position = np.unique(np.stack([row.astype(np.int64), clicks.column("position").to_numpy()]), axis=1)
        offsets = teams.offsets.to_numpy()
        team = pc.take(teams.flatten(), pa.array(offsets[row] + position - 1))
        col = pc.index_in(team, value_set=pa.array(list(logs.rankers), pa.string()))
        credited = col.is_valid().to_numpy(zero_copy_only=False)  # a shared document credits nobody
        np.add.at(credits, (row[credited], col.to_numpy(zero_copy_only=False)[credited].astype(np.int64)), 1.0)
    return credits
