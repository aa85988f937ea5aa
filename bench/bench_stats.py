"""Speed of the significance tests: serpeval vs ranx and scipy on the same per-query scores.

The input is the issue's target shape: 250 topics x 10 systems x 3 measures of per-query
scores (built from the real Robust04 BM25+RM3 run when ``../shared/data`` is there, by
perturbing its per-query nDCG@10 / AP / P@10; otherwise synthetic). Each contender runs
the randomization test with 10,000 permutations on every comparison:

- ``serpeval``: :func:`serpeval.stats.randomization_test` once on the whole
  ``[measures, comparisons, topics]`` array (sign flips as a matrix, one product per chunk);
- ``ranx``: ``ranx.statistical_tests.fisher_randomization_test`` (numba, parallel) called
  per comparison and measure, as ``ranx.compare`` does; timed warm (its JIT compile is
  reported separately, users pay it once per process);
- ``scipy``: ``scipy.stats.permutation_test(permutation_type="samples", vectorized=True)``
  per comparison and measure, what a scipy user would write.

Also timed: serpeval's paired bootstrap (BCa + studentized p, 10,000 resamples) against
``scipy.stats.bootstrap(method="BCa")`` per comparison (interval only), and the randomized
Tukey test for all pairs (serpeval only: ranx's Tukey is the parametric HSD).

    python bench/bench_stats.py --repeat 5

Prints a table of medians (the machine is shared, so medians of several runs) and writes it
to ``bench/results/stats_250x10x3.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data" / "trec" / "robust04"

TOPICS, SYSTEMS, MEASURES, PERMUTATIONS = 250, 10, 3, 10_000


def scores() -> tuple[np.ndarray, str]:
    """``[measures, systems, topics]`` per-query scores and where they came from."""
    rng = np.random.default_rng(0)
    if (DATA / "qrels.txt.gz").exists():
        import serpeval

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = serpeval.evaluate(DATA / "qrels.txt.gz", DATA / "runs" / "bm25-rm3.run.gz",
                                    ["nDCG@10", "AP", "P@10"])
        base = res.runs[0].values.T                                      # [3, 249]
        base = np.concatenate([base, base[:, : TOPICS - base.shape[1]]], axis=1)
        source = "Robust04 BM25+RM3 per-query nDCG@10, AP, P@10 (+ noise per system)"
    else:
        base = rng.random((MEASURES, TOPICS))
        source = "synthetic uniform scores (shared data not found)"
    shifts = np.linspace(0.0, 0.03, SYSTEMS)[None, :, None]
    noisy = base[:, None, :] + shifts + rng.normal(0, 0.08, (MEASURES, SYSTEMS, TOPICS))
    return np.clip(noisy, 0.0, 1.0), source


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scipy-pairs", type=int, default=3,
                        help="comparisons timed for scipy (it is slow); the total is extrapolated")
    args = parser.parse_args()

    from serpeval.stats import paired_bootstrap, randomization_test, randomized_tukey

    x3, source = scores()
    base = x3[:, :1, :]                                                  # system 0 = baseline
    others = x3[:, 1:, :]
    pairs = [(i, j) for i in range(SYSTEMS) for j in range(i + 1, SYSTEMS)]
    all_x = x3[:, [j for _, j in pairs], :]
    all_y = x3[:, [i for i, _ in pairs], :]
    rows: list[tuple[str, str, float, str]] = []

    def ours_baseline() -> object:
        return randomization_test(others, np.broadcast_to(base, others.shape),
                                  n_permutations=PERMUTATIONS, rng=1).p_value

    def ours_all() -> object:
        return randomization_test(all_x, all_y, n_permutations=PERMUTATIONS, rng=1).p_value

    t_base, p_ours = timed(ours_baseline, args.repeat)
    t_all, _ = timed(ours_all, args.repeat)
    rows.append(("randomization, 9 vs baseline x 3", "serpeval", t_base, "1.0x"))
    rows.append(("randomization, 45 pairs x 3", "serpeval", t_all, "1.0x"))

    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError:  # pragma: no cover - bench extra not installed
        fisher_randomization_test = None
    if fisher_randomization_test is not None:
        start = time.perf_counter()
        fisher_randomization_test(base[0, 0], others[0, 0], n_permutations=10, random_seed=1)
        compile_s = time.perf_counter() - start

        def ranx_baseline() -> object:
            return np.array([[fisher_randomization_test(base[m, 0], others[m, k],
                                                        n_permutations=PERMUTATIONS)[0]
                              for k in range(SYSTEMS - 1)] for m in range(MEASURES)])

        def ranx_all() -> object:
            return [fisher_randomization_test(all_y[m, k], all_x[m, k],
                                              n_permutations=PERMUTATIONS)[0]
                    for m in range(MEASURES) for k in range(len(pairs))]

        t_rb, p_ranx = timed(ranx_baseline, args.repeat)
        t_ra, _ = timed(ranx_all, args.repeat)
        rows.append(("randomization, 9 vs baseline x 3", "ranx (warm)", t_rb,
                     f"{t_rb / t_base:.1f}x"))
        rows.append(("randomization, 45 pairs x 3", "ranx (warm)", t_ra, f"{t_ra / t_all:.1f}x"))
        rows.append(("ranx first call (numba JIT load/compile)", "ranx", compile_s, ""))
        agree = float(np.max(np.abs(np.asarray(p_ranx) - p_ours)))
        rows.append(("largest p difference serpeval vs ranx (Monte Carlo error)", "", agree, ""))

    from scipy import stats

    def scipy_some() -> object:
        out = []
        for k in range(args.scipy_pairs):
            res = stats.permutation_test((others[0, k], base[0, 0]),
                                         lambda a, b, axis: np.mean(a - b, axis=axis),
                                         permutation_type="samples", vectorized=True,
                                         n_resamples=PERMUTATIONS - 1, rng=1)
            out.append(res.pvalue)
        return out

    t_sp, _ = timed(scipy_some, max(1, args.repeat // 2))
    per = t_sp / args.scipy_pairs
    rows.append(("randomization, 9 vs baseline x 3", "scipy permutation_test (extrapolated)",
                 per * 27, f"{per * 27 / t_base:.1f}x"))

    def ours_boot() -> object:
        return paired_bootstrap(others, np.broadcast_to(base, others.shape),
                                n_resamples=PERMUTATIONS, rng=1).ci_low

    def scipy_boot() -> object:
        d = others[0, 0] - base[0, 0]
        return stats.bootstrap((d,), np.mean, method="BCa", n_resamples=PERMUTATIONS,
                               rng=1).confidence_interval

    t_boot, _ = timed(ours_boot, args.repeat)
    t_sboot, _ = timed(scipy_boot, args.repeat)
    rows.append(("bootstrap BCa + p, 9 vs baseline x 3", "serpeval", t_boot, "1.0x"))
    rows.append(("bootstrap BCa, 9 vs baseline x 3", "scipy bootstrap (27 x one)", t_sboot * 27,
                 f"{t_sboot * 27 / t_boot:.1f}x"))

    t_tukey, _ = timed(lambda: randomized_tukey(x3, n_permutations=PERMUTATIONS, rng=1),
                       args.repeat)
    rows.append(("randomized Tukey HSD, 45 pairs x 3", "serpeval", t_tukey, ""))

    lines = [f"# Significance tests: {TOPICS} topics x {SYSTEMS} systems x {MEASURES} measures, "
             f"{PERMUTATIONS} permutations/resamples", "",
             f"Input: {source}. Median of {args.repeat} runs (seconds); "
             "ratio = contender / serpeval.",
             "", "| task | tool | seconds | ratio |", "| :--- | :--- | ---: | ---: |"]
    lines += [f"| {task} | {tool} | {seconds:.4f} | {ratio} |"
              for task, tool, seconds, ratio in rows]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    out = HERE / "results" / f"stats_{TOPICS}x{SYSTEMS}x{MEASURES}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
