"""JSON-lines records: the id keys every JSONL input accepts, and the one strict parse of a
line into an object, with errors that name ``path:line`` (qrels and runs as JSONL, groups
files, topics files); the repeated-key check and the hostile-value checks are shared with
whole JSON files (:func:`load_json`).

Hostile values are refused as input errors, never left to fail inside Python:

* an integer with more digits than Python converts (``sys.get_int_max_str_digits()``, 4,300
  by default) is read as the float it stands for, as ``1e5000`` is (infinity beyond float64:
  a grade check refuses it, a score keeps it, as trec_eval's ``atof`` does);
* nesting deeper than Python's JSON reader follows (a ``RecursionError``) is an error naming
  the line where the deepest nesting starts and how deep it goes;
* a ``\\ud800`` escape without its pair (a lone surrogate, which no UTF-8 text can hold) is
  an error naming the line and the key path of the text holding it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from serpeval.core.errors import ParseError
from serpeval.core.strict_json import quote

__all__ = ["ID_KEYS", "JsonObjects", "RepeatedKeyHook", "json_decoder", "key_path", "load_json", "not_an_id",
           "repeated_key"]

#: The keys a JSONL record may hold its query id under, first match wins (BEIR uses ``_id``).
ID_KEYS = ("query_id", "qid", "_id", "id")


class JsonObjects:
    """Parses JSON-lines records into objects, strictly, with errors naming ``path:line``:
    a line that is not JSON, not an object, or that repeats a key at any depth is refused (a
    JSON reader would keep only the last value). One decoder serves every line of a file.
    """

    def __init__(self) -> None:
        self._hook = RepeatedKeyHook()
        self._decoder = json_decoder(self._hook)

    def __call__(self, line: str, where: str, expected: str) -> dict[str, Any]:
        """``line`` as an object; ``where`` is ``path:line``, ``expected`` what the object
        should hold (``an id and a group``)."""
        self._hook.marked = False
        try:
            record = self._decoder.decode(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{where}: not valid JSON ({exc.msg}): {line.strip()[:80]!r}.") from None
        except RecursionError:
            raise ParseError(f"{where}: {_too_deep(line)[1]}") from None
        if _SURROGATE_ESCAPE.search(line):
            _refuse_lone_surrogates(record, where)
        if not isinstance(record, dict):
            raise ParseError(f"{where}: expected a JSON object with {expected}, found {type(record).__name__}.")
        repeated = repeated_key(record, []) if self._hook.marked else None
        if repeated is not None:
            raise ParseError(
                f"{where}: key {key_path(*repeated)} appears twice in the object; a JSON reader "
                "keeps only the last value, so serpeval refuses it. Keep one."
            )
        return record


def not_an_id(value: Any) -> str | None:
    """What a JSON value given as a query or doc id is when it is not one (``empty: ''``,
    ``true (true/false)``, ``[1, 2] (a list)``), or None for an id: non-blank text or a number.
    null is not judged here (readers count the rows missing an id)."""
    kind = type(value)
    if kind is str:
        return None if value and not value.isspace() else f"empty: {value!r}"
    if value is None or kind is int or kind is float:
        return None
    what = {bool: "true/false", list: "a list", dict: "an object"}.get(kind, kind.__name__)
    text = quote(value)
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({what})"


def json_decoder(hook: RepeatedKeyHook) -> json.JSONDecoder:
    """The one JSON decoder setup of serpeval's readers: ``hook`` marks repeated keys, and
    integers too long for Python's ``int()`` read as floats (see the module docstring)."""
    return json.JSONDecoder(object_pairs_hook=hook, parse_int=_json_int)


def _json_int(text: str) -> int | float:
    """A JSON integer: exact, or (beyond Python's digit limit) the float it stands for."""
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return float(text)  # inf beyond float64, as "1e5000" reads


def load_json(text: str, label: str) -> tuple[Any, bool]:
    """A whole JSON document (``label`` names it in errors) and whether a key repeats in
    one of its objects (find it with :func:`repeated_key`).

    Raises:
        ParseError: invalid JSON (naming the line), nesting too deep or a lone surrogate
            escape (see the module docstring).
    """
    hook = RepeatedKeyHook()
    try:
        loaded = json_decoder(hook).decode(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data":  # a second value after the first: JSON lines under a .json name
            hint = (" The file holds more than one JSON value: if it is JSON lines (one object per "
                    "line), name it .jsonl.")
        raise ParseError(f"{label}:{exc.lineno}: invalid JSON: {exc.msg}.{hint}") from None
    except RecursionError:
        line, what = _too_deep(text)
        raise ParseError(f"{label}:{line}: {what}") from None
    if _SURROGATE_ESCAPE.search(text):
        lone = _LONE_SURROGATE.search(text)
        _refuse_lone_surrogates(loaded, f"{label}:{text.count(chr(10), 0, lone.start()) + 1}" if lone else label)
    return loaded, hook.marked


#: Text or a key may hold a lone surrogate only if the JSON has a \uD800-\uDFFF escape.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: The escape of a high surrogate without a low one after it, or of a low one without a high one.
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


def _too_deep(text: str) -> tuple[int, str]:
    """The line where ``text``'s deepest nesting is first reached, and the message."""
    depth = deepest = 0
    line = at = 1
    for token in _TOKENS.finditer(text):
        kind = token[0]
        if kind == "\n":
            line += 1
        elif kind in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, line
        elif kind in "]}":
            depth -= 1
        else:
            line += kind.count("\n")  # a string cannot hold a raw newline, but be safe
    return at, (f"the JSON is nested {deepest:,} levels deep (lists and objects inside each other), "
                "deeper than the JSON reader follows; serpeval's inputs need a few levels at most. "
                "Check how the file was written.")


def _refuse_lone_surrogates(value: Any, where: str) -> None:
    """Refuse the first text (a key or a value) holding an unpaired surrogate, with its key path."""
    stack: list[tuple[Any, list[str]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            texts: list[tuple[str, list[str]]] = [(item, path)]
        elif isinstance(item, dict):
            texts = [(key, path) for key in item]
            stack.extend((v, [*path, k]) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            texts = []
            stack.extend((v, [*path, str(i)]) for i, v in reversed(list(enumerate(item))))
        else:
            continue
        for text, at in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = text[exc.start]
                place = f" in {''.join(f'[{quote(k)}]' for k in at)}" if at else ""
                raise ParseError(
                    f"{where}: the text \"{text[:60].encode('utf-8', 'backslashreplace').decode()}\"{place} "
                    f"holds the escape \\u{ord(bad):04x} without its pair (a lone surrogate), which is "
                    "not a character and cannot be stored as UTF-8. Fix the escape (a pair such as "
                    "\\ud83d\\ude00 is one character) or remove it."
                ) from None


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
