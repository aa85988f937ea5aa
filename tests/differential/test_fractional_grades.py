"""Fractional grades in the differential harness (issue 29 item 2).

Every small case's qrels are rewritten with fractional grades in many spellings (``.5``,
``2.25``, ``-0.5``, ``1e-1``, ``+1.5``, ``3.0``) and a random layout (tabs, CRLF, a byte order
mark, comments, gzip, shuffled rows), then read with ``grades="float"`` by each reader (the
compiled one, Arrow's, the careful one, and without the compiled kernels) and evaluated:
the grades must be the written ones, and nDCG, ERR, RBP, NCG, P and AP must equal an
independent pure-Python computation on the same rows. Integer-valued spellings (``2.0``)
must give the integer files' values bit for bit.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from tests.differential.compare import TALLY
from tests.differential.conftest import Case
from tests.differential.layouts import draw_layout, write
from tests.measures.test_fractional_grades import _ranked, ref_ap, ref_err, ref_ndcg, ref_precision, ref_rbp

from serpeval.core import native
from serpeval.core.errors import MissingQueriesWarning
from serpeval.evaluation.evaluate import evaluate
from serpeval.io import read_qrels
from serpeval.io import trec as trec_module

FRACTIONS = ["0.5", ".5", "0.25", "-0.5", "1e-1", "+1.5", "2.25", "1.0", "3.0", "0.75", "1.125", "-1.25", "2.5E0"]
NAMES = ["nDCG@10", "nDCG(gain=exp)@20", "ERR@20", "RBP(p=0.8)", "RBP(p=0.8,scale=grade)", "P@5", "AP", "NCG@10"]


def fractional(case: Case, purpose: int, integral: bool = False) -> tuple[dict, object]:
    """The case's qrels with fractional (or ``2.0``-style) grades written in a random layout."""
    rng = case.rng(purpose)
    rows = []
    for q, d, g in case.coll.qrels:
        if integral:
            text = f"{int(g)}.0" if rng.random() < 0.7 else f"{int(g)}e0"
        else:
            text = str(rng.choice(FRACTIONS)) if rng.random() < 0.6 else str(int(g))
        rows.append((q, d, text))
    coll = replace(case.coll, qrels=rows, qrels_filler={})
    layout = draw_layout(rng, "qrels")
    folder = case.qrels.path.parent
    written = write(folder, f"fractional-{purpose}.qrels", coll, "qrels", layout, rng)
    qrels: dict[str, dict[str, float]] = {}
    for q, d, text in rows:
        qrels.setdefault(q, {})[d] = float(text)
    return qrels, written


@pytest.mark.parametrize("reader", ["compiled", "arrow", "numpy"])
def test_fractional_grades_read_and_evaluated_alike(small: Case, reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if reader == "numpy":
        monkeypatch.setattr(native, "available", lambda: False)
    elif reader == "arrow":
        monkeypatch.setattr(trec_module, "_native_rows", trec_module._arrow_rows)
    if reader != "numpy" and not native.available():
        pytest.skip("the compiled kernels are not built here")
    qrels, written = fractional(small, 1)
    read = read_qrels(written.path, grades="float")
    got = {}
    for q, d, g in zip(read.query_ids.to_pylist(), read.doc_ids.to_pylist(), read.relevance.tolist(), strict=True):
        got.setdefault(q, {})[d] = g
    assert got == qrels
    run = small.coll.run_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = evaluate(read, small.run.path, NAMES)
    compared = 0
    for row, q in zip(res.runs[0].values, res.runs[0].query_ids, strict=True):
        g = [None if x is not None and x < 0 else x for x in _ranked(qrels, run, q)]
        want = [ref_ndcg(qrels, run, q, 10, False), ref_ndcg(qrels, run, q, 20, True), ref_err(g, 20),
                ref_rbp(qrels, g, q, 0.8, "trec"), ref_rbp(qrels, g, q, 0.8, "grade"), ref_precision(g, 5),
                ref_ap(qrels, g, q), _ncg(qrels, g, q, 10)]
        assert row.tolist() == pytest.approx(want, rel=1e-9, abs=1e-12), (q, written.layout.name)
        compared += len(want)
    TALLY.add(f"fractional grades ({reader})", [written.path], len(res.runs[0].query_ids), compared)


def test_integer_valued_float_grades_are_bit_identical(small: Case) -> None:
    _, written = fractional(small, 2, integral=True)
    names = ["nDCG@10", "nDCG(gain=exp)@20", "ERR@20", "RBP", "P@5", "AP", "NCG@10", "bpref", "infAP", "G", "Rndcg"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        as_float = evaluate(read_qrels(written.path, grades="float"), small.run.path, names)
        as_int = evaluate(small.qrels.path, small.run.path, names)
    assert as_float.runs[0].values.view(np.int64).tolist() == as_int.runs[0].values.view(np.int64).tolist()


def _ncg(qrels: dict, g: list, q: str, k: int) -> float:
    ideal = sorted((x for x in qrels[q].values() if x > 0), reverse=True)[:k]
    return sum(x for x in g[:k] if x is not None and x > 0) / sum(ideal) if ideal else 0.0

