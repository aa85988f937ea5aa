"""Counting what the harness compared, and comparing values (no pytrec_eval needed here).

:data:`TALLY` collects, over the whole session, how many files were read and how many
queries and values were compared; ``conftest.py`` prints it in pytest's terminal summary.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import serpeval
from serpeval.core.errors import MissingQueriesWarning
from serpeval.measures import Measure


@dataclass
class Tally:
    """What the harness compared (files read, queries and values compared, by check), the
    values found different, and the harness tests that failed (for any reason)."""

    files: set[str] = field(default_factory=set)
    #: pytest's temporary folder of this process (set by ``tests/differential/conftest.py``):
    #: files are counted by their path below it, so that a collection each pytest-xdist worker
    #: generated in its own folder counts once.
    base: Path | None = None
    queries: int = 0
    values: int = 0
    mismatches: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    failed_tests: int = 0

    def add(self, check: str, files: list[Any], queries: int, values: int, mismatches: int = 0) -> None:
        self.files.update(self._name(Path(f)) for f in files)
        self.queries += queries
        self.values += values
        self.mismatches += mismatches
        self.by_check[check] = self.by_check.get(check, 0) + values

    def _name(self, path: Path) -> str:
        if self.base is not None and path.is_relative_to(self.base):
            return path.relative_to(self.base).as_posix()
        return str(path)

    def shared(self) -> dict[str, Any]:
        """What a pytest-xdist worker sends back (``failed_tests`` aside: the controller counts
        the failures from the reports it receives)."""
        return {"files": sorted(self.files), "queries": self.queries, "values": self.values,
                "mismatches": self.mismatches, "by_check": dict(self.by_check)}

    def merge(self, other: dict[str, Any]) -> None:
        """Add a worker's :meth:`shared` tally to this one."""
        self.files.update(other["files"])
        self.queries += other["queries"]
        self.values += other["values"]
        self.mismatches += other["mismatches"]
        for check, n in other["by_check"].items():
            self.by_check[check] = self.by_check.get(check, 0) + n

    def summary(self) -> str:
        parts = ", ".join(f"{check} {n:,}" for check, n in sorted(self.by_check.items()))
        verdict = "all equal" if self.mismatches == 0 else f"{self.mismatches:,} NOT equal"
        if self.failed_tests:
            verdict += f", {self.failed_tests} harness tests FAILED"
        return (f"{len(self.files):,} files, {self.queries:,} queries, {self.values:,} values compared, "
                f"{verdict} ({parts})")


TALLY = Tally()


def same(a: float, b: float) -> bool:
    """Equal as doubles (NaN equals NaN)."""
    return a == b or (math.isnan(a) and math.isnan(b))


def measure_values(qrels: Any, run: Any, measures: list[Measure]) -> dict[str, dict[str, float]]:
    """``serpeval.evaluate`` per query (scores as 64-bit floats), keyed by canonical measure name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = serpeval.evaluate(qrels, run, measures)
    (result,) = res.runs
    qids = result.query_ids.tolist()
    out: dict[str, dict[str, float]] = {q: {} for q in qids}
    for i, measure in enumerate(res.measures):
        for q, v in zip(qids, result.column(i).tolist(), strict=True):
            out[q][str(measure)] = v
    return out
