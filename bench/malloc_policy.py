"""The CLI's memory policy (``serpeval.cli.memory``) on and off, alternating fresh processes.

    python bench/malloc_policy.py --queries 1000000 --docs 10 --repeat 5

Runs ``serpeval evaluate`` (nDCG@10, AP, P@10, R@100, RR) on the bench_core workload with
``SERPEVAL_MALLOC=system`` (glibc's and NumPy's defaults), with freed memory kept for reuse
but NumPy's transparent huge pages left on, and as the CLI runs (freed memory kept, small
pages), and prints the medians of wall seconds, CPU seconds (user, system), minor page
faults and peak RSS (``wait4``). Writes ``bench/results/malloc_policy.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import generate  # noqa: E402

MEASURES = ["-m", "ndcg_cut_10", "-m", "map", "-m", "P_10", "-m", "recall_100", "-m", "recip_rank"]


# The CLI's policy, then NumPy's huge pages back on; main(argv) applies no policy of its own.
HUGE_PAGES = """
import sys
from numpy._core.multiarray import _set_madvise_hugepage
from serpeval.cli import main
from serpeval.cli.memory import keep_freed_memory
keep_freed_memory()
_set_madvise_hugepage(True)
sys.exit(main(sys.argv[1:]))
"""
VARIANTS = {
    "system (glibc, NumPy huge pages)": (["-m", "serpeval"], "system"),
    "system malloc, small pages": (["-m", "serpeval"], "system small"),
    "keep freed memory, NumPy huge pages": (["-c", HUGE_PAGES], "keep"),
    "keep freed memory, small pages (default)": (["-m", "serpeval"], "keep"),
}


def once(qrels: Path, run: Path, variant: str) -> tuple[float, float, float, int, float]:
    start_args, policy = VARIANTS[variant]
    env = {**os.environ, "SERPEVAL_MALLOC": policy.split()[0]}
    if policy.endswith("small"):
        env["NUMPY_MADVISE_HUGEPAGE"] = "0"
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, *start_args, "evaluate", str(qrels), str(run), *MEASURES],
                             stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"serpeval failed with status {status}")
    wall = time.perf_counter() - start
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_minflt, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "malloc_policy.md")
    args = parser.parse_args()
    qrels, run = generate(args.queries, args.docs)
    runs: dict[str, list[tuple[float, float, float, int, float]]] = {name: [] for name in VARIANTS}
    for _ in range(args.repeat):
        for name in VARIANTS:
            runs[name].append(once(qrels, run, name))
    lines = [f"# CLI memory policy, {args.queries:,} x {args.docs} (bench/malloc_policy.py)", "",
             f"Medians of {args.repeat} alternating fresh processes, `serpeval evaluate`, 5 measures; "
             "max: the slowest run.", "",
             "| policy | wall s | max wall s | user s | system s | minor faults | peak MB |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, rows in runs.items():
        wall, user, system, faults, peak = (statistics.median(r[i] for r in rows) for i in range(5))
        slowest = max(r[0] for r in rows)
        lines.append(f"| {name} | {wall:.2f} | {slowest:.2f} | {user:.2f} | {system:.2f} | {faults:,.0f} | "
                     f"{peak:,.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
