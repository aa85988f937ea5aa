"""How many fewer impressions does interleaving need than an A/B test? Measured, with its spread.

Runs :func:`serpeval.online.simulation.simulator` (exact click-model expectations, no Monte Carlo
noise) over

* generated pairs whose nDCG@10 differ by 0.5%, 1%, 2% and 5% (:func:`synthetic_pair`, 200
  queries, 5 grades; one seed per gap, ``--full``: three), and
* the real run pairs in ``shared/data/trec`` (``$SERPEVAL_DATA/trec`` when set; Robust04
  bm25 vs bm25-rm3, Core18 title-rm3 vs desc-rm3, DL20-doc bm25 vs bm25rm3; the TREC
  judgments are the users' truth),

for each click model (navigational, informational, pbm; ``--full``: the seven presets) and
for three design comparisons:

* team draft vs A/B tests on every impression;
* team draft with ignore-shared vs triggered A/B tests (only impressions whose top 10
  differ, effect scaled back by the trigger rate);
* triggered team draft vs triggered A/B tests.

The ratio of a setting is impressions the A/B test needs / impressions interleaving needs
(80% power, alpha 0.05). A setting counts only when the interleaving design's true effect
points the way the offline nDCG@10 difference does, and, against an A/B metric, when that
metric does too: a ratio against a metric that moves the wrong way means nothing (counted as
excluded). "Best A/B" is the right-sign A/B metric (CTR, abandonment, clicks@1) needing the
fewest impressions. Probabilistic interleaving is not in the simulator (team draft only).

Writes ``bench/results/sensitivity.md`` (summary: median and IQR of the ratios per
comparison; every setting), ``bench/results/sensitivity.csv`` and
``bench/results/sensitivity.png`` (the ratios on a log axis); ``--full`` writes
``sensitivity_full.*``.

    python bench/sensitivity.py            # 3 click models, 4 generated + 3 real pairs (a few minutes)
    python bench/sensitivity.py --full     # 7 click models, 3 seeds per gap
    python bench/sensitivity.py --plots    # also redraw the power plots of the README (docs/)
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREC = Path(os.environ.get("SERPEVAL_DATA", ROOT.parent / "shared" / "data")) / "trec"
PAIRS = [
    ("Robust04 bm25 vs bm25-rm3", "robust04", "qrels.txt.gz", "bm25.run.gz", "bm25-rm3.run.gz"),
    ("Core18 title-rm3 vs desc-rm3", "core18", "qrels.txt", "title-rm3.run.gz", "desc-rm3.run.gz"),
    ("DL20-doc bm25 vs bm25rm3", "dl20-doc", "qrels.txt", "d_bm25.run.gz", "d_bm25rm3.run.gz"),
]
GAPS = (0.005, 0.01, 0.02, 0.05)
MODELS = ["navigational", "informational", "pbm"]
MODELS_FULL = ["perfect", "navigational", "informational", "cascade", "pbm", "dcm", "dbn"]
AB = ("CTR", "abandonment", "clicks@1")
#: (label, interleaving row, A/B rows)
COMPARISONS = [
    ("team draft vs A/B", "interleaving", AB),
    ("team draft ignore-shared vs triggered A/B", "interleaving (ignore shared)",
     tuple(f"{m} (triggered)" for m in AB)),
    ("triggered team draft vs triggered A/B", "interleaving (triggered)",
     tuple(f"{m} (triggered)" for m in AB)),
]


def ratios(res, il_metric: str, ab_metrics: tuple[str, ...]) -> dict[str, float | str]:
    """The setting's ratio against CTR and against the best right-sign A/B metric, or why not."""
    il = res[il_metric]
    if il.agrees is not True or not math.isfinite(il.required):
        reason = "interleaving wrong sign" if il.agrees is False else "interleaving sees no difference"
        return {"vs CTR": reason, "vs best A/B": reason, "best": "-"}
    right = {m: res[m].required for m in ab_metrics if res[m].agrees is True and math.isfinite(res[m].required)}
    ctr = ab_metrics[0]
    out: dict[str, float | str] = {
        "vs CTR": right[ctr] / il.required if ctr in right else "CTR wrong sign or no difference"}
    if right:
        best = min(right, key=right.get)
        out["vs best A/B"], out["best"] = right[best] / il.required, best
    else:
        out["vs best A/B"], out["best"] = "no A/B metric with the right sign", "-"
    return out


def summary(values: list[float]) -> dict[str, str]:
    if not values:
        return {"n": "0", "median": "-", "IQR": "-", "range": "-"}
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return {"n": str(len(values)), "median": f"{med:.3g}x", "IQR": f"{q1:.3g}x - {q3:.3g}x",
            "range": f"{min(values):.3g}x - {max(values):.3g}x"}


