"""Strict JSON for everything serpeval writes: never a ``NaN`` or ``Infinity`` token.

Python's ``json.dumps`` writes ``float("nan")`` as the bare token ``NaN`` (and infinities as
``Infinity``), which is not JSON (RFC 8259): ``jq``, JavaScript's ``JSON.parse`` and most
other parsers reject the whole file. Every JSON text the command line writes goes through
:func:`dumps`, which replaces a non-finite number by ``null`` and says why: the object that
held it gains a ``"null_reasons"`` entry ``{field: reason}``. The reason is the producer's,
when its own dict already carries ``"null_reasons"`` for that field (e.g. "the control
value is 0: a relative effect is undefined"), otherwise what the value was ("NaN: undefined
for this input", "+Infinity: not a finite number"). A list of numbers with non-finite
members gets one reason for the whole list under the list's field. ``json.dumps`` then runs
with ``allow_nan=False``, so a value this module missed is an error, not a bad file.

Examples:
    >>> print(dumps({"p": float("nan"), "n": 3}, indent=None))
    {"p": null, "n": 3, "null_reasons": {"p": "NaN: undefined for this input"}}
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NULL_REASONS", "dumps", "json_ready", "quote"]

#: The key under which an object says why some of its fields are null.
NULL_REASONS = "null_reasons"


def _number(value: Any) -> Any:
    """``value`` as a plain Python number when it is a NumPy scalar, else unchanged."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        return item()
    return value


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _why(value: float) -> str:
    if math.isnan(value):
        return "NaN: undefined for this input"
    return f"{'+' if value > 0 else '-'}Infinity: not a finite number"


def json_ready(value: Any) -> Any:
    """``value`` with every non-finite number replaced by None and the reason recorded.

    Recurses through dicts, lists, tuples and NumPy arrays (which become lists); NumPy
    scalars become Python numbers. A dict with a nulled field gains ``"null_reasons"``
    (see the module docstring); other values are returned unchanged.
    """
    value = _number(value)
    if _non_finite(value):
        return None
    if isinstance(value, dict):
        return _ready_dict(value)
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def _ready_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    given = value.get(NULL_REASONS)
    given = given if isinstance(given, dict) else {}
    reasons: dict[str, str] = {}
    out: dict[Any, Any] = {}
    for key, item in value.items():
        if key == NULL_REASONS:
            continue
        item = _number(item)
        if _non_finite(item):
            reasons[str(key)] = str(given.get(key) or _why(item))
        elif isinstance(item, (list, tuple)) or (hasattr(item, "tolist") and type(item).__module__ == "numpy"):
            flat = item.tolist() if hasattr(item, "tolist") else item
            bad = [v for v in (_number(v) for v in flat) if _non_finite(v)]
            if bad:
                reasons[str(key)] = str(given.get(key) or f"{len(bad)} of {len(flat)} values are not "
                                        f"finite numbers (NaN or infinite), written as null")
        out[key] = json_ready(item)
    if reasons or given:
        out[NULL_REASONS] = {**{str(k): str(v) for k, v in given.items()}, **reasons}
    return out


def _default(value: Any) -> Any:
    """Objects ``json`` cannot write itself (dates, paths...): their text."""
    return str(value)


def dumps(payload: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """Strict JSON text of ``payload`` (no trailing newline): see the module docstring."""
    return json.dumps(json_ready(payload), indent=indent, sort_keys=sort_keys, default=_default, allow_nan=False)


def compact(payload: Any, *, sort_keys: bool = False) -> str:
    """Strict JSON text of ``payload`` on one line without spaces, non-ASCII text kept as is.

    For what serpeval sends or stores rather than shows: HTTP request bodies, cache lines,
    stored event attributes, and the canonical text behind a content hash (``sort_keys=True``
    gives one text per value, whatever the dicts' order). Non-finite numbers as :func:`dumps`.

    Examples:
        >>> compact({"b": [1, 2.5], "a": "é"}, sort_keys=True)
        '{"a":"é","b":[1,2.5]}'
    """
    options: dict[str, Any] = {"separators": (",", ":"), "sort_keys": sort_keys, "ensure_ascii": False,
                               "allow_nan": False}
    try:  # the common case, on a serving path: nothing to replace, one pass in json's C encoder
        return json.dumps(payload, default=_plain, **options)
    except ValueError:  # a non-finite number somewhere: replaced by null, with its reason
        return json.dumps(json_ready(payload), default=_default, **options)


def _plain(value: Any) -> Any:
    """What :func:`json_ready` would make of a value ``json`` cannot write: NumPy values as
    Python numbers and lists, anything else as its text."""
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return value.tolist()
    return str(value)


def quote(value: Any) -> str:
    """``value`` as JSON text, for a message that shows a JSON key or value (``"q1"``, ``3``).

    Not for writing documents (that is :func:`dumps`); non-ASCII text stays readable.
    """
    return json.dumps(value, ensure_ascii=False, default=str)
