"""The diversity scenario: subtopic qrels files in every layout == pyndeval on the same rows.

Each case of the harness (its ids of every shape, its run in its layout) gets subtopic
qrels drawn from its judgments: every judged document is judged for one to three of its
query's subtopics (subtopic ids of mixed shapes: numbers with leading zeros, Unicode,
nullish words), with its grade or another, and the file is written in a random layout
(separators, line ends, byte order mark, comments, gzip, shuffled rows) with the subtopic
in the second column. serpeval reads both files (``read_subtopic_qrels`` and the run);
pyndeval (ndeval's C code) gets the logical rows (in the file's order), with the run in ndeval ``-traditional``'s
order (score descending, doc id descending in byte order) computed here, independently of
serpeval. Every diversity measure, every query: equal to the last bit.
"""

from __future__ import annotations

import math
import warnings

import pytest

pyndeval = pytest.importorskip("pyndeval")

from tests.differential.compare import TALLY  # noqa: E402
from tests.differential.conftest import Case  # noqa: E402
from tests.differential.layouts import draw_layout, write  # noqa: E402
from tests.differential.shapes import Collection, draw_ids, grade_text  # noqa: E402

import serpeval  # noqa: E402
from serpeval.core.errors import MissingQueriesWarning  # noqa: E402
from serpeval.core.subtopics import SingleSubtopicWarning  # noqa: E402
from serpeval.io import read_subtopic_qrels  # noqa: E402

MEASURES = {f"{nd}@{k}": f"{ours}@{k}" for k in (1, 5, 10, 20) for nd, ours in (
    ("alpha-nDCG", "alpha_nDCG"), ("alpha-DCG", "alpha_DCG"), ("ERR-IA", "ERR_IA"), ("nERR-IA", "nERR_IA"),
    ("P-IA", "P_IA"), ("strec", "StRecall"))}
MEASURES |= {"NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA"}


def subtopic_rows(case: Case) -> list[tuple[str, str, str, str]]:
    """``(qid, subtopic, doc, grade text)``: each judgment of the case spread over subtopics."""
    rng = case.rng(17)
    taken: set[str] = set()
    subtopics: dict[str, list[str]] = {}
    rows = []
    for q, d, g in case.coll.qrels:
        if q not in subtopics:
            subtopics[q] = draw_ids(rng, ("numeric", "short", "utf8", "nullish"), int(rng.integers(1, 6)), taken)
        mine = subtopics[q]
        for s in rng.choice(mine, size=int(rng.integers(1, min(3, len(mine)) + 1)), replace=False).tolist():
            rows.append((q, s, d, g if rng.random() < 0.7 else grade_text(rng, 0.5)))
    return rows


def ndeval_order(run: list[tuple[str, str, str]]) -> list[tuple[str, str, float]]:
    """The run ranked as ``ndeval -traditional`` ranks it, as untied scores for pyndeval."""
    out = []
    for q in sorted({r[0] for r in run}):
        docs = sorted(((float(s), d.encode()) for qq, d, s in run if qq == q), reverse=True)
        out += [(q, d.decode(), -float(i)) for i, (_, d) in enumerate(docs)]
    return out


def test_subtopic_files_equal_pyndeval(small: Case, tmp_path) -> None:
    case = small
    rows = subtopic_rows(case)
    layout = draw_layout(case.rng(18), "qrels")
    # The layout writer puts the filler in the second column: there, the subtopic.
    coll = Collection("subtopics", [(q, d, g) for q, _, d, g in rows], [],
                      qrels_filler={i: s for i, (_, s, _, _) in enumerate(rows)})
    written = write(tmp_path, "qrels.diversity", coll, "qrels", layout, case.rng(19))
    qrels = read_subtopic_qrels(written.path)
    read = list(zip(*(c.to_pylist() for c in (qrels.query_ids, qrels.subtopic_ids, qrels.doc_ids)),
                    qrels.relevance.tolist(), strict=True))
    assert sorted(read) == sorted((q, s, d, int(g)) for q, s, d, g in rows)
    assert qrels.skipped_lines == written.skipped

    # In file order: a document's subtopic gains are added in the order the subtopics first
    # appear (pyndeval's order), which decides the last bit of a sum.
    expected = pyndeval.ndeval(read, ndeval_order(case.coll.run), list(MEASURES))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        warnings.simplefilter("ignore", SingleSubtopicWarning)
        res = serpeval.evaluate(qrels, case.run.path, list(MEASURES.values()))
    (result,) = res.runs
    assert set(result.query_ids.tolist()) == set(expected) == case.coll.evaluated_queries
    problems = []
    values = 0
    for nd, ours in MEASURES.items():
        got = res.per_query(result.name, ours)
        for q, want in expected.items():
            values += 1
            if nd == "nNRBP" and math.isnan(want[nd]):
                ok = got[q] == 0.0  # ndeval's 0/0 for a query without a relevant subtopic: serpeval's 0
            else:
                ok = got[q] == want[nd]
            if not ok:
                problems.append(f"{ours} of {q!r}: serpeval {got[q]!r}, ndeval {want[nd]!r}")
    TALLY.add("diversity vs pyndeval", [written.path, case.run.path], len(expected), values, len(problems))
    assert values > 0, f"{case.spec.id}: compared no value (no evaluated query)"
    assert not problems, f"{case.spec.id} ({layout.name}): {len(problems)} of {values} differ:\n  " + \
        "\n  ".join(problems[:12])
