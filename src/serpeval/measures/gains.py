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
import re
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.measures.cparse import atof, atol
from serpeval.measures.spec import MAX_WEIGHT, Param, ascii_number, format_value

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.measures._common import Gain
    from serpeval.ranking import Rankings

__all__ = [
    "EXP_HEADROOM",
    "GAINS",
    "apply_gains",
    "exp_shift",
    "format_gain_table",
    "grammar_gain_pairs",
    "ideal_gains",
    "parse_gain_table",
    "trec_gain_pairs",
]

EXP_HEADROOM = 960
"""``gain=exp`` gains of a query whose highest grade g is above this are computed divided by
2^(g - 960), so that 2^g - 1 (beyond float64 from g = 1024) never overflows; see :func:`exp_shift`."""


def parse_gain_table(text: str) -> dict[int, float]:
    """``"1:3;2:9.5"`` (``=`` also accepted for ``:``) -> ``{1: 3.0, 2: 9.5}``; ir_measures'
    dict spelling ``{1:3,2:9.5}`` is read too. Grades and gains are written with ASCII digits
    (``١:3`` and ``1_0:3`` are refused, not read as 1 and 10 as Python's ``int()`` would)."""
    table: dict[int, float] = {}
    text = text.replace(" ", "")
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].replace(",", ";")
    for part in text.split(";"):
        if not part:
            continue
        sep = ":" if ":" in part else "="
        level, _, gain = part.partition(sep)
        try:
            if not (ascii_number(level) and ascii_number(gain)):
                raise ValueError
            grade, value = int(level), float(gain)
        except ValueError:
            raise ValueError(
                f"expected grade:gain pairs separated by ';' such as '1:3;2:9', got {part!r}"
            ) from None
        if not -GRADE_LIMIT <= grade <= GRADE_LIMIT:
            raise ValueError(f"a grade must be an integer within ±{GRADE_LIMIT} (2^53 - 1), got {level!r}")
        if not (math.isfinite(value) and abs(value) <= MAX_WEIGHT):
            raise ValueError(f"the gain of grade {grade} must be a number within ±1e100, got {gain!r}")
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
    "(trec_eval's -m ndcg.1=3,2=9); grades within ±(2^53 - 1), gains within ±1e100",
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


# inf and nan pass here and are refused by the table's range check, which says why.
_GRAMMAR_PAIR = re.compile(
    r"[+-]?[0-9]+=[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)",
    re.IGNORECASE | re.ASCII,
)


def grammar_gain_pairs(text: str) -> dict[int, float]:
    """trec_eval's ``1=3,2=9`` after a measure name in serpeval's own grammar (``evaluate -m
    ndcg.1=3,2=9``): every pair must be ``GRADE=GAIN``, an integer grade and a number, in
    ASCII digits. ``ndcg.x=1`` is refused here, where trec_eval (and ``serpeval trec_eval``,
    which reads pairs with :func:`trec_gain_pairs`) ignores the pair and computes plain ndcg.
    """
    for part in text.split(","):
        if not _GRAMMAR_PAIR.fullmatch(part):
            raise ValueError(
                f"expected GRADE=GAIN pairs with integer grades after the name, written with the "
                f"digits 0-9 (such as ndcg.1=3,2=9: grade 1 has gain 3, grade 2 gain 9); got {part!r}"
            )
    return trec_gain_pairs(text)[0]


def _is_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit() and body.isascii()


def apply_gains(grades: NDArray[np.int64], base: Gain, table: dict[int, float],
                shift: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """Gain of each grade: the table's value where listed, else the base gain (0 for grade <= 0).

    With ``shift`` (one power of two per grade, from :func:`exp_shift`) every gain is divided
    by 2^shift: the exp gain is computed as 2^(g - shift) - 2^-shift, which does not overflow.
    A shift of 0 gives exactly the unscaled gains.
    """
    g = np.maximum(grades, 0).astype(np.float64)
    if table and base == "exp":  # listed grades get their listed gain: no 2^g for them
        g[np.isin(grades, np.array(list(table), dtype=np.int64))] = 0.0
    if base != "exp":
        out = g
    elif shift is None:
        out = np.exp2(g) - 1.0
    else:
        s = shift.astype(np.float64)
        out = np.exp2(g - s) - np.exp2(-s)
    for grade, value in table.items():
        hit = grades == grade
        out[hit] = value if shift is None else np.ldexp(value, -shift[hit])
    return out


def exp_shift(r: Rankings, base: Gain, table: dict[int, float]) -> NDArray[np.int64] | None:
    """Per query, the power of two k by which its ``gain=exp`` gains are divided; None when no
    query needs it (``gain=linear``, or every grade <= :data:`EXP_HEADROOM`).

    2^g - 1 is beyond float64 from g = 1024 (and sums of gains overflow a little earlier), so
    nDCG would be inf/inf = NaN. A query whose highest grade not overridden by ``table`` is
    G > 960 gets k = G - 960: its largest gain becomes about 2^960 and a sum over up to 2^63
    documents stays finite. Dividing by a power of two is exact in floating point, so nDCG,
    a ratio of two sums scaled alike, is the same number it would be with unbounded floats
    (up to gains more than 2^1074 times smaller than the largest, which become 0). Queries
    with k = 0 are computed exactly as without scaling. DCG and IDCG multiply back by 2^k
    and refuse a value beyond float64 (``ndcg.unscale``).
    """
    if base != "exp" or len(r.ideal_grades) == 0 or r.ideal_grades.max() <= EXP_HEADROOM:
        return None
    grades = r.ideal_grades
    own = grades > EXP_HEADROOM
    if table:
        own &= ~np.isin(grades, np.array(list(table), dtype=np.int64))
    top = np.full(r.n_queries, EXP_HEADROOM, dtype=np.int64)
    # a fractional grade counts as the next whole number: 2^(g - k) <= 2^960 still
    np.maximum.at(top, r.ideal_segment[own], np.ceil(grades[own]).astype(np.int64))
    return top - EXP_HEADROOM


def ideal_gains(r: Rankings, base: Gain, table: dict[int, float]) -> NDArray[np.float64]:
    """Per query, the gains of its judged docs (grade >= 0) sorted descending, flat like
    ``r.ideal_grades``; judgments with a negative grade give gain 0 and sort last. Gains are
    divided by the query's 2^k of :func:`exp_shift` (k = 0 but for huge exp gains).

    Without a table the gain grows with the grade, so ``r.ideal_grades`` is already in
    order; with one, each query's gains are sorted again.
    """
    judged = r.ideal_grades >= 0
    shift = exp_shift(r, base, table)
    scale = None if shift is None else shift[r.ideal_segment]
    gain = np.where(judged, apply_gains(r.ideal_grades, base, table, scale), 0.0)
    if not table:
        return gain
    # Within each query, positive gains first (descending), then zeros, then negatives.
    order = np.lexsort((-gain, r.ideal_segment))
    return gain[order]
