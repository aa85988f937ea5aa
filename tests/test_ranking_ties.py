"""The tie policies of ``ranking.rank`` (issue 29 item 1): hand-worked orders, depth and
judged-only under each policy, the one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval import evaluate
from serpeval.core.data import Qrels, Run
from serpeval.core.errors import InvalidParameterError
from serpeval.core.ties import TIE_POLICIES, check_ties, same_ties
from serpeval.ranking import NONPOOL, UNJUDGED, break_ties, rank, tie_groups

# q1: a, b, c, d tie at 1.0 (trec_eval order d, c, b, a: doc id descending), e below.
QRELS = Qrels(["q1"] * 5, ["a", "b", "c", "d", "e"], np.array([2, 0, -1, 1, 3]))
RUN = Run(["q1"] * 6, ["a", "b", "c", "d", "x", "e"], np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.5]))


def test_trec_eval_order_is_the_default() -> None:
    r = rank(QRELS, RUN)
    # x, d, c, b, a by doc id descending; grades: x not in qrels, c pooled but unjudged
    assert r.grades.tolist() == [NONPOOL, 1, UNJUDGED, 0, 2, 3]
    assert r.ties == "trec_eval"
    assert r.tie_ids is None
    assert rank(QRELS, RUN, ties="trec_eval").grades.tolist() == r.grades.tolist()


def test_optimistic_and_pessimistic_orders() -> None:
    # keys max(grade, 0): x 0, d 1, c 0, b 0, a 2; stable, so equal keys keep x, c, b
    assert rank(QRELS, RUN, ties="optimistic").grades.tolist() == [2, 1, NONPOOL, UNJUDGED, 0, 3]
    assert rank(QRELS, RUN, ties="pessimistic").grades.tolist() == [NONPOOL, UNJUDGED, 0, 1, 2, 3]


def test_expected_records_the_groups() -> None:
    r = rank(QRELS, RUN, ties="expected")
    assert r.grades.tolist() == rank(QRELS, RUN).grades.tolist()
    assert r.ties == "expected"
    assert r.tie_ids is not None
    assert r.tie_ids.tolist() == [0, 0, 0, 0, 0, 1]


def test_policy_is_applied_before_depth() -> None:
    # optimistic keeps a (grade 2) and d (grade 1) in the top 2, whatever their doc ids
    assert rank(QRELS, RUN, ties="optimistic", depth=2).grades.tolist() == [2, 1]
    assert rank(QRELS, RUN, ties="pessimistic", depth=2).grades.tolist() == [NONPOOL, UNJUDGED]
    with pytest.raises(InvalidParameterError, match=r"^ties='expected' with depth 2: the depth cut splits a tie"):
        rank(QRELS, RUN, ties="expected", depth=2)
    assert rank(QRELS, RUN, ties="expected", depth=5).tie_ids.tolist() == [0, 0, 0, 0, 0]  # type: ignore[union-attr]


def test_judged_only_keeps_the_groups() -> None:
    r = rank(QRELS, RUN, ties="expected", judged_only=True)
    assert r.grades.tolist() == [1, 0, 2, 3]
    assert r.tie_ids is not None
    assert r.tie_ids.tolist() == [0, 0, 0, 1]
    # and the per-measure judged_only=True reads them too: AP over d, b, a tied then e
    values = evaluate(QRELS, RUN, ["AP(judged_only=True)", "AP"], ties="expected", judged_only=True)
    assert values.means("run")["AP(judged_only=True)"] == values.means("run")["AP"]


def test_unknown_policy_is_one_line() -> None:
    with pytest.raises(InvalidParameterError) as info:
        check_ties("best")
    assert str(info.value) == ("unknown tie policy 'best': use one of trec_eval, optimistic, pessimistic, "
                               "expected, rank (trec_eval is the default).")
    with pytest.raises(InvalidParameterError, match="unknown tie policy"):
        evaluate(QRELS, RUN, ["AP"], ties="random")  # type: ignore[arg-type]


def test_same_ties() -> None:
    same_ties(("base.json", ""), ("run", "trec_eval"))  # results from before policies: trec_eval
    with pytest.raises(InvalidParameterError, match=r"^cannot compare base.json \(ties=expected\) with run "
                                                    r"\(ties=trec_eval\)"):
        same_ties(("base.json", "expected"), ("run", "trec_eval"))


def test_results_state_the_policy() -> None:
    for policy in TIE_POLICIES:
        if policy == "rank":
            continue  # reads a run file (test_rank_policy_reads_the_rank_column)
        res = evaluate(QRELS, RUN, ["AP"], ties=policy)
        assert res.settings.ties == policy
        assert res.to_json_dict()["ties"] == policy
        first = res.settings.rules()[0]
        if policy == "trec_eval":  # today's wording, unchanged
            assert first == ("ranking: score descending, ties by doc id descending (byte order), as trec_eval; "
                             "rank column and line order ignored")
        else:
            assert f"(tie policy {policy})" in first


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(-2, 3)), min_size=1, max_size=30))
def test_break_ties_permutes_within_groups_only(rows: list[tuple[int, int, int]]) -> None:
    """Each policy's permutation keeps every doc in its tie group, and orders the group by
    its key (stable): checked on sorted random rankings."""
    rows.sort(key=lambda t: (t[0], -t[1]))
    codes = np.array([q for q, _, _ in rows])
    scores = np.array([float(s) for _, s, _ in rows])
    grades = np.array([g for _, _, g in rows])
    ids = tie_groups(codes, scores)
    for policy, sign in (("optimistic", -1), ("pessimistic", 1)):
        perm = break_ties(policy, ids, grades)  # type: ignore[arg-type]
        assert perm is not None
        assert sorted(perm.tolist()) == list(range(len(rows)))
        assert (ids[perm] == ids).all()
        key = sign * np.maximum(grades[perm], 0)
        same = ids[1:] == ids[:-1]
        assert (key[1:][same] >= key[:-1][same]).all()
    assert break_ties("trec_eval", ids, grades) is None
    assert break_ties("expected", ids, grades) is None


def test_rank_policy_reads_the_rank_column(tmp_path: Path) -> None:
    from serpeval.io import read_run

    # ranks b 1, c 2, a 3, d 4 (scores say otherwise); a tab and two spaces: the line-by-line reader
    path = tmp_path / "run.txt"
    path.write_text("q1\tQ0\ta\t3\t9.0\tr\nq1 Q0 b 1 1.0 r\nq1 Q0  c 2 5.0 r\nq1 Q0 d 4 0.5 r\nq1 Q0 x 5 7 r\n")
    r = rank(QRELS, read_run(path), ties="rank")
    assert r.grades.tolist() == [0, UNJUDGED, 2, 1, NONPOOL]  # b, c, a, d, x
    assert rank(QRELS, read_run(path), ties="rank", depth=2).grades.tolist() == [0, UNJUDGED]
    single = tmp_path / "single.txt"  # single-spaced: Arrow's reader
    single.write_text("q1 Q0 a 2 1.0 r\nq1 Q0 b 1 1.0 r\nq1 Q0 e 3 9.0 r\n")
    assert rank(QRELS, read_run(single), ties="rank").grades.tolist() == [0, 2, 3]


def test_rank_policy_refusals(tmp_path: Path) -> None:
    from serpeval.io import read_run

    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 b x 1.0 r\nq1 Q0 c 2.5 1.0 r\n")
    with pytest.raises(InvalidParameterError, match=r"bad.txt: ties='rank' needs an integer rank in column 4 of "
                                                    r"every line; lines 2, 3 have none"):
        rank(QRELS, read_run(bad), ties="rank")
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 Q0 a 1 1.0 r\nq2 Q0 a 1 1.0 r\nq1 Q0 b 1 1.0 r\n")
    with pytest.raises(InvalidParameterError, match=r"dup.txt:3: ties='rank' needs distinct ranks within a query, "
                                                    r"and query 'q1' has rank 1 twice \(also at line 1\)"):
        rank(QRELS, read_run(dup), ties="rank")
    with pytest.raises(InvalidParameterError, match="ties='rank' reads the rank column of a TREC run file"):
        rank(QRELS, RUN, ties="rank")


def test_rank_policy_says_why_a_rank_is_refused(tmp_path: Path) -> None:
    # 99999999999999999999 is an integer, but beyond 64 bits: the message said only that the
    # line "has none", as if column 4 were empty.
    from serpeval.io import read_run

    big = tmp_path / "big.txt"
    big.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 b 99999999999999999999 0.5 r\n")
    with pytest.raises(InvalidParameterError, match=r"line 2 has none: the field is missing, is not a whole number "
                                                    r"in digits \(3, not 3\.0\), or is beyond ±2\^62\."):
        rank(QRELS, read_run(big), ties="rank")


@pytest.mark.parametrize("ties", ["trec_eval", "optimistic", "pessimistic"])
def test_a_tie_split_by_the_depth_cut_is_counted(ties: str) -> None:
    # q1: a and b tie at the top and depth 1 keeps one of them: the tie rule chose it (RR 1
    # or 0), but the kept ranking holds one doc, and the count of ties broken said 0.
    # q2: x, y, z tie, depth 1: one more group. q3: its tie (u, v) is cut whole: not counted.
    judged = {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}, "q3": {"t": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"x": 2.0, "y": 2.0, "z": 2.0},
           "q3": {"t": 3.0, "u": 1.0, "v": 1.0}}
    qrels = Qrels.from_dict(judged)
    assert rank(qrels, Run.from_dict(run), depth=1, ties=ties).coverage.ties == 2
    # depth 2: q1's group whole, two of q2's three, and q3's u above the cut, v below it
    assert rank(qrels, Run.from_dict(run), depth=2, ties=ties).coverage.ties == 3
    assert rank(qrels, Run.from_dict(run), ties=ties).coverage.ties == 3
