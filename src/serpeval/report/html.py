"""The self-contained HTML report: one file, no network, every number from the results.

A report is a list of sections. Each section builder in :data:`SECTION_BUILDERS` takes the
:class:`ReportData` (the JSON-ready dicts that the results objects' ``to_json_dict()`` /
``to_dicts()`` give) and returns a :class:`Section`, or None when its input is absent, so a
feature not used (or not available) is simply a section not shown. Builders format and
draw; they never compute a statistic.

The page is a Jinja2 template with autoescaping (query text and run names are user input);
its CSS and JavaScript (sortable tables, panel switchers, tooltips) are inlined, charts are
inline SVG (:mod:`serpeval.report.svg`) and a Content-Security-Policy forbids every network
fetch.

Entry points: :func:`html_report` (objects in, HTML out), :func:`save_html`,
``Results.to_html()`` / ``Results.save_html()``, and ``serpeval report``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serpeval.report import DEFAULT_HTML_PATH
from serpeval.report import sections_offline as offline
from serpeval.report import sections_online as online
from serpeval.report.online_inputs import DEMO_STATE_KEYS, online_dicts
from serpeval.report.page import ReportData, Section, render_page

if TYPE_CHECKING:
    from serpeval.comparison_results import Comparison
    from serpeval.results import Results

__all__ = ["SECTION_BUILDERS", "build_sections", "html_report", "report_data", "results_report",
           "save_demo_report", "save_html"]

#: The section builders, in page order. Each returns a Section or None (nothing to show).
SECTION_BUILDERS: list[Callable[[ReportData], Section | None]] = [
    offline.overview,
    offline.metric_table,
    offline.per_query,
    offline.distributions,
    *online.BUILDERS,
    offline.rules,
]


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
) -> ReportData:
    """Collect the JSON-ready data of the results objects given.

    ``online_results`` maps a section kind (:data:`serpeval.report.online_inputs.KINDS`) to a result
    object with ``to_json_dict()`` (or a list of them, or their dicts).
    """
    runs = (list(results.run_names) if results is not None
            else list(comparison.systems) if comparison is not None else [])
    if title is None:
        title = ("serpeval report: " + " vs ".join(runs)) if runs else "serpeval report"
    if subtitle is None:
        subtitle = _default_subtitle(results, comparison)
    return ReportData(
        title=title,
        subtitle=subtitle,
        evaluation=results.to_json_dict(per_query=True) if results is not None else None,
        comparison=_comparison_dict(comparison) if comparison is not None else None,
        topics=dict(topics or {}),
        notes=tuple(notes),
        online=online_dicts(online_results or {}),
    )


def _comparison_dict(comparison: Comparison) -> dict[str, Any]:
    """``to_json_dict(per_query=True)``, each row with its ``marker`` (▲ / ▼ / empty)."""
    out = comparison.to_json_dict(per_query=True)
    for row, pair in zip(out["comparisons"], comparison.rows, strict=True):
        row["marker"] = pair.marker
    return out


def _default_subtitle(results: Results | None, comparison: Comparison | None) -> str:
    parts = []
    if results is not None:
        queries = max((len(r.query_ids) for r in results.runs), default=0)
        parts.append(f"{len(results.runs)} run(s), {queries} evaluated queries, "
                     f"{len(results.measures)} measure(s)")
        if results.settings.qrels:
            parts.append(f"qrels {results.settings.qrels}")
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
    from serpeval.errors import InputError

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


def results_report(results: Results, *, comparison: Comparison | None = None,
                   compare: bool = True, baseline: str | None = None, test: str = "t",
                   correction: str = "holm", **options: Any) -> str:
    """``Results.to_html()``: with two or more runs, compare them first unless told not to.

    When the runs cannot be compared (fewer than two common queries), the report shows the
    evaluation and says why there are no significance tests.
    """
    from serpeval.errors import StatsError

    notes = list(options.pop("notes", ()))
    if comparison is None and compare and len(results.runs) > 1:
        from serpeval.comparison import compare_results

        try:
            comparison = compare_results(results, baseline=baseline, test=test,
                                         correction=correction, rng=0)
        except StatsError as exc:
            notes.append(f"no significance tests: {exc}")
    return html_report(results, comparison, notes=notes, **options)


def save_demo_report(collection: Any, state: Mapping[str, Any]) -> Path:
    """``serpeval demo``'s report, from what its sections stored in ``state``.

    Offline: ``state["results"]``, ``state["comparison"]``; online: the keys listed in
    :data:`serpeval.report.online_inputs.DEMO_STATE_KEYS`. Written to
    ``state["report_path"]`` (default ``serpeval-report.html``).
    """
    found = {kind: state[key] for key, kind in DEMO_STATE_KEYS.items() if key in state}
    return save_html(state.get("report_path", DEFAULT_HTML_PATH), state.get("results"),
                     state.get("comparison"), topics=collection.topics,
                     title="serpeval demo: " + " vs ".join(collection.runs),
                     subtitle=collection.description, online_results=found)
