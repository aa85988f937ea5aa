"""A/B calibration: 2,000 A/A tests reject at alpha; a planned effect is found at the planned power.

1. **A/A**: one generated log holds ``--experiments`` experiments whose two arms are
   identical (users split at random); every experiment is analysed as its own A/B test in
   one DuckDB query (:func:`serpeval.online.experiments.calibration.rejection_rates`). A calibrated
   test rejects about 5% at alpha = 0.05. The same logs analysed as if impressions were
   independent (the mistake the delta method prevents) show what clustering is worth.
2. **Power**: the treatment shifts every result's attractiveness by ``--effect`` (logit);
   its true CTR effect comes exactly from the click model
   (:meth:`~serpeval.online.simulation.generate.LogGenerator.expected`), the per-unit variance from
   an independent pilot, and :func:`~serpeval.stats.power.sample_size` plans the users
   per arm for 80% power. ``--power-experiments`` experiments of that size are generated:
   the share that rejects should be about 80%.
3. **Peeking**: the A/A experiments replayed over 14 daily looks: stopping at the first
   fixed-horizon p < 0.05 against the always-valid (mSPRT) p-value.

    python bench/ab_calibration.py --experiments 2000 --users 1000

Writes ``bench/results/ab_calibration.md``. The fast version runs in the test suite
(``tests/online/experiments/test_calibration.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
METRICS = ["ctr", "abandonment", "clicks_at_1", "mrr"]


def aa(experiments: int, users: int, seed: int) -> tuple[list[dict], float, int]:
    from serpeval.online.experiments.calibration import rejection_rates
    from serpeval.online.simulation.generate import LogGenerator

    logs = LogGenerator(experiments * users, experiments=experiments).generate(rng=seed)
    start = time.perf_counter()
    rows = rejection_rates(logs.impressions, metrics=METRICS)
    return rows, time.perf_counter() - start, logs.impressions.num_rows


def power_check(experiments: int, effect: float, seed: int) -> dict:
    from serpeval.online.experiments import plan_ab
    from serpeval.online.experiments.calibration import rejection_rates
    from serpeval.online.simulation.generate import LogGenerator
    from serpeval.stats.power import sample_size

    world = LogGenerator(2, effect=effect)
    truth = world.expected("treatment")["ctr"] - world.expected("control")["ctr"]
    pilot = plan_ab(
        LogGenerator(50_000).generate(rng=seed + 1).impressions, metrics="ctr"
    ).to_dicts()[0]
    per_arm = round(sample_size(truth, pilot["sd_per_unit"] ** 2, power=0.8))
    logs = LogGenerator(experiments * 2 * per_arm, experiments=experiments, effect=effect).generate(
        rng=seed
    )
    row = rejection_rates(logs.impressions, metrics="ctr", naive=False)[0]
    return {**row, "truth": truth, "planned_per_arm": per_arm, "baseline": pilot["baseline"]}


def peeking(experiments: int, users: int, seed: int) -> dict:
    """Daily looks over the A/A log: any fixed-horizon p < .05 vs any always-valid p < .05."""
    import ibis

    from serpeval.online.experiments.analysis import compare_metric
    from serpeval.online.logs.features import ALL_EXPERIMENTS, prepare
    from serpeval.online.logs.metrics import get_metric
    from serpeval.online.logs.moments import fetch_moments, unit_table
    from serpeval.online.logs.sources import read_logs
    from serpeval.online.simulation.generate import LogGenerator
    from serpeval.stats.sequential import always_valid

    logs = LogGenerator(experiments * users, experiments=experiments).generate(rng=seed)
    f = prepare(read_logs(logs.impressions), ALL_EXPERIMENTS).features
    day = (
        (f.ts.epoch_seconds() - int(np.datetime64("2026-01-05", "s").astype(int))) // 86400 + 1
    ).cast("int64")
    per_day = unit_table(f.mutate(day=day), {"impressions", "clicks"}, keys=["experiment", "day"])
    days = per_day.select(k="day").distinct()
    joined = per_day.inner_join(days, per_day.day <= days.k)
    cumulative = (
        joined.group_by(["unit", "experiment", "k"])
        .aggregate(
            variant=joined.variant.min(),
            impressions=joined.impressions.sum(),
            clicks=joined.clicks.sum(),
        )
        .mutate(mixed=ibis.literal(False))
    )
    keys, m, _ = fetch_moments(
        cumulative,
        {"impressions", "clicks"},
        {("clicks", "impressions")},
        by=("experiment", "k", "variant"),
    )
    exp = np.array([k["experiment"] for k in keys])
    look = np.array([k["k"] for k in keys])
    is_c = np.array([k["variant"] == "control" for k in keys])
    order_c = np.lexsort((look[is_c], exp[is_c]))
    order_t = np.lexsort((look[~is_c], exp[~is_c]))
    c, t = np.flatnonzero(is_c)[order_c], np.flatnonzero(~is_c)[order_t]
    effect, _, _ = compare_metric(
        get_metric("ctr"),
        m.take(c),
        m.take(t),
        alpha=0.05,
        use_t=False,
        per_impression=False,
        with_pre=False,
    )
    n_looks = int(look.max())
    shape = (len(c) // n_looks, n_looks)
    n = (m.n[c] + m.n[t]).reshape(shape)
    seq = always_valid(effect.effect.reshape(shape), (effect.se**2).reshape(shape), n, alpha=0.05)
    fixed = np.asarray(effect.p_value).reshape(shape)
    return {
        "experiments": shape[0],
        "looks": n_looks,
        "peeking": float(np.mean((fixed < 0.05).any(axis=1))),
        "final_look": float(np.mean(fixed[:, -1] < 0.05)),
        "always_valid": float(np.mean((seq.p_value < 0.05).any(axis=1))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2000)
    parser.add_argument(
        "--users", type=int, default=1000, help="users per A/A experiment (both arms)"
    )
    parser.add_argument("--effect", type=float, default=0.2)
    parser.add_argument("--power-experiments", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "ab_calibration.md")
    args = parser.parse_args()

    rows, seconds, impressions = aa(args.experiments, args.users, args.seed)
    print(f"A/A done ({seconds:.1f} s)", file=sys.stderr)
    powered = power_check(args.power_experiments, args.effect, args.seed + 7)
    print("power done", file=sys.stderr)
    peek = peeking(args.experiments // 4, args.users, args.seed + 13)
    lines = [
        "# A/B calibration",
        "",
        f"`python bench/ab_calibration.py --experiments {args.experiments} --users {args.users} "
        f"--effect {args.effect} --power-experiments {args.power_experiments}` "
        f"on {os.cpu_count()} cores.",
        "",
        f"## A/A: {args.experiments:,} experiments, {args.users:,} users each "
        f"({impressions:,} impressions), alpha = 0.05",
        "",
        f"All {args.experiments:,} tests per metric in one DuckDB query plus vectorized "
        f"statistics: {seconds:.1f} s.",
        "",
        "| metric | analysis | test | rejections | rate | 95% CI |",
        "|:---|:---|:---|---:|---:|:---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['metric']} | {r['analysis']} | {r['test']} | {r['rejections']:,} / "
            f"{r['experiments']:,} | {r['rate']:.2%} | [{r['ci_lower']:.2%}, {r['ci_upper']:.2%}] |"
        )
    lines += [
        "",
        f"## Power: effect {args.effect} (logit) = CTR {powered['baseline']:.4f} "
        f"-> +{powered['truth']:.5f} (exact), planned for 80%",
        "",
        f"Planned {powered['planned_per_arm']:,} users per arm from a 50,000-user pilot; "
        f"{powered['experiments']:,} experiments (mean {powered['units_per_arm']:.0f} users "
        f"per arm) rejected in **{powered['rate']:.1%}** (95% CI [{powered['ci_lower']:.1%}, "
        f"{powered['ci_upper']:.1%}]); mean estimated effect {powered['mean_effect']:.5f} "
        f"(true {powered['truth']:.5f}).",
        "",
        f"## Peeking: {peek['experiments']:,} A/A experiments, {peek['looks']} daily looks, CTR",
        "",
        f"- fixed-horizon test at the last look only: {peek['final_look']:.1%} rejected;",
        f"- stopping at the first daily fixed-horizon p < 0.05: {peek['peeking']:.1%} rejected;",
        f"- stopping at the first always-valid (mSPRT) p < 0.05: "
        f"{peek['always_valid']:.1%} rejected.",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
