"""ranking.py: the order, relevance of retrieved docs, query coverage, depth, duplicates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import DuplicateError, InvalidParameterError, MissingQueriesError
from serpeval.io import read_trec_run
from serpeval.ranking import NONPOOL, UNJUDGED, rank, rank_order


def ranked_docs(run: Run, qrels: Qrels, **options) -> dict[str, list[int]]:
    r = rank(qrels, run, **options)
    return {q: r.grades[r.offsets[i]:r.offsets[i + 1]].tolist() for i, q in enumerate(r.query_ids)}


def test_ties_break_by_doc_id_descending_in_byte_order() -> None:
    # All scores equal: trec_eval orders d9 > d10 > D2 ('9' > '1', lowercase > uppercase)
    run = Run.from_dict({"q": {"d10": 1.0, "D2": 1.0, "d9": 1.0}})
    order = rank_order(run)
    assert [run.doc_ids[int(i)].as_py() for i in order] == ["d9", "d10", "D2"]


def test_negative_zero_ties_with_zero_and_rank_column_is_ignored() -> None:
    run = read_trec_run(b"q Q0 a 1 -0.0 t\nq Q0 b 2 0.0 t\nq Q0 c 3 0.5 t\n")
    order = rank_order(run)
    assert [run.doc_ids[int(i)].as_py() for i in order] == ["c", "b", "a"]


def test_utf8_ids_sort_after_ascii() -> None:
    run = Run.from_dict({"q": {"z": 1.0, "é": 1.0, "a": 1.0}})
    assert [run.doc_ids[int(i)].as_py() for i in rank_order(run)] == ["é", "z", "a"]


def test_grades_nonpool_and_unjudged() -> None:
    qrels = Qrels.from_dict({"q": {"rel": 2, "non": 0, "neg": -1}})
    run = Run.from_dict({"q": {"rel": 4.0, "neg": 3.0, "non": 2.0, "new": 1.0}})
    assert ranked_docs(run, qrels) == {"q": [2, UNJUDGED, 0, NONPOOL]}


def test_query_coverage_and_policies() -> None:
    qrels = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}})
    run = Run.from_dict({"1": {"a": 1.0}, "9": {"x": 1.0, "y": 0.5}}, name="r")
    skipped = rank(qrels, run)
    assert skipped.query_ids.tolist() == ["1"]
    assert skipped.coverage.missing == ("2", "3")
    assert skipped.coverage.unjudged_queries == 1
    assert skipped.coverage.unjudged_rows == 2
    zero = rank(qrels, run, missing="zero")
    assert zero.query_ids.tolist() == ["1", "2", "3"]
    assert zero.n_ret.tolist() == [1, 0, 0]
    with pytest.raises(MissingQueriesError, match=r"2 judged queries have no results in run 'r': '2', '3'"):
        rank(qrels, run, missing="error")
    with pytest.raises(InvalidParameterError, match="missing must be one of"):
        rank(qrels, run, missing="drop")  # type: ignore[arg-type]


def test_depth_cuts_after_sorting() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1}})
    run = Run.from_dict({"q": {"a": 1.0, "x": 3.0, "b": 2.0}})
    assert ranked_docs(run, qrels, depth=2) == {"q": [NONPOOL, 1]}
    assert rank(qrels, run, depth=2).coverage.truncated_rows == 1


def test_duplicate_doc_is_an_error_naming_the_line(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    path = tmp_path / "dup.run"
    path.write_text("# header\nq Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\n\nq Q0 a 3 1.0 t\n")
    from serpeval.io import read_run

    with pytest.raises(DuplicateError, match=r"dup.run:5: document 'a' is retrieved twice for query 'q' "
                                             r"\(first at line 2\)") as refused:
        rank(qrels, read_run(path))
    assert (refused.value.query, refused.value.doc) == ("q", "a")  # for callers that reword it


def test_duplicate_below_depth_is_accepted_like_trec_eval() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = read_trec_run(b"q Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\nq Q0 a 3 1.0 t\n")
    assert ranked_docs(run, qrels, depth=2) == {"q": [1, NONPOOL]}


def test_duplicate_in_unjudged_query_is_not_checked() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = read_trec_run(b"q Q0 a 1 3.0 t\nz Q0 b 1 2.0 t\nz Q0 b 2 1.0 t\n")
    assert ranked_docs(run, qrels) == {"q": [1]}


def test_judged_only_closes_the_gaps() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0, "c": -1}})
    run = Run.from_dict({"q": {"x": 5.0, "a": 4.0, "c": 3.0, "b": 2.0}})
    r = rank(qrels, run, judged_only=True)
    assert r.grades.tolist() == [1, 0]
    assert r.coverage.dropped_unjudged == 2


def test_float32_scores_make_close_scores_tie() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0 + 1e-12}})
    assert ranked_docs(run, qrels) == {"q": [NONPOOL, 1]}
    assert ranked_docs(run, qrels, float32_scores=True) == {"q": [NONPOOL, 1]}  # tie: b > a
    run = Run.from_dict({"q": {"b": 1.0, "a": 1.0 + 1e-12}})
    assert ranked_docs(run, qrels) == {"q": [1, NONPOOL]}
    assert ranked_docs(run, qrels, float32_scores=True) == {"q": [NONPOOL, 1]}


def test_ties_are_counted() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5, "e": 0.5, "f": 0.1}})
    assert rank(qrels, run).coverage.ties == 2


def test_shuffled_lines_give_identical_rankings() -> None:
    rng = np.random.default_rng(0)
    lines = [f"q{q} Q0 d{d} 0 {rng.integers(0, 4)} t" for q in range(5) for d in range(30)]
    qrels = Qrels.from_dict({f"q{q}": {f"d{d}": int(d % 3) for d in range(0, 30, 2)} for q in range(5)})
    base = rank(qrels, read_trec_run(("\n".join(lines) + "\n").encode()))
    for _ in range(5):
        rng.shuffle(lines)
        other = rank(qrels, read_trec_run(("\n".join(lines) + "\n").encode()))
        assert np.array_equal(other.grades, base.grades)
        assert np.array_equal(other.offsets, base.offsets)


# ---------------------------------------------------------------------------- one order, two paths

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from serpeval.core.order import _arrow_sort_order, sort_order  # noqa: E402


@settings(max_examples=150)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0, 7.0]),
                       st.sampled_from(["a", "b", "c", "d9", "d10", "é", "Z", "aa"])),
             min_size=1, max_size=40, unique_by=lambda t: (t[0], t[2])),
    st.sampled_from(["as-is", "presorted", "presorted-ties-ascending", "shuffled-queries",
                     "shuffled-queries-ties-ascending"]),
)
def test_presorted_fast_path_equals_the_full_sort(rows, layout) -> None:
    """Files already in rank order (the common case) take a fast path; it must agree exactly."""
    import pyarrow as pa

    if layout != "as-is":
        tie_key = (lambda d: d) if layout.endswith("ties-ascending") else (lambda d: [-b for b in d.encode()])
        rows = sorted(rows, key=lambda r: (r[0], -r[1], tie_key(r[2])))
        if layout.startswith("shuffled-queries"):
            rows = sorted(rows, key=lambda r: (3 - r[0]))  # stable: each query stays in rank order
    codes = np.array([r[0] for r in rows], dtype=np.int32)
    scores = np.array([r[1] for r in rows])
    docs = pa.chunked_array([pa.array([r[2] for r in rows])])
    expected = _arrow_sort_order(codes, scores + 0.0, docs)
    assert sort_order(codes, scores, docs).tolist() == expected.tolist()


@pytest.mark.parametrize("scale", [1, 2**40])
def test_ideal_rankings_hold_every_judgment_sorted_descending(scale: int) -> None:
    """The ideal grades per query, whether grade and query code pack into one sortable
    integer (small grades) or not (grades spanning >= 2^31: the lexsort path)."""
    rng = np.random.default_rng(5)
    n = 500
    queries = [f"q{i}" for i in rng.integers(0, 40, n)]
    grades = rng.integers(-2, 5, n) * scale
    qrels = Qrels(queries, [f"d{i}" for i in range(n)], grades)
    r = rank(qrels, Run(queries, [f"d{i}" for i in range(n)], np.zeros(n)), missing="zero")
    for i, q in enumerate(r.query_ids):
        expected = sorted((g for qq, g in zip(queries, grades.tolist(), strict=True) if qq == q), reverse=True)
        assert r.ideal_grades[r.ideal_offsets[i]:r.ideal_offsets[i + 1]].tolist() == expected


def test_rank_reads_like_its_rules() -> None:
    """``rank`` states its rules (options, which queries, order, depth, relevance and
    duplicates, judged-only, the missing policy) in a few lines; the memory handling lives
    in named helpers (issue 28: it had grown to 105 lines)."""
    import ast
    import inspect

    from serpeval import ranking

    tree = ast.parse(inspect.getsource(ranking.rank))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    body = function.body[1:]  # after the docstring
    lines = body[-1].end_lineno - body[0].lineno + 1  # type: ignore[operator]
    assert lines <= 20, f"rank's body is {lines} lines"
