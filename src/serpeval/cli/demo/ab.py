"""The demo's A/B section: the demo's two rankers as an A/B test and an interleaving
experiment, logged as Parquet, analysed from the logs on DuckDB."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from serpeval.cli.demo.collection import DemoCollection

USERS = 10_000


def section(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Simulate an A/B log and an interleaving log of the two rankers; analyse both."""
    import tempfile

    from rich.markup import escape

    from serpeval.core.errors import install_command

    if not all(importlib.util.find_spec(m) for m in ("ibis", "duckdb")):
        console.print(
            "[bold]A/B logs[/bold] - skipped: ibis and DuckDB are not installed; "
            f"install them with {escape(install_command('ab'))} to analyse logs on DuckDB."
        )
        return
    # The logs live in temporary folders that are removed when the section ends, on error too.
    with (
        tempfile.TemporaryDirectory(prefix="serpeval-demo-ab-") as folder,
        tempfile.TemporaryDirectory(prefix="serpeval-demo-interleaving-") as il_folder,
    ):
        _analyse(collection, console, state, folder, il_folder)


def _analyse(collection: DemoCollection, console: Console, state: dict[str, Any], folder: str,
             il_folder: str) -> None:
    """Write the A/B log to ``folder`` and the interleaving log to ``il_folder``; analyse both."""
    from serpeval.cli.common import ab_rows
    from serpeval.cli.demo.console import print_table
    from serpeval.online.experiments import ABDesign, analyze_ab, analyze_interleaving_logs, monitor_ab
    from serpeval.online.simulation.generate import LogGenerator
    from serpeval.online.simulation.world import make_world
    from serpeval.report.table import render

    name_a, name_b = list(collection.runs)[:2]
    world = make_world(
        collection.qrels,
        collection.runs[name_a],
        collection.runs[name_b],
        truth=collection.true_grades,
    )
    generator = LogGenerator(
        USERS,
        pair=world,
        pre_days=14,
        experiments=(f"{name_a}-vs-{name_b}",),
        variants=(name_a, name_b),
    )
    generator.write(folder, rng=11)
    model = generator.click_model if isinstance(generator.click_model, str) else "generated"
    console.print(
        f"[bold]A/B test from logs[/bold] - {USERS:,} simulated users ({name_a} = control, "
        f"{name_b} = treatment, 14 days plus a 14-day pre-period; clicks from the {model} click "
        "model, a different user population from the simulation above) written as Parquet to a "
        "temporary folder, analysed on DuckDB"
    )
    design = ABDesign(control=name_a)
    res = analyze_ab(folder, design=design)
    state["ab"] = res
    print_table(console, render(ab_rows(res.to_dicts(), "table"), "table", width=console.width))
    console.print(
        "\n".join([res.srm.message(), *res.exclusions.notes(), *res.rules()[:2]]),
        markup=False,
        style="dim",
    )
    seq = monitor_ab(folder, design=replace(design, metrics=("ctr",)))
    state["ab_monitor"] = seq
    decision = seq.first_decision()
    ctr = next(r for r in res.to_dicts() if r["metric"] == "ctr")
    console.print(
        f"CTR of {name_b} vs {name_a} ({model} users) {ctr['rel_effect']:+.1%} "
        f"[{ctr['rel_ci_lower']:+.1%}, {ctr['rel_ci_upper']:+.1%}]"
        + (
            f"; always-valid monitoring could have stopped after day {decision['look']} of "
            f"{len(seq.rows)} ({decision['units_control'] + decision['units_treatment']:,} users)."
            if decision
            else "; no always-valid decision within the 14 days."
        ),
        markup=False,
    )

    il_generator = LogGenerator(USERS // 5, pair=world, interleaving=True)
    il_generator.write(il_folder, rng=12)
    report = analyze_interleaving_logs(il_folder, n_resamples=2000, rng=0)
    state["interleaving_log"] = report
    a = report.analysis
    console.print(
        f"Interleaving log ({a.impressions:,} impressions of {a.units:,} users, team draft, "
        f"{il_generator.click_model} users; A = {name_a}, "
        f"B = {name_b}): wins {name_b} {a.wins_b:,}, {name_a} {a.wins_a:,}, ties {a.ties:,}; "
        f"delta ({name_b} - {name_a}) {a.delta:+.4f} [{a.ci_low:+.4f}, {a.ci_high:+.4f}], "
        f"positive when users prefer {name_b} -> winner "
        f"{ {'A': name_a, 'B': name_b}.get(a.winner, 'none') }.",
        markup=False,
    )
    days = report.over_time_rows()
    if days:
        first, last = days[0], days[-1]
        console.print(
            f"Preference for {name_b} over time (cumulative delta, by UTC day): day 1 "
            f"{first['delta']:+.4f}, day {last['period']} {last['delta']:+.4f} "
            f"[{last['ci_low']:+.4f}, {last['ci_high']:+.4f}] (delta-method CI clustered by "
            "user; chart in the report).",
            markup=False,
        )
