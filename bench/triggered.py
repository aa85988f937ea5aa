"""How much triggered analysis narrows an A/B test (the SE ratio the closing note of issue 20
quotes): generated logs where ranker B differs from A on 30% of the queries, analysed on all
impressions and on the triggered ones (``serpeval.online.experiments.analyze_ab_triggered``, DuckDB).

    python bench/triggered.py [--users N] [--seeds K]

Prints, per metric, the median over seeds of ``se_ratio`` = scaled triggered SE / untriggered
SE (below 1: triggering reduced the variance) and the trigger rate; writes
bench/results/triggered.md.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from serpeval.online.experiments import analyze_ab_triggered
from serpeval.online.simulation.generate import LogGenerator

METRICS = ["ctr", "clicks_per_user"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=6_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--changed-queries", type=float, default=0.3)
    args = parser.parse_args()
    ratios: dict[str, list[float]] = {m: [] for m in METRICS}
    rates = []
    for seed in range(args.seeds):
        logs = LogGenerator(args.users, noise_b=0.5, changed_queries=args.changed_queries).generate(rng=seed)
        result = analyze_ab_triggered(logs.impressions, metrics=METRICS)
        rates.append(result.trigger_rate)
        for row in result.to_dicts():
            ratios[row["metric"]].append(row["se_ratio"])
    lines = [f"# Triggered A/B analysis: SE ratio (`python bench/triggered.py --users {args.users} "
             f"--seeds {args.seeds}`)", "",
             f"Generated logs, {args.users:,} users, B differs from A on {args.changed_queries:.0%} of the "
             f"queries; trigger rate (median over seeds) {statistics.median(rates):.1%}.", "",
             "| metric | median se_ratio | min | max |", "| --- | ---: | ---: | ---: |"]
    for metric, values in ratios.items():
        lines.append(f"| {metric} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(__file__).parent / "results" / "triggered.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
