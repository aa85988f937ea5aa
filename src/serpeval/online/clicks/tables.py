"""The standard grade-based user tables of the interleaving literature.

From Anne Schuth's SIGIR 2014 Lerot configurations and HarrieO's OnlineLearningToRank
``utils/clicks.py`` (the tables of Hofmann et al. 2011/2013 and Schuth et al. 2014/2015):
a user examines results top-down, clicks a result of grade g with ``click[g]`` and, after a
click, stops with ``stop[g]``.

Tables exist for 2, 3 and 5 relevance levels. For another number of levels L (TREC DL's
0-3 is L = 4) :func:`grade_table` interpolates the 5-level table linearly at the positions
``g * 4 / (L - 1)``; that is what the 3-level tables already are, except ``perfect`` whose
3-level table is (0, .5, 1) rather than (0, .4, 1). Interpolated tables say so in their name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.online.common import lookup

__all__ = ["TABLES", "GradeTable", "grade_table"]


@dataclass(frozen=True)
class GradeTable:
    """Click and stop probabilities per relevance grade (index = grade)."""

    name: str
    click: tuple[float, ...]
    stop: tuple[float, ...]
    interpolated: bool = False

    @property
    def levels(self) -> int:
        """Number of relevance levels (grades ``0 .. levels - 1``)."""
        return len(self.click)


#: ``TABLES[name][levels] = (click, stop)``; exact tables from the literature.
TABLES: dict[str, dict[int, tuple[tuple[float, ...], tuple[float, ...]]]] = {
    "perfect": {
        2: ((0.0, 1.0), (0.0, 0.0)),
        3: ((0.0, 0.5, 1.0), (0.0, 0.0, 0.0)),
        5: ((0.0, 0.2, 0.4, 0.8, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
    },
    "navigational": {
        2: ((0.05, 0.95), (0.2, 0.9)),
        3: ((0.05, 0.5, 0.95), (0.2, 0.5, 0.9)),
        5: ((0.05, 0.3, 0.5, 0.7, 0.95), (0.2, 0.3, 0.5, 0.7, 0.9)),
    },
    "informational": {
        2: ((0.4, 0.9), (0.1, 0.5)),
        3: ((0.4, 0.7, 0.9), (0.1, 0.3, 0.5)),
        5: ((0.4, 0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4, 0.5)),
    },
    "almost_random": {
        2: ((0.4, 0.6), (0.5, 0.5)),
        3: ((0.4, 0.5, 0.6), (0.5, 0.5, 0.5)),
        5: ((0.4, 0.45, 0.5, 0.55, 0.6), (0.5, 0.5, 0.5, 0.5, 0.5)),
    },
    "random": {
        2: ((0.5, 0.5), (0.0, 0.0)),
        3: ((0.5, 0.5, 0.5), (0.0, 0.0, 0.0)),
        5: ((0.5,) * 5, (0.0,) * 5),
    },
}


def grade_table(name: str, levels: int) -> GradeTable:
    """The ``name`` table for ``levels`` relevance grades (interpolated if not 2, 3 or 5).

    Examples:
        >>> grade_table("navigational", 3).click
        (0.05, 0.5, 0.95)
        >>> t = grade_table("navigational", 4)   # TREC DL grades 0..3
        >>> [round(p, 3) for p in t.click], t.interpolated
        ([0.05, 0.367, 0.633, 0.95], True)
    """
    by_levels = lookup("click model", name, TABLES)
    canonical = next(k for k, v in TABLES.items() if v is by_levels)
    if not isinstance(levels, (int, np.integer)) or isinstance(levels, bool) or levels < 2:
        raise OptionError(f"a grade table needs at least 2 relevance levels; got {levels!r}.")
    if levels in by_levels:
        click, stop = by_levels[levels]
        return GradeTable(canonical, click, stop)
    click5, stop5 = (np.asarray(v) for v in by_levels[5])
    at = np.arange(levels) * 4.0 / (levels - 1)
    click = tuple(float(round(v, 12)) for v in np.interp(at, np.arange(5), click5))
    stop = tuple(float(round(v, 12)) for v in np.interp(at, np.arange(5), stop5))
    return GradeTable(canonical, click, stop, interpolated=True)
