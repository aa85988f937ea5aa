"""ReadAhead: the next run read in the background; the same results, errors and order as a
plain loop, at most two results alive, nothing read ahead where it cannot help."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

from serpeval import evaluate
from serpeval.core import read_ahead
from serpeval.core.read_ahead import ReadAhead, may_read_stdin, reads_ahead
from serpeval.evaluation.evaluate import iter_runs


class Payload:
    """A stand-in for a run (weak references need a class instance)."""

    def __init__(self, item: int) -> None:
        self.item = item


@pytest.mark.parametrize("ahead", [True, False])
def test_results_come_in_order(ahead: bool) -> None:
    got = [p.item for p in ReadAhead(range(7), Payload, ahead=ahead)]
    assert got == list(range(7))
    assert list(ReadAhead([], Payload, ahead=ahead)) == []


def test_first_read_starts_at_once_and_the_next_while_the_current_is_used() -> None:
    started = [threading.Event() for _ in range(3)]

    def read(item: int) -> Payload:
        started[item].set()
        return Payload(item)

    reads = ReadAhead(range(3), read, ahead=True)
    assert started[0].wait(10)  # before anyone asked for it
    first = next(reads)
    assert first.item == 0
    assert started[1].wait(10)  # while the caller holds item 0
    assert not started[2].is_set()  # never two ahead
    assert [p.item for p in reads] == [1, 2]


def test_at_most_the_current_result_is_alive_when_a_read_starts() -> None:
    """The caller drops each result before asking for the next: a read never starts while
    more than one result (the caller's current one) is alive."""
    alive: list[weakref.ref[Payload]] = []
    alive_at_start: list[int] = []

    def read(item: int) -> Payload:
        gc.collect()
        alive_at_start.append(sum(ref() is not None for ref in alive))
        payload = Payload(item)
        alive.append(weakref.ref(payload))
        return payload

    # Each read collects the garbage (a finished read's result can sit in a reference cycle
    # until then). The objects made before this test are frozen out of the collections: late in
    # a full run, eight collections of the whole heap took ~4 s; now they scan what this test
    # makes, where every result and reference cycle of the reads is.
    gc.freeze()
    try:
        for payload in ReadAhead(range(8), read, ahead=True):
            assert payload.item == len(alive_at_start) - 1 or payload.item == len(alive_at_start) - 2
            del payload
    finally:
        gc.unfreeze()
    assert len(alive_at_start) == 8
    assert max(alive_at_start) <= 1


@pytest.mark.parametrize("ahead", [True, False])
def test_an_error_comes_when_its_item_is_reached(ahead: bool) -> None:
    def read(item: int) -> Payload:
        if item == 2:
            raise ValueError("run 2 is bad")
        return Payload(item)

    reads = ReadAhead(range(5), read, ahead=ahead)
    assert next(reads).item == 0
    assert next(reads).item == 1  # item 2's read failed meanwhile; not raised yet
    with pytest.raises(ValueError, match="run 2 is bad"):
        next(reads)
    if ahead:
        assert list(reads) == []  # the iteration ended there


def test_without_read_ahead_items_are_read_in_the_callers_thread_when_reached() -> None:
    threads: list[str] = []

    def read(item: int) -> Payload:
        threads.append(threading.current_thread().name)
        return Payload(item)

    reads = ReadAhead(range(2), read, ahead=False)
    assert threads == []
    next(reads)
    assert threads == [threading.current_thread().name]


def test_when_it_reads_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_ahead, "usable_cpus", lambda: 2)
    monkeypatch.delenv("SERPEVAL_READ_AHEAD", raising=False)
    assert reads_ahead()
    monkeypatch.setenv("SERPEVAL_READ_AHEAD", "0")
    assert not reads_ahead()
    monkeypatch.delenv("SERPEVAL_READ_AHEAD")
    monkeypatch.setattr(read_ahead, "usable_cpus", lambda: 1)
    assert not reads_ahead()


def test_standard_input_is_never_read_by_two_readers() -> None:
    assert may_read_stdin("-")
    assert may_read_stdin(Path("-"))
    assert may_read_stdin(sys.stdin)
    assert not may_read_stdin("qrels.txt")
    assert not may_read_stdin({"q1": {"d1": 1}})
    assert not isinstance(iter_runs(["a.run", "b.run"], read_ahead=False), ReadAhead)


def _files(tmp_path: Path) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(5)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {rng.integers(0, 3)}\n" for q in range(30) for d in range(0, 40, 3)))
    runs = []
    for r in range(4):
        path = tmp_path / f"run{r}.txt"
        path.write_text("".join(f"q{q} Q0 d{d} 0 {rng.integers(0, 5)} r{r}\n" for q in range(30)
                                for d in rng.permutation(40)[:25]))
        runs.append(path)
    return qrels, runs


def test_evaluate_gives_the_same_results_with_and_without_reading_ahead(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs = _files(tmp_path)
    monkeypatch.setattr(read_ahead, "usable_cpus", lambda: 2)
    monkeypatch.delenv("SERPEVAL_READ_AHEAD", raising=False)
    assert reads_ahead()
    with_ahead = evaluate(str(qrels), [str(p) for p in runs], ["nDCG@10", "AP", "RR"])
    monkeypatch.setenv("SERPEVAL_READ_AHEAD", "0")
    without = evaluate(str(qrels), [str(p) for p in runs], ["nDCG@10", "AP", "RR"])
    assert with_ahead.run_names == without.run_names == ["run0", "run1", "run2", "run3"]
    for a, b in zip(with_ahead.runs, without.runs, strict=True):
        assert np.array_equal(a.values, b.values)
        assert list(a.query_ids) == list(b.query_ids)


@pytest.mark.parametrize("bad", [0, 2])
def test_the_cli_fails_the_same_way_with_and_without_reading_ahead(tmp_path: Path, bad: int) -> None:
    """A bad run among several: the same one-line error (file and line) and exit status,
    whether the runs are read ahead or not."""
    qrels, runs = _files(tmp_path)
    runs[bad].write_text(runs[bad].read_text() + "q1 Q0 dX 0 not-a-score r\n")
    outcomes = []
    for setting in ("1", "0"):
        env = {**os.environ, "SERPEVAL_READ_AHEAD": setting}
        done = subprocess.run([sys.executable, "-m", "serpeval", "evaluate", str(qrels), *map(str, runs)],
                              capture_output=True, text=True, env=env, timeout=120)
        outcomes.append((done.returncode, done.stderr, done.stdout))
    assert outcomes[0] == outcomes[1]
    status, err, _ = outcomes[0]
    assert status != 0
    assert f"run{bad}.txt:751" in err, err
    assert err.count("\n") == 1, err
