"""The demo's data: a deterministic synthetic test collection, or a real collection folder.

:func:`make_collection` generates a graded test collection (queries, judgments with grades
0-3, some documents left unjudged) and two rankers of different quality whose scores are
noisy functions of the true grades; :func:`load_collection` reads a folder of real data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import InputError

__all__ = ["DemoCollection", "load_collection", "make_collection"]

GRADE_PROBABILITIES = (0.62, 0.22, 0.11, 0.05)  # grades 0, 1, 2, 3


@dataclass(frozen=True)
class DemoCollection:
    """A test collection with two runs.

    Attributes:
        qrels: judgments (grades 0-3) for every query.
        runs: ``{"baseline": Run, "candidate": Run}`` (or the runs of a real collection).
        topics: ``{query_id: text}``.
        true_grades: for synthetic data, the grade of every document (judged or not),
            ``{query_id: {doc_id: grade}}``; the online simulations use it as the truth.
        description: one line saying what the data is.
        measures: the measures the demo reports.
    """

    qrels: Qrels
    runs: dict[str, Run]
    topics: dict[str, str]
    description: str
    true_grades: dict[str, dict[str, int]] | None = None
    measures: tuple[str, ...] = ("nDCG@10", "nDCG(gain=exp)@10", "AP", "P@10", "R@50", "RR", "Judged@10")


def make_collection(
    n_queries: int = 200,
    docs_per_query: int = 100,
    judged_per_query: int = 60,
    depth: int = 50,
    seed: int = 2024,
) -> DemoCollection:
    """Generate the demo collection deterministically from ``seed``.

    Each query has ``docs_per_query`` candidate documents with latent grades drawn from
    :data:`GRADE_PROBABILITIES`; the first ``judged_per_query`` of them (a random pool) are
    judged. Ranker scores are ``signal * grade + noise`` with standard normal noise: the
    baseline's signal is 0.55, the candidate's 0.75, so the candidate is better on average
    but not on every query. Each run keeps its top ``depth`` docs per query.
    """
    rng = np.random.default_rng(seed)
    grades = rng.choice(len(GRADE_PROBABILITIES), size=(n_queries, docs_per_query),
                        p=GRADE_PROBABILITIES)
    qids = np.array([f"{101 + i}" for i in range(n_queries)], dtype=object)
    doc_numbers = rng.permutation(n_queries * docs_per_query).reshape(n_queries, docs_per_query)
    docs = np.char.add("doc", np.char.zfill(doc_numbers.astype(str), 6)).astype(object)

    pool = np.argsort(rng.random((n_queries, docs_per_query)), axis=1)[:, :judged_per_query]
    judged_docs = np.take_along_axis(docs, pool, axis=1)
    judged_grades = np.take_along_axis(grades, pool, axis=1)
    qrels = Qrels(
        pa.array(np.repeat(qids, judged_per_query).tolist(), pa.string()),
        pa.array(judged_docs.ravel().tolist(), pa.string()),
        judged_grades.ravel().astype(np.int64),
        source="<demo qrels>",
    )

    def ranker(signal: float, name: str) -> Run:
        """Scores signal * grade + noise; the run keeps each query's top ``depth`` docs."""
        scores = np.round(signal * grades + rng.standard_normal(grades.shape), 6)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        return Run(
            pa.array(np.repeat(qids, depth).tolist(), pa.string()),
            pa.array(np.take_along_axis(docs, top, axis=1).ravel().tolist(), pa.string()),
            np.take_along_axis(scores, top, axis=1).ravel(),
            name=name, source=f"<demo {name}>",
        )

    runs = {"baseline": ranker(0.55, "baseline"), "candidate": ranker(0.75, "candidate")}
    topics = {q: f"synthetic topic {q}" for q in qids.tolist()}
    truth = {
        q: dict(zip(row_docs.tolist(), row_grades.tolist(), strict=True))
        for q, row_docs, row_grades in zip(qids.tolist(), docs, grades, strict=True)
    }
    return DemoCollection(
        qrels=qrels,
        runs=runs,
        topics=topics,
        true_grades=truth,
        description=(f"synthetic collection: {n_queries} queries, {docs_per_query} docs each, "
                     f"{judged_per_query} judged (grades 0-3), runs of depth {depth}, seed {seed}"),
    )


def load_collection(folder: str) -> DemoCollection:
    """A real collection folder: ``qrels.txt[.gz]``, ``runs/*``, optional ``topics*.tsv``."""

    from serpeval.io import read_qrels, read_run
    from serpeval.io.topics import read_topics

    root = Path(folder)
    qrels_files = sorted(root.glob("qrels*.txt*")) or sorted(root.glob("qrels*"))
    if not qrels_files:
        raise InputError(f"{folder}: no qrels file (expected qrels.txt or qrels.txt.gz).")
    run_files = [p for p in (root / "runs").glob("*") if p.is_file()] if (root / "runs").is_dir() else []
    # By name before the first dot, so that "bm25" (the baseline) comes before "bm25-rm3".
    run_files.sort(key=lambda p: (p.name.split(".")[0], p.name))
    if len(run_files) < 2:
        raise InputError(f"{folder}/runs: need at least two run files to compare; found {len(run_files)}.")
    # topics.tsv (short titles) reads best in reports; else the first other topics file.
    topic_files = sorted(root.glob("topics*.tsv"), key=lambda p: (p.name != "topics.tsv", p.name))
    topics = read_topics(topic_files[0]) if topic_files else {}
    runs = {}
    for path in run_files[:2]:
        run = read_run(path)
        runs[run.name] = run
    return DemoCollection(
        qrels=read_qrels(qrels_files[0]),
        runs=runs,
        topics=topics,
        description=f"{folder}: {qrels_files[0].name}, runs {', '.join(runs)}",
        measures=("nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10"),
    )
