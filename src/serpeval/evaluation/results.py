"""Evaluation results: per-query values, aggregates, and the rules that produced them.

Every renderer (terminal table, CSV, JSON, markdown, LaTeX, HTML, DataFrames) derives from
:meth:`Results.to_dicts`; nothing recomputes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import InputError, require
from serpeval.core.strict_json import json_ready
from serpeval.core.tabular import Tabular
from serpeval.core.version import __version__
from serpeval.measures import Measure, parse_measure
from serpeval.ranking import TIE_RULES, Coverage

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Missing

__all__ = ["Results", "RunResult", "Settings", "input_signatures", "qrels_signatures", "rules_signature",
           "unique_names", "with_unique_names"]


@dataclass(frozen=True)
class Settings:
    """The evaluation options used, stated in every report."""

    missing: Missing = "skip"
    depth: int | None = None
    judged_only: bool = False
    float32_scores: bool = False
    qrels: str = ""
    qrels_skipped_lines: int = 0
    subtopics: bool = False
    ties: str = "trec_eval"
    qrels_signature: str = ""
    """:func:`~serpeval.core.fingerprints.content_signature` of the qrels as read ("" when not computed)."""
    grades: str = "int"
    """How the qrels' grades were read: ``"int"`` (integers, trec_eval's rule) or ``"float"``
    (fractional grades, ``grades="float"`` / ``--grades float``)."""

    def options(self) -> dict[str, Any]:
        """The options that change the numbers, JSON-ready (``settings`` of
        :meth:`Results.to_json_dict`, read back by :meth:`Results.from_json_dict`)."""
        return {"missing": self.missing, "depth": self.depth, "judged_only": self.judged_only,
                "float32_scores": self.float32_scores, "subtopics": self.subtopics, "ties": self.ties,
                "grades": self.grades}

    def rules(self) -> list[str]:
        """Plain-language statements of the rules applied (for report headers)."""
        missing = {
            "skip": "judged queries absent from a run are skipped (trec_eval default)",
            "zero": "judged queries absent from a run count as 0 (trec_eval -c)",
            "error": "judged queries absent from a run are an error",
        }[self.missing]
        rules = [
            f"ranking: score descending, {TIE_RULES.get(self.ties, self.ties)}"
            f"{'' if self.ties == 'trec_eval' else f' (tie policy {self.ties})'}; rank column and line order ignored",
            "only judged queries are evaluated; run queries without judgments are ignored",
            missing,
            "grades read as fractional numbers (--grades float): gains use them as they are"
            if self.grades == "float" else "grades read as integers (trec_eval); fractional grades refused",
            "negative grades mean judged-but-unjudged (not non-relevant); unjudged docs are non-relevant",
            "cutoffs past the end of a ranking count the missing ranks as non-relevant",
            "nDCG: ideal ranking from all judged docs of the query; gain linear (trec_eval) "
            "unless gain=exp (2^g - 1)",
        ]
        if self.depth is not None:
            rules.append(f"only the top {self.depth} docs of each query are kept (-M {self.depth})")
        if self.judged_only:
            rules.append("unjudged docs are removed before measuring (-J)")
        if self.float32_scores:
            rules.append("scores compared as 32-bit floats (trec_eval 9.0.8)")
        if self.subtopics:
            rules.append("subtopic qrels: diversity measures as NIST ndeval (binary per subtopic, greedy "
                         "ideal ranking); other measures use each document's highest grade over its subtopics")
        return rules


@dataclass(frozen=True, eq=False)
class RunResult:
    """Per-query values of one run.

    Attributes:
        name: display name of the run.
        tag: the run tag from its file.
        query_ids: evaluated queries in byte order.
        values: ``float64[n_queries, n_measures]`` in the order of ``Results.measures``.
        coverage: which queries were evaluated, missing or ignored, and why.
        signature: :func:`~serpeval.core.fingerprints.content_signature` of the run as read
            (streamed and Spark runs: added up over their pieces, the same value; "" in a
            JSON written before serpeval recorded signatures).
        qrels_signature: that of the qrels it was evaluated against ("" when not computed).
    """

    name: str
    tag: str
    query_ids: NDArray[Any]
    values: NDArray[np.float64]
    coverage: Coverage
    signature: str = ""
    qrels_signature: str = ""

    def column(self, index: int) -> NDArray[np.float64]:
        """Per-query values of the measure at ``index``."""
        return self.values[:, index]


@dataclass(frozen=True, eq=False)
class Results(Tabular):
    """What :func:`serpeval.evaluate` returns.

    Attributes:
        measures: the measures, in the order asked.
        runs: one :class:`RunResult` per run, in the order given.
        settings: the options used.
    """

    measures: tuple[Measure, ...]
    runs: tuple[RunResult, ...]
    settings: Settings

    # ------------------------------------------------------------------ access
    @property
    def run_names(self) -> list[str]:
        """Display names of the runs."""
        return [r.name for r in self.runs]

    def __getitem__(self, name: str) -> RunResult:
        for run in self.runs:
            if run.name == name:
                return run
        raise KeyError(f"no run named {name!r}; runs: {', '.join(self.run_names)}")

    def _measure_index(self, measure: str | Measure) -> int:
        m = parse_measure(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise KeyError(
                f"{m} was not evaluated; measures: {', '.join(map(str, self.measures))}"
            ) from None

    def per_query(self, run: str, measure: str | Measure) -> dict[str, float]:
        """``{query_id: value}`` of one run and measure."""
        r = self[run]
        column = r.column(self._measure_index(measure))
        return dict(zip(r.query_ids.tolist(), column.tolist(), strict=True))

    def means(self, run: str) -> dict[str, float]:
        """``{measure: aggregate}`` of one run (mean, or sum for counts)."""
        r = self[run]
        return {str(m): m.aggregate(r.column(i)) for i, m in enumerate(self.measures)}

    def aggregate(self, run: str, measure: str | Measure) -> float:
        """The aggregate of one run and measure."""
        i = self._measure_index(measure)
        return self.measures[i].aggregate(self[run].column(i))

    # ------------------------------------------------------------------ export
    def to_dicts(self, per_query: bool = False) -> list[dict[str, Any]]:
        """Rows as dicts: one per run (aggregates), or one per (run, query).

        Aggregate rows are ``{"run": name, "queries": n, <measure>: value, ...}``; per-query
        rows are ``{"run": name, "query_id": qid, <measure>: value, ...}``.
        """
        names = [str(m) for m in self.measures]
        rows: list[dict[str, Any]] = []
        for run in self.runs:
            if per_query:
                for qid, values in zip(run.query_ids.tolist(), run.values.tolist(), strict=True):
                    rows.append({"run": run.name, "query_id": qid, **dict(zip(names, values, strict=True))})
            else:
                row: dict[str, Any] = {"run": run.name, "queries": len(run.query_ids)}
                row.update(self.means(run.name))
                rows.append(row)
        return rows

    def to_pandas(self, per_query: bool = False) -> Any:
        """A pandas DataFrame of :meth:`to_dicts` (needs ``pandas``)."""

        pd: Any = require("pandas", "pandas")
        columns = ["run", "query_id" if per_query else "queries", *[str(m) for m in self.measures]]
        return pd.DataFrame(self.to_dicts(per_query=per_query), columns=columns)

    def _html_caption(self) -> str:
        return repr(self)

    def coverage(self) -> list[dict[str, Any]]:
        """One coverage dict per run (missing, ignored, truncated, ties)."""
        return [run.coverage.to_dict() for run in self.runs]

    def inputs(self) -> dict[str, Any]:
        """What the numbers were computed from (:func:`input_signatures`)."""
        return input_signatures(self.settings, self.runs)

    def to_json_dict(self, per_query: bool = False) -> dict[str, Any]:
        """Everything as a JSON-ready dict: measures, aggregates, coverage, rules, the inputs'
        signatures (a value that is not a finite number would be None with ``null_reasons``:
        :mod:`serpeval.core.strict_json`)."""

        out: dict[str, Any] = {
            "measures": [str(m) for m in self.measures],
            "results": self.to_dicts(per_query=False),
            "coverage": self.coverage(),
            "ties": self.settings.ties,
            "grades": self.settings.grades,
            "rules": self.settings.rules(),
            "settings": self.settings.options(),
            "inputs": self.inputs(),
        }
        if per_query:
            out["per_query"] = self.to_dicts(per_query=True)
        return json_ready(out)

    @classmethod
    def from_json_dict(cls, data: Any, source: str = "<json>") -> Results:
        """Results read back from :meth:`to_json_dict` with ``per_query=True`` (``serpeval
        evaluate --format json --per-query``): the per-query values, coverage, tie policy,
        options (depth, judged only, float32 scores: ``settings``) and input signatures (a JSON
        written before serpeval recorded signatures or options has none).

        Raises:
            InputError: not such a JSON (one line naming ``source`` and what is missing).
        """

        how = "write it with serpeval evaluate QRELS RUN --format json --per-query"
        if not isinstance(data, dict) or not isinstance(data.get("measures"), list):
            raise InputError(f"{source}: not the JSON of an evaluation (no 'measures' list); {how}.")
        if not isinstance(data.get("per_query"), list):
            raise InputError(f"{source}: the evaluation has no per-query values ('per_query'); {how}.")
        try:
            measures = tuple(parse_measure(m) for m in data["measures"])
            names = [str(m) for m in measures]
            inputs = data.get("inputs") or {}
            signed = {r["run"]: r for r in inputs.get("runs", [])}
            coverages = {c["run"]: c for c in data.get("coverage", [])}
            rows: dict[str, list[Any]] = {}
            for row in data["per_query"]:
                rows.setdefault(str(row["run"]), []).append(row)
            runs = []
            for name, found in rows.items():
                values = np.array([[np.nan if r.get(m) is None else float(r[m]) for m in names] for r in found],
                                  dtype=np.float64).reshape(len(found), len(names))
                query_ids = np.array([str(r["query_id"]) for r in found], dtype=object)
                c = coverages.get(name)
                coverage = Coverage(name, len(found), len(found), len(found), (), "skip", 0, 0) if c is None else \
                    Coverage(name, int(c["judged_queries"]), int(c["run_queries"]), int(c["evaluated"]),
                             tuple(c["missing"]), str(c["missing_policy"]), int(c["unjudged_queries"]),
                             int(c["unjudged_rows"]), int(c.get("truncated_rows", 0)),
                             int(c.get("dropped_unjudged", 0)), int(c.get("ties", 0)))
                sign = signed.get(name, {})
                runs.append(RunResult(name, name, query_ids, values, coverage, str(sign.get("signature", "")),
                                      str(sign.get("qrels_signature", ""))))
            qrels = inputs.get("qrels") or {}
            policy = {c.missing_policy for c in (r.coverage for r in runs)}
            # The options written since serpeval records them (``settings``); an older JSON
            # has none, and reads as evaluated without depth, -J or float32 scores.
            options = data.get("settings") or {}
            depth = options.get("depth")
            settings = Settings(missing=policy.pop() if len(policy) == 1 else "skip",  # type: ignore[arg-type]
                                depth=None if depth is None else int(depth),
                                judged_only=bool(options.get("judged_only", False)),
                                float32_scores=bool(options.get("float32_scores", False)),
                                subtopics=bool(options.get("subtopics", False)),
                                qrels=str(qrels.get("source", source)), ties=str(data.get("ties", "trec_eval")),
                                qrels_signature=str(qrels.get("signature", "")),
                                grades=str(data.get("grades", inputs.get("grades", "int"))))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: a malformed evaluation JSON ({type(exc).__name__}: {exc}); {how}.") from None
        if not runs:
            raise InputError(f"{source}: the evaluation has no per-query rows; {how}.")
        return cls(measures, tuple(runs), settings)

    def __repr__(self) -> str:
        return (f"Results({len(self.runs)} run(s) x {len(self.measures)} measure(s): "
                f"{', '.join(self.run_names)})")


def rules_signature(rules: Iterable[str]) -> str:
    """A short hash (16 hex digits) of the rules' text: equal rules, equal signature."""
    import hashlib

    return hashlib.blake2b("\n".join(rules).encode(), digest_size=8).hexdigest()


