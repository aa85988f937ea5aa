"""The CLI's memory policy (``serpeval.cli.memory``) on and off, alternating fresh processes.

    python bench/malloc_policy.py --queries 1000000 --docs 10 --repeat 5

Runs ``serpeval evaluate`` (nDCG@10, AP, P@10, R@100, RR) on the bench_core workload with
``SERPEVAL_MALLOC=system`` (glibc's defaults) and without (freed memory kept for reuse),
and prints the medians of wall seconds, CPU seconds, minor page faults and peak RSS
(``wait4``). Writes ``bench/results/malloc_policy.md``.
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


def once(qrels: Path, run: Path, policy: str) -> tuple[float, float, int, float]:
    env = {**os.environ, "SERPEVAL_MALLOC": policy}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "serpeval", "evaluate", str(qrels), str(run), *MEASURES],
                             stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"serpeval failed with status {status}")
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_minflt, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "malloc_policy.md")
    args = parser.parse_args()
    qrels, run = generate(args.queries, args.docs)
    runs: dict[str, list[tuple[float, float, int, float]]] = {"system": [], "keep (default)": []}
    for _ in range(args.repeat):
        runs["system"].append(once(qrels, run, "system"))
        runs["keep (default)"].append(once(qrels, run, "keep"))
    lines = [f"# CLI memory policy, {args.queries:,} x {args.docs} (bench/malloc_policy.py)", "",
             f"Medians of {args.repeat} alternating fresh processes, `serpeval evaluate`, 5 measures.", "",
             "| malloc | wall s | CPU s | minor faults | peak MB |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, rows in runs.items():
        wall, cpu, faults, peak = (statistics.median(r[i] for r in rows) for i in range(4))
        lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {faults:,.0f} | {peak:,.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
