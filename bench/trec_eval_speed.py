"""``serpeval trec_eval -q -m all_trec`` against the C trec_eval binary, end to end.

Usage::

    python bench/trec_eval_speed.py --binary /path/to/trec_eval [--sizes 2000x1000,10000x1000]
        [--repeats 5] [--compat 10.0]

(the binary can also come from ``$SERPEVAL_TREC_EVAL``; build it from
github:usnistgov/trec_eval outside this repository). The inputs are the project's benchmark
collections of ``bench/data.py`` (generated once under ``bench/.data/``, gitignored): T topics
x D docs with 6-decimal scores, 30 judgments per topic (grades 0-3, 20 of them retrieved).
Both commands run as fresh processes on the same files, alternating, and
write the full output to a file; the script checks the two outputs are identical, then
reports the median wall time of each (and CPU time, user + system, steadier on a busy
machine) and the ratios C / serpeval (> 1: serpeval faster). The machine is shared and
noisy: quote medians, rerun when in doubt.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from data import generate  # bench/data.py

DATA = Path(__file__).parent / ".data"


def timed(command: list[str], output: Path) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with output.open("wb") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr.decode()[:500]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.environ.get("SERPEVAL_TREC_EVAL"),
                        help="the C trec_eval binary (default: $SERPEVAL_TREC_EVAL)")
    parser.add_argument("--sizes", default="2000x1000,10000x1000",
                        help="topics x docs, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compat", default="10.0", choices=("10.0", "9.0.8"))
    parser.add_argument("--flags", default="-q -m all_trec", help="trec_eval flags")
    parser.add_argument("--results", help="also write the table to this markdown file "
                                          "(e.g. bench/results/trec_eval.md)")
    args = parser.parse_args()
    if not args.binary:
        raise SystemExit("give the C trec_eval binary with --binary or $SERPEVAL_TREC_EVAL")
    flags = args.flags.split()
    rows = []
    for size in args.sizes.split(","):
        topics, docs = (int(x) for x in size.split("x"))
        qrels, run = generate(topics, docs)  # type: ignore[no-untyped-call]
        ours_cmd = [sys.executable, "-m", "serpeval", "trec_eval", "--compat", args.compat, *flags,
                    str(qrels), str(run)]
        c_cmd = [args.binary, *flags, str(qrels), str(run)]
        c_out, ours_out = DATA / "trec_eval.out.c", DATA / "trec_eval.out.serpeval"
        c_runs, ours_runs = [], []
        for _ in range(args.repeats):
            c_runs.append(timed(c_cmd, c_out))
            ours_runs.append(timed(ours_cmd, ours_out))
        ours_bytes = ours_out.read_bytes()
        same = c_out.read_bytes() == ours_bytes
        c_med, ours_med = (statistics.median(t for t, _ in runs) for runs in (c_runs, ours_runs))
        c_cpu, ours_cpu = (statistics.median(c for _, c in runs) for runs in (c_runs, ours_runs))
        lines = ours_bytes.count(b"\n")
        rows.append((size, topics * docs, lines, c_med, ours_med, c_cpu, ours_cpu, same))
        print(f"{size}: C {c_med:.2f} s wall / {c_cpu:.2f} s CPU "
              f"(walls {', '.join(f'{t:.2f}' for t, _ in c_runs)}), serpeval {ours_med:.2f} s "
              f"wall / {ours_cpu:.2f} s CPU (walls {', '.join(f'{t:.2f}' for t, _ in ours_runs)}), "
              f"output identical: {same}", flush=True)
    table = [
        f"`trec_eval {' '.join(flags)}`, median of {args.repeats} runs, fresh processes, "
        f"--compat {args.compat}, C binary {args.binary}, load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs:",
        "",
        "| topics x docs | run lines | output lines | C trec_eval wall (CPU) "
        "| serpeval wall (CPU) | speed-up wall (CPU) | identical |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for size, n, lines, c_med, ours_med, c_cpu, ours_cpu, same in rows:
        table.append(f"| {size} | {n:,} | {lines:,} | {c_med:.2f} s ({c_cpu:.2f} s) "
                     f"| {ours_med:.2f} s ({ours_cpu:.2f} s) "
                     f"| {c_med / ours_med:.2f}x ({c_cpu / ours_cpu:.2f}x) | {same} |")
    print("\n" + "\n".join(table))
    if args.results:
        title = "# serpeval trec_eval vs the C trec_eval binary (bench/trec_eval_speed.py)\n\n"
        Path(args.results).write_text(title + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
