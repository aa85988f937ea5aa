"""The demo's online section: one interleaved result page, then interleaving vs an A/B test
on the demo's two rankers with simulated users (:mod:`serpeval.online.simulation.simulator`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rich.console import Console

    from serpeval.cli.demo.collection import DemoCollection

CLICK_MODEL = "navigational"
COLUMNS = ("method", "effect (B-A)", "agrees with nDCG@10", "impressions [95% CI]",
           "x interleaving [95% CI]", "Monte Carlo")


def section(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Show a team draft page for one query, then how many queries each method needs."""
    from serpeval.cli.demo.console import print_table
    from serpeval.cli.progress import bar
    from serpeval.online.simulation.simulator import SimulationOptions, count_text, make_world, simulate
    from serpeval.report.simulation import display_rows
    from serpeval.report.table import render

    name_a, name_b = list(collection.runs)[:2]
    world = make_world(collection.qrels, collection.runs[name_a], collection.runs[name_b],
                       truth=collection.true_grades)
    console.print(f"[bold]Online: interleaving vs an A/B test[/bold] - simulated "
                  f"{CLICK_MODEL} users (click model {CLICK_MODEL!r}); A = {name_a}, B = {name_b}; "
                  f"the truth is the {world.truth} of every document; effects are B - A")
    _one_page(world, console)
    with bar("simulating experiments") as progress:
        options = SimulationOptions(click_model=CLICK_MODEL, mc_impressions=1_500_000, replicates=100,
                                    bootstrap=500, rng=7)
        result = simulate(world=world, options=options, progress=progress)
    state["online"] = result
    rows = display_rows(result.to_dicts(), result.settings["confidence"])
    print_table(console, render(rows, "table", columns=COLUMNS, width=console.width))
    console.print("\n".join(result.notes()), markup=False, style="dim")
    il = result["interleaving"]
    lines = [f"Interleaving needed about {count_text(il.required)} queries (impressions) to detect "
             f"{name_b} vs {name_a} at 80% power"
             + (f"; simulated experiments got there at {count_text(il.mc_required)}." if il.mc_required else ".")]
    for m in (m for m in result.methods[1:] if m.design == "all impressions"):
        if m.agrees is None:
            lines.append(f"An A/B test on {m.metric} sees no difference.")
        elif m.agrees is False:  # a ratio against a wrong-sign metric compares nothing
            lines.append(f"An A/B test on {m.metric} points the wrong way for these {CLICK_MODEL} "
                         f"users (B - A {m.effect:+.4f}): it would need {count_text(m.required)} "
                         "impressions to declare the worse ranker better.")
        else:
            ratio = f" ({m.ratio:.1f}x as many)" if m.ratio and np.isfinite(m.ratio) and il.agrees else ""
            lines.append(f"An A/B test on {m.metric} needed {count_text(m.required)}{ratio}.")
    lines.append(f"Bottom line: {result.bottom_line()}")
    console.print("\n".join(lines), markup=False)


def _one_page(world: Any, console: Console) -> None:
    """Interleave the first query's two top-10 lists and credit one simulated user's clicks."""
    from serpeval.online.clicks import click_model
    from serpeval.online.interleaving import credit, interleave

    a = [d for d in world.a[0].tolist() if d >= 0]
    b = [d for d in world.b[0].tolist() if d >= 0]
    shown = interleave([a, b], "team_draft", k=min(world.k, len(set(a) | set(b))), rng=1)
    grades = np.array([[world.grades[0, d] for d in shown.docs]])
    clicks = np.flatnonzero(click_model(CLICK_MODEL, world.levels).sample(grades, rng=3)[0]).tolist()
    out = credit(shown, clicks)
    teams = " ".join("AB"[t] if t >= 0 else "-" for t in shown.teams)
    verdict = {1: f"{world.names[0]} wins", -1: f"{world.names[1]} wins", 0: "a tie"}[int(np.sign(out.outcome))]
    console.print(
        f"Query {world.query_ids[0]}: team draft page, teams by position {teams}; true grades "
        f"{' '.join(map(str, grades[0]))}; one user clicked positions {[p + 1 for p in clicks]} "
        f"-> credit {out.credits[0]:.0f}:{out.credits[1]:.0f}, {verdict}.", markup=False)
