"""Pooling: hand-worked pools for every method, budgets, skipping judged documents, ties,
the judging files of every format and their round trip back to qrels and evaluation."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pytest

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import DuplicateError, OptionError, ParseError
from serpeval.evaluation.evaluate import evaluate
from serpeval.io import read_qrels
from serpeval.judgments.pool import pool
from serpeval.report.judging import JUDGING_FORMATS, format_for, judging_file

# Ranks (scores only order them):
#   A: q1 = a b c      q2 = x y
#   B: q1 = b d a      q2 = z x
A = Run.from_dict({"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"x": 2, "y": 1}}, name="A")
B = Run.from_dict({"q1": {"b": 3, "d": 2, "a": 1}, "q2": {"z": 2, "x": 1}}, name="B")


def pairs(p) -> list[tuple[str, str]]:
    return list(zip(p.query_ids.tolist(), p.doc_ids.tolist(), strict=True))


def test_depth_pool_by_best_rank_then_runs() -> None:
    # Top 2: q1 A{a,b} B{b,d}; q2 A{x,y} B{z,x}.
    # q1: b best rank 1 (B) and 2 runs; a best rank 1, 1 run (B has it at 3 > depth); d best 2.
    # q2: x best 1, 2 runs; z best 1, 1 run; y best 2.
    p = pool([A, B], method="depth", depth=2)
    assert pairs(p) == [("q1", "b"), ("q1", "a"), ("q1", "d"), ("q2", "x"), ("q2", "z"), ("q2", "y")]
    assert p.order.tolist() == [1, 2, 3, 1, 2, 3]
    assert p.best_rank.tolist() == [1, 1, 2, 1, 1, 2]
    assert p.runs.tolist() == [2, 1, 1, 2, 1, 1]
    assert p.candidates == 6
    assert p.already_judged == 0
    assert p.n_queries == 2
    # Per query 2 (q1 b a, q2 x z), then a budget of 3 by best rank and runs: b and x (rank 1,
    # 2 runs), then a or z (rank 1, 1 run; the seeded hash picks): one query keeps 2, one 1.
    capped = pool([A, B], method="depth", depth=2, per_query=2, budget=3)
    assert {("q1", "b"), ("q2", "x")} <= set(pairs(capped))
    summary = capped.summary()
    assert (summary["pooled"], summary["docs per query (min)"], summary["docs per query (max)"]) == (3, 1, 2)


def test_rrf_pool_weights_and_budgets() -> None:
    # w = sum 1/(60 + rank): q1 b = 1/62 + 1/61 = 0.032522, a = 1/61 + 1/63 = 0.032266,
    # d = 1/62 = 0.016129, c = 1/63 = 0.015873; q2 x = 1/61 + 1/62, z = 1/61, y = 1/62.
    p = pool([A, B], method="rrf", per_query=10)
    assert pairs(p)[:4] == [("q1", "b"), ("q1", "a"), ("q1", "d"), ("q1", "c")]
    assert p.weight[:4] == pytest.approx([1 / 62 + 1 / 61, 1 / 61 + 1 / 63, 1 / 62, 1 / 63])
    assert pairs(pool([A, B], method="rrf", per_query=2)) == [("q1", "b"), ("q1", "a"), ("q2", "x"), ("q2", "z")]
    # A total budget of 3 takes the 3 largest weights over all queries: b and x (0.032522
    # each), then a (0.032266); the output stays by query.
    assert pairs(pool([A, B], method="rrf", budget=3)) == [("q1", "b"), ("q1", "a"), ("q2", "x")]


def test_rbp_pool_weights() -> None:
    # w = sum (1 - p) p^(rank - 1) with p = 0.5: ranks 1, 2, 3 weigh 0.5, 0.25, 0.125.
    # q1: a = 0.5 + 0.125 = 0.625, b = 0.25 + 0.5 = 0.75, c = 0.125, d = 0.25.
    p = pool([A, B], method="rbp", rbp_p=0.5, per_query=4)
    q1 = [(d, w) for (q, d), w in zip(pairs(p), p.weight.tolist(), strict=True) if q == "q1"]
    assert q1 == [("b", 0.75), ("a", 0.625), ("d", 0.25), ("c", 0.125)]


def test_judged_documents_are_skipped_negative_grades_are_not() -> None:
    qrels = Qrels.from_dict({"q1": {"b": 0}, "q2": {"y": -1}})
    p = pool([A, B], method="depth", depth=2, qrels=qrels)
    assert pairs(p) == [("q1", "a"), ("q1", "d"), ("q2", "x"), ("q2", "z"), ("q2", "y")]
    assert p.already_judged == 1


def test_a_pool_with_nothing_left_to_judge_keeps_its_columns() -> None:
    """Everything judged: the empty frame still has the columns code reads (df["doc_id"])."""
    pytest.importorskip("pandas")
    everything = Qrels.from_dict({"q1": dict.fromkeys("abcd", 1), "q2": dict.fromkeys("xyz", 0)})
    frame = pool([A, B], method="rrf", budget=5, qrels=everything).to_pandas()
    assert frame.shape == (0, 6)
    assert list(frame.columns) == ["query_id", "doc_id", "order", "best_rank", "runs", "weight"]


def test_fractional_grades_are_refused_not_truncated() -> None:
    """A judgment of 2.5 (float qrels) was written as 2 by the simulated judging, and read as 0
    or 1 category by the agreement: refused, naming the row."""
    from serpeval.judgments.agreement import agreement

    fractional = Qrels.from_dict({"q1": {"a": 2.5, "b": 1.0}, "q2": {"x": 0.4}}, grades="float")
    whole = Qrels.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"x": 0}})
    with pytest.raises(ParseError, match=r"found 2\.5, which is not a whole number"):
        pool([A, B], method="depth", depth=2, oracle=fractional)
    with pytest.raises(ParseError, match="which is not a whole number"):
        agreement([fractional, whole])
    integral = Qrels.from_dict({"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 0.0}}, grades="float")
    assert agreement([integral, whole]).to_dicts()[0]["value"] == 1.0  # whole-number floats are read


def test_move_to_front_with_an_oracle() -> None:
    # Oracle: a 0, b 1, c 1, d 1. Both runs start at priority 0; A (given first) leads.
    # A gives a: non-relevant, A drops to -1; B leads: b relevant (stay), d relevant: 3 asked.
    oracle = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 1, "d": 1}})
    one = Run.from_dict({"q1": {"a": 3, "b": 2, "c": 1}}, name="A")
    two = Run.from_dict({"q1": {"b": 3, "d": 2, "a": 1}}, name="B")
    p = pool([one, two], method="mtf", per_query=3, oracle=oracle)
    assert pairs(p) == [("q1", "a"), ("q1", "b"), ("q1", "d")]
    assert p.grades.tolist() == [0, 1, 1]
    assert p.summary()["relevant found (oracle)"] == 2
    # With a judged in --qrels, replaying it costs nothing: A drops, B gives b and d.
    again = pool([one, two], method="mtf", per_query=2, oracle=oracle, qrels=Qrels.from_dict({"q1": {"a": 0}}))
    assert pairs(again) == [("q1", "b"), ("q1", "d")]
    assert again.already_judged == 1
    # Without an oracle the documents asked are pending, assumed relevant: A keeps the front.
    assert pairs(pool([one, two], method="mtf", per_query=2)) == [("q1", "a"), ("q1", "b")]
    # A relevant a keeps A in front: a, b (seen by A first), c.
    kind = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 1, "d": 1}})
    # a relevant (stay A), b non-relevant (A -1, B leads), B: b seen, d asked.
    assert pairs(pool([one, two], method="mtf", per_query=3, oracle=kind)) == [("q1", "a"), ("q1", "b"), ("q1", "d")]


def test_mtf_total_budget_is_split_over_queries() -> None:
    # 3 documents over 2 queries: 2 for q1 (first in byte order), 1 for q2.
    p = pool([A, B], method="mtf", budget=3)
    assert [q for q, _ in pairs(p)] == ["q1", "q1", "q2"]


def test_ties_follow_the_seed_not_the_file_order() -> None:
    # Two runs with disjoint documents: every document of rank 1 ties with another.
    left = {f"q{i}": {f"l{i}": 1.0} for i in range(40)}
    right = {f"q{i}": {f"r{i}": 1.0} for i in range(40)}
    runs = [Run.from_dict(left, name="L"), Run.from_dict(right, name="R")]
    first = pool(runs, method="rrf", per_query=1, seed=1)
    reordered = pool(runs[::-1], method="rrf", per_query=1, seed=1)
    assert pairs(first) == pairs(reordered)
    other = pool(runs, method="rrf", per_query=1, seed=2)
    assert pairs(first) != pairs(other)  # 40 coin flips: all equal with probability 2^-40
    assert {d[0] for _, d in pairs(first)} == {"l", "r"}


def test_options_are_checked() -> None:
    with pytest.raises(OptionError, match="needs a depth"):
        pool([A], method="depth")
    with pytest.raises(OptionError, match="needs a budget"):
        pool([A], method="rrf")
    with pytest.raises(OptionError, match="method must be one of"):
        pool([A], method="borda", depth=3)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="rbp_p"):
        pool([A], method="rbp", budget=3, rbp_p=1.0)


def test_duplicate_document_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "dup.run"
    path.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\n")
    from serpeval.io import read_run

    with pytest.raises(DuplicateError, match=rf"{path}:3: document 'a' is retrieved twice .*first at line 1"):
        pool([read_run(path)], depth=5)


# ----------------------------------------------------------------------------- judging files


def test_formats_and_their_parsers(tmp_path) -> None:
    p = pool([A, B], method="depth", depth=2)
    topics = {"q1": "heart, attack", "q2": 'say "hi"'}
    assert judging_file(p, "trec").splitlines()[0] == "q1 0 b -1"
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(judging_file(p, "quepid", topics=topics))))
    assert rows[0] == {"query": "heart, attack", "docid": "b", "rating": ""}
    assert len(rows) == 6
    table = list(csv.DictReader(io.StringIO(judging_file(p, "csv", topics=topics))))
    assert table[3] == {"query_id": "q2", "doc_id": "x", "relevance": "", "order": "1", "best_rank": "1",
                        "query": 'say "hi"'}
    lines = [json.loads(line) for line in judging_file(p, "jsonl", topics=topics).splitlines()]
    assert lines[0] == {"query_id": "q1", "doc_id": "b", "relevance": None, "order": 1, "best_rank": 1,
                        "query": "heart, attack"}
    body = json.loads(judging_file(p, "rank-eval", topics=topics, index="docs", k=5))
    assert body["metric"] == {"dcg": {"k": 5, "normalize": True}}
    first = body["requests"][0]
    assert first["id"] == "q1"
    assert first["request"] == {"query": {"multi_match": {"query": "heart, attack"}}}
    assert first["ratings"][0] == {"_index": "docs", "_id": "b", "rating": None}
    assert [len(r["ratings"]) for r in body["requests"]] == [3, 3]
    assert [format_for(n) for n in ("p.csv", "p.tsv", "p.jsonl", "p.json", "p.txt", None)] == \
        ["csv", "tsv", "jsonl", "rank-eval", "trec", "trec"]


@pytest.mark.parametrize("fmt", JUDGING_FORMATS)
def test_simulated_files_read_back_as_the_same_qrels(fmt, tmp_path) -> None:
    oracle = Qrels.from_dict({"q1": {"a": 2, "b": 0, "d": 1}, "q2": {"x": 1, "y": 0}})
    p = pool([A, B], method="depth", depth=2, oracle=oracle)
    assert p.grades.tolist() == [0, 2, 1, 1, 0, 0]  # b a d | x z (not in the oracle: 0) y
    assert p.oracle_unjudged == 1
    suffix = {"trec": ".txt", "csv": ".csv", "tsv": ".tsv", "jsonl": ".jsonl", "quepid": ".csv",
              "rank-eval": ".json"}[fmt]
    path = tmp_path / f"judged{suffix}"
    path.write_text(judging_file(p, fmt), encoding="utf-8")
    back = read_qrels(path)
    assert back.to_dict() == p.to_qrels().to_dict() == {"q1": {"b": 0, "a": 2, "d": 1}, "q2": {"x": 1, "z": 0, "y": 0}}


def test_filled_in_csv_round_trip_evaluates(tmp_path) -> None:
    """pool -> judge (fill the relevance column) -> evaluate, as a labelling tool would."""
    p = pool([A, B], method="depth", depth=2)
    path = tmp_path / "to_judge.csv"
    path.write_text(judging_file(p, "csv", topics={"q1": "one", "q2": "two"}))
    truth = {("q1", "a"): 1, ("q1", "b"): 0, ("q1", "d"): 1, ("q2", "x"): 1, ("q2", "z"): 0, ("q2", "y"): 0}
    lines = path.read_text().splitlines()
    filled = [lines[0]] + [
        ",".join([q, d, str(truth[(q, d)]), *rest]) for q, d, _, *rest in (line.split(",") for line in lines[1:])
    ]
    path.write_text("\n".join(filled) + "\n")
    qrels = read_qrels(path)
    results = evaluate(qrels, [A, B], ["P@2", "RR"])
    # A: q1 a b -> P@2 1/2, RR 1; q2 x y -> 1/2, RR 1.  B: q1 b d -> 1/2, RR 1/2; q2 z x -> 1/2, RR 1/2.
    assert results.means("A") == {"P@2": 0.5, "RR": 1.0}
    assert results.means("B") == {"P@2": 0.5, "RR": 0.5}


def test_unfilled_and_bad_files_name_file_and_line(tmp_path) -> None:
    p = pool([A, B], method="depth", depth=2)
    jsonl = tmp_path / "j.jsonl"
    jsonl.write_text(judging_file(p, "jsonl"))
    with pytest.raises(Exception, match=rf"{jsonl}:1: the relevance is missing"):
        read_qrels(jsonl)
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,doc_id,relevance\nq1,a,1\nq1,b,high\n")
    with pytest.raises(ParseError, match=rf"{bad}:3: the 'relevance' field is 'high', not a number"):
        read_qrels(bad)
    short = tmp_path / "short.csv"
    short.write_text("query,docid,rating\nq1,a\n")
    with pytest.raises(ParseError, match=rf"{short}:2: expected 3 fields"):
        read_qrels(short)
    rank_eval = tmp_path / "r.json"
    rank_eval.write_text(judging_file(p, "rank-eval"))
    with pytest.raises(ParseError, match=r"requests\[0\]\.ratings\[0\]: document 'b' has no rating"):
        read_qrels(rank_eval)


def test_csv_ids_stay_text(tmp_path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("query_id,doc_id,relevance\n007,0012,2\n")
    qrels = read_qrels(path)
    assert qrels.to_dict() == {"007": {"0012": 2}}


# ----------------------------------------------------------------------------- real data


def test_depth_pool_of_real_runs_evaluates_like_the_full_qrels(trec, tmp_path) -> None:
    """Simulated depth-10 pool of two Robust04 runs: P@5 and P@10 equal those of the full
    qrels (every top-10 document is in the pool; those the full qrels lack count 0 both ways)."""
    from serpeval.io import read_run

    folder = trec / "robust04"
    runs = [read_run(folder / "runs" / "bm25.run.gz"), read_run(folder / "runs" / "bm25-rm3.run.gz")]
    full = read_qrels(folder / "qrels.txt.gz")
    p = pool(runs, depth=10, oracle=full)
    path = tmp_path / "pool.txt"
    path.write_text(judging_file(p, "trec"))
    judged = read_qrels(path)
    common = sorted(set(full.to_dict()))
    mine = evaluate(judged, runs, ["P@5", "P@10"])
    theirs = evaluate(full, runs, ["P@5", "P@10"])
    for name in ("bm25", "bm25-rm3"):
        for m in ("P@5", "P@10"):
            a, b = mine.per_query(name, m), theirs.per_query(name, m)
            assert all(math.isclose(a[q], b[q]) for q in common if q in a and q in b)
    assert len(p) == len(pa.array(p.doc_ids))
    assert p.candidates >= len(p)


def test_queries_the_oracle_lacks_are_left_out() -> None:
    oracle = Qrels.from_dict({"q1": {"a": 1}})
    for method in ("depth", "mtf"):
        p = pool([A, B], method=method, depth=2, per_query=5, oracle=oracle)  # type: ignore[arg-type]
        assert {q for q, _ in pairs(p)} == {"q1"}
        assert p.oracle_queries_left_out == 1
        assert p.summary()["queries the oracle lacks (left out)"] == 1


def test_csv_and_tsv_runs_and_qrels_with_crlf_and_bom(tmp_path) -> None:
    from serpeval.io import read_run

    run_path = tmp_path / "run.csv"
    run_path.write_bytes("\ufeffqid,docid,score\r\nq1,d1,2.5\r\nq1,d2,1e0\r\n\r\nq2,é,3\r\n".encode())
    run = read_run(run_path)
    assert run.to_dict() == {"q1": {"d1": 2.5, "d2": 1.0}, "q2": {"é": 3.0}}
    assert run.name == "run"
    qrels_path = tmp_path / "qrels.tsv"
    qrels_path.write_text("topic\tdocno\tgrade\tnote\nq1\td1\t2\tgood, very\nq2\té\t0\t\n")
    assert read_qrels(qrels_path).to_dict() == {"q1": {"d1": 2}, "q2": {"é": 0}}
    half = tmp_path / "half.tsv"
    half.write_text("query_id\tdoc_id\trelevance\nq1\td1\t2.5\n")
    with pytest.raises(ParseError, match=rf"{half}:2: expected an integer relevance grade"):
        read_qrels(half)
