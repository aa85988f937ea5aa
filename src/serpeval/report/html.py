"""The self-contained HTML report: one file, no network, every number from the results.

A report is a list of sections. Each section builder in :data:`SECTION_BUILDERS` takes the
:class:`ReportData` (the JSON-ready dicts that the results objects' ``to_json_dict()`` /
``to_dicts()`` give) and returns a :class:`Section`, or None when its input is absent, so a
feature not used (or not available) is simply a section not shown. Builders format and
draw; they never compute a statistic.

The page is a Jinja2 template with autoescaping (query text and run names are user input);
its CSS and JavaScript (sortable tables, panel switchers, tooltips) are inlined, charts are
inline SVG (:mod:`serpeval.report.svg`) and a Content-Security-Policy forbids every network
fetch. Run names, query ids, topics and the names in online results are isolated
(:mod:`serpeval.report.bidi`) before any sentence is built from them: right-to-left text or
a direction override in a name cannot reorder the text around it.

Entry points: :func:`html_report` (objects in, HTML out), :func:`save_html`, and
``serpeval report``. The report draws the comparison it is given (``compare_results``'s
result) and never runs a test itself, so it always agrees with the ``compare`` the user ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serpeval.core.errors import InputError
from serpeval.report import DEFAULT_HTML_PATH
from serpeval.report import sections_judgments as judgments
from serpeval.report import sections_offline as offline
from serpeval.report import sections_online as online
from serpeval.report import sections_segments as segments
from serpeval.report.bidi import KEYS, isolate, isolate_fields
from serpeval.report.online_inputs import DEMO_STATE_KEYS, online_dicts
from serpeval.report.page import ReportData, Section, render_page

if TYPE_CHECKING:
    from serpeval.comparison.results import Comparison
    from serpeval.evaluation.results import Results

__all__ = ["SECTION_BUILDERS", "build_sections", "html_report", "report_data", "save_demo_report",
           "save_html"]

#: The section builders, in page order. Each returns a Section or None (nothing to show).
SECTION_BUILDERS: list[Callable[[ReportData], Section | None]] = [
    offline.overview,
    offline.metric_table,
    segments.offline_segments,
    offline.per_query,
    offline.distributions,
    judgments.run_diff,
    *online.BUILDERS,
    segments.online_segments,
    offline.rules,
]


#: The user-text fields of each input (see :func:`serpeval.report.bidi.isolate_fields`).
EVALUATION_TEXT = {"results": [{"run": True}], "coverage": [{"run": True, "missing": [True]}],
                   "per_query": [{"run": True, "query_id": True}]}
COMPARISON_TEXT = {"baseline": True, "systems": [True], "means": KEYS,
                   "comparisons": [{"system": True, "baseline": True}],
                   "coverage": [{"system": True, "dropped": [True]}],
                   "per_query": [{"query_id": True, "system": True, "baseline": True}],
                   "segments": {"grouping": True, "groups": [True],
                                "rows": [{"group": True, "system": True, "baseline": True}],
                                "interactions": [{"system": True, "baseline": True}]}}
SEGMENTS_TEXT = {"by": True, "experiment": True,
                 "rows": [{"metric": True, "segment": True, "treatment": True, "control": True}]}
ONLINE_TEXT: dict[str, Any] = {
    "ab": {"experiment": True, "results": [{"metric": True, "control": True, "treatment": True}],
           "variants": [{"variant": True}], "srm": {"variants": [True]}},
    "ab_monitor": {"experiment": True, "metric": True, "control": True,
                   "rows": [{"treatment": True}]},
    "ab_plan": {"rows": [{"metric": True}]},
    "interleaving": {"experiment": True, "teams": [True],
                     "results": [{"experiment": True, "A": True, "B": True}]},
    "simulation": {"rows": [{"click model": True}]},
    "segments": SEGMENTS_TEXT,
}
ONLINE_TEXT["ab"]["segments"] = ONLINE_TEXT["interleaving"]["segments"] = SEGMENTS_TEXT
DIFF_TEXT = {"a": True, "b": True, "summary": {"a": True, "b": True}, "per_query": [{"query_id": True}],
             "unjudged": [{"query_id": True, "doc_id": True}]}


# ----------------------------------------------------------------------------- assembly


def build_sections(data: ReportData) -> list[Section]:
    """Run every builder; keep the sections that have something to show."""
    return [s for s in (builder(data) for builder in SECTION_BUILDERS) if s is not None]


def report_data(
    results: Results | None = None,
    comparison: Comparison | None = None,
    *,
    topics: Mapping[str, str] | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    notes: Sequence[str] = (),
    online_results: Mapping[str, Any] | None = None,
    diffs: Sequence[Any] = (),
) -> ReportData:
    """Collect the JSON-ready data of the results objects given.

    ``topics``: ``{query_id: text}`` (ids as text; ``{301: ...}`` is read as ``{"301": ...}``).
    ``title``: the page's heading (None or blank: ``serpeval report: run-a vs run-b``).
    ``online_results`` maps a section kind (:data:`serpeval.report.online_inputs.KINDS`) to a result
    object with ``to_json_dict()`` (or a list of them, or their dicts). ``diffs`` are run diffs
    (:func:`serpeval.judgments.diff.diff_runs`, or their ``to_json_dict()``).
    """
    runs = (list(results.run_names) if results is not None
            else list(comparison.systems) if comparison is not None else [])
    if title is None or not title.strip():   # --title "$UNSET" too: a page needs a heading
        title = ("serpeval report: " + " vs ".join(map(isolate, runs))) if runs else \
            "serpeval report"
    if subtitle is None:
        subtitle = _default_subtitle(results, comparison)
    evaluation = results.to_json_dict(per_query=True) if results is not None else None
    online = online_dicts(online_results or {})
    return ReportData(
        title=title,
        subtitle=subtitle,
        evaluation=isolate_fields(evaluation, EVALUATION_TEXT),
        comparison=(isolate_fields(_comparison_dict(comparison), COMPARISON_TEXT)
                    if comparison is not None else None),
        # query ids are text everywhere (a pandas index of ints, {301: "..."}, must still match)
        topics={isolate(str(k)): isolate(str(v)) for k, v in (topics or {}).items() if v is not None},
        notes=tuple(notes),
        online={kind: [isolate_fields(item, ONLINE_TEXT[kind]) for item in items]
                for kind, items in online.items()},
        diffs=[isolate_fields(d, DIFF_TEXT) for d in judgments.diff_dicts(diffs)],
    )


def _comparison_dict(comparison: Comparison) -> dict[str, Any]:
    """``to_json_dict(per_query=True)``, each row with its ``marker`` (▲ / ▼ / empty)."""
    out = comparison.to_json_dict(per_query=True)
    for row, pair in zip(out["comparisons"], comparison.rows, strict=True):
        row["marker"] = pair.marker
    return out


def _evaluated_queries(results: Results, comparison: Comparison | None) -> str:
    """``249 evaluated queries``; where the runs were evaluated on different queries, also how
    many the comparison's numbers use (those in every run): ``249 queries evaluated, 239 in
    every run``."""
    per_run = [set(r.query_ids.tolist()) for r in results.runs]
    evaluated = set().union(*per_run)
    common = (len(comparison.query_ids) if comparison is not None
              else len(set.intersection(*per_run)) if per_run else 0)
    if common == len(evaluated):
        return f"{len(evaluated)} evaluated queries"
    return f"{len(evaluated)} queries evaluated, {common} in every run"


def _default_subtitle(results: Results | None, comparison: Comparison | None) -> str:
    parts = []
    if results is not None:
        parts.append(f"{len(results.runs)} run(s), {_evaluated_queries(results, comparison)}, "
                     f"{len(results.measures)} measure(s)")
        if results.settings.qrels:
            parts.append(f"qrels {isolate(results.settings.qrels)}")
    elif comparison is not None:
        parts.append(f"{len(comparison.systems)} runs, {len(comparison.query_ids)} queries "
                     "compared")
    return "; ".join(parts)


def html_report(
    results: Results | None = None,
    comparison: Comparison | None = None,
    **options: Any,
) -> str:
    """The report as one HTML string (see :func:`report_data` for the options)."""

    data = report_data(results, comparison, **options)
    sections = build_sections(data)
    if not sections:
        raise InputError("nothing to report: pass evaluation results, a comparison or online "
                         "results.")
    return render_page(data.title, sections, data.subtitle)


def save_html(path: str | Path, results: Results | None = None,
              comparison: Comparison | None = None, **options: Any) -> Path:
    """Write :func:`html_report` to ``path`` (UTF-8, atomically: a failure leaves no partial
    file, and a previous report there stays as it was); return the path."""
    from serpeval.io.outputs import write_text

    return write_text(path, html_report(results, comparison, **options))


def save_demo_report(collection: Any, state: Mapping[str, Any]) -> Path:
    """``serpeval demo``'s report, from what its sections stored in ``state``.

    Offline: ``state["results"]``, ``state["comparison"]``; online: the keys listed in
    :data:`serpeval.report.online_inputs.DEMO_STATE_KEYS`. Written to
    ``state["report_path"]`` (default ``serpeval-report.html``).
    """
    found = {kind: state[key] for key, kind in DEMO_STATE_KEYS.items() if key in state}
    if "interleaving" in found and len(collection.runs) >= 2:
        found["interleaving"] = _demo_teams(found["interleaving"], *list(collection.runs)[:2])
    return save_html(state.get("report_path", DEFAULT_HTML_PATH), state.get("results"),
                     state.get("comparison"), topics=collection.topics,
                     title="serpeval demo: " + " vs ".join(collection.runs),
                     subtitle=collection.description, online_results=found)


def _demo_teams(report: Any, name_a: str, name_b: str) -> Mapping[str, Any]:
    """The demo's interleaving log analysis with its rankers named: the demo writes the log
    with teams ``A`` (its first run, the baseline) and ``B`` (the second, the candidate), as its
    terminal summary says; the report names them as the rest of the page does."""
    data = dict(online_dicts({"interleaving": report})["interleaving"][0])
    if list(data.get("teams") or ["A", "B"]) != ["A", "B"]:
        return data
    data["teams"] = [name_a, name_b]
    data["results"] = [{**row, "A": name_a, "B": name_b} if (row.get("A"), row.get("B")) == ("A", "B")
                       else row for row in data["results"]]
    return data
