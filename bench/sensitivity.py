"""How much more sensitive is interleaving than an A/B test? Measured, not asserted.

For the real run pairs in ``shared/data/trec`` (Robust04 BM25 vs BM25+RM3, Core18 title+RM3
vs description+RM3, DL20-doc BM25 vs BM25+RM3) and for generated pairs whose nDCG@10 differ
by about 1% (several seeds), under each click model, runs :func:`serpeval.online.clicks.simulate`:
impressions needed at 80% power / alpha 0.05 by team draft interleaving and by A/B tests on
CTR, abandonment and clicks@1 (exact click-model expectations, bootstrap CI over queries),
the ratio A/B / interleaving, agreement with the offline nDCG@10 sign, and the Monte Carlo
check (simulated experiments). Writes ``bench/results/sensitivity.md`` and the power plots
``docs/online-power-*.png``.

    python bench/sensitivity.py                 # everything (~10 minutes on 2 cores)
    python bench/sensitivity.py --quick         # fewer models and seeds, smaller MC budget
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREC = ROOT.parent / "shared" / "data" / "trec"
PAIRS = [
    ("Robust04 bm25 vs bm25-rm3", "robust04", "qrels.txt.gz", "bm25.run.gz", "bm25-rm3.run.gz"),
    ("Core18 title-rm3 vs desc-rm3", "core18", "qrels.txt", "title-rm3.run.gz", "desc-rm3.run.gz"),
    ("DL20-doc bm25 vs bm25rm3", "dl20-doc", "qrels.txt", "d_bm25.run.gz", "d_bm25rm3.run.gz"),
]
MODELS = ["perfect", "navigational", "informational", "cascade", "pbm", "dcm", "dbn"]


def _ratio(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "inf" if value is not None and value > 0 else "-"
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def _count(value: float | None) -> str:
    if value is None or not math.isfinite(value) or value > 1e15:
        return "inf"
    return f"{math.ceil(value):,}"


def _agree(flag: bool | None) -> str:
    return "=" if flag is None else ("yes" if flag else "NO")


def row(label: str, model: str, res) -> dict[str, str]:
    il = res["interleaving"]
    out = {"pair": label, "click model": model,
           "dnDCG@10 (B-A)": f"{res.offline['delta']:+.4f} ({res.offline['relative']:+.1%})",
           "interleaving: impressions": _count(il.required),
           "MC": _count(il.mc_required) if il.mc_required else "-",
           "agrees": _agree(il.agrees)}
    for metric in ("CTR", "abandonment", "clicks@1"):
        m = res[metric]
        out[f"{metric}: ratio"] = f"{_ratio(m.ratio)} [{_ratio(m.ratio_low)}, {_ratio(m.ratio_high)}]"
        out[f"{metric}: agrees"] = _agree(m.agrees)
    return out


def markdown(rows: list[dict[str, str]]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=5, help="generated pairs (default 5)")
    parser.add_argument("--mc", type=int, default=6_000_000, help="Monte Carlo impressions per run")
    parser.add_argument("--plot-mc", type=int, default=40_000_000, help="MC impressions for the plots")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from serpeval.online.clicks.simulate import make_world, simulate, synthetic_pair

    models = ["navigational", "informational", "pbm"] if args.quick else MODELS
    seeds = 2 if args.quick else args.seeds
    mc = 1_000_000 if args.quick else args.mc
    started = time.perf_counter()
    worlds = []
    for label, folder, qrels, a, b in PAIRS:
        base = TREC / folder
        if not base.exists():
            print(f"skipping {label}: {base} not found", file=sys.stderr)
            continue
        worlds.append((label, make_world(base / qrels, base / "runs" / a, base / "runs" / b)))
    synthetic = []
    for seed in range(seeds):
        qrels, baseline, candidate = synthetic_pair(0.01, n_queries=200, rng=seed)
        # A is the baseline, B the candidate built 1% better: a method "agrees" when it prefers B.
        synthetic.append((f"generated +1% (seed {seed})", make_world(qrels, baseline, candidate)))

    rows, ratios = [], {}
    for label, world in [*worlds, *synthetic]:
        for model in models:
            t = time.perf_counter()
            res = simulate(world=world, click_model=model, mc_impressions=mc, rng=1, progress=False)
            rows.append(row(label, model, res))
            ratios.setdefault((label.split(" (seed")[0], model), []).append(res.ratio("CTR"))
            print(f"{label:32s} {model:14s} IL {_count(res['interleaving'].required):>12s}  "
                  f"CTR x{_ratio(res.ratio('CTR')):>8s}  abandonment x{_ratio(res.ratio('abandonment')):>8s}  "
                  f"clicks@1 x{_ratio(res.ratio('clicks@1')):>8s}  ({time.perf_counter() - t:.1f}s)",
                  flush=True)
    # Independent, identical impressions (no user heterogeneity, one query per user).
    plain = []
    for label, world in synthetic[:1]:
        for model in models:
            res = simulate(world=world, click_model=model, user_sd=0.0, impressions_per_user=1,
                           mc_impressions=0, rng=1)
            plain.append(row(label + ", iid impressions", model, res))
    summary = []
    for (label, model), values in ratios.items():
        if label.startswith("generated"):
            finite = [v for v in values if math.isfinite(v)]
            summary.append({"click model": model, "seeds": str(len(values)),
                            "median CTR ratio": _ratio(statistics.median(finite)) if finite else "-",
                            "min": _ratio(min(finite)) if finite else "-",
                            "max": _ratio(max(finite)) if finite else "-"})

    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    plots = []
    for label, world in [synthetic[0], *worlds[:1]]:
        res = simulate(world=world, click_model="navigational", mc_impressions=args.plot_mc // (4 if args.quick else 1),
                       rng=2, progress=False)
        name = "online-power-synthetic.png" if label.startswith("generated") else "online-power-robust04.png"
        res.plot(docs / name, title=f"{label}: navigational users")
        plots.append(name)

    text = ["# Interleaving vs A/B sensitivity (bench/sensitivity.py)", "",
            f"Settings: top 10, team draft interleaving, users issue 4 queries each with an "
            f"attractiveness logit shift ~ N(0, 1); alpha 0.05, power 0.8; ratios = impressions an "
            f"A/B test needs / impressions interleaving needs, [95% bootstrap CI over queries]; "
            f"'agrees' = the method's true effect has the sign of the offline nDCG@10 difference "
            f"('=' no difference at all); MC = impressions at which simulated experiments "
            f"({mc:,} impressions budget per row) reached 80% power. Total time "
            f"{time.perf_counter() - started:.0f} s.", "",
            markdown(rows), "", "## Generated 1% pairs: CTR ratio across seeds", "",
            markdown(summary), "", "## Independent identical impressions (seed 0)", "",
            markdown(plain), "", "Plots: " + ", ".join(f"docs/{p}" for p in plots), ""]
    out = HERE / "results" / ("sensitivity_quick.md" if args.quick else "sensitivity.md")
    out.write_text("\n".join(text), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
