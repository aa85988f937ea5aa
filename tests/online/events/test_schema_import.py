"""Validating the common shapes of UBI events needs no jsonschema: serve's first batch after
each start does not pay for importing it (~40 ms of CPU); an event only jsonschema can judge
still gets its answer."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, sys
from serpeval.core.errors import InputError
from serpeval.online.events.schema import validate_events

rows = validate_events([
    {"action_name": "click", "query_id": "q1", "timestamp": "2026-12-05T01:00:00Z",
     "event_attributes": {"position": {"ordinal": 1}}},
    {"action_name": "click", "event_id": "e2", "query_id": "q1", "client_id": "c", "timestamp": "2026-12-05T01:00:00Z",
     "event_attributes": {"object": {"object_id": "d1"}}},
])
common = "jsonschema" in sys.modules
try:
    validate_events([{"action_name": "click", "timestamp": "x"}])
    refused = None
except InputError as exc:
    refused = str(exc)
print(json.dumps({"rows": len(rows), "jsonschema_for_common": common, "refused": refused,
                  "jsonschema_after": "jsonschema" in sys.modules}))
"""


def test_common_events_are_validated_without_importing_jsonschema() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=True)
    child = json.loads(out.stdout.splitlines()[-1])
    assert child["rows"] == 2
    assert child["jsonschema_for_common"] is False
    assert child["refused"] == "event 0: timestamp: 'x' is too short"  # jsonschema's answer
    assert child["jsonschema_after"] is True
