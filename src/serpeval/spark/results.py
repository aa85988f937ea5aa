"""What :func:`serpeval.spark.evaluate` returns: per-query values as a Spark DataFrame,
aggregates and coverage on the driver.

:class:`SparkResults` answers the same questions as :class:`serpeval.evaluation.results.Results`
(``means``, ``to_dicts``, ``to_json_dict``, ``coverage``), so the same renderers and the
command line's table work on it; :meth:`SparkResults.to_local` collects the per-query values
into a local :class:`~serpeval.evaluation.results.Results` for significance tests and reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core import sparkconf
from serpeval.evaluation.results import Results, RunResult, Settings, input_signatures
from serpeval.measures import Measure, parse_measure

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from serpeval.ranking import Coverage

__all__ = ["SparkResults", "SparkRunResult"]


@dataclass(frozen=True, eq=False)
class SparkRunResult:
    """Aggregates and coverage of one run.

    Attributes:
        name: the run's name.
        queries: number of evaluated queries.
        aggregates: ``{measure: value}`` combined as each measure's spec says (mean, sum for
            counts, geometric mean). A run with no judged query answered never gets here
            (:class:`~serpeval.core.errors.NothingEvaluatedError`).
        coverage: which queries were evaluated, missing or ignored, summed over all groups.
        signature: :func:`~serpeval.core.fingerprints.content_signature` of the run's rows,
            added up over the query groups in the evaluation's own pass (the local path's value
            for the same rows).
        qrels_signature: that of the judgments, the same way.
    """

    name: str
    queries: int
    aggregates: dict[str, float]
    coverage: Coverage
    signature: str = ""
    qrels_signature: str = ""


@dataclass(frozen=True, eq=False)
class SparkResults:
    """Results of an evaluation on Spark.

    Attributes:
        measures: the measures, in the order asked.
        per_query: Spark DataFrame ``run, query_id, <measure>...`` with one row per evaluated
            (run, query); column names are the canonical measure names (write
            ``F.col("`nDCG@10`")`` in Spark SQL expressions). It is persisted (memory and
            disk) so reading it does not evaluate again; :meth:`unpersist` frees it.
        runs: one :class:`SparkRunResult` per run.
        settings: the options used (the report header's rules).
    """

    measures: tuple[Measure, ...]
    per_query: DataFrame
    runs: tuple[SparkRunResult, ...]
    settings: Settings
    _cached: Any = None

    @property
    def run_names(self) -> list[str]:
        """Display names of the runs."""
        return [r.name for r in self.runs]

    @property
    def aggregates(self) -> dict[str, dict[str, float]]:
        """``{run: {measure: aggregate}}``."""
        return {r.name: dict(r.aggregates) for r in self.runs}

    def __getitem__(self, name: str) -> SparkRunResult:
        for run in self.runs:
            if run.name == name:
                return run
        raise KeyError(f"no run named {name!r}; runs: {', '.join(self.run_names)}")

    def means(self, run: str | None = None) -> dict[str, float]:
        """``{measure: aggregate}`` of ``run`` (the only run when there is one)."""
        if run is None:
            if len(self.runs) != 1:
                raise KeyError(f"several runs; name one of {', '.join(self.run_names)}")
            return dict(self.runs[0].aggregates)
        return dict(self[run].aggregates)

    def aggregate(self, run: str, measure: str | Measure) -> float:
        """The aggregate of one run and measure."""
        return self[run].aggregates[str(parse_measure(measure))]

    def coverage(self) -> list[dict[str, Any]]:
        """One coverage dict per run (missing, ignored, truncated, ties)."""
        return [run.coverage.to_dict() for run in self.runs]

    # ------------------------------------------------------------------ export
    def to_dicts(self, per_query: bool = False) -> list[dict[str, Any]]:
        """Rows as :meth:`serpeval.evaluation.results.Results.to_dicts` gives them.

        ``per_query=True`` collects every per-query row to the driver (runs in order,
        queries in byte order); for large evaluations write :attr:`per_query` instead.
        """
        if not per_query:
            return [{"run": r.name, "queries": r.queries, **r.aggregates} for r in self.runs]
        return self.to_local().to_dicts(per_query=True)

    def to_json_dict(self, per_query: bool = False) -> dict[str, Any]:
        """Everything as a JSON-ready dict: measures, aggregates, coverage, rules."""
        out: dict[str, Any] = {
            "measures": [str(m) for m in self.measures],
            "results": self.to_dicts(),
            "coverage": self.coverage(),
            "ties": self.settings.ties,
            "grades": self.settings.grades,
            "rules": self.settings.rules(),
            "inputs": self.inputs(),
        }
        if per_query:
            out["per_query"] = self.to_dicts(per_query=True)
        return out

    def inputs(self) -> dict[str, Any]:
        """What the numbers were computed from (:func:`~serpeval.evaluation.results.input_signatures`)."""
        return input_signatures(self.settings, self.runs)

    def to_local(self) -> Results:
        """Collect the per-query values into a local :class:`~serpeval.evaluation.results.Results`."""
        names = [str(m) for m in self.measures]
        with sparkconf.pandas_advisory_ignored():
            # One Spark job (a read of the persisted values); the queries are put in byte order
            # here: Spark's orderBy cost two more jobs (sampling the range bounds, a shuffle).
            # Arrow and Spark both compare strings as unsigned bytes.
            table = self.per_query.toArrow()
        runs = []
        for run in self.runs:
            rows = table.filter(np.asarray(table["run"].to_numpy(zero_copy_only=False) == run.name))
            rows = rows.sort_by("query_id")
            values = np.column_stack([rows[name].to_numpy() for name in names]) if names else \
                np.zeros((rows.num_rows, 0))
            query_ids = np.array(rows["query_id"].to_pylist(), dtype=object)
            runs.append(RunResult(run.name, run.name, query_ids, values, run.coverage, run.signature,
                                  run.qrels_signature))
        return Results(self.measures, tuple(runs), self.settings)

    def unpersist(self) -> None:
        """Free the cached per-query values (Spark evaluates them again if read later)."""
        if self._cached is not None:
            self._cached.unpersist()

    def __repr__(self) -> str:
        return (f"SparkResults({len(self.runs)} run(s) x {len(self.measures)} measure(s): "
                f"{', '.join(self.run_names)})")
