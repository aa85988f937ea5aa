"""How the report writes numbers: one place for digits, signs, intervals and p-values."""

from __future__ import annotations

import math
import re

__all__ = ["count", "format_p", "interval", "level", "number", "p_value", "percent", "plain_text", "signed",
           "sort_key"]

_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float | None, digits: int = 4) -> str:
    """``0.4639``; large whole numbers with separators; an em dash for a missing value."""
    if _missing(value):
        return "—"
    whole = isinstance(value, float) and value.is_integer() and abs(value) >= 1000
    if isinstance(value, int) or whole:
        return f"{int(value):,}"  # type: ignore[arg-type]
    return f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 4) -> str:
    """``+0.0176`` / ``-0.0176``; an em dash for a missing value."""
    if _missing(value):
        return "—"
    return f"{value:+.{digits}f}"


def percent(value: float | None, digits: int = 2, sign: bool = True) -> str:
    """``+2.36%``; an em dash for a missing value."""
    if _missing(value):
        return "—"
    return f"{value:{'+' if sign else ''}.{digits}%}"


def level(confidence: float) -> str:
    """A confidence level as a percentage, exactly: ``95%``, ``97.5%``, ``99.9%`` (never
    rounded to a whole percent: a 97.5% interval is not a 98% one); ``1 - alpha`` is accepted
    as it comes (``1 - 0.1`` shows as ``90%``). :func:`serpeval.stats.validation.confidence_label`."""
    from serpeval.stats.validation import confidence_label

    return confidence_label(confidence)


def count(value: float | None) -> str:
    """A count with thousands separators (``12,345``), ``inf`` when unbounded."""
    if _missing(value):
        return "—"
    if math.isinf(value):  # type: ignore[arg-type]
        return "inf"
    return f"{round(value):,}"  # type: ignore[arg-type]


def interval(low: float | None, high: float | None, digits: int = 4, *,
             as_percent: bool = False) -> str:
    """``[-0.0345, -0.0007]`` (``as_percent``: ``[+0.81%, +3.93%]``); empty when unknown."""
    if _missing(low) or _missing(high):
        return ""
    if as_percent:
        return f"[{percent(low)}, {percent(high)}]"
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def format_p(value: float, digits: int = 4) -> str:
    """A p-value with ``digits`` decimals, or ``<0.0001`` below what they can show."""
    floor = 10.0 ** -digits
    return f"<{floor:.{digits}f}" if value < floor / 2 else f"{value:.{digits}f}"


def p_value(value: float | None) -> str:
    """A p-value as the comparison tables print it (``<0.0001`` below four decimals)."""
    return "—" if _missing(value) else format_p(value)  # type: ignore[arg-type]


def sort_key(value: float | None) -> str:
    """The ``data-sort`` key of a number (empty for a missing value, which sorts last).

    Infinities are written ``Infinity`` / ``-Infinity``, the spelling JavaScript's
    ``parseFloat`` reads (Python's ``inf`` would read as NaN and sort as missing)."""
    if _missing(value):
        return ""
    number = float(value)  # type: ignore[arg-type]
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return repr(number)


def plain_text(docstring: str) -> str:
    """A docstring for a terminal: reStructuredText markup dropped, the words kept.

    ``:func:`dcg``` -> ``dcg``, ````x```` -> ``x``, ``*all*`` -> ``all``; a role's target keeps
    only its last name (``serpeval.measures.gains.exp_shift`` -> ``exp_shift``).
    """
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], docstring)
    text = _LITERAL.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)
