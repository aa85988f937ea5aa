"""evaluate() over many runs: one run's rows at a time, names made unique afterwards."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np

from serpeval import evaluate
from serpeval.core.data import Run
from serpeval.io import read_run

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}


def _run(seed: int) -> Run:
    rng = np.random.default_rng(seed)
    scores = rng.random(6)
    return Run(["q1", "q1", "q1", "q2", "q2", "q2"], ["d1", "d2", "d3", "d1", "d4", "d5"], scores, name="bm25")


def test_runs_are_read_one_at_a_time_and_dropped() -> None:
    """When evaluate() asks for run k+1, no earlier run object is still alive: memory does
    not grow with the number of runs (the CLI passes its reads the same way)."""
    alive: list[weakref.ref] = []
    seen_alive: list[int] = []

    def runs():
        for seed in range(6):
            gc.collect()
            seen_alive.append(sum(ref() is not None for ref in alive))
            run = _run(seed)
            alive.append(weakref.ref(run))
            yield run
            del run

    # The objects made before this test are frozen out of the six collections (gc.freeze): late
    # in a full run, collections of the whole heap took ~3 s; now they scan what evaluate()
    # makes, where every run and any reference cycle holding one is.
    gc.freeze()
    try:
        res = evaluate(QRELS, runs(), ["P@2", "RR"])
    finally:
        gc.unfreeze()
    assert seen_alive == [0] * 6
    # the same numbers as evaluating each run alone
    for i, seed in enumerate(range(6)):
        alone = evaluate(QRELS, _run(seed), ["P@2", "RR"])
        assert np.array_equal(res.runs[i].values, alone.runs[0].values)


def test_repeated_names_are_numbered_in_results_and_coverage(tmp_path: Path) -> None:
    path = tmp_path / "bm25.txt"
    path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d3 2 1.0 t\nq2 Q0 d1 1 1.0 t\n")
    res = evaluate(QRELS, [str(path), str(path), read_run(path)], ["P@2"])
    assert res.run_names == ["bm25", "bm25#2", "bm25#3"]
    assert [c["run"] for c in res.coverage()] == ["bm25", "bm25#2", "bm25#3"]
    assert res.means("bm25#3") == res.means("bm25") == {"P@2": 0.75}