def markdown(rows: list[dict[str, str]]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def plot(settings: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    labels, data = [], []
    for label, _, _ in COMPARISONS:
        for against in ("vs CTR", "vs best A/B"):
            values = [s[against] for s in settings if s["comparison"] == label and isinstance(s[against], float)]
            labels.append(f"{label}\n{against} (n={len(values)})")
            data.append(values or [np.nan])
    try:
        ax.boxplot(data, orientation="horizontal", whis=(0, 100))
    except TypeError:  # matplotlib < 3.10
        ax.boxplot(data, vert=False, whis=(0, 100))
    for i, values in enumerate(data, start=1):
        ax.scatter(values, np.full(len(values), i) + np.random.default_rng(i).uniform(-0.15, 0.15, len(values)),
                   s=9, alpha=0.6)
    ax.set_yticks(range(1, len(labels) + 1), labels, fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("impressions the A/B test needs / impressions interleaving needs (log scale)")
    ax.grid(alpha=0.3, which="both", axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="7 click models, 3 seeds per generated gap")
    parser.add_argument("--plots", action="store_true",
                        help="also redraw docs/online-power-*.png (power vs impressions with simulated "
                             "experiments, navigational users: the generated 1%% pair and Robust04)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from serpeval.online.simulation.simulator import make_world, simulate, synthetic_pair

    models = MODELS_FULL if args.full else MODELS
    seeds = 3 if args.full else 1
    started = time.perf_counter()
    worlds = []
    for gap in GAPS:
        for seed in range(seeds):
            qrels, baseline, candidate = synthetic_pair(gap, n_queries=200, rng=seed)
            worlds.append((f"generated +{gap:.1%} (seed {seed})", "generated", make_world(qrels, baseline, candidate)))
    for label, folder, qrels, a, b in PAIRS:
        base = TREC / folder
        if not base.exists():
            print(f"skipping {label}: {base} not found", file=sys.stderr)
            continue
        worlds.append((label, "real", make_world(base / qrels, base / "runs" / a, base / "runs" / b)))

    settings = []
    for label, kind, world in worlds:
        for model in models:
            t = time.perf_counter()
            # exact numbers only: no Monte Carlo, and one bootstrap resample (CIs unused here)
            res = simulate(world=world, click_model=model, mc_impressions=0, bootstrap=1,
                           rng=1, progress=False)
            delta = world.ndcg_b.mean() / world.ndcg_a.mean() - 1
            for comparison, il_metric, ab_metrics in COMPARISONS:
                settings.append({"pair": label, "kind": kind, "click model": model, "nDCG@10 B/A - 1": delta,
                                 "comparison": comparison, "interleaving needs": res[il_metric].required,
                                 **ratios(res, il_metric, ab_metrics)})
            print(f"{label:36s} {model:14s} ({time.perf_counter() - t:.1f}s)", flush=True)

    out = HERE / "results"
    stem = "sensitivity_full" if args.full else "sensitivity"
    with open(out / f"{stem}.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(settings[0]))
        writer.writeheader()
        writer.writerows(settings)
    rows = []
    for comparison, _, _ in COMPARISONS:
        for kind in ("generated", "real", "all"):
            chosen = [s for s in settings if s["comparison"] == comparison and kind in ("all", s["kind"])]
            for against in ("vs CTR", "vs best A/B"):
                values = [s[against] for s in chosen if isinstance(s[against], float)]
                rows.append({"comparison": comparison, "pairs": kind, "against": against,
                             **summary(values), "excluded": str(len(chosen) - len(values))})
    every = [{"pair": s["pair"], "click model": s["click model"], "comparison": s["comparison"],
              "interleaving needs": f"{s['interleaving needs']:,.0f}" if math.isfinite(s["interleaving needs"])
              else "inf",
              "vs CTR": f"{s['vs CTR']:.3g}x" if isinstance(s["vs CTR"], float) else s["vs CTR"],
              "vs best A/B": f"{s['vs best A/B']:.3g}x" if isinstance(s["vs best A/B"], float) else s["vs best A/B"],
              "best A/B": s["best"]} for s in settings]
    plot(settings, out / f"{stem}.png")
    text = ["# Interleaving vs A/B sensitivity (bench/sensitivity.py)", "",
            f"{'Full' if args.full else 'Default (short)'} run: click models {', '.join(models)}; generated gaps "
            f"{', '.join(f'{g:.1%}' for g in GAPS)} ({seeds} seed(s) each, 200 queries); real pairs: "
            f"{', '.join(p[0] for p in PAIRS)}. Top 10; users issue 4 queries each with an attractiveness "
            "logit shift ~ N(0, 1); 80% power at alpha 0.05; exact click-model expectations. A ratio = "
            "impressions the A/B test needs / impressions interleaving needs; settings where the "
            "interleaving design or the A/B metric points against the offline nDCG@10 difference are "
            f"excluded (counted). Total time {time.perf_counter() - started:.0f} s.", "",
            "## Summary: median and interquartile range of the ratios", "", markdown(rows), "",
            f"Plot: bench/results/{stem}.png; every setting: bench/results/{stem}.csv.", "",
            "## Every setting", "", markdown(every)]
    if args.plots:
        for label, kind, world in worlds:
            if label == "generated +1.0% (seed 0)" or label.startswith("Robust04"):
                res = simulate(world=world, click_model="navigational", mc_impressions=40_000_000, rng=2,
                               progress=False)
                name = "online-power-synthetic.png" if kind == "generated" else "online-power-robust04.png"
                res.plot(ROOT / "docs" / name, title=f"{label}: navigational users")
    (out / f"{stem}.md").write_text("\n".join(text), encoding="utf-8")
    print(f"wrote {out / stem}.md, .csv and .png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
