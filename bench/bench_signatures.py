"""What the input signatures cost (issue 29 item 3), in CPU time (``time.process_time``, all
threads), median of ``--repeat`` (5), on the synthetic workload of ``bench/data.py``.

``python bench/bench_signatures.py --queries 1000 --docs 1000`` (1M run lines; ``--queries
10000`` is the M workload, 10M lines). Three figures:

- ``in evaluate``: the CPU time ``evaluate`` spends signing, measured inside it (the calls of
  ``signature_of`` in ``serpeval.evaluation.evaluate`` and of ``keep_run_signature`` in
  ``serpeval.ranking``, which signs a run from the doc fingerprints its ranking computes
  anyway), against the whole call (read, rank, measure, signatures);
- ``alone``: ``signature_of(qrels) + signature_of(run)`` on freshly read data (no ranking to
  share fingerprints with: what a run with unjudged queries, or the NumPy path, pays).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from data import generate

import serpeval
import serpeval.evaluation.evaluate as evaluate_module
import serpeval.ranking as ranking_module
from serpeval.core.fingerprints import signature_of


def timed(function: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    """``function``, adding the CPU time of each call to ``spent[0]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    qrels_path, run_path = generate(args.queries, args.docs)
    spent = [0.0]
    evaluate_module.signature_of = timed(evaluate_module.signature_of, spent)  # type: ignore[assignment]
    ranking_module.keep_run_signature = timed(ranking_module.keep_run_signature, spent)  # type: ignore[assignment]
    alone, inside, whole = [], [], []
    for _ in range(args.repeat):
        qrels, run = serpeval.read_qrels(str(qrels_path)), serpeval.read_run(str(run_path))
        start = time.process_time()
        signature_of(qrels)
        signature_of(run)
        alone.append(time.process_time() - start)
        del qrels, run
        spent[0] = 0.0
        start = time.process_time()
        serpeval.evaluate(str(qrels_path), str(run_path), ["nDCG@10", "AP"])
        whole.append(time.process_time() - start)
        inside.append(spent[0])
    a, s, w = statistics.median(alone), statistics.median(inside), statistics.median(whole)
    print(f"{args.queries} x {args.docs} ({args.queries * args.docs:,} run lines), CPU s, median of {args.repeat}: "
          f"signatures in evaluate {s:.3f} s of evaluate {w:.3f} s ({s / w:.1%}); signatures alone {a:.3f} s")


if __name__ == "__main__":
    main()
