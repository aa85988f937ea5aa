"""Invariances of every registered measure, on the harness's collections, through files.

pytrec_eval has no ERR, RBP, Judged, DCG, YAAP or gain=exp nDCG; for those (and all the
others) these must hold exactly, per query:

* appending unjudged documents below rank k changes no measure with cutoff k;
* splitting the run into parts (read from separate files and joined, concatenated as
  bytes with ``cat``, or an Arrow table of several chunks) changes nothing;
* renaming every doc id by an order-preserving bijection (ties are broken by doc id) and
  every query id by any bijection changes nothing; with no tied scores, so does any
  renaming of the doc ids.

The rewritten files get layouts of their own, so the readers are exercised again. Cases
spread over Arrow blocks are left to the oracle and reader tests (their files are 45 MB).
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import pairwise

import pyarrow as pa
import pytest
from tests.differential.compare import TALLY, measure_values, same
from tests.differential.conftest import Case
from tests.differential.layouts import draw_layout, write
from tests.differential.shapes import EVERY_SHAPE, Collection, draw_ids

from serpeval.core.data import Run
from serpeval.io import qrels_from_table, read_run, run_from_table
from serpeval.measures import REGISTRY, Measure

CUTOFFS = (5, 20)


def every_measure() -> list[Measure]:
    """Every registered measure: without a cutoff (where allowed), at 5 and at 20, and a few
    non-default parameters."""
    out = []
    for spec in REGISTRY:
        if spec.subtopics:
            continue  # subtopic qrels: test_diversity.py
        cutoffs = {"required": CUTOFFS, "none": (None,)}.get(spec.cutoff, (None, *CUTOFFS))
        out += [spec.bind({}, k, spec.name) for k in cutoffs]
    out += [REGISTRY.parse(name) for name in ("nDCG(gain=exp)@10", "P(rel=2)@5", "AP(rel=2)", "RBP(p=0.5)",
                                              "ERR(max_grade=2)@10", "IPrec(recall=0.3,rounding=v9)")]
    return out


MEASURES = every_measure()


def assert_same(check: str, base: dict[str, dict[str, float]], other: dict[str, dict[str, float]],
                files: list, label: str, names: set[str] | None = None) -> None:
    problems = []
    values = 0
    assert set(base) == set(other), label
    for q, row in base.items():
        for name, value in row.items():
            if names is not None and name not in names:
                continue
            values += 1
            if not same(value, other[q][name]):
                problems.append(f"{name} of {q!r}: {value!r} became {other[q][name]!r}")
    TALLY.add(check, files, len(base), values, len(problems))
    assert values > 0
    assert not problems, f"{label}: {len(problems)} of {values} changed:\n  " + "\n  ".join(problems[:12])


@pytest.mark.parametrize("k", CUTOFFS)
def test_unjudged_docs_below_rank_k_change_no_measure_at_k(small: Case, k: int, tmp_path) -> None:
    coll, rng = small.coll, small.rng(k)
    at_k = [m for m in MEASURES if m.cutoff == k]
    base = measure_values(small.qrels.path, small.run.path, at_k)
    judged = {d for _, d, _ in coll.qrels}
    scores: dict[str, list[float]] = {}
    for q, _, s in coll.run:
        scores.setdefault(q, []).append(float(s))
    taken = judged | {d for _, d, _ in coll.run}
    extra = []
    for q, values in scores.items():
        if len(values) < k:
            continue  # fewer than k docs: an appended doc would land in the top k
        kth = sorted(values, reverse=True)[k - 1]
        if not math.isfinite(kth):
            continue  # nothing is below -inf; inf - inf is NaN
        # Strictly below the k-th best score: ranked after the top k, wherever among the rest.
        new = draw_ids(rng, EVERY_SHAPE, int(rng.integers(1, 30)), taken)
        extra += [(q, d, repr(kth - (1.0 + abs(kth)) * float(rng.uniform(0.001, 3)))) for d in new]
    assert extra, "no query with k docs to append to"
    longer = Collection(coll.name, coll.qrels, coll.run + extra)
    run = write(tmp_path, "longer.run", longer, "run", draw_layout(rng, "run"), rng)
    assert_same("invariance: unjudged below k", base, measure_values(small.qrels.path, run.path, at_k),
                [run.path], f"{small.spec.id} +{len(extra)} docs ({run.layout.name})")


def test_splitting_the_run_changes_nothing(small: Case, tmp_path) -> None:
    coll, rng = small.coll, small.rng(1)
    base = measure_values(small.qrels.path, small.run.path, MEASURES)
    rows = small.run.rows  # in file order
    cuts = sorted(rng.choice(range(1, len(rows)), size=int(rng.integers(1, 4)), replace=False).tolist())
    bounds = [0, *cuts, len(rows)]
    parts = [Collection(coll.name, [], rows[a:b]) for a, b in pairwise(bounds)]
    gz = bool(rng.random() < 0.3)  # `cat a.gz b.gz` is a valid gzip file too
    written = []
    for i, part in enumerate(parts):
        layout = replace(draw_layout(rng, "run"), shuffled=False, gzip=gz, final_newline=True)
        written.append(write(tmp_path, f"part{i}.run", part, "run", layout, rng))
    label = f"{small.spec.id} in {len(parts)} parts ({', '.join(w.layout.name for w in written)})"
    # Read separately, joined as one run of several chunks.
    runs = [read_run(w.path) for w in written]
    joined = Run(pa.chunked_array([c for r in runs for c in r.query_ids.chunks]),
                 pa.chunked_array([c for r in runs for c in r.doc_ids.chunks]),
                 [s for r in runs for s in r.scores.tolist()], name="joined")
    assert joined.doc_ids.num_chunks >= len(parts)
    assert_same("invariance: run split", base, measure_values(small.qrels.path, joined, MEASURES),
                [w.path for w in written], label + ", joined")
    # Concatenated as bytes: byte order marks of the parts now start later lines.
    cat = tmp_path / ("cat.run.gz" if gz else "cat.run")
    cat.write_bytes(b"".join(w.path.read_bytes() for w in written))
    assert_same("invariance: run split", base, measure_values(small.qrels.path, cat, MEASURES),
                [cat], label + ", concatenated")
    # Arrow tables of several chunks, for the run and the qrels.
    table = pa.Table.from_batches([b for r in runs for b in r.to_arrow().to_batches()])
    query_ids, doc_ids, grades = _chunked([(q, d, int(g)) for q, d, g in coll.qrels], rng)
    qtable = pa.table({"query_id": query_ids, "doc_id": doc_ids, "relevance": grades})
    assert table["doc_id"].num_chunks >= len(parts)
    assert qtable["doc_id"].num_chunks >= 2
    assert_same("invariance: run split", base,
                measure_values(qrels_from_table(qtable), run_from_table(table), MEASURES), [], label + ", tables")


def _chunked(rows: list[tuple[str, str, int]], rng) -> tuple[pa.ChunkedArray, pa.ChunkedArray, list[int]]:
    """Columns of ``rows`` cut into 2 to 5 chunks at random rows."""
    cuts = sorted(rng.choice(range(1, len(rows)), size=int(rng.integers(1, 5)), replace=False).tolist())
    bounds = [0, *cuts, len(rows)]
    pieces = [rows[a:b] for a, b in pairwise(bounds)]
    return (pa.chunked_array([pa.array([r[0] for r in p], pa.string()) for p in pieces]),
            pa.chunked_array([pa.array([r[1] for r in p], pa.string()) for p in pieces]),
            [r[2] for r in rows])


def renamed(coll: Collection, docs: dict[str, str], queries: dict[str, str]) -> Collection:
    return Collection(coll.name, [(queries[q], docs[d], g) for q, d, g in coll.qrels],
                      [(queries[q], docs[d], s) for q, d, s in coll.run])


def fresh_ids(rng, n: int, avoid: set[str], query: bool = False) -> list[str]:
    return draw_ids(rng, EVERY_SHAPE, n, set(avoid), query=query)


def utf8_sorted(values) -> list[str]:
    return sorted(values, key=lambda v: v.encode("utf-8"))


def test_renaming_ids_changes_nothing(small: Case, tmp_path) -> None:
    coll, rng = small.coll, small.rng(2)
    base = measure_values(small.qrels.path, small.run.path, MEASURES)
    doc_ids = utf8_sorted({d for _, d, _ in coll.qrels} | {d for _, d, _ in coll.run})
    query_ids = sorted({q for q, _, _ in coll.qrels} | {q for q, _, _ in coll.run})
    everything = set(doc_ids) | set(query_ids)
    # Docs: the i-th smallest old id becomes the i-th smallest new one (ties keep their order).
    docs = dict(zip(doc_ids, utf8_sorted(fresh_ids(rng, len(doc_ids), everything)), strict=True))
    queries = dict(zip(query_ids, fresh_ids(rng, len(query_ids), everything, query=True), strict=True))
    other = renamed(coll, docs, queries)
    qrels = write(tmp_path, "qrels.txt", other, "qrels", draw_layout(rng, "qrels"), rng)
    run = write(tmp_path, "run.txt", other, "run", draw_layout(rng, "run"), rng)
    after = measure_values(qrels.path, run.path, MEASURES)
    back = {q: after[queries[q]] for q in base}
    assert_same("invariance: renamed ids", base, back, [qrels.path, run.path],
                f"{small.spec.id} renamed ({qrels.layout.name} / {run.layout.name})")


def test_renaming_docs_any_way_changes_nothing_without_ties(small: Case, tmp_path) -> None:
    """With distinct scores (each query's docs scored by their rank), doc ids never decide."""
    coll, rng = small.coll, small.rng(3)
    ranked: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in coll.run:
        ranked.setdefault(q, []).append((d, float(s)))
    distinct = []
    for q, docs in ranked.items():  # trec_eval's order: score descending, then doc id descending
        docs.sort(key=lambda row: row[0].encode(), reverse=True)
        docs.sort(key=lambda row: row[1], reverse=True)
        distinct += [(q, d, str(len(docs) - i)) for i, (d, _) in enumerate(docs)]
    untied = Collection(coll.name, coll.qrels, distinct)
    base_run = write(tmp_path, "untied.run", untied, "run", draw_layout(rng, "run"), rng)
    base = measure_values(small.qrels.path, base_run.path, MEASURES)
    doc_ids = sorted({d for _, d, _ in coll.qrels} | {d for _, d, _ in coll.run})
    new = fresh_ids(rng, len(doc_ids), set(doc_ids))
    docs = dict(zip(doc_ids, [new[i] for i in rng.permutation(len(new)).tolist()], strict=True))
    other = renamed(untied, docs, {q: q for q in {q for q, _, _ in coll.qrels} | set(ranked)})
    qrels = write(tmp_path, "qrels.txt", other, "qrels", draw_layout(rng, "qrels"), rng)
    run = write(tmp_path, "run.txt", other, "run", draw_layout(rng, "run"), rng)
    assert_same("invariance: renamed ids", base, measure_values(qrels.path, run.path, MEASURES),
                [base_run.path, qrels.path, run.path], f"{small.spec.id} renamed without ties")
