"""Fixtures of the Spark tests: every registered measure, and a small generated collection
with ties, float32 ties, unjudged and missing queries, negative grades, queries without
relevant docs, and ids whose byte order differs from their numeric order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from serpeval.measures import REGISTRY, Measure

CUTOFF = 10


@pytest.fixture(scope="session")
def registry_measures() -> list[Measure]:
    """Every registered measure with its default parameters: without a cutoff where that is
    allowed, and at @10 where a cutoff is allowed or required."""
    measures = []
    for spec in REGISTRY:
        if spec.subtopics or spec.name in ("psP", "psnDCG"):
            continue  # subtopic qrels, propensities from the whole qrels: evaluated locally only
        if spec.cutoff != "required":
            measures.append(spec.bind({}, None, spec.name))
        if spec.cutoff != "none":
            measures.append(spec.bind({}, CUTOFF, spec.name))
    return measures


@pytest.fixture(scope="session")
def tied() -> tuple[pa.Table, pa.Table]:
    """The generated collection (see :func:`tied_collection`)."""
    return tied_collection()


def tied_collection(seed: int = 7, n_queries: int = 60) -> tuple[pa.Table, pa.Table]:
    """(qrels, run) Arrow tables.

    Queries ``q0..q49`` are judged, ``q45..q49`` have no run rows (missing), ``q50..q59`` are
    retrieved but not judged. Scores are small integers (many ties, broken by doc id), and
    in every fifth query pairs of scores that differ in float64 but not in float32.
    """
    rng = np.random.default_rng(seed)
    run = {"query_id": [], "doc_id": [], "score": []}
    qrels = {"query_id": [], "doc_id": [], "relevance": []}
    for q in range(n_queries):
        qid = f"q{q}"
        n_docs = int(rng.integers(1, 40))
        docs = [f"d{k}" for k in rng.choice(300, size=n_docs, replace=False)]
        scores = rng.integers(0, 5, size=n_docs).astype(np.float64)
        if q % 5 == 0:
            scores = 0.1 + scores * 1e-10  # equal as float32, different as float64
        if q < 45 or q >= 50:
            run["query_id"] += [qid] * n_docs
            run["doc_id"] += docs
            run["score"] += scores.tolist()
        if q < 50:
            judged = [d for d in docs if rng.random() < 0.6] + [
                f"u{k}" for k in range(int(rng.integers(0, 4)))
            ]
            grades = rng.integers(-1, 4, size=len(judged))
            if q % 7 == 0:
                grades = np.minimum(grades, 0)  # no relevant document
            if not judged:
                judged, grades = ["u0"], np.array([1])
            qrels["query_id"] += [qid] * len(judged)
            qrels["doc_id"] += judged
            qrels["relevance"] += grades.tolist()
    return (
        pa.table(
            {k: pa.array(v, pa.int64() if k == "relevance" else None) for k, v in qrels.items()}
        ),
        pa.table(run),
    )
