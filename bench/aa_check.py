"""A/A check on real runs: a run against itself plus small noise rejects at about alpha.

For each real run (Robust04 BM25+RM3, Core18 title+RM3, DL20-doc BM25) and each seed, two
copies of the run get independent Gaussian noise on their document scores (sd = ``--noise``
x the run's score sd), which reorders some documents. The copies are exchangeable, so the
null hypothesis "no difference" is true by construction. Both copies are evaluated with
:func:`serpeval.evaluate` and compared with :func:`serpeval.compare_results` (nDCG@10 and AP,
every test). A correct level-alpha test rejects in about ``alpha`` of the seeds; with Holm
over the two measures the chance that either is rejected (family-wise) stays at or below
alpha, while without it it is close to 2 alpha.

    python bench/aa_check.py --seeds 200

Prints rejection rates with 95% Wilson intervals and writes ``bench/results/aa_check.md``.
The fast version of this check runs in the test suite (``tests/stats/test_aa.py``).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TREC = HERE.parent.parent / "shared" / "data" / "trec"
RUNS = [("robust04", "qrels.txt.gz", "bm25-rm3.run.gz"),
        ("core18", "qrels.txt", "title-rm3.run.gz"),
        ("dl20-doc", "qrels.txt", "d_bm25.run.gz")]
TESTS = ("t", "wilcoxon", "randomization", "bootstrap")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="seeds per run")
    parser.add_argument("--noise", type=float, default=0.05, help="noise sd / score sd")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()

    import serpeval
    from serpeval.comparison.compare import compare_results
    from serpeval.io import read_qrels, read_run
    from serpeval.stats import holm

    if not TREC.exists():
        sys.exit(f"shared data not found at {TREC}")
    rejections = {(test, kind): 0 for test in TESTS for kind in ("nDCG@10", "AP", "either (Holm)")}
    total = 0
    mean_abs_delta = []
    for folder, qrels_name, run_name in RUNS:
        qrels = read_qrels(TREC / folder / qrels_name)
        run = read_run(TREC / folder / "runs" / run_name)
        scale = args.noise * float(np.std(run.scores))
        for seed in range(args.seeds):
            rng = np.random.default_rng([seed, len(folder)])
            copies = {name: serpeval.Run(run.query_ids, run.doc_ids,
                                         run.scores + rng.normal(0, scale, len(run.scores)),
                                         name=name)
                      for name in ("a", "b")}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results = serpeval.evaluate(qrels, copies, ["nDCG@10", "AP"])
            mean_abs_delta.append(np.abs(results["a"].values - results["b"].values).mean(axis=0))
            for test in TESTS:
                c = compare_results(results, test=test, correction="holm", rng=seed,
                                    n_resamples=args.resamples, alpha=args.alpha)
                p = [row.p_value for row in c.rows]
                rejections[(test, "nDCG@10")] += p[0] <= args.alpha
                rejections[(test, "AP")] += p[1] <= args.alpha
                rejections[(test, "either (Holm)")] += bool((holm(p) <= args.alpha).any())
            total += 1
        print(f"{folder}: {args.seeds} seeds done", file=sys.stderr)

    drift = np.mean(mean_abs_delta, axis=0)
    lines = [f"# A/A check: {total} comparisons of a run with itself plus noise", "",
             f"Runs: {', '.join(f'{f}/{r}' for f, _, r in RUNS)}; {args.seeds} seeds each; "
             f"score noise sd = {args.noise} x the run's score sd (mean |per-query delta|: nDCG@10 "
             f"{drift[0]:.4f}, AP {drift[1]:.4f}); alpha = {args.alpha}; "
             f"{args.resamples} permutations/resamples.", "",
             "| test | measure | rejected | rate | 95% CI |",
             "| :--- | :--- | ---: | ---: | :--- |"]
    for (test, kind), k in rejections.items():
        low, high = wilson(k, total)
        lines.append(f"| {test} | {kind} | {k}/{total} | {k / total:.3f} "
                     f"| [{low:.3f}, {high:.3f}] |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    out = HERE / "results" / "aa_check.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
