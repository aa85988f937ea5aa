"""What the input signatures cost (issue 29 item 3): ``signature_of`` of a run and its qrels
against ``evaluate`` of the same files, median of 3, on the synthetic workload of ``bench/data.py``.

``python bench/bench_signatures.py --queries 1000 --docs 1000`` (1M run lines; ``--queries
10000`` is the M workload, 10M lines). The signature is computed once per input inside
``evaluate`` (and cached on the Qrels/Run); this measures it alone on freshly read data.
"""

from __future__ import annotations

import argparse
import statistics
import time

from data import generate

import serpeval
from serpeval.core.fingerprints import signature_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()
    qrels_path, run_path = generate(args.queries, args.docs)
    sign, whole = [], []
    for _ in range(3):
        qrels, run = serpeval.read_qrels(str(qrels_path)), serpeval.read_run(str(run_path))
        start = time.perf_counter()
        signature_of(qrels)
        signature_of(run)
        sign.append(time.perf_counter() - start)
        start = time.perf_counter()
        serpeval.evaluate(str(qrels_path), str(run_path), ["nDCG@10", "AP"])
        whole.append(time.perf_counter() - start)
    s, w = statistics.median(sign), statistics.median(whole)
    print(f"{args.queries} x {args.docs} ({args.queries * args.docs:,} run lines): signatures {s:.3f} s, "
          f"evaluate (read + rank + measure + signatures) {w:.3f} s, signatures {s / w:.1%} of it")


if __name__ == "__main__":
    main()
