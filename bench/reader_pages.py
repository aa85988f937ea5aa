"""The TREC reader's large buffers on pages of their own (``mmap``) or in malloc's heap.

Each fresh process runs under the programs' memory policy (``cli/memory.py``) and reads the
same run ``--reads`` times in a row, dropping each before the next (as ``serpeval evaluate
QRELS RUN1 RUN2 ...`` does), with the reader's buffers on their own pages (serpeval's
setting) or in the heap (``native._OWN_PAGES`` set past any size). The two settings
alternate, ``--repeat`` processes each. Prints the median time of the first read and of the
later ones, and the median peak RSS (``ru_maxrss``).

    python bench/data.py --queries 10000 --docs 1000
    python bench/reader_pages.py --queries 10000 --docs 1000 --reads 5 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import generate  # noqa: E402

CHILD = """
import json, resource, sys, time
from serpeval.cli.memory import keep_freed_memory
keep_freed_memory()
from serpeval.core import native
if sys.argv[2] == "heap":
    native._OWN_PAGES = 1 << 62
from serpeval.io import read_run
seconds = []
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    run = read_run(sys.argv[1])
    seconds.append(time.perf_counter() - start)
    del run
print(json.dumps({"seconds": seconds, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    _, run_file = generate(args.queries, args.docs)
    firsts: dict[str, list[float]] = {"own pages": [], "heap": []}
    laters: dict[str, list[float]] = {"own pages": [], "heap": []}
    peaks: dict[str, list[float]] = {"own pages": [], "heap": []}
    for _ in range(args.repeat):
        for label, mode in (("own pages", "own"), ("heap", "heap")):
            out = subprocess.run([sys.executable, "-c", CHILD, str(run_file), mode, str(args.reads)],
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out)
            firsts[label].append(result["seconds"][0])
            laters[label] += result["seconds"][1:]
            peaks[label].append(result["peak"])
    print(f"{args.queries} queries x {args.docs} docs, {args.reads} reads per process, {args.repeat} processes "
          "per setting, alternated\n")
    print("| reader's buffers | first read s | later reads s (median) | peak MB |")
    print("| --- | ---: | ---: | ---: |")
    for label in firsts:
        print(f"| {label} | {statistics.median(firsts[label]):.2f} | {statistics.median(laters[label]):.2f} | "
              f"{statistics.median(peaks[label]):.0f} |")


if __name__ == "__main__":
    main()
