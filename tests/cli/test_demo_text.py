"""The demo's online sections: one sign convention (B - A, the candidate B positive when
better), the runs and the click model of each section named, every line within the
terminal's width (the width every command uses, ``cli.common.table_width``)."""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any

import pytest
from rich.console import Console

from serpeval.cli.demo import offline
from serpeval.cli.demo.collection import make_collection
from serpeval.report.table import DEFAULT_WIDTH


@pytest.fixture(scope="module")
def collection() -> Any:
    return make_collection(n_queries=40, seed=3)


def _console(width: int) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=width, force_terminal=False, highlight=False), buffer


def test_run_demo_takes_the_commands_width(monkeypatch: pytest.MonkeyPatch) -> None:
    widths: list[int] = []
    monkeypatch.setattr(offline, "SECTIONS", [lambda c, console, s: widths.append(console.width)])
    monkeypatch.setenv("COLUMNS", "93")
    offline.run_demo(make_collection(n_queries=5, seed=1))
    monkeypatch.delenv("COLUMNS")
    offline.run_demo(make_collection(n_queries=5, seed=1))   # pytest's stdout is not a terminal
    assert widths == [93, DEFAULT_WIDTH]


def test_simulation_section_names_runs_model_and_bottom_line(collection, monkeypatch) -> None:
    import serpeval.online.simulation.simulator as sim
    from serpeval.cli.demo import interleaving

    real = sim.simulate
    results: list[Any] = []

    def quick(**kwargs: Any) -> Any:   # the section's own call, with a small Monte Carlo budget
        options = dataclasses.replace(kwargs.pop("options"), mc_impressions=100_000, bootstrap=100)
        results.append(real(**kwargs, options=options))
        return results[-1]

    monkeypatch.setattr(sim, "simulate", quick)
    console, buffer = _console(80)
    interleaving.section(collection, console, {})
    out = buffer.getvalue()
    assert max(map(len, out.splitlines())) <= 80
    flat = " ".join(out.split())
    assert "simulated navigational users (click model 'navigational'); A = baseline, B = candidate" in flat
    result = results[0]
    assert " ".join(result.bottom_line().split()) in flat
    # the table is whole at 80 columns (fitted, not cut off): every size and CI bound, unsplit
    from serpeval.online.simulation.simulator import count_text

    numbers = set(re.findall(r"\d+(?:,\d{3})*", out))
    for m in result.methods:
        assert {count_text(m.required), count_text(m.required_low), count_text(m.required_high)} <= numbers
    for m in result.methods[1:]:
        if m.agrees is False and m.design == "all impressions":  # named as wrong, with no ratio
            assert f"An A/B test on {m.metric} points the wrong way for these navigational users" in flat
            assert f"{m.ratio:.1f}x" not in flat.split(f"An A/B test on {m.metric}")[1].split(".")[0]


def test_ab_section_names_the_click_model_and_signs(collection, monkeypatch) -> None:
    pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (a dependency: pip install .)")
    from serpeval.cli.demo import ab

    monkeypatch.setattr(ab, "USERS", 2000)
    console, buffer = _console(80)
    state: dict[str, Any] = {}
    ab.section(collection, console, state)
    out = buffer.getvalue()
    assert max(map(len, out.splitlines())) <= 80
    flat = " ".join(out.split())
    assert "clicks from the dbn click model, a different user population from the simulation above" in flat
    assert "CTR of candidate vs baseline (dbn users)" in flat
    a = state["interleaving_log"].analysis
    # Δ is candidate - baseline: positive when users prefer the candidate (B)
    match = re.search(r"delta \(candidate - baseline\) ([-+]\d\.\d{4}) ", flat)
    assert match is not None, flat
    assert float(match.group(1)) == pytest.approx(a.delta, abs=5e-5)
    assert a.delta == pytest.approx((a.wins_b - a.wins_a) / (2 * a.impressions))
    winner = {"A": "baseline", "B": "candidate"}.get(a.winner, "none")
    assert f"positive when users prefer candidate -> winner {winner}." in flat
