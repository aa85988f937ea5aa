"""The fast paths of the input signatures (issue 29 item 3): the compiled row kernel
(``sv_sign_rows``) and the run signature the ranking computes from the doc fingerprints it
needs anyway (``keep_run_signature``) give the value of the independent pure-Python
definition in ``test_signatures.py``, whatever the line order, the rank order, the query
blocks or the unjudged queries."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from tests.core.test_signatures import MASK, M, _fin, _fp, _mix, reference

from serpeval.core import native
from serpeval.core.columns import Blocks
from serpeval.core.fingerprints import content_signature, keep_run_signature, signature_of, signature_part
from serpeval.io import read_qrels, read_run
from serpeval.ranking import index_qrels, rank

needs_kernels = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not built")


def _ordered_reference(rows: list[tuple[str, str, float]], first_row: int = 0) -> int:
    """signature_part(..., ordered=True)'s total with Python integers: row i's position mixed in."""
    total = 0
    for i, (q, d, v) in enumerate(rows):
        h = _mix((_fp(q) * M) & MASK, _fp(d))
        h = _mix(h, int(np.float64(float(v) + 0.0).view(np.uint64)))
        h = _mix(h, ((first_row + i) * 0xC2B2AE3D27D4EB4F) & MASK)
        total = (total + _fin(h)) & MASK
    return total


def _rows(seed: int, n: int) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    ids = ["", "a", "doc-0000017", "clueweb09-en0000-00-00000", "é文書", "x" * 8, "y" * 9, "z" * 40]
    values = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 3.25, float("inf")]
    return [(rng.choice(ids[1:4]), rng.choice(ids), rng.choice(values)) for _ in range(n)]


@needs_kernels
@pytest.mark.parametrize("ordered", [False, True])
def test_the_kernel_equals_the_numpy_path_and_the_reference(monkeypatch: pytest.MonkeyPatch, ordered: bool) -> None:
    rows = sorted(_rows(3, 400), key=lambda row: row[0])          # grouped by query: blocks
    q, d, v = (list(c) for c in zip(*rows, strict=True))
    heads = [q[0], *(b for a, b in itertools.pairwise(q) if a != b)]
    lengths = np.array([sum(1 for x in q if x == h) for h in heads], dtype=np.int64)
    blocks = Blocks(pa.array(heads, pa.string()), lengths)
    plain = pa.chunked_array([q[:150], q[150:]], pa.string())    # two chunks
    docs = pa.chunked_array([d[:10], d[10:]], pa.string())
    compiled = [signature_part(queries, docs, np.array(v), ordered=ordered, first_row=5) for queries in (blocks, plain)]
    monkeypatch.setattr(native, "available", lambda: False)
    by_numpy = signature_part(plain, docs, np.array(v), ordered=ordered, first_row=5)
    assert compiled == [by_numpy, by_numpy]
    if ordered:
        assert by_numpy == (_ordered_reference(rows, 5), len(rows))
    else:
        assert content_signature(plain, docs, np.array(v)) == reference(rows)


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 doc-long-id-3 2\nq2 0 e1 1\nq2 0 e2 0\nq3 0 f1 1\n"


def _run_text(seed: int, with_unjudged: bool) -> tuple[str, list[tuple[str, str, float]]]:
    """A run whose lines are shuffled and whose scores are not in rank order (the ranking's
    order is a real permutation), with tied scores and a -0.0."""
    rng = random.Random(seed)
    queries = ["q1", "q2", "q3"] + (["q9-unjudged"] if with_unjudged else [])
    rows = [(q, f"doc-{q}-{i:03d}", rng.choice([0.0, -0.0, 1.5, 1.5, -2.0, rng.random()]))
            for q in queries for i in range(40)]
    rng.shuffle(rows)
    return "".join(f"{q} Q0 {d} {i + 1} {v!r} tag\n" for i, (q, d, v) in enumerate(rows)), rows


@needs_kernels
@pytest.mark.parametrize("with_unjudged", [False, True])
def test_the_ranking_signs_the_run_as_the_definition_does(tmp_path: Path, with_unjudged: bool) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    text, rows = _run_text(5, with_unjudged)
    (tmp_path / "a.run").write_text(text)
    run = read_run(str(tmp_path / "a.run"))
    rank(index_qrels(read_qrels(str(tmp_path / "q.txt"))), run)
    # every row ranked: signed by the ranking; a query without judgments: left to signature_of
    assert ("signature" in run._cache) is (not with_unjudged)
    assert signature_of(run) == reference(rows)
    fresh = read_run(str(tmp_path / "a.run"))
    assert signature_of(fresh) == signature_of(run)


@needs_kernels
def test_keep_run_signature_refuses_a_part_of_the_run(tmp_path: Path) -> None:
    text, _ = _run_text(6, False)
    (tmp_path / "a.run").write_text(text)
    run = read_run(str(tmp_path / "a.run"))
    with pytest.raises(ValueError, match="3 fingerprints for a run of 120 rows"):
        keep_run_signature(run, pa.array(["q1"]), np.zeros(3, np.int32), np.zeros(3, np.uint64), None)
    assert "signature" not in run._cache


@pytest.mark.parametrize("compiled", [True, False])
def test_columns_of_different_lengths_are_refused(monkeypatch: pytest.MonkeyPatch, compiled: bool) -> None:
    if compiled and not native.available():
        pytest.skip("the compiled kernels are not built")
    if not compiled:
        monkeypatch.setattr(native, "available", lambda: False)
    blocks = Blocks(pa.array(["q1", "q2"], pa.string()), np.array([2, 1], dtype=np.int64))   # 3 rows
    with pytest.raises(ValueError, match="columns of 3, 2 and 2 rows"):
        signature_part(blocks, pa.chunked_array([["a", "b"]], pa.string()), np.ones(2))
