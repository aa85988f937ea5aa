"""One JSON-lines record: the id keys every JSONL input accepts, and the parse of a line into
an object with an error that names ``path:line`` (groups files, topics files)."""

from __future__ import annotations

import json
from typing import Any

from serpeval.core.errors import ParseError

__all__ = ["ID_KEYS", "json_object"]

#: The keys a JSONL record may hold its query id under, first match wins (BEIR uses ``_id``).
ID_KEYS = ("query_id", "qid", "_id", "id")


def json_object(line: str, where: str, expected: str) -> dict[str, Any]:
    """``line`` parsed as a JSON object; ``where`` is ``path:line`` for the error, ``expected``
    what the object should hold (``an id and a group``).

    Raises:
        ParseError: the line is not JSON, or not an object.
    """
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{where}: not valid JSON ({exc.msg}).") from None
    if not isinstance(record, dict):
        raise ParseError(f"{where}: expected a JSON object with {expected}.")
    return record
