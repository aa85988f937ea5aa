"""The UBI event schema and the event store, on DuckDB and on a real PostgreSQL."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval.core.errors import InputError
from serpeval.online.events.schema import ACTIONS, validate_events, validate_query
from serpeval.online.events.store import GroupWriter, StoreUnavailable, open_store, query_row


def click(query_id: str | None = "q1", **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"action_name": "click", "timestamp": "2026-12-05T01:00:00Z", "client_id": "c1",
                             "event_attributes": {"position": {"ordinal": 2}}}
    if query_id is not None:
        event["query_id"] = query_id
    event.update(extra)
    return event


def impression(query_id: str = "q1", hits: tuple[str, ...] = ("d1", "d2", "d3")) -> dict[str, Any]:
    return {"query_id": query_id, "user_query": "wing flow", "client_id": "u1", "user_id": "u1",
            "timestamp": "2026-12-05T00:59:59.5+00:00", "query_response_hit_ids": list(hits),
            "query_attributes": {"experiment": "e", "variant": "interleaved", "excluded": None,
                                 "interleaving": {"method": "team_draft", "seed": 5, "k": len(hits),
                                                  "rankers": ["A", "B"], "teams": ["A", "B", "A"][:len(hits)],
                                                  "rankings": [list(hits), list(hits)], "params": {}}}}


# ---------------------------------------------------------------- schema

def test_valid_events_become_rows() -> None:
    rows = validate_events([click(), click("q2", event_attributes={"object": {"object_id": 7}}),
                            {"action_name": "purchase", "timestamp": "2026-12-05T02:00:00"}])
    assert [r.action_name for r in rows] == ["click", "click", "purchase"]
    assert rows[0].ordinal == 2
    assert rows[0].object_id is None
    assert rows[1].object_id == "7"
    assert rows[1].ordinal is None
    assert rows[2].timestamp == dt.datetime(2026, 12, 5, 2, tzinfo=dt.UTC)  # naive = UTC
    assert rows[0].timestamp.tzinfo is not None
    # the id of an event without one is a digest of its content: the same event, the same id
    assert validate_events(click())[0].event_id == rows[0].event_id
    assert validate_events(click(event_id="mine"))[0].event_id == "mine"
    assert validate_events({"events": [click()]})[0].event_id == rows[0].event_id


@pytest.mark.parametrize(("payload", "message"), [
    ({"timestamp": "2026-12-05T01:00:00Z"}, "event: 'action_name' is a required property"),
    (click(event_attributes={"position": {"ordinal": "2"}}),
     "event: event_attributes.position.ordinal: '2' is not of type 'integer'"),
    (click(event_attributes={"position": {"ordinal": 0}}),
     "event: event_attributes.position.ordinal: 0 is less than the minimum of 1"),
    (click(event_attributes={}),
     "event: event_attributes: needs position.ordinal (1-based), position.xy or object.object_id"),
    (click(query_id=5), "event: query_id: 5 is not of type 'string'"),
    (click(timestamp="yesterday at noon"), "event: timestamp: timestamp 'yesterday at noon' is not ISO 8601"),
    ([click(), "x"], "event 1: expected a JSON object; got str."),
    ([], "the batch holds no events."),
    (click(event_attributes={"object": {"object_id": "d\ud800"}}),
     "event: text that is not valid Unicode (surrogates not allowed: '\\ud800')"),
    ([click(), click(event_attributes={"object": {"object_id": "a\x00b"}})],
     "event 1: event_attributes.object.object_id holds a NUL character"),
    (click(client_id="u\x00"), "event: client_id holds a NUL character"),
    (3, "expected a UBI event object, a list of them or {\"events\": [...]}; got int."),
])
def test_bad_events_get_one_line_naming_the_field(payload: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        validate_events(payload)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_batch_limit() -> None:
    with pytest.raises(InputError, match="the batch holds 3 events; at most 2 per request"):
        validate_events([click()] * 3, max_batch=2)


def test_query_records_follow_the_convention() -> None:
    validate_query(impression())
    bad = impression()
    bad["query_attributes"]["interleaving"]["teams"] = ["A"]
    with pytest.raises(InputError, match=r"interleaving\.teams has 1 labels for 3 hits"):
        validate_query(bad)
    bad = impression()
    del bad["query_attributes"]["experiment"]
    with pytest.raises(InputError, match="'experiment' is a required property"):
        validate_query(bad)


# ---------------------------------------------------------------- store, both backends

def test_write_read_idempotent_and_orphans(store_url: str) -> None:
    store = open_store(store_url)
    try:
        events = validate_events([click("q1"), click("q-unknown", event_id="e2"), click(None, event_id="e3")])
        result, ids = store.write([query_row(impression("q1"))], events)
        # q-unknown is an orphan; an event without query_id is not an orphan (nothing to join)
        assert (result.written, result.duplicates, result.orphans, result.queries) == (3, 0, 1, 1)
        assert ids["e2"] is True
        assert ids["e3"] is False
        again, ids_again = store.write([query_row(impression("q1"))], events + events[:1])
        assert (again.written, again.duplicates, again.orphans) == (0, 4, 0)
        assert ids_again == {}
        assert store.counts() == {"impressions": 1, "events": 3, "orphans": 1}
        queries = store.read("ubi_queries").to_pylist()
        assert queries[0]["query_id"] == "q1"
        assert json.loads(queries[0]["hit_ids"]) == ["d1", "d2", "d3"]
        assert queries[0]["ts"] == dt.datetime(2026, 12, 5, 0, 59, 59, 500000, tzinfo=dt.UTC)
        assert json.loads(queries[0]["query_attributes"])["interleaving"]["seed"] == 5
        assert queries[0]["interleaved"] is True
        assert queries[0]["experiment"] == "e"
        stored = store.read("ubi_events").to_pylist()
        assert [e["event_id"] for e in stored] == sorted(e.event_id for e in events)
        assert {e["event_id"]: e["orphan"] for e in stored}["e2"] is True
        assert json.loads(next(e["body"] for e in stored if e["event_id"] == "e2"))["query_id"] == "q-unknown"
    finally:
        store.close()
    # reopened: the tables are kept, not recreated
    store = open_store(store_url)
    assert store.counts()["events"] == 3
    store.close()


def test_both_backends_store_the_same_rows(tmp_path: Any, pg_url: str) -> None:
    """Text of every kind (accents, non-BMP, quotes, backslashes, control characters, a literal
    backslash-u escape) is stored and read back the same by both stores."""
    odd = 'café 😀 "q" \\ \\u0000 \n\t\x01 ٣'
    events = validate_events([click("q1"), click("q2", event_attributes={"object": {"object_id": "d9"}}),
                              click("q1", action_name="add_to_cart", event_id="x"),
                              click("q1", event_id=odd, client_id=odd,
                                    event_attributes={"object": {"object_id": odd}})])
    tables = []
    for url in (str(tmp_path / "a.duckdb"), pg_url):
        store = open_store(url)
        store.write([query_row(impression("q1")), query_row(impression("q2", ("d9",)))], events)
        tables.append((store.read("ubi_queries"), store.read("ubi_events").drop_columns(["received_at"])))
        store.close()
    assert tables[0][0].equals(tables[1][0])
    assert tables[0][1].equals(tables[1][1])
    stored = {e["event_id"]: e for e in tables[0][1].to_pylist()}
    assert stored[odd]["object_id"] == stored[odd]["client_id"] == odd
    assert json.loads(stored[odd]["body"])["event_attributes"]["object"]["object_id"] == odd


def test_group_writer_commits_in_order_and_reports_each_request(store_url: str) -> None:
    writer = GroupWriter(open_store(store_url))
    try:
        # the event's impression is queued first: it is not an orphan
        first = writer.submit([query_row(impression("q7"))])
        futures = [writer.submit([], validate_events(click("q7", event_id=f"e{i % 3}"))) for i in range(6)]
        results = [f.result(timeout=30) for f in futures]
        assert first.result(timeout=30).queries == 1
        assert sum(r.written for r in results) == 3
        assert sum(r.duplicates for r in results) == 3
        assert all(r.orphans == 0 for r in results)
        assert writer.store.counts() == {"impressions": 1, "events": 3, "orphans": 0}
    finally:
        writer.close()


def test_impressions_wait_for_company_but_an_event_ends_the_wait(tmp_path: Any) -> None:
    """Impression-only groups linger to share a commit; an event arriving meanwhile is written
    at once with them (its caller waits for the commit), not after the linger."""
    # a linger of 60 s: an event that waited for it would time out at 30 s (no timing margin
    # that a loaded machine could eat; the commit itself takes milliseconds)
    writer = GroupWriter(open_store(str(tmp_path / "e.duckdb")), linger_s=60.0)
    try:
        impressions = [writer.submit([query_row(impression(f"q{i}"))]) for i in range(3)]
        event = writer.submit([], validate_events(click("q2", event_id="e1")))
        assert event.result(timeout=30).written == 1
        assert all(f.result(timeout=1).queries == 1 for f in impressions)  # in the same commit
        assert event.result().orphans == 0  # its impression was written first
    finally:
        writer.close()


def test_dropped_connection_is_a_503_then_recovers(pg_url: str) -> None:
    import psycopg

    store = open_store(pg_url)
    store.write([], validate_events(click(event_id="before")))
    pid = store._con.info.backend_pid
    with psycopg.connect(pg_url.split("?")[0], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreUnavailable, match="the write failed and nothing was stored"):
        store.write([], validate_events(click(event_id="during")))
    # the next write reconnects; the refused event is not there until the client retries it
    result, _ = store.write([], validate_events(click(event_id="after")))
    assert result.written == 1
    assert [e["event_id"] for e in store.read("ubi_events").to_pylist()] == ["after", "before"]
    store.close()


def test_unreachable_postgres_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match=r"event store postgresql://127.0.0.1:9/x: cannot open"):
        open_store("postgresql://nobody:secret@127.0.0.1:9/x")


def test_full_disk_refuses_without_acknowledging(tmp_path: Any) -> None:
    import shutil
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root (the full-disk test runs in CI as root)")
    try:
        store = open_store(mount / "events.duckdb")
        written = 0
        body = "x" * 900
        refused = None
        for i in range(10_000):
            rows = validate_events([click(f"q{i}", event_id=f"{i}-{j}", message=body) for j in range(50)])
            try:
                written += store.write([], rows)[0].written
            except StoreUnavailable as exc:
                refused = exc
                break
        assert refused is not None
        assert "the write failed and nothing was stored" in str(refused)
        store.close()
        # everything acknowledged before the disk filled is still there (read after freeing space)
        shutil.copy(mount / "events.duckdb", tmp_path / "copy.duckdb")
        if (mount / "events.duckdb.wal").exists():
            shutil.copy(mount / "events.duckdb.wal", tmp_path / "copy.duckdb.wal")
        check = open_store(tmp_path / "copy.duckdb")
        assert check.counts()["events"] == written > 0
        check.close()
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_bad_store_target(tmp_path: Any) -> None:
    with pytest.raises(InputError, match=r"the folder .* does not exist"):
        open_store(tmp_path / "missing" / "events.duckdb")
    store = open_store(tmp_path / "e.duckdb")
    with pytest.raises(InputError, match="unknown store table 'users'"):
        store.read("users")
    assert store.ping()
    store.close()


# ---------------------------------------------------------------- the fast path never accepts more

def _sized(*lengths: int) -> st.SearchStrategy[str]:
    """Strings of exactly these lengths: one code point repeated (from any plane: an astral one is
    one code point for the schema, two UTF-16 units, four UTF-8 bytes), cheap to draw."""
    return st.builds(str.__mul__, st.characters(), st.sampled_from(lengths))


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200_000) | st.floats(allow_nan=False) | st.text(max_size=3)
    | _sized(99, 100, 101, 102, 255, 256, 257, 258, 1024, 1025),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["x", "y", "ordinal", "object_id"]),
                                                                inner, max_size=3),
    max_leaves=8,
)
_position = st.fixed_dictionaries({}, optional={"ordinal": _values, "xy": _values})
_object = st.fixed_dictionaries({}, optional={"object_id": _values, "internal_id": _values,
                                              "object_id_type": _values, "object_id_field": _values})
_events = st.fixed_dictionaries({}, optional={
    "action_name": _values | st.just("click"), "timestamp": _values | st.just("2026-12-05T01:00:00Z"),
    "event_id": _values, "query_id": _values, "client_id": _values, "message": _values, "application": _values,
    "event_attributes": st.fixed_dictionaries({}, optional={"position": _position | _values,
                                                            "object": _object | _values}) | _values,
})

# Events the schema accepts, every field at or inside its bounds, then given 0-2 defects (a field
# dropped, or set to a value just past a bound or of another shape): most are on the fast path's
# edge, where accepting one value too many would show (_events alone rarely passes fast_valid).
_doc = _sized(1, 2, 256) | st.integers()
_xy = st.fixed_dictionaries({"x": st.integers() | st.floats(), "y": st.integers() | st.floats()})
_valid_position = (st.fixed_dictionaries({"ordinal": st.sampled_from([1, 2, 100_000]) | st.integers(1, 100_000)})
                   | st.fixed_dictionaries({"xy": _xy}))
_valid_object = st.fixed_dictionaries({"object_id": _doc}, optional={
    "internal_id": _doc, "object_id_field": _sized(0, 100), "object_id_type": _sized(0, 100)})
_valid_events = st.fixed_dictionaries(
    {"action_name": _sized(1, 100) | st.sampled_from(ACTIONS),
     "timestamp": _sized(10, 40) | st.just("2026-12-05T01:00:00Z")},
    optional={**{name: _sized(1, 100) for name in ("event_id", "query_id", "session_id", "client_id", "user_id")},
              "application": _sized(0, 100), "message_type": _sized(0, 100), "message": _sized(0, 1024),
              "user_query": _sized(0, 1024),
              "event_attributes": st.fixed_dictionaries({"position": _valid_position})
              | st.fixed_dictionaries({"object": _valid_object})
              | st.fixed_dictionaries({"position": _valid_position, "object": _valid_object})})
_ATTRIBUTES = "event_attributes"
#: (path, values just past its bounds or of another shape; a defect may also be any of _values)
_DEFECTS: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    *(((name,), _sized(0, 101)) for name in ("action_name", "event_id", "query_id", "session_id", "client_id",
                                             "user_id")),
    *(((name,), _sized(101)) for name in ("application", "message_type")),
    *(((name,), _sized(1025)) for name in ("message", "user_query")),
    (("timestamp",), _sized(9, 41)),
    ((_ATTRIBUTES,), st.just({})),
    ((_ATTRIBUTES, "position"), st.just({}) | st.fixed_dictionaries({"ordinal": st.just(1), "xy": _xy})),
    ((_ATTRIBUTES, "object"), st.just({}) | st.fixed_dictionaries({"internal_id": _doc})),
    ((_ATTRIBUTES, "position", "ordinal"), st.sampled_from([0, -1, 100_001, True, 1.0, "1"])),
    ((_ATTRIBUTES, "position", "xy"), _xy | st.fixed_dictionaries({"x": st.integers()})),
    ((_ATTRIBUTES, "position", "xy", "x"), st.sampled_from([True, "1", None])),
    *(((_ATTRIBUTES, "object", name), _sized(0, 257) | st.sampled_from([True, 1.5, None]))
      for name in ("object_id", "internal_id")),
    *(((_ATTRIBUTES, "object", name), _sized(101) | st.sampled_from([1, None]))
      for name in ("object_id_type", "object_id_field")),
]


@st.composite
def _near_valid(draw: Any) -> dict[str, Any]:
    event: dict[str, Any] = draw(_valid_events)
    for _ in range(draw(st.integers(0, 2))):
        (*parents, key), bad = draw(st.sampled_from(_DEFECTS))
        where: Any = event
        for name in parents:
            where = where.get(name) if isinstance(where, dict) else None
        if isinstance(where, dict):
            choice = draw(st.integers(0, 4))
            if choice == 0:
                where.pop(key, None)
            else:
                where[key] = draw(_values if choice == 1 else bad)
    return event


_FULL: dict[str, Any] = {"action_name": "click", "timestamp": "2026-12-05T01:00:00Z", "event_id": "e", "query_id": "q",
         "session_id": "s", "client_id": "c", "user_id": "u", "application": "a", "message_type": "m",
         "message": "x", "user_query": "w",
         "event_attributes": {"position": {"ordinal": 1}, "object": {"object_id": "d", "internal_id": 7,
                                                                     "object_id_field": "f", "object_id_type": "t"}}}
_EDGE_VALUES: list[Any] = [
    *("x" * n for n in (0, 1, 9, 10, 40, 41, 99, 100, 101, 255, 256, 257, 1024, 1025)),
    *("\U0001F600" * n for n in (100, 101, 256, 257)),  # one code point each: the bounds count code points
    None, True, False, 0, 1, -1, 100_000, 100_001, 1.5, float("nan"), float("inf"), [], ["x"], {}, {"x": 1},
    {"x": 1, "y": 2}, {"x": "1", "y": 2}, {"ordinal": 1}, {"object_id": "d"},
]


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*prefix, key))
    return out


def test_fast_path_at_every_bound_of_every_field() -> None:
    """Every field of a full event (position by ordinal, then by xy), dropped or set to each edge
    value in turn (lengths at and one past each bound, 0, 100,000, booleans, other shapes; a
    field the event lacks, such as xy beside ordinal, added): what the fast path accepts,
    jsonschema accepts."""
    import copy

    from serpeval.online.events.schema import _validator, fast_valid

    with_xy = copy.deepcopy(_FULL)
    with_xy["event_attributes"]["position"] = {"xy": {"x": 1.5, "y": 2}}
    accepted = refused = 0
    for base in (_FULL, with_xy):
        paths = [*_paths(base), ("event_attributes", "position", "xy"), ("event_attributes", "position", "ordinal")]
        for *parents, key in paths:
            for value in [_DROP, *_EDGE_VALUES]:
                event = copy.deepcopy(base)
                where = event
                for name in parents:
                    where = where[name]
                if value is _DROP:
                    where.pop(key, None)
                else:
                    where[key] = value
                if fast_valid(event):
                    accepted += 1
                    assert not list(_validator("event").iter_errors(event)), event
                else:
                    refused += 1
    assert accepted == 370  # the fast path still takes the valid edges (else the check above is idle)
    assert refused == 1302


_DROP = object()


# Half the examples are any shape (_events), half near-valid: about 60 of the 150 pass the fast
# path and are checked (300 of _events alone checked 0-2; test_fast_path_at_every_bound_of_every_field
# takes each bound in turn).
@settings(max_examples=150, deadline=None)
@given(event=_events | _near_valid())
def test_fast_path_accepts_only_what_the_schema_accepts(event: dict[str, Any]) -> None:
    from serpeval.online.events.schema import EVENT_SCHEMA, _validator, fast_valid

    assert EVENT_SCHEMA["type"] == "object"
    if fast_valid(event):
        assert not list(_validator("event").iter_errors(event)), event


def test_a_file_that_is_not_a_duckdb_database_is_refused(tmp_path: Any) -> None:
    """``duckdb.connect`` opens a CSV or JSON file as an in-memory database with a view of it:
    the store's writes were acknowledged and lost. Such a file is refused, and left as it was;
    a DuckDB store is opened, and an empty file is left to DuckDB as before (only the header of
    the file is read)."""
    import duckdb

    csv = tmp_path / "events.csv"
    csv.write_text("query_id,doc\nq1,d1\n")
    with pytest.raises(InputError, match=r"events.csv: exists and is not a DuckDB database file, so it cannot be "
                                         r"the event store \(DuckDB would open it as an in-memory view"):
        open_store(csv)
    assert csv.read_text() == "query_id,doc\nq1,d1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.csv"]
    real = tmp_path / "events.duckdb"
    duckdb.connect(str(real)).close()
    store = open_store(real)
    store.write([], validate_events(click()))
    store.close()
    reopened = open_store(real)
    assert reopened.counts()["events"] == 1
    reopened.close()
    empty = tmp_path / "empty.duckdb"
    empty.touch()
    with contextlib.suppress(StoreUnavailable):  # DuckDB's own answer: a new database in it, or its error
        open_store(empty).close()
