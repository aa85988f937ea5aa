"""Counterfactual estimators against the simulator's truth: bias, CI coverage, refusals, signs.

For each setting (a pool of queries with true grades: generated, or TREC DL 2020 documents
with the bm25 and bm25+RM3 runs; a click model), one probabilistic interleaving of A and B
is logged ``--reps`` times with fresh seeds (``--impressions`` searches by users with 5
searches each and a per-user logit shift N(0, 0.5)), and every candidate is estimated from
each log with :func:`serpeval.online.counterfactual.counterfactual` (metric: clicks on the
top ``--k``). The truth: each candidate's exact expected clicks from the click model
(quadrature over users), and its probabilistic-interleaving outcome against A from a
2-million-impression on-policy simulation.

Reported per estimator (over candidates and settings, estimates that were not refused):
coverage of the value's interval and of the effect's (against A), mean bias with its Monte
Carlo error, share refused; and the sign of the effect where |true effect| > 2 SE (the
effect's own standard error, from its paired interval, averaged over the replications).

    python bench/bench_counterfactual.py --reps 500   # ~20-40 min on 2 busy cores
    python bench/bench_counterfactual.py --reps 50 --quick

Writes bench/results/counterfactual.md.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from serpeval.online.counterfactual import counterfactual
from serpeval.online.simulation.counterfactual import (
    Pool,
    by_grade,
    perturbed,
    pool_from_runs,
    simulate_log,
    synthetic_pool,
    true_interleaved,
    true_value,
)

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "trec"
USER_SD = 0.5


def synthetic() -> Pool:
    pool = synthetic_pool(100, k=5, noises={"A": 1.5, "B": 1.0, "far": 0.3}, rng=11)
    pool = by_grade(pool, ("A", "B"), "union-by-grade", noise=0.7, rng=12)
    pool = by_grade(pool, ("A", "B"), "union-noisy", noise=2.5, rng=13)
    return perturbed(pool, "B", "B-swapped", swaps=1, rng=14)


def dl20() -> Pool | None:
    folder = DATA / "dl20-doc"
    if not folder.exists():
        return None
    from serpeval.io import read_run
    from serpeval.online.counterfactual.api import top_k_lists

    a = read_run(folder / "runs" / "d_bm25.run.gz")
    deep = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in top_k_lists(a, 20).items()}  # reversed
    pool = pool_from_runs(folder / "qrels.txt", {"A": a, "B": read_run(folder / "runs" / "d_bm25rm3.run.gz"),
                                                 "A-deep": deep}, k=5)
    pool = by_grade(pool, ("A", "B"), "union-by-grade", noise=0.7, rng=22)
    pool = perturbed(pool, "A", "A-swapped", swaps=2, rng=23)
    return perturbed(pool, "B", "B-swapped", swaps=1, rng=24)


def run(reps: int, impressions: int, k: int, models: list[str], quick: bool,
        estimators: list[str] | None = None, generated_only: bool = False) -> str:
    settings = [("generated", synthetic())]
    real = None if generated_only else dl20()
    if real is not None:
        settings.append(("dl20-doc bm25 / bm25+rm3", real))
    rows: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    per_setting: list[str] = []
    sign_total = defaultdict(int)
    sign_right = defaultdict(int)
    started = time.time()
    for label, pool in settings:
        candidates = [n for n in pool.rankers if n != "A"] + ["A"]
        lists = {n: pool.lists(n) for n in candidates}
        for model in models:
            truth = {n: true_value(pool, n, model, user_sd=USER_SD, k=k) for n in candidates}
            truth_il = {n: true_interleaved(pool, n, "A", model, n_impressions=200_000 if quick else 2_000_000,
                                            user_sd=USER_SD, k=k, rng=7)[0] for n in candidates}
            collected: dict[tuple[str, str], list[Any]] = defaultdict(list)
            for rep in range(reps):
                log = simulate_log(pool, impressions, model, user_sd=USER_SD, rng=np.random.default_rng([rep, 99]))
                res = counterfactual(log, lists, k=k, estimators=estimators)
                for e in res.estimates:
                    collected[(e.candidate, e.estimator)].append(e)
            for (cand, est), items in collected.items():
                comparison = est == "interleaved"
                t_value = truth_il[cand] if comparison else truth[cand]
                t_effect = truth_il[cand] if comparison else truth[cand] - truth["A"]
                got = [e for e in items if e.refused is None]
                r = rows[f"{est} | {model}"]
                r["n"].append(len(items))
                r["refused"].append(len(items) - len(got))
                if cand == "A-deep" or cand == "far":
                    r["thin_refused"].append(len(items) - len(got))
                    r["thin_n"].append(len(items))
                if not got:
                    continue
                values = np.array([e.value for e in got])
                cover = np.mean([e.low <= t_value <= e.high for e in got])
                r["covered"].append(cover * len(got))
                r["estimated"].append(len(got))
                if cand != "A" or comparison:
                    r["e_covered"].append(np.sum([e.effect_low <= t_effect <= e.effect_high for e in got]))
                    r["e_estimated"].append(len(got))
                bias = values.mean() - t_value
                mc = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
                se = float(np.mean([(e.effect_high - e.effect_low) / (2 * 1.959963984540054) for e in got]))
                per_setting.append(
                    f"| {label} | {model} | {cand} | {est} | {t_value:.4f} | {bias:+.4f} ± {mc:.4f} | "
                    f"{cover:.1%} | {t_effect:+.4f} | {se:.4f} | {len(items) - len(got)}/{len(items)} |")
                if cand != "A" and abs(t_effect) > 2 * se:
                    sign_total[f"{est} | {model}"] += len(got)
                    sign_right[f"{est} | {model}"] += int(np.sum(np.sign([e.effect for e in got]) == np.sign(t_effect)))
            print(f"{label} / {model}: done ({time.time() - started:.0f} s)", flush=True)
    out = ["# Counterfactual estimators against the simulator's truth", "",
           f"`python bench/bench_counterfactual.py --reps {reps} --impressions {impressions} --k {k}"
           f"{' --quick' if quick else ''}{' --estimators ' + ','.join(estimators) if estimators else ''}"
           f"{' --generated-only' if generated_only else ''}`: {reps} seeded logs per setting and click model, "
           f"each a probabilistic interleaving (tau = 3) of A and B over {impressions:,} searches (5 per user, "
           f"user logit shift N(0, {USER_SD})); metric: clicks on the top {k}; 95% cluster-robust intervals "
           "over users. "
           f"Click models: {', '.join(models)}. Settings: generated (100 queries, pool of 30 graded documents, "
           "A and B rank by grade + N(0, 1.5) / N(0, 1.0)); TREC DL 2020 documents (judged queries, qrels as "
           "the users' truth, A = bm25, B = bm25+RM3). Candidates: the union of A and B re-ranked by grade + "
           "noise, B or A with random adjacent swaps, A and B themselves, and a candidate mostly outside the "
           "logged documents (`far` / `A-deep`: A's ranks 11-20 reversed), which should be refused.", "",
           "## Coverage by estimator (estimates given)", "",
           "| estimator | click model | value CI coverage | effect CI coverage | refused "
           "| refused where support is thin | sign right (\\|effect\\| > 2 SE) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for est, r in rows.items():
        est_n = sum(r["estimated"])
        cov = sum(r["covered"]) / est_n if est_n else float("nan")
        e_n = sum(r["e_estimated"])
        e_cov = sum(r["e_covered"]) / e_n if e_n else float("nan")
        thin = f"{sum(r['thin_refused'])}/{sum(r['thin_n'])}" if r["thin_n"] else "-"
        sign = (f"{sign_right[est] / sign_total[est]:.1%} of {sign_total[est]:,}" if sign_total[est] else "-")
        out.append(f"| {est} | {cov:.1%} of {est_n:,} | {e_cov:.1%} of {e_n:,} | {sum(r['refused'])}/{sum(r['n'])} "
                   f"| {thin} | {sign} |")
    out += ["", "## Per setting, candidate and estimator", "",
            "| setting | click model | candidate | estimator | truth | bias ± MC error | coverage | true effect "
            "vs A | effect SE (mean) | refused |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *per_setting, "",
            f"Total time {time.time() - started:.0f} s."]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--impressions", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--models", default="navigational,pbm")
    parser.add_argument("--quick", action="store_true", help="a smaller truth simulation (200k impressions)")
    parser.add_argument("--estimators", default=None, help="comma-separated estimators (default: all)")
    parser.add_argument("--generated-only", action="store_true", help="leave out the TREC DL 2020 setting")
    parser.add_argument("--out", default=str(HERE / "results" / "counterfactual.md"))
    args = parser.parse_args()
    text = run(args.reps, args.impressions, args.k, args.models.split(","), args.quick,
               args.estimators.split(",") if args.estimators else None, args.generated_only)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
