"""JSON-lines records: the id keys every JSONL input accepts, and the one strict parse of a
line into an object, with errors that name ``path:line`` (qrels and runs as JSONL, groups
files, topics files); the repeated-key check is shared with whole JSON files."""

from __future__ import annotations

import json
from typing import Any

from serpeval.core.errors import ParseError
from serpeval.core.strict_json import quote

__all__ = ["ID_KEYS", "JsonObjects", "RepeatedKeyHook", "key_path", "repeated_key"]

#: The keys a JSONL record may hold its query id under, first match wins (BEIR uses ``_id``).
ID_KEYS = ("query_id", "qid", "_id", "id")


class JsonObjects:
    """Parses JSON-lines records into objects, strictly, with errors naming ``path:line``:
    a line that is not JSON, not an object, or that repeats a key at any depth is refused (a
    JSON reader would keep only the last value). One decoder serves every line of a file.
    """

    def __init__(self) -> None:
        self._hook = RepeatedKeyHook()
        self._decoder = json.JSONDecoder(object_pairs_hook=self._hook)

    def __call__(self, line: str, where: str, expected: str) -> dict[str, Any]:
        """``line`` as an object; ``where`` is ``path:line``, ``expected`` what the object
        should hold (``an id and a group``)."""
        self._hook.marked = False
        try:
            record = self._decoder.decode(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{where}: not valid JSON ({exc.msg}): {line.strip()[:80]!r}.") from None
        if not isinstance(record, dict):
            raise ParseError(f"{where}: expected a JSON object with {expected}, found {type(record).__name__}.")
        repeated = repeated_key(record, []) if self._hook.marked else None
        if repeated is not None:
            raise ParseError(
                f"{where}: key {key_path(*repeated)} appears twice in the object; a JSON reader "
                "keeps only the last value, so serpeval refuses it. Keep one."
            )
        return record


class _RepeatedKeys(dict):
    """A JSON object in which a key appears more than once (the first such key is kept)."""

    repeated: str = ""


class RepeatedKeyHook:
    """``object_pairs_hook`` for :mod:`json`: plain dicts, except that an object whose key
    repeats is marked (and :attr:`marked` set) so that the caller can say where."""

    def __init__(self) -> None:
        self.marked = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self.marked = True
        out = _RepeatedKeys(pairs)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                out.repeated = key
                break
            seen.add(key)
        return out


def repeated_key(obj: Any, path: list[str]) -> tuple[list[str], str] | None:
    """The path and key of the first repeated key in ``obj``, outermost first, or None."""
    if isinstance(obj, _RepeatedKeys):
        return path, obj.repeated
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, (dict, list)):
                found = repeated_key(value, [*path, key])
                if found is not None:
                    return found
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found = repeated_key(value, [*path, str(i)])
            if found is not None:
                return found
    return None


def key_path(path: list[str], key: str) -> str:
    """``["a"]["b"]``: where a key sits, for messages."""
    return "".join(f"[{quote(k)}]" for k in [*path, key])
