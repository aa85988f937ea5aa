"""Speed of two serpeval source trees on the same input, alternated in fresh processes.

Checks that a change costs no time: each repetition runs ``serpeval evaluate`` (the
bench_core workload: nDCG@10, AP, P@10, R@100, RR, JSON output) from the BEFORE tree and
then the AFTER tree (``PYTHONPATH=TREE/src``), so both see the same machine load; wall time
and peak RSS come from ``wait4``. The outputs must be identical. Prints medians.

    git worktree add /tmp/before <commit>
    python bench/data.py --queries 10000 --docs 1000
    python bench/before_after.py /tmp/before . --queries 10000 --docs 1000 --repeat 9
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

CHILD = """
import sys
from serpeval.cli import main
sys.argv = ["/usr/bin/serpeval", "evaluate", sys.argv[1], sys.argv[2], "-m", "nDCG@10,AP,P@10,R@100,RR",
            "-f", "json"]
main()
"""


def run(tree: Path, qrels: Path, run_file: Path) -> tuple[float, float, bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src"), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(qrels), str(run_file)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{tree}: serpeval exited with status {status}")
    return elapsed, usage.ru_maxrss / 1024, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--queries", type=int, default=10000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    qrels, run_file = generate(args.queries, args.docs)
    times: dict[str, list[float]] = {"before": [], "after": []}
    peaks: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.repeat):
        outputs = []
        for label, tree in (("before", args.before), ("after", args.after)):
            seconds, peak, out = run(tree.resolve(), qrels, run_file)
            times[label].append(seconds)
            peaks[label].append(peak)
            outputs.append(out)
        if outputs[0] != outputs[1]:
            raise SystemExit("the two trees printed different results")
    lines = [f"{args.queries} queries x {args.docs} docs, {args.repeat} alternated fresh processes, "
             "identical output", "", "| tree | median s | min s | max s | median peak MB |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for label in ("before", "after"):
        t = times[label]
        lines.append(f"| {label} | {statistics.median(t):.2f} | {min(t):.2f} | {max(t):.2f} | "
                     f"{statistics.median(peaks[label]):.0f} |")
    ratio = statistics.median(times["after"]) / statistics.median(times["before"])
    lines += ["", f"after / before (medians): {ratio:.3f}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
