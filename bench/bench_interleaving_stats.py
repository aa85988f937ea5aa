"""Speed of the interleaving statistics behind ``analyze_interleaving_logs``, before and after.

The engine returns per-unit (wins, losses, impressions) patterns; the statistics then run
in Python. This script times that step on a generated interleaving log (``--users`` users,
``--resamples`` bootstrap resamples):

- **before**: the code as of ``--before`` (default ``91a3b13``, read with ``git show``): the
  patterns expanded into one outcome per impression (``_expand``), then ``analyze_outcomes``
  (per-unit counts by ``bincount``, bootstrap with multinomial weights);
- **after**: ``analyze_counts`` on the per-unit count arrays (bootstrap: multinomial draws
  over the distinct per-unit count patterns, or, when nearly every unit is distinct, a
  matrix of drawn unit indices; both forced here in turn); and, for reference, the current
  ``analyze_outcomes`` on the same expanded impressions.

It checks that the two current paths give identical results (every field, CI included), and
prints the old and new CIs side by side: both are the same bootstrap (how often each unit is
drawn is Multinomial(m, 1/m) either way) with different random draws, so they differ by
Monte Carlo error only. Also timed: the whole ``analyze_interleaving_logs`` (DuckDB) now.

    python bench/bench_interleaving_stats.py --repeat 5

Medians of ``--repeat`` runs (the machine is shared). Writes
``bench/results/interleaving_stats.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))


def old_module(rev: str, path: str, name: str) -> ModuleType:
    """A module of the repository as of ``rev`` (``git show``), imported under ``name``."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def patterns(table: Any) -> tuple[np.ndarray, ...]:
    """Distinct per-user (wins, losses, impressions) and how many users have each, sorted:
    the table the engine hands to the statistics (computed here with NumPy from the lists)."""
    import pyarrow.compute as pc

    clicks = table.column("clicks").combine_chunks()
    teams = table.column("teams").combine_chunks()
    owner = pc.list_parent_indices(clicks).to_numpy()
    position = pc.list_flatten(clicks).to_numpy().astype(np.int64)
    offsets = teams.offsets.to_numpy()
    team = pc.list_flatten(teams).to_numpy(zero_copy_only=False)[offsets[owner] + position - 1]
    rows = table.num_rows
    margin = np.bincount(owner, weights=(team == "A").astype(float) - (team == "B"), minlength=rows)
    _, user = np.unique(table.column("user_id").to_numpy(), return_inverse=True)
    per_user = np.stack(
        [
            np.bincount(user, weights=margin > 0),
            np.bincount(user, weights=margin < 0),
            np.bincount(user),
        ],
        axis=1,
    ).astype(np.int64)
    unique, counts = np.unique(per_user, axis=0, return_counts=True)
    return unique[:, 0], unique[:, 1], unique[:, 2], counts.astype(np.int64)


