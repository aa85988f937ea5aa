"""Right-to-left text in reports: names and query text isolated from what surrounds them.

A run name, query id or topic is user text. One with a right-to-left override (U+202E) or
right-to-left letters, shown inside a sentence (``run-a 0.31 → run-b 0.35``), would reorder the
rest of that sentence on screen: the numbers could appear to belong to the other run. Such
text is *isolated*: its direction is worked out on its own and nothing leaks out of it.

- :func:`isolate` wraps text that needs it in FIRST STRONG ISOLATE (U+2068) ... POP
  DIRECTIONAL ISOLATE (U+2069), the character form of HTML's ``<bdi>`` (Unicode UAX #9: the
  closing isolate also ends every embedding and override opened inside). Text with no
  right-to-left letter and no directional control is returned as it is, so plain names stay
  plain. Isolate controls inside the text are dropped first (a stray U+2069 could otherwise
  close the isolate early); overrides and embeddings are kept, and contained.
- :func:`bdi` escapes text for HTML and turns those isolates into ``<bdi>`` elements, for the
  places where the page shows text as HTML (attributes, SVG and ``<option>`` keep the
  characters, which browsers honour there too).
- :func:`isolate_fields` isolates the user-text fields of a JSON-ready document, listed by a
  small spec, so that every sentence built from them later is safe.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup, escape

__all__ = ["FSI", "KEYS", "PDI", "bdi", "isolate", "isolate_fields", "shorten", "visible_length"]

FSI = "\u2068"
PDI = "\u2069"
#: LRI, RLI, FSI, PDI: removed from text before it is isolated (translate table)
_ISOLATE_CONTROLS = dict.fromkeys(map(ord, "\u2066\u2067\u2068\u2069"))
#: bidirectional classes that make text need isolating: right-to-left letters, Arabic digits,
#: and the explicit embeddings, overrides and isolates
_NEEDS_ISOLATION = frozenset({"R", "AL", "AN", "RLE", "RLO", "LRE", "LRO", "PDF", "RLI", "LRI",
                              "FSI", "PDI"})


def isolate(text: Any) -> Any:
    """``FSI text PDI`` when ``text`` holds right-to-left or directional-control characters;
    anything else (plain text, numbers, None) as it is. Idempotent."""
    if not isinstance(text, str) or text.isascii():
        return text
    if not any(unicodedata.bidirectional(ch) in _NEEDS_ISOLATION for ch in text):
        return text
    return FSI + text.translate(_ISOLATE_CONTROLS) + PDI


def bdi(text: Any) -> Markup:
    """``text`` escaped for HTML, each ``FSI ... PDI`` turned into ``<bdi>...</bdi>``.

    Unmatched PDIs stay characters and unclosed FSIs are closed at the end, so the markup is
    always well-formed."""
    escaped = str(escape(text))
    if FSI not in escaped:
        return Markup(escaped)
    out, depth = [], 0
    for ch in escaped:
        if ch == FSI:
            depth += 1
            out.append("<bdi>")
        elif ch == PDI and depth:
            depth -= 1
            out.append("</bdi>")
        else:
            out.append(ch)
    return Markup("".join(out) + "</bdi>" * depth)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with ``…``, keeping its isolates closed."""
    if len(text) <= limit:
        return text
    kept = text[: limit - 1]
    return kept + PDI * max(0, kept.count(FSI) - kept.count(PDI)) + "…"


def visible_length(text: str) -> int:
    """Characters shown: ``len`` without the isolate controls."""
    return len(text) - text.count(FSI) - text.count(PDI)


#: In a spec of :func:`isolate_fields`: isolate the keys of this mapping.
KEYS = "keys"


def isolate_fields(data: Any, spec: Any) -> Any:
    """A copy of ``data`` with the strings that ``spec`` marks isolated.

    ``spec`` mirrors the document: ``True`` marks a string, a dict maps field names to specs,
    a one-item list applies its spec to every item, :data:`KEYS` isolates a mapping's keys.
    Fields not in the spec, and fields absent from ``data``, are left alone.
    """
    if spec is True:
        return isolate(data)
    if spec == KEYS and isinstance(data, Mapping):
        return {isolate(k): v for k, v in data.items()}
    if isinstance(spec, list) and isinstance(data, list):
        return [isolate_fields(item, spec[0]) for item in data]
    if isinstance(spec, dict) and isinstance(data, Mapping):
        return {k: isolate_fields(v, spec[k]) if k in spec else v for k, v in data.items()}
    return data