def input_signatures(settings: Settings, runs: Iterable[Any]) -> dict[str, Any]:
    """The signature block of a result: serpeval's version, the qrels' and each run's
    content signature as read (:func:`~serpeval.core.fingerprints.content_signature`: the
    parsed rows, so whitespace and line order do not matter), the qrels each run was
    evaluated against, the tie policy, the grade type (``int`` or ``float``) and the rules
    (their text's signature). Two results with equal blocks were computed from the same
    inputs under the same rules."""

    return {
        "serpeval": __version__,
        "qrels": {"source": settings.qrels, "signature": settings.qrels_signature},
        "runs": [{"run": r.name, "signature": r.signature, "qrels_signature": r.qrels_signature or
                  settings.qrels_signature} for r in runs],
        "ties": settings.ties,
        "grades": settings.grades,
        "rules": rules_signature(settings.rules()),
    }


def qrels_signatures(settings: Settings, runs: Iterable[RunResult]) -> dict[str, str]:
    """``{run name: signature of the qrels it was evaluated against}`` (runs without one left out)."""
    out = {r.name: r.qrels_signature or settings.qrels_signature for r in runs}
    return {name: sig for name, sig in out.items() if sig}


def unique_names(names: Iterable[str]) -> list[str]:
    """Display names with repeats numbered: ``bm25, bm25, dense`` -> ``bm25, bm25#2, dense``.

    A number already taken by a run of that name is skipped (``bm25, bm25#2, bm25`` ->
    ``bm25, bm25#2, bm25#3``), so the names stay distinct."""
    names = list(names)
    taken = set(names)
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        if count == 0 and name not in out:
            out.append(name)
            continue
        number = max(count, 1) + 1
        while f"{name}#{number}" in taken:
            number += 1
        seen[name] = number
        taken.add(f"{name}#{number}")
        out.append(f"{name}#{number}")
    return out


def with_unique_names(results: list[RunResult]) -> list[RunResult]:
    """Rename runs whose display names collide (``bm25``, ``bm25#2``)."""
    names = unique_names(result.name for result in results)
    return [result if result.name == name else
            replace(result, name=name, coverage=replace(result.coverage, run=name))
            for result, name in zip(results, names, strict=True)]
