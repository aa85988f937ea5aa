"""Speed of the online toolkit: interleavings per second, simulated impressions per second.

* Serving path: one ``interleave()`` call per impression for two top-10 lists (half
  overlapping, drawn fresh for every repetition), per method, and ``credit()``.
* Batched path: ``interleave_batch`` + ``credit_batch`` over 200,000 impressions at once.
* Click models: ``sample()`` on 1,000,000 top-10 impressions per preset (the public,
  impression-major API, validation included), and the per-impression Python loop a
  Lerot/mpkato-style simulator runs (our re-implementation of that style, as the reference
  point: no maintained interleaving or click-simulation package is on PyPI to compare with).
* The simulator's Monte Carlo engine: simulated experiment impressions per second.

Every number is the median of ``--repeat`` runs (the machine is shared and noisy).

    python bench/bench_online.py --repeat 5

Writes ``bench/results/online_speed.md``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))


def median_rate(fn, count: int, repeat: int) -> float:
    """Median of ``count / seconds`` over ``repeat`` timed runs (after one warm-up)."""
    fn()
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates)


def two_lists(rng: np.random.Generator) -> tuple[list[str], list[str]]:
    pool = [f"doc{i}" for i in rng.permutation(15)]
    return pool[:10], pool[5:15] if rng.random() < 0.5 else [pool[i] for i in rng.permutation(15)[:10]]


def python_cascade(grades: list[list[int]], click: list[float], stop: list[float]) -> list[list[bool]]:
    """A Lerot ``CascadeUserModel``-style user, one impression and one position at a time."""
    out = []
    for row in grades:
        clicks = [False] * len(row)
        for r, g in enumerate(row):
            if random.random() < click[g]:
                clicks[r] = True
                if random.random() < stop[g]:
                    break
        out.append(clicks)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from serpeval.online.clicks import MODELS, click_model
    from serpeval.online.interleaving import credit, interleave
    from serpeval.online.interleaving.batch import credit_batch, interleave_batch

    rng = np.random.default_rng(0)
    rows: list[tuple[str, str, float]] = []

    # -- serving path
    pairs = [two_lists(rng) for _ in range(2000)]
    for method in ("team_draft", "balanced", "probabilistic", "optimized"):
        gen = np.random.default_rng(1)
        rate = median_rate(lambda m=method, g=gen: [interleave([a, b], m, k=10, rng=g) for a, b in pairs],
                           len(pairs), args.repeat)
        rows.append(("serving: interleave() per call", method, rate))
    shown = [interleave([a, b], "team_draft", k=10, rng=i) for i, (a, b) in enumerate(pairs)]
    clicks = [sorted({int(x) for x in rng.integers(0, 10, 2)}) for _ in shown]
    rows.append(("serving: credit() per call", "team_draft",
                 median_rate(lambda: [credit(s, c) for s, c in zip(shown, clicks, strict=True)],
                             len(shown), args.repeat)))

    # -- batched path
    n = 200_000
    a = np.argsort(rng.random((n, 15)), axis=1)[:, :10]
    b = np.argsort(rng.random((n, 15)), axis=1)[:, :10]
    for method in ("team_draft", "balanced"):
        rows.append(("batched: interleave_batch", method,
                     median_rate(lambda m=method: interleave_batch(a, b, m, rng=2), n, args.repeat)))
    batch = interleave_batch(a, b, rng=2)
    batch_clicks = rng.random((n, 10)) < 0.2
    rows.append(("batched: credit_batch", "team_draft",
                 median_rate(lambda: credit_batch(batch, batch_clicks), n, args.repeat)))

    # -- click models
    m = 1_000_000
    grades = rng.integers(0, 5, size=(m, 10))
    for name in sorted(MODELS):
        model = click_model(name, 5)
        rows.append(("click model: sample() top-10 impressions", name,
                     median_rate(lambda mo=model: mo.sample(grades, rng=3), m, args.repeat)))
    small = grades[:20_000].tolist()
    nav = click_model("navigational", 5)
    rows.append(("reference: per-impression Python cascade loop", "navigational",
                 median_rate(lambda: python_cascade(small, list(nav.click), list(nav.stop)),
                             len(small), args.repeat)))

    # -- the simulator's Monte Carlo engine
    from serpeval.online.simulation import sensitivity as engine
    from serpeval.online.simulation.simulator import make_world, synthetic_pair

    qrels, run_a, run_b = synthetic_pair(0.01, n_queries=200, rng=0)
    world = make_world(qrels, run_a, run_b)
    tables = engine.build_tables(click_model("navigational", world.levels), world.a, world.b,
                                 world.grades, 1.0, False).for_sampling()
    grid = np.array([2, 125_000])
    sim_rng = np.random.default_rng(4)
    rows.append(("simulator: interleaving experiment impressions", "navigational",
                 median_rate(lambda: engine.simulate_interleaving(
                     tables, 125_000, 4, grid, 1, 0.05, 1, sim_rng, lambda: None), 500_000, args.repeat)))
    rows.append(("simulator: A/B experiment impressions (both arms)", "navigational",
                 median_rate(lambda: engine.simulate_ab(
                     tables, 125_000, 4, grid, {"CTR": 1, "abandonment": 1, "clicks@1": 1}, 0.05, 1,
                     sim_rng, lambda: None), 1_000_000, args.repeat)))

    lines = ["# Online speed (bench/bench_online.py)", "",
             f"Medians of {args.repeat} runs, one process, numpy {np.__version__}; two top-10 lists "
             "per impression.", "", "| what | method / model | per second |", "|---|---|---:|"]
    lines += [f"| {what} | {method} | {rate:,.0f} |" for what, method, rate in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results" / "online_speed.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
