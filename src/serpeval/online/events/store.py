"""The event store: one schema, two backends through the same code.

- an embedded **DuckDB** file (``events.duckdb``; no server; what the analysis reads by default),
- **PostgreSQL** (``postgresql://user@host/db``; psycopg 3) for production.

Tables (the UBI names; the same DDL text on both backends):

``ubi_queries``: one row per impression (``query_id`` primary key, ``user_query``,
``client_id``, ``user_id``, ``session_id``, ``ts``, ``hit_ids`` the shown ids as a JSON array,
``query_attributes`` as JSON text with the experiment convention of
:mod:`serpeval.online.events.schema`, and ``experiment``, ``variant``, ``interleaved`` copied
out of it for SQL).

``ubi_events``: one row per event (``event_id`` primary key, ``action_name``, ``query_id``,
``client_id``, ``user_id``, ``session_id``, ``ts``, ``object_id``, ``ordinal``, ``orphan``:
the ``query_id`` was not in ``ubi_queries`` when the event arrived, ``body``: the event's
canonical JSON, ``received_at``).

**Durability.** :meth:`EventStore.write` returns only after the transaction has committed
(DuckDB writes and syncs its WAL at commit; PostgreSQL with its default
``synchronous_commit=on``). A failure (full disk, dead server) raises
:class:`StoreUnavailable`; the connection is dropped and reopened at the next write, so a
restarted database is picked up without restarting the service. :class:`GroupWriter` runs
the writes of many requests in one transaction (group commit) on one thread.

**Idempotence.** ``INSERT ... ON CONFLICT (event_id) DO NOTHING``: a retried event is stored
once and reported as a duplicate. Every statement is static SQL with parameters or a staged
table; no user data is ever put into SQL text.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.core import strict_json
from serpeval.core.errors import InputError, SerpevalError, require
from serpeval.online.events.schema import EventRow, parse_timestamp

__all__ = ["EventStore", "GroupWriter", "StoreUnavailable", "WriteResult", "is_postgres_url", "open_store"]


class StoreUnavailable(SerpevalError):
    """The store could not commit (full disk, database down): the caller answers 503 and retries."""


QUERY_COLUMNS = ("query_id", "application", "client_id", "user_id", "session_id", "user_query", "ts",
                 "hit_ids", "query_attributes", "experiment", "variant", "interleaved")
EVENT_COLUMNS = ("event_id", "action_name", "query_id", "client_id", "user_id", "session_id", "ts",
                 "object_id", "ordinal", "orphan", "body", "received_at")

_DDL = (
    """CREATE TABLE IF NOT EXISTS ubi_queries (
        query_id TEXT PRIMARY KEY, application TEXT, client_id TEXT, user_id TEXT, session_id TEXT,
        user_query TEXT NOT NULL, ts TIMESTAMPTZ NOT NULL, hit_ids TEXT NOT NULL,
        query_attributes TEXT NOT NULL, experiment TEXT, variant TEXT, interleaved BOOLEAN NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ubi_events (
        event_id TEXT PRIMARY KEY, action_name TEXT NOT NULL, query_id TEXT, client_id TEXT,
        user_id TEXT, session_id TEXT, ts TIMESTAMPTZ NOT NULL, object_id TEXT, ordinal INTEGER,
        orphan BOOLEAN NOT NULL, body TEXT NOT NULL, received_at TIMESTAMPTZ NOT NULL)""",
)
_STAGE_EVENT_COLUMNS = (*EVENT_COLUMNS[:9], "body", "received_at")  # orphan is computed in SQL
_INSERT_QUERIES = (f"INSERT INTO ubi_queries ({', '.join(QUERY_COLUMNS)}) "
                   f"SELECT {', '.join(QUERY_COLUMNS)} FROM serpeval_stage_queries ON CONFLICT (query_id) DO NOTHING")
_INSERT_EVENTS = (
    f"INSERT INTO ubi_events ({', '.join(EVENT_COLUMNS)}) "
    f"SELECT {', '.join('s.' + c for c in EVENT_COLUMNS[:9])}, "
    "(s.query_id IS NOT NULL AND q.query_id IS NULL), s.body, s.received_at "
    "FROM serpeval_stage_events s LEFT JOIN ubi_queries q ON q.query_id = s.query_id "
    "ON CONFLICT (event_id) DO NOTHING RETURNING event_id, orphan"
)



def _from_json(columns: tuple[str, ...], types: dict[str, str]) -> str:
    """A DuckDB subquery whose rows come from the one parameter ``$1``: a JSON object holding
    one array per column (:func:`_columns_json`), zipped back into rows by ``unnest``."""
    spec = strict_json.compact({c: [types.get(c, "VARCHAR")] for c in columns})
    return ("(SELECT " + ", ".join(f"unnest(j.{c}) AS {c}" for c in columns)
            + f" FROM (SELECT from_json($1, '{spec}') AS j))")


def _columns_json(columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    """``rows`` as one JSON object of column arrays (timestamps in ISO 8601), for :func:`_from_json`."""
    values: dict[str, list[Any]] = {}
    for name, column in zip(columns, zip(*rows, strict=True), strict=True):
        values[name] = [v.isoformat() if isinstance(v, dt.datetime) else v for v in column] \
            if name in ("ts", "received_at") else list(column)
    return strict_json.compact(values)


# DuckDB receives a batch as one JSON text and rebuilds its rows in SQL: converting a single
# string parameter is all it does under the GIL. Rows passed as an Arrow view or as list
# parameters held the GIL for milliseconds per commit (per value conversions), which delayed
# serve's answers on the event loop (bench/results/serve.md).
_DUCK_QUERY_TYPES = {"ts": "TIMESTAMPTZ", "interleaved": "BOOLEAN"}
_DUCK_EVENT_TYPES = {"ts": "TIMESTAMPTZ", "received_at": "TIMESTAMPTZ", "ordinal": "INTEGER"}
_DUCK_INSERT_QUERIES = _INSERT_QUERIES.replace(
    "FROM serpeval_stage_queries", "FROM " + _from_json(QUERY_COLUMNS, _DUCK_QUERY_TYPES))
_DUCK_INSERT_EVENTS = _INSERT_EVENTS.replace(
    "FROM serpeval_stage_events s", "FROM " + _from_json(_STAGE_EVENT_COLUMNS, _DUCK_EVENT_TYPES) + " s")

_COPY_QUERIES = f"COPY serpeval_stage_queries ({', '.join(QUERY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
_COPY_EVENTS = f"COPY serpeval_stage_events ({', '.join(_STAGE_EVENT_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
# the PostgreSQL types of the staged columns, in order (binary COPY needs them exactly)
_PG_QUERY_TYPES = tuple("timestamptz" if c == "ts" else "bool" if c == "interleaved" else "text"
                        for c in QUERY_COLUMNS)
_PG_EVENT_TYPES = tuple("timestamptz" if c in ("ts", "received_at") else "int4" if c == "ordinal" else "text"
                        for c in _STAGE_EVENT_COLUMNS)


def is_postgres_url(target: Any) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


@dataclass(frozen=True)
class WriteResult:
    """What one write stored: events written, duplicates (already stored), orphans among the
    written (unknown ``query_id``), impressions written."""

    written: int = 0
    duplicates: int = 0
    orphans: int = 0
    queries: int = 0


def query_row(record: dict[str, Any]) -> tuple[Any, ...]:
    """A ``ubi_queries`` row from an impression record (validated by the caller)."""

    attributes = record["query_attributes"]
    return (
        record["query_id"], record.get("application"), record.get("client_id"), record.get("user_id"),
        record.get("session_id"), record["user_query"], parse_timestamp(record["timestamp"], "query"),
        strict_json.compact(record["query_response_hit_ids"]),
        strict_json.compact(attributes), attributes.get("experiment"), attributes.get("variant"),
        attributes.get("interleaving") is not None and not attributes.get("excluded"),
    )


class EventStore:
    """A connection to one store (see the module docstring). Not thread-safe: one writer
    thread (:class:`GroupWriter`) or one caller at a time."""

    def __init__(self, target: str | Path) -> None:
        self.target = str(target)
        self.kind = "postgresql" if is_postgres_url(self.target) else "duckdb"
        self._con: Any = None
        if self.kind == "duckdb":
            _check_duckdb_file(Path(self.target))
        self._connect()

    # ------------------------------------------------------------------ connection
    def _connect(self) -> None:
        try:
            if self.kind == "duckdb":
                duckdb: Any = require("duckdb", "ab")
                path = Path(self.target)
                if path.parent and not path.parent.exists():
                    raise InputError(f"{self.target}: the folder {path.parent} does not exist; create it "
                                     "or name a store file in an existing folder.")
                # one thread: a commit then runs on the writer's own thread instead of taking
                # every core for a few milliseconds while serve answers (bench/results/serve.md)
                self._con = duckdb.connect(self.target, config={"threads": 1})
            else:
                psycopg: Any = require("psycopg", "serve")
                self._con = psycopg.connect(self.target, autocommit=False, connect_timeout=5)
            cur = self._con.cursor()
            for statement in _DDL:
                cur.execute(statement)
            if self.kind == "postgresql":
                cur.execute("CREATE TEMP TABLE IF NOT EXISTS serpeval_stage_events "
                            "(LIKE ubi_events) ON COMMIT DELETE ROWS")
                cur.execute("ALTER TABLE serpeval_stage_events DROP COLUMN IF EXISTS orphan")
                cur.execute("CREATE TEMP TABLE IF NOT EXISTS serpeval_stage_queries "
                            "(LIKE ubi_queries) ON COMMIT DELETE ROWS")
            self._con.commit()
        except SerpevalError:
            self._con = None
            raise
        except Exception as exc:
            self._drop()
            raise StoreUnavailable(f"event store {self._label()}: cannot open ({type(exc).__name__}: "
                                   f"{_first_line(exc)}).") from exc

    def _label(self) -> str:
        if self.kind == "postgresql":  # never echo a password
            from urllib.parse import urlsplit

            parts = urlsplit(self.target)
            return f"postgresql://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path}"
        return self.target

    def _drop(self) -> None:
        con, self._con = self._con, None
        if con is not None:
            with contextlib.suppress(Exception):  # already broken: nothing to keep
                con.close()

    def close(self) -> None:
        """Close the connection (a later write reopens it)."""
        self._drop()

    def ping(self) -> bool:
        """Whether the store answers ``SELECT 1`` (reconnecting if needed)."""
        try:
            if self._con is None:
                self._connect()
            self._con.cursor().execute("SELECT 1")
            self._con.commit()
            return True
        except Exception:
            self._drop()
            return False

    # ------------------------------------------------------------------ writes
    def write(self, queries: list[tuple[Any, ...]] = (), events: list[EventRow] = ()  # type: ignore[assignment]
              ) -> tuple[WriteResult, dict[str, bool]]:
        """Insert impressions (rows of :func:`query_row`) then events, in one committed
        transaction. Returns the counts and ``{event_id: orphan}`` of the events written
        (duplicates of stored events are not in it)."""
        if not queries and not events:
            return WriteResult(), {}
        now = dt.datetime.now(dt.UTC)
        unique: dict[str, EventRow] = {}
        for e in events:
            unique.setdefault(e.event_id, e)
        try:
            if self._con is None:
                self._connect()
            written = self._write(list(queries), list(unique.values()), now)
        except SerpevalError:
            raise
        except Exception as exc:
            self._drop()
            raise StoreUnavailable(f"event store {self._label()}: the write failed and nothing was "
                                   f"stored ({type(exc).__name__}: {_first_line(exc)}).") from exc
        ids = {str(row[0]): bool(row[1]) for row in written}
        orphans = sum(ids.values())
        return WriteResult(len(ids), len(events) - len(ids), orphans, len(queries)), ids

    def _write(self, queries: list[tuple[Any, ...]], events: list[EventRow], now: dt.datetime) -> list[Any]:
        con = self._con
        cur = con.cursor()
        event_rows = [(e.event_id, e.action_name, e.query_id, e.client_id, e.user_id, e.session_id, e.timestamp,
                       e.object_id, e.ordinal, e.body, now) for e in events]
        if self.kind == "duckdb":
            con.execute("BEGIN TRANSACTION")
            try:
                if queries:
                    con.execute(_DUCK_INSERT_QUERIES, [_columns_json(QUERY_COLUMNS, queries)])
                written: list[Any] = []
                if event_rows:
                    written = con.execute(_DUCK_INSERT_EVENTS,
                                          [_columns_json(_STAGE_EVENT_COLUMNS, event_rows)]).fetchall()
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):  # the original error is what the caller needs
                    con.execute("ROLLBACK")
                raise
            return written
        try:
            # binary COPY into the session's staging tables, then one INSERT ... SELECT ... ON CONFLICT
            # DO NOTHING, all in one transaction. Measured against text COPY, executemany in pipeline
            # mode and unnest() of array parameters in bench/results/serve.md: binary COPY is fastest.
            if queries:
                with cur.copy(_COPY_QUERIES) as copy:
                    copy.set_types(_PG_QUERY_TYPES)
                    for row in queries:
                        copy.write_row(row)
                cur.execute(_INSERT_QUERIES)
            written = []
            if event_rows:
                with cur.copy(_COPY_EVENTS) as copy:
                    copy.set_types(_PG_EVENT_TYPES)
                    for row in event_rows:
                        copy.write_row(row)
                written = cur.execute(_INSERT_EVENTS).fetchall()
            con.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                con.rollback()
            raise
        return written

    # ------------------------------------------------------------------ reads
    def read(self, table: str) -> Any:
        """``ubi_queries`` or ``ubi_events`` as a pyarrow Table (every column)."""
        import pyarrow as pa

        if table not in ("ubi_queries", "ubi_events"):
            raise InputError(f"unknown store table {table!r}; expected ubi_queries or ubi_events.")
        columns = QUERY_COLUMNS if table == "ubi_queries" else EVENT_COLUMNS
        if self._con is None:
            self._connect()
        sql = f"SELECT {', '.join(columns)} FROM {table} ORDER BY {columns[0]}"
        if self.kind == "duckdb":
            out = self._con.sql(sql).to_arrow_table()
            return out.cast(pa.schema([(f.name, pa.timestamp('us', tz='UTC')) if f.name in ('ts', 'received_at')
                                       else f for f in out.schema]))
        cur = self._con.cursor()
        cur.execute(sql)
        rows = cur.fetchall()
        self._con.commit()
        types = _query_types(pa) if table == "ubi_queries" else {**_event_types(pa), "orphan": pa.bool_()}
        return pa.table({c: pa.array([r[i] for r in rows], type=types[c]) for i, c in enumerate(columns)})

    def counts(self) -> dict[str, int]:
        """Rows per table and orphan events."""
        if self._con is None:
            self._connect()
        cur = self._con.cursor()
        out: dict[str, int] = {}
        for name, sql in (("impressions", "SELECT count(*) FROM ubi_queries"),
                          ("events", "SELECT count(*) FROM ubi_events"),
                          ("orphans", "SELECT count(*) FROM ubi_events WHERE orphan")):
            cur.execute(sql)
            out[name] = int(cur.fetchone()[0])
        self._con.commit()
        return out


def _query_types(pa: Any) -> dict[str, Any]:
    ts = pa.timestamp("us", tz="UTC")
    return {c: (ts if c == "ts" else pa.bool_() if c == "interleaved" else pa.string()) for c in QUERY_COLUMNS}


def _event_types(pa: Any) -> dict[str, Any]:
    ts = pa.timestamp("us", tz="UTC")
    return {c: (ts if c in ("ts", "received_at") else pa.int32() if c == "ordinal" else pa.string())
            for c in _STAGE_EVENT_COLUMNS}


# A DuckDB database file: an 8-byte checksum, then these 4 bytes (every storage version so far).
_DUCKDB_MAGIC = b"DUCK"
_DUCKDB_MAGIC_OFFSET = 8


def _check_duckdb_file(path: Path) -> None:
    """Refuse an existing, non-empty file that is not a DuckDB database as a store.

    ``duckdb.connect`` opens a CSV, JSON or Parquet file as an in-memory database holding a
    view of it: the tables would be created in memory, every write would be acknowledged and
    all would be lost at exit. A DuckDB database file holds ``DUCK`` at byte 8; only those 12
    bytes are read. A missing file is created as a new store; an empty file, a folder and a file
    that cannot be read are left to DuckDB, as before this check (DuckDB 2.0 refuses an empty
    file as "not a valid DuckDB database file", naming it).

    Checked once, when the store is opened (:class:`EventStore`), not at each reconnect: the
    file is opened and closed here, and closing any descriptor of a file drops every POSIX
    lock that this process holds on it, DuckDB's included.

    Raises:
        InputError: the file exists, is not empty and is not a DuckDB database.
    """
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        with path.open("rb") as handle:
            head = handle.read(_DUCKDB_MAGIC_OFFSET + len(_DUCKDB_MAGIC))
    except OSError:
        return  # DuckDB reports it, naming the cause
    if head[_DUCKDB_MAGIC_OFFSET:] != _DUCKDB_MAGIC:
        raise InputError(f"{path}: exists and is not a DuckDB database file, so it cannot be the event store "
                         "(DuckDB would open it as an in-memory view and the events would be lost at exit); name "
                         "a new file or an existing DuckDB store (e.g. events.duckdb), or a postgresql:// URL.")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def open_store(target: str | Path) -> EventStore:
    """Open (creating the tables if needed) a DuckDB file or a ``postgresql://`` database."""
    return EventStore(target)


@dataclass
class _Job:
    queries: list[tuple[Any, ...]]
    events: list[EventRow]
    future: concurrent.futures.Future[WriteResult] = field(default_factory=concurrent.futures.Future)


class GroupWriter:
    """Group commit: requests :meth:`submit` their rows; one thread writes everything queued
    so far in one transaction and resolves each request's future after the commit (or with
    :class:`StoreUnavailable`). A group that starts with impressions only (no caller waits
    for them) gathers more for up to ``linger_s``, until a job with events arrives; a group
    that starts with events is written at once.
    Queued jobs are written in submission order, so an impression
    submitted before an event is in ``ubi_queries`` when the event's orphan flag is computed.
    """

    def __init__(self, store: EventStore, *, max_group: int = 256, linger_s: float = 0.1) -> None:
        self.store = store
        self.max_group = max_group
        self.linger_s = linger_s
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="serpeval-store-writer", daemon=True)
        self._thread.start()

    def submit(self, queries: list[tuple[Any, ...]] = (), events: list[EventRow] = ()  # type: ignore[assignment]
               ) -> concurrent.futures.Future[WriteResult]:
        """Queue rows; the future resolves once they are committed."""
        job = _Job(list(queries), list(events))
        self._queue.put(job)
        return job.future

    def close(self) -> None:
        """Write what is queued, stop the thread and close the store."""
        self._queue.put(None)
        self._thread.join()
        self.store.close()

    def _run(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is None:
                break
            jobs = [first]
            if not first.events and self.linger_s > 0:
                # impressions only (nobody waits for them): gather more for up to linger_s, so
                # that one commit carries many (a commit costs ~5-10 ms of fsync and a few ms of
                # CPU); a job with events ends the wait, its caller waits for the commit
                stop = self._gather(jobs, time.monotonic() + self.linger_s)
            if not stop:
                stop = self._gather(jobs, None)
            self._commit(jobs)

    def _gather(self, jobs: list[_Job], deadline: float | None) -> bool:
        """Add queued jobs to ``jobs``, up to ``max_group``: with a ``deadline``, waiting for
        them until then (a job with events ends the wait); with None, only those already
        queued. True when the close marker was taken."""
        while len(jobs) < self.max_group:
            try:
                if deadline is None:
                    nxt = self._queue.get_nowait()
                elif (left := deadline - time.monotonic()) > 0:
                    nxt = self._queue.get(timeout=left)
                else:
                    break
            except queue.Empty:
                break
            if nxt is None:
                return True
            jobs.append(nxt)
            if deadline is not None and nxt.events:
                break
        return False

    def _commit(self, jobs: list[_Job]) -> None:
        queries = [q for j in jobs for q in j.queries]
        events = [e for j in jobs for e in j.events]
        try:
            _, ids = self.store.write(queries, events)
        except BaseException as exc:
            for j in jobs:
                j.future.set_exception(exc if isinstance(exc, SerpevalError)
                                       else StoreUnavailable(f"event store: {_first_line(exc)}"))
            return
        claimed: set[str] = set()
        for j in jobs:
            written = duplicates = orphans = 0
            for e in j.events:
                if e.event_id in ids and e.event_id not in claimed:
                    claimed.add(e.event_id)
                    written += 1
                    orphans += ids[e.event_id]
                else:
                    duplicates += 1
            j.future.set_result(WriteResult(written, duplicates, orphans, len(j.queries)))
