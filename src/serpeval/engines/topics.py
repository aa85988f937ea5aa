"""Topics for retrieval: TSV and JSONL (:func:`serpeval.io.topics.read_topics`) and TREC topic files.

A TREC topics file (the ``<top>`` SGML-like format of the TREC ad hoc tracks)::

    <top>
    <num> Number: 401
    <title> foreign minorities, Germany
    <desc> Description:
    What language and cultural differences impede the integration ...
    </top>

gives ``{"401": "foreign minorities, Germany"}``: the ``<title>`` field (a ``Topic:`` prefix
removed), the query a TREC "title run" uses; ``field="desc"`` takes the description
(its ``Description:`` label removed). Closing tags (``</num>``, ``</title>``, ``</desc>``,
``</narr>``), which later files such as TREC 2018 Common Core's and Vaswani's use, are
dropped. Recognised by its first non-blank line, ``<top>``.
"""

from __future__ import annotations

import re
from pathlib import Path

from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError

__all__ = ["read_any_topics", "read_trec_topics"]

_TAG = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:num|title|desc|narr)\s*>", re.IGNORECASE)


def read_any_topics(path: str | Path, *, field: str = "title") -> dict[str, str]:
    """``{query_id: text}`` from a TREC topics file, a TSV or a JSONL topics file (``.gz`` ok)."""
    from serpeval.io.inputs import read_input

    raw, label = read_input(path, what="topics file")
    head = raw.lstrip()[:5].lower()
    if head == b"<top>":
        return read_trec_topics(raw, label, field=field)
    from serpeval.io.topics import read_topics

    return read_topics(path)


def read_trec_topics(raw: bytes, label: str, *, field: str = "title") -> dict[str, str]:
    """Parse a TREC ``<top>`` file (see the module doc); errors name ``label:line``.

    Raises:
        ParseError: a topic without ``<num>`` or without the field asked for, or an unclosed ``<top>``.
        DuplicateError: a topic number twice.
    """
    if field not in ("title", "desc"):
        raise InputError(f"field={field!r}: a TREC topic's query is its 'title' or its 'desc'.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    topics: dict[str, str] = {}
    for match in re.finditer(r"<top>(.*?)(</top>|\Z)", text, re.IGNORECASE | re.DOTALL):
        line = text.count("\n", 0, match.start()) + 1
        if not match.group(2):
            raise ParseError(f"{label}:{line}: <top> is not closed by </top>.")
        parts: dict[str, str] = {}
        body = _CLOSE.sub(" ", match.group(1))  # Core18's and Vaswani's files close each field
        pieces = _TAG.split(body)
        for name, value in zip(pieces[1::2], pieces[2::2], strict=True):
            parts[name.lower()] = " ".join(value.split())
        num = re.sub(r"^number:\s*", "", parts.get("num", ""), flags=re.IGNORECASE).strip()
        if not num:
            raise ParseError(f"{label}:{line}: a topic without <num>.")
        value = parts.get(field)
        if value is None:
            raise ParseError(f"{label}:{line}: topic {num} has no <{field}>.")
        value = re.sub(r"^(topic|description):\s*", "", value, flags=re.IGNORECASE).strip()
        if num in topics:
            raise DuplicateError(f"{label}:{line}: topic {num} appears twice.")
        topics[num] = value
    if not topics:
        raise EmptyInputError(f"{label}: no <top> topic found.")
    return topics
