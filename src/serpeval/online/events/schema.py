"""UBI 1.3.0 events and queries, and serpeval's convention for experiments, as JSON Schemas.

**UBI** (User Behavior Insights, schema 1.3.0, o19s/ubi) has two records: a *query*
(``ubi_queries``: ``query_id``, ``client_id``, ``user_query``, ``query_attributes``,
``query_response_hit_ids``, ``timestamp``...) and an *event* (``ubi_events``:
``action_name``, ``timestamp``, ``query_id``, ``client_id``, ``session_id``, ``user_id``,
``event_attributes.object.object_id``, ``event_attributes.position.ordinal``...).

**The experiment convention** (UBI leaves ``query_attributes`` free-form; serpeval fills it):

.. code-block:: json

    {"experiment": "bm25-b", "variant": "interleaved",
     "interleaving": {"method": "team_draft", "seed": 7314418302331951, "k": 10,
                      "rankers": ["A", "B"], "teams": ["B", "A", "A", "B"],
                      "rankings": [["d1", "d2"], ["d2", "d9"]], "params": {},
                      "probabilities": [[0.9, 0.1], ...]},
     "excluded": null}

- ``variant``: the A/B arm, or ``interleaved`` for an interleaved impression, or
  ``control`` for an impression that fell back to the control's list;
- ``interleaving.teams[i]``: the label of the ranker that put ``query_response_hit_ids[i]``
  there (``shared`` for team draft's shared picks);
- ``interleaving.seed``: the coins were drawn from ``numpy.random.default_rng(seed)``, the
  seed derived from (experiment, query_id) (:func:`serpeval.serve.design.derive_seed`);
  with ``rankings``, ``method``, ``k`` and ``params`` the impression replays exactly;
- ``interleaving.probabilities[i][s]`` (probabilistic interleaving): ranker ``s``'s
  probability of drawing the document shown at slot ``i`` given the documents still
  unplaced (the propensities an off-policy estimator needs);
- ``excluded``: why the impression is not in the analysis (``backend B: timeout``), or null.

**Event deviations from UBI 1.3.0**, each on purpose: ``event_attributes.position`` is not
required when ``event_attributes.object.object_id`` names the document (the issue asks for
"ordinal or object id"); ``event_id`` (a string) is an optional top-level field: a retried post
with the same ``event_id`` is stored once; without one the id is the SHA-256 of the event's
canonical JSON, so an identical retry is also stored once. ``position.ordinal`` is **1-based**
(the UBI examples are 1, 3, 24; the schema does not say).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from serpeval.core import strict_json
from serpeval.core.errors import InputError, require

__all__ = [
    "ACTIONS",
    "EVENT_SCHEMA",
    "EXPERIMENT_SCHEMA",
    "NO_DOCUMENT",
    "QUERY_SCHEMA",
    "EventRow",
    "fast_valid",
    "parse_timestamp",
    "validate_events",
    "validate_query",
]

#: The ``action_name`` values UBI 1.3.0 lists; any other string up to 100 characters is accepted too.
ACTIONS = ("add_to_cart", "click", "impression", "purchase", "view", "watch")

_ID = {"type": "string", "minLength": 1, "maxLength": 100}
_DOC = {"anyOf": [{"type": "string", "minLength": 1, "maxLength": 256}, {"type": "integer"}]}

EVENT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://serpeval.dev/schema/ubi-1.3.0-event.json",
    "title": "UBI 1.3.0 event as serpeval accepts it",
    "type": "object",
    "required": ["action_name", "timestamp"],
    "properties": {
        "event_id": _ID,
        "action_name": {"type": "string", "minLength": 1, "maxLength": 100},
        "query_id": _ID,
        "session_id": _ID,
        "client_id": _ID,
        "user_id": _ID,
        "application": {"type": "string", "maxLength": 100},
        "timestamp": {"type": "string", "minLength": 10, "maxLength": 40},
        "message_type": {"type": "string", "maxLength": 100},
        "message": {"type": "string", "maxLength": 1024},
        "user_query": {"type": "string", "maxLength": 1024},
        "event_attributes": {
            "type": "object",
            "anyOf": [{"required": ["position"]}, {"required": ["object"]}],
            "properties": {
                "object": {
                    "type": "object",
                    "required": ["object_id"],
                    "properties": {
                        "object_id": _DOC,
                        "object_id_field": {"type": "string", "maxLength": 100},
                        "object_id_type": {"type": "string", "maxLength": 100},
                        "internal_id": _DOC,
                    },
                },
                "position": {
                    "type": "object",
                    "oneOf": [
                        {"required": ["ordinal"]},
                        {"required": ["xy"]},
                    ],
                    "properties": {
                        "ordinal": {"type": "integer", "minimum": 1, "maximum": 100_000},
                        "xy": {
                            "type": "object",
                            "required": ["x", "y"],
                            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                        },
                    },
                },
            },
        },
    },
}

EXPERIMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["experiment", "variant"],
    "properties": {
        "experiment": {"type": "string", "minLength": 1, "maxLength": 100},
        "variant": {"type": "string", "minLength": 1, "maxLength": 100},
        "excluded": {"type": ["string", "null"]},
        "interleaving": {
            "type": "object",
            "required": ["method", "seed", "k", "rankers", "teams", "rankings"],
            "properties": {
                "method": {"type": "string"},
                "seed": {"type": "integer", "minimum": 0, "maximum": 2**53 - 1},
                "k": {"type": "integer", "minimum": 1},
                "rankers": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                "teams": {"type": "array", "items": {"type": "string"}},
                "rankings": {"type": "array", "minItems": 2,
                             "items": {"type": "array", "items": {"type": "string"}}},
                "params": {"type": "object"},
                "probabilities": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            },
        },
    },
}

QUERY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://serpeval.dev/schema/ubi-1.3.0-query.json",
    "title": "UBI 1.3.0 query with serpeval's experiment attributes",
    "type": "object",
    "required": ["query_id", "user_query", "timestamp", "query_response_hit_ids", "query_attributes"],
    "properties": {
        "application": {"type": "string", "maxLength": 100},
        "query_id": _ID,
        "client_id": {"type": ["string", "null"], "maxLength": 100},
        "user_id": {"type": ["string", "null"], "maxLength": 100},
        "session_id": {"type": ["string", "null"], "maxLength": 100},
        "user_query": {"type": "string"},
        "timestamp": {"type": "string"},
        "query_response_hit_ids": {"type": "array", "items": {"type": "string"}},
        "query_attributes": EXPERIMENT_SCHEMA,
    },
}


@cache
def _validator(which: str) -> Any:
    jsonschema: Any = require("jsonschema", "serve")
    schema = EVENT_SCHEMA if which == "event" else QUERY_SCHEMA
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _reason(error: Any) -> str:
    """One line: where (a JSON path, none for the event itself) and what."""
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    message = error.message
    if error.validator in ("anyOf", "oneOf") and "event_attributes" in where + ".":
        message = ("needs position.ordinal (1-based), position.xy or object.object_id"
                   if where.endswith(("event_attributes", "position")) else message)
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{where}: {message}" if where else message


#: The ``excluded`` reason serve stores for a query no backend returned a document for (an
#: empty page: nothing to interleave); :func:`~serpeval.online.events.logs.read_event_logs`
#: counts those apart from backend failures.
NO_DOCUMENT = "no backend returned a document"


def parse_timestamp(value: str, where: str) -> dt.datetime:
    """An ISO 8601 timestamp as an aware UTC datetime (a naive one is taken as UTC)."""
    try:
        parsed = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: timestamp {value!r} is not ISO 8601 (e.g. 2026-12-05T01:20:00Z).") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


@dataclass(frozen=True, slots=True)
class EventRow:
    """One validated event, as the store writes it (``body``: the event's canonical JSON)."""

    event_id: str
    action_name: str
    query_id: str | None
    client_id: str | None
    user_id: str | None
    session_id: str | None
    timestamp: dt.datetime
    object_id: str | None
    ordinal: int | None
    body: str


_IDS = ("event_id", "query_id", "session_id", "client_id", "user_id")
_TEXTS = (("application", 100), ("message_type", 100), ("message", 1024), ("user_query", 1024))


def _short_text(value: Any, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _doc_id(value: Any) -> bool:
    return _short_text(value, 1, 256) or (isinstance(value, int) and not isinstance(value, bool))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fast_valid(event: Any) -> bool:
    """True only for events that :data:`EVENT_SCHEMA` accepts, in their common shapes; False
    means "ask jsonschema" (which gives the error, or accepts a rarer valid shape). About 30
    times faster than the full validator; ``tests/online/events`` checks that it never accepts
    what jsonschema refuses."""
    if not isinstance(event, dict):
        return False
    if not _short_text(event.get("action_name"), 1, 100) or not _short_text(event.get("timestamp"), 10, 40):
        return False
    for name in _IDS:
        if name in event and not _short_text(event[name], 1, 100):
            return False
    for name, high in _TEXTS:
        if name in event and not _short_text(event[name], 0, high):
            return False
    if "event_attributes" not in event:
        return True
    attributes = event["event_attributes"]
    if not isinstance(attributes, dict) or ("position" not in attributes and "object" not in attributes):
        return False
    if "object" in attributes:
        obj = attributes["object"]
        if not isinstance(obj, dict) or not _doc_id(obj.get("object_id")):
            return False
        if "internal_id" in obj and not _doc_id(obj["internal_id"]):
            return False
        for name in ("object_id_field", "object_id_type"):
            if name in obj and not _short_text(obj[name], 0, 100):
                return False
    if "position" in attributes:
        position = attributes["position"]
        if not isinstance(position, dict) or (("ordinal" in position) == ("xy" in position)):
            return False
        if "ordinal" in position:
            ordinal = position["ordinal"]
            if not (isinstance(ordinal, int) and not isinstance(ordinal, bool) and 1 <= ordinal <= 100_000):
                return False
        else:
            xy = position["xy"]
            if not (isinstance(xy, dict) and "x" in xy and "y" in xy and _number(xy["x"]) and _number(xy["y"])):
                return False
    return True


def _canonical(event: dict[str, Any]) -> str:
    return strict_json.compact(event, sort_keys=True)


def validate_events(payload: Any, *, max_batch: int = 1000) -> list[EventRow]:
    """Validate one event (a JSON object) or a batch (a list of objects, or
    ``{"events": [...]}``) and return the rows to store.

    Raises :class:`InputError` with one line naming the first bad event and field. A batch is
    all or nothing: one bad event refuses the batch (the client fixes it and resends; the
    event ids make the resend safe).
    """
    if isinstance(payload, dict) and "events" in payload and "action_name" not in payload:
        payload = payload["events"]
    events = [payload] if isinstance(payload, dict) else payload
    if not isinstance(events, list):
        raise InputError(f"expected a UBI event object, a list of them or {{\"events\": [...]}}; "
                         f"got {type(payload).__name__}.")
    if not events:
        raise InputError("the batch holds no events.")
    if len(events) > max_batch:
        raise InputError(f"the batch holds {len(events)} events; at most {max_batch} per request.")
    rows: list[EventRow] = []
    for i, event in enumerate(events):
        label = "event" if len(events) == 1 and isinstance(payload, dict) else f"event {i}"
        if not isinstance(event, dict):
            raise InputError(f"{label}: expected a JSON object; got {type(event).__name__}.")
        # jsonschema only for what fast_valid cannot accept: a batch of common events never
        # imports it (~40 ms of CPU at the first batch of every start of serve)
        error = None if fast_valid(event) else next(
            iter(sorted(_validator("event").iter_errors(event), key=lambda e: [str(p) for p in e.absolute_path])),
            None)
        if error is not None:
            raise InputError(f"{label}: {_reason(error)}")
        stamp = parse_timestamp(event["timestamp"], f"{label}: timestamp")
        attributes = event.get("event_attributes") or {}
        obj = attributes.get("object") or {}
        position = attributes.get("position") or {}
        body = _canonical(event)
        try:
            encoded = body.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate, from a "\ud800" escape in the JSON
            raise InputError(f"{label}: text that is not valid Unicode ({exc.reason}: {body[exc.start:exc.end]!r}); "
                             "send UTF-8 text (\\u escapes must pair surrogates).") from None
        event_id = event.get("event_id") or hashlib.sha256(encoded).hexdigest()[:32]
        object_id = obj.get("object_id")
        for name, value in (("event_id", event_id), ("action_name", event["action_name"]),
                            ("query_id", event.get("query_id")), ("client_id", event.get("client_id")),
                            ("user_id", event.get("user_id")), ("session_id", event.get("session_id")),
                            ("event_attributes.object.object_id", object_id)):
            if isinstance(value, str) and "\x00" in value:  # PostgreSQL's text cannot hold it
                raise InputError(f"{label}: {name} holds a NUL character (\\u0000), which the event stores "
                                 "cannot keep; remove it.")
        rows.append(EventRow(
            event_id=event_id, action_name=event["action_name"], query_id=event.get("query_id"),
            client_id=event.get("client_id"), user_id=event.get("user_id"), session_id=event.get("session_id"),
            timestamp=stamp, object_id=None if object_id is None else str(object_id),
            ordinal=position.get("ordinal"), body=body,
        ))
    return rows


def validate_query(record: dict[str, Any]) -> None:
    """Check an impression record (``ubi_queries`` row with the experiment convention)."""
    error = next(iter(_validator("query").iter_errors(record)), None)
    if error is not None:
        raise InputError(f"query {record.get('query_id')!r}: {_reason(error)}")
    attributes = record["query_attributes"]
    inter = attributes.get("interleaving")
    if inter is not None and len(inter["teams"]) != len(record["query_response_hit_ids"]):
        raise InputError(f"query {record['query_id']!r}: interleaving.teams has {len(inter['teams'])} "
                         f"labels for {len(record['query_response_hit_ids'])} hits; one per hit.")
