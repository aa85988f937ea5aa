"""Custom gain tables for the gain-based measures (trec_eval's ``-m ndcg.1=3,2=9``).

A table lists ``grade:gain`` pairs: ``nDCG(gains=1:3;2:9)``. Listed grades get the listed
gain; every other grade keeps its base gain (``gain=linear``: the grade itself, as trec_eval;
``gain=exp``: 2^g - 1). Gains may be 0 or negative. Docs that are not judged (grade -1) or
judged with a negative grade (-2, see :mod:`serpeval.ranking`) have gain 0 unless the table
lists -1 or -2 (trec_eval's ``gain_init.c`` allows that too).

The ideal ranking of a query holds its judged docs with grade >= 0 ordered by gain,
descending; only positive gains count in it. (trec_eval sorts the gain table with a
comparator that truncates the gain difference to an integer, so gains less than 1 apart can
be ordered wrongly - ``-m ndcg.1=0.5,2=0.7`` gives 0 on a perfect ranking; serpeval sorts
correctly.)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures.cparse import atof, atol
from serpeval.measures.spec import Param, format_value

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = ["GAINS", "apply_gains", "format_gain_table", "ideal_gains", "parse_gain_table", "trec_gain_pairs"]


def parse_gain_table(text: str) -> dict[int, float]:
    """``"1:3;2:9.5"`` (``=`` also accepted for ``:``) -> ``{1: 3.0, 2: 9.5}``."""
    table: dict[int, float] = {}
    for part in text.replace(" ", "").split(";"):
        if not part:
            continue
        sep = ":" if ":" in part else "="
        level, _, gain = part.partition(sep)
        try:
            grade, value = int(level), float(gain)
        except ValueError:
            raise ValueError(
                f"expected grade:gain pairs separated by ';' such as '1:3;2:9', got {part!r}"
            ) from None
        if not math.isfinite(value):
            raise ValueError(f"the gain of grade {grade} must be a finite number, got {gain!r}")
        if grade in table:
            raise ValueError(f"grade {grade} is listed twice")
        table[grade] = value
    if not table:
        raise ValueError("expected grade:gain pairs separated by ';' such as '1:3;2:9'")
    return table


def format_gain_table(table: dict[int, float]) -> str:
    """The canonical text of a table: pairs sorted by grade, ``1:3;2:9.5``."""
    return ";".join(f"{g}:{format_value(float(v))}" for g, v in sorted(table.items()))


def _normalize(text: str) -> str:
    return format_gain_table(parse_gain_table(text))


GAINS = Param(
    "gains", str, "",
    "custom gains grade:gain;... overriding the base gain of the listed grades "
    "(trec_eval's -m ndcg.1=3,2=9)",
    normalize=_normalize,
)


def trec_gain_pairs(text: str, *, extra: tuple[str, ...] = (), strict_levels: bool = True
                    ) -> tuple[dict[int, float], dict[str, float]]:
    """Split trec_eval pair parameters ``1=3,2=9,p=0.5`` into gains and named values.

    Pairs whose name is an integer are gains (``gain_init.c``'s ``valid_int``); names in
    ``extra`` (``p`` for rbp) are returned separately; other names are ignored, as trec_eval
    10.0 ignores them. With ``strict_levels=False`` (trec_eval 9.0.8) every name is read
    with C's ``atol``, so ``p=0.5`` sets the gain of grade 0.
    """
    gains: dict[int, float] = {}
    named: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"expected name=value pairs such as '1=3,2=9', got {text!r}")
        number = atof(value)
        if name in extra:
            named[name] = number
        elif strict_levels and _is_int(name):
            gains.setdefault(int(name), number)
        elif not strict_levels:
            gains.setdefault(atol(name), number)
    return gains, named


def _is_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit() and body.isascii()


def apply_gains(grades: NDArray[np.int64], base: str, table: dict[int, float]
                ) -> NDArray[np.float64]:
    """Gain of each grade: the table's value where listed, else the base gain (0 for grade <= 0)."""
    g = np.maximum(grades, 0).astype(np.float64)
    out = np.exp2(g) - 1.0 if base == "exp" else g
    for grade, value in table.items():
        out[grades == grade] = value
    return out


def ideal_gains(r: Rankings, base: str, table: dict[int, float]) -> NDArray[np.float64]:
    """Per query, the gains of its judged docs (grade >= 0) sorted descending, flat like
    ``r.ideal_grades``; judgments with a negative grade give gain 0 and sort last.

    Without a table the gain grows with the grade, so ``r.ideal_grades`` is already in
    order; with one, each query's gains are sorted again.
    """
    judged = r.ideal_grades >= 0
    gain = np.where(judged, apply_gains(r.ideal_grades, base, table), 0.0)
    if not table:
        return gain
    # Within each query, positive gains first (descending), then zeros, then negatives.
    order = np.lexsort((-gain, r.ideal_segment))
    return gain[order]
