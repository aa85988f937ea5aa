"""``serpeval demo``: the whole tool on a deterministic synthetic collection.

The demo is a list of sections (:data:`SECTIONS`); each takes the collection
(:mod:`serpeval.cli.demo.collection`) and a :class:`rich.console.Console` and adds its part
of the story. The offline sections are here; the interleaving, A/B and trec_eval sections
have modules of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.cli.demo.collection import DemoCollection, make_collection

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["SECTIONS", "run_demo"]

# ----------------------------------------------------------------------------- sections


def section_offline(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Evaluate both runs; say which is better on nDCG@10, by how much, on how many queries."""
    from serpeval.cli.demo.console import colour, print_table
    from serpeval.cli.offline import results_rows
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.report.table import render

    results = evaluate(collection.qrels, collection.runs, collection.measures)
    state["results"] = results
    console.print(f"[bold]Offline evaluation[/bold] - {collection.description}")
    rows, styles = results_rows(results)
    print_table(console, render(rows, "table", styles=styles, width=console.width, color=colour(console)))
    baseline, candidate = list(collection.runs)[:2]
    key = "nDCG@10"
    a = results.per_query(baseline, key)
    b = results.per_query(candidate, key)
    common = sorted(set(a) & set(b))
    delta = np.array([b[q] - a[q] for q in common])
    mean_a = float(np.mean([a[q] for q in common]))
    mean_b = float(np.mean([b[q] for q in common]))
    better, worse = (candidate, baseline) if mean_b >= mean_a else (baseline, candidate)
    diff = abs(mean_b - mean_a)
    relative = diff / min(mean_a, mean_b) * 100 if min(mean_a, mean_b) > 0 else float("inf")
    wins = int(np.sum(delta > 0)) if better == candidate else int(np.sum(delta < 0))
    losses = int(np.sum(delta < 0)) if better == candidate else int(np.sum(delta > 0))
    console.print(
        f"{better} beats {worse} on {key} by {diff:+.4f} ({relative:.1f}% relative): "
        f"better on {wins} queries, worse on {losses}, tied on {len(common) - wins - losses}."
    )
    state["better"], state["worse"] = better, worse


def section_compare(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Is the difference real? Randomization test, Holm correction, CI, d_z; then the CI gate."""
    from serpeval.cli.demo.console import colour, print_table
    from serpeval.comparison.compare import CompareOptions, compare_results
    from serpeval.comparison.gate import GateOptions, gate_results
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.report.comparison import human_rows, legend, text_table

    results = state.get("results") or evaluate(collection.qrels, collection.runs, collection.measures)
    comparison = compare_results(results, CompareOptions(test="randomization", rng=0))
    state["comparison"] = comparison
    console.print(f"[bold]Significance[/bold] - {comparison.description()}")
    rows, cols, styles = human_rows(comparison)
    print_table(console, text_table(rows, cols, styles, color=colour(console), width=console.width))
    for note in [*comparison.notes(), legend(comparison)]:
        console.print(note, markup=False)
    key = str(comparison.measures[0])
    row = comparison.rows[0]
    verdict = "a real difference" if row.significant else "not distinguishable from chance"
    console.print(f"{row.system} vs {row.baseline} on {key}: {row.delta:+.4f} "
                  f"(95% CI [{row.ci_low:+.4f}, {row.ci_high:+.4f}], p = {row.p_value:.4f}, "
                  f"d_z = {row.effect_size:+.2f}): {verdict}.", markup=False)
    first, second = results.runs[0].name, results.runs[1].name
    decision = gate_results(results, [key], GateOptions(max_drop=0.01))
    console.print(f"serpeval gate --baseline {first} --candidate {second} -m {key} --max-drop 0.01 "
                  f"would {'PASS (exit 0)' if decision.passed else 'FAIL (exit 1)'}: one-sided 95% "
                  f"lower bound of the delta {decision.checks[0].bound:+.4f} vs -0.0100.", markup=False)


def section_report(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Write what the sections above stored in ``state`` as one HTML report; print its path."""

    from rich.markup import escape

    from serpeval.report import DEFAULT_HTML_PATH
    from serpeval.report.html import save_demo_report

    replaced = Path(state.get("report_path", DEFAULT_HTML_PATH)).exists()
    path = save_demo_report(collection, state)
    console.print(f"[bold]Report[/bold] - wrote {escape(str(path.resolve()))} "
                  f"({path.stat().st_size / 1024:,.0f} KB{', replaced the previous file' if replaced else ''}); "
                  "open it in a browser (it needs no network).")


def section_online(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Interleaving vs an A/B test on the two rankers with simulated users."""
    from serpeval.cli.demo.interleaving import section

    section(collection, console, state)


def section_ab(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """The two rankers as an A/B test and an interleaving experiment, analysed from logs."""
    from serpeval.cli.demo.ab import section

    section(collection, console, state)


def section_trec_eval(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """The drop-in trec_eval on the candidate run, checked against pytrec_eval."""
    from serpeval.cli.demo.trec_eval import section

    section(collection, console, state)


Section = Callable[[DemoCollection, "Console", dict[str, Any]], None]

#: The demo's sections, in order. Later features add theirs before section_report, which
#: gathers what the others stored and must stay last.
SECTIONS: list[Section] = [section_offline, section_compare, section_online, section_ab,
                           section_trec_eval, section_report]


def run_demo(collection: DemoCollection | None = None, console: Console | None = None,
             state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run every section on ``collection`` (default: :func:`make_collection`); return the state.

    ``state`` seeds the shared state, e.g. ``{"report_path": "report.html"}``.
    """
    from rich.console import Console

    from serpeval.cli.common import table_width
    from serpeval.report.table import DEFAULT_WIDTH

    # The one width rule of every command: COLUMNS or the terminal; pipes get the fixed layout.
    console = console or Console(highlight=False, width=table_width() or DEFAULT_WIDTH)
    collection = collection or make_collection()
    state = dict(state or {})
    for section in SECTIONS:
        section(collection, console, state)
        console.print()
    return state