def median_seconds(fn: Any, repeat: int) -> tuple[float, Any]:
    """Median wall time of ``fn()`` over ``repeat`` runs, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--resamples", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default="91a3b13", help="git revision of the old code")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "interleaving_stats.md")
    args = parser.parse_args()

    from serpeval.online.experiments import analyze_interleaving_logs
    from serpeval.online.interleaving.analysis import analyze_counts, analyze_outcomes
    from serpeval.online.simulation.generate import LogGenerator
    from serpeval.stats import one_sample as stats

    old_stats = old_module(args.before, "src/serpeval/online/stats.py", "old_stats")
    old_interleaving = old_module(
        args.before, "src/serpeval/online/ab/interleaving.py", "old_interleaving"
    )

    logs = LogGenerator(args.users, interleaving=True, noise_b=0.8).generate(rng=1)
    impressions = logs.impressions.num_rows
    w, lo, n, c = patterns(logs.impressions)
    options = {"n_resamples": args.resamples, "rng": 0}

    def before() -> Any:
        outcomes, units = old_interleaving._expand(w, lo, n, c)
        return old_stats.analyze_outcomes(outcomes, units, **options)

    def after_counts() -> Any:
        return analyze_counts(
            np.repeat(w, c), np.repeat(lo, c), np.repeat(n - w - lo, c), **options
        )

    def after_outcomes() -> Any:
        outcomes, units = old_interleaving._expand(w, lo, n, c)
        return analyze_outcomes(outcomes, units, **options)

    def after_unit_draws() -> Any:
        ratio = stats.PATTERN_RATIO
        stats.PATTERN_RATIO = 10**12  # never draw by pattern
        try:
            return after_counts()
        finally:
            stats.PATTERN_RATIO = ratio

    rows = []
    for label, fn in (
        ("before: expand + analyze_outcomes (multinomial weights)", before),
        ("after: analyze_counts (per-unit counts)", after_counts),
        ("after: expand + analyze_outcomes (same bootstrap)", after_outcomes),
        ("after: analyze_counts, unit-index draws forced", after_unit_draws),
    ):
        seconds, result = median_seconds(fn, args.repeat)
        rows.append((label, seconds, result))
        print(
            f"{label}: {seconds:.3f} s  CI [{result.ci_low:+.6f}, {result.ci_high:+.6f}]",
            flush=True,
        )
    old, new, new_outcomes, _ = (r[2] for r in rows)
    assert new == new_outcomes, "analyze_counts and analyze_outcomes differ"
    # The old code's Δ and preference were A - B; today's are B - A (positive: B preferred).
    same_point = all(
        getattr(old, k) == getattr(new, k)
        for k in (
            "impressions",
            "wins_a",
            "wins_b",
            "ties",
            "p_value",
            "units",
            "prefer_a",
            "prefer_b",
            "preference_p_value",
        )
    ) and (-old.delta, -old.preference) == (new.delta, new.preference)
    end_to_end, report = median_seconds(
        lambda: analyze_interleaving_logs(logs.impressions, n_resamples=args.resamples, rng=0),
        args.repeat,
    )
    assert report.analysis == new, "the log analysis is not analyze_counts"
    final = report.over_time_rows()[-1]

    lines = [
        "# Interleaving statistics from logs (bench/bench_interleaving_stats.py)",
        "",
        f"{args.users:,} users, {impressions:,} impressions (generated team-draft log), "
        f"{args.resamples:,} bootstrap resamples over users; medians of {args.repeat} runs, "
        f"numpy {np.__version__}, {len(w):,} distinct (wins, losses, impressions) patterns "
        "from the engine.",
        "",
        "| statistics step | seconds | speed-up | 95% CI of Δ (B - A; the old code's A - B negated) |",
        "|---|---:|---:|---|",
    ]
    for label, seconds, result in rows:
        low, high = (-result.ci_high, -result.ci_low) if result is old else (result.ci_low, result.ci_high)
        lines.append(f"| {label} | {seconds:.3f} | {rows[0][1] / seconds:.1f}x | [{low:+.6f}, {high:+.6f}] |")
    lines += [
        "",
        f"- Identical results, CI included, from `analyze_counts` and `analyze_outcomes` "
        f"(same seed): yes. Counts, Δ = {new.delta:+.6f}, sign test and per-user preference "
        f"identical to the old code: {'yes' if same_point else 'NO'}.",
        "- The old and new CIs are the same bootstrap (each unit drawn Multinomial(m, 1/m) "
        "times) with other random draws (multinomial over the distinct count patterns, or a "
        "unit-index matrix, instead of `rng.multinomial` over every unit), so they differ by "
        "Monte Carlo error only.",
        f"- Whole `analyze_interleaving_logs` on DuckDB now (engine queries, statistics, "
        f"checks and the daily series): {end_to_end:.2f} s. Its last day: Δ = "
        f"{final['delta']:+.6f}, delta-method 95% CI [{final['ci_low']:+.6f}, "
        f"{final['ci_high']:+.6f}] (bootstrap: [{new.ci_low:+.6f}, {new.ci_high:+.6f}]).",
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
