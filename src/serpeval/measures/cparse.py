"""C's ``atof`` / ``atol``, as trec_eval reads numbers in measure parameters and options.

trec_eval never rejects a number: ``atol("5abc")`` is 5, ``atol("abc")`` is 0,
``atof(".25")`` is 0.25, and only ASCII digits and blanks count (``atol("١٠")`` is 0). The
trec_eval names of the registry (``iprec_at_recall.0.1``) and the ``serpeval trec_eval``
command read their numbers the same way, so that the same command line means the same thing.
"""

from __future__ import annotations

import re

__all__ = ["LONG_MAX", "LONG_MIN", "atof", "atol"]

# re.ASCII: C's isdigit and isspace know only ASCII, so "١٠" (Arabic-Indic digits) reads as 0
# and a no-break space ends the number, where Python's \d and \s (and int(), float()) take them.
_FLOAT = re.compile(
    r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE | re.ASCII
)
_INT = re.compile(r"\s*([+-]?\d+)", re.ASCII)


def atof(text: str) -> float:
    """The longest number at the start of ``text`` (after blanks); 0.0 when there is none."""
    match = _FLOAT.match(text)
    return float(match[1]) if match else 0.0


LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def atol(text: str) -> int:
    """The integer at the start of ``text`` (after blanks); 0 when there is none.

    Out of range values saturate at ``LONG_MIN`` / ``LONG_MAX``, as glibc's ``atol``
    (``strtol``) does.
    """
    match = _INT.match(text)
    if match is None:
        return 0
    sign, digits = ("-" if match[1][0] == "-" else ""), match[1].lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:  # beyond any long (and perhaps beyond the digits Python's int() converts)
        return LONG_MIN if sign else LONG_MAX
    return min(max(int(sign + digits), LONG_MIN), LONG_MAX)
