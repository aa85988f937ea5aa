"""Input signatures (issue 29 item 3): the content hash of a qrels or run as parsed, checked
against an independent pure-Python implementation of its formula; whitespace and line order
keep it, a changed grade, id or score changes it; every result carries it; compare and gate
warn when the runs were evaluated against different qrels."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import serpeval
from serpeval.comparison.compare import compare_results
from serpeval.comparison.gate import gate_results
from serpeval.core.fingerprints import content_signature, finish_signature, signature_of, signature_part
from serpeval.evaluation.results import Results
from serpeval.io import read_qrels, read_run, read_subtopic_qrels

M = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


def _mix(h: int, word: int) -> int:
    h = ((h ^ word) * M) & MASK
    return h ^ (h >> 31)


def _fp(text: str) -> int:
    """The documented string fingerprint, byte by byte: h = len * M, then each 8-byte
    little-endian word (the last zero-padded) mixed in."""
    data = text.encode()
    h = (len(data) * M) & MASK
    for i in range(0, len(data), 8):
        h = _mix(h, int.from_bytes(data[i:i + 8].ljust(8, b"\0"), "little"))
    return h


def _fin(h: int) -> int:
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK
    return h ^ (h >> 31)


def reference(rows: list[tuple[str, str, float]]) -> str:
    """content_signature's formula with Python integers, one row at a time."""
    total = 0
    for q, d, v in rows:
        h = _mix((_fp(q) * M) & MASK, _fp(d))
        h = _mix(h, int(np.float64(float(v) + 0.0).view(np.uint64)))
        total = (total + _fin(h)) & MASK
    return f"{_fin(total ^ ((len(rows) * M) & MASK)):016x}"


def _sign(rows: list[tuple[str, str, float]]) -> str:
    q, d, v = zip(*rows, strict=True) if rows else ((), (), ())
    return content_signature(pa.chunked_array([list(q)], pa.string()), pa.chunked_array([list(d)], pa.string()),
                             np.array(v, dtype=np.float64))


def test_the_formula_against_a_pure_python_implementation() -> None:
    rng = random.Random(7)
    # ids of mixed lengths (across the 8-byte words), Unicode, empty strings
    ids = ["", "a", "d1", "doc-0000017", "clueweb09-en0000-00-00000", "é文書", "x" * 8, "y" * 9, "z" * 64]
    values = [0.0, 1.0, 2.0, -1.0, 0.5, 1e-300, 3.25]
    rows = [(rng.choice(ids), rng.choice(ids), rng.choice(values)) for _ in range(300)]
    assert _sign(rows) == reference(rows)
    from serpeval.core import fingerprints

    whole = _sign(rows)
    fingerprints._SIGN_BLOCK, block = 7, fingerprints._SIGN_BLOCK     # 43 blocks, sums that wrap
    try:
        assert _sign(rows) == whole
    finally:
        fingerprints._SIGN_BLOCK = block
    assert _sign(rows[:1]) == reference(rows[:1])
    assert _sign([]) == reference([])
    assert _sign([("q", "d", -0.0)]) == _sign([("q", "d", 0.0)])          # -0.0 is 0.0
    assert _sign(rows) == _sign(rows[::-1])                               # row order does not matter
    assert _sign(rows) != _sign(rows[:-1])                                # a row fewer does
    assert _sign([("q1", "d", 1.0)]) != _sign([("d", "q1", 1.0)])         # query and doc are not swappable
    ordered = content_signature(pa.chunked_array([["a", "b"]]), pa.chunked_array([["x", "y"]]), np.ones(2),
                                ordered=True)
    assert ordered != content_signature(pa.chunked_array([["b", "a"]]), pa.chunked_array([["y", "x"]]), np.ones(2),
                                        ordered=True)


def test_parts_add_up_to_the_whole() -> None:
    """signature_part over pieces (the streamed runs, Spark's query groups), added modulo 2^64,
    finishes to the signature of all the rows; ordered=True with each piece's first_row too."""
    rng = random.Random(11)
    rows = [(f"q{rng.randrange(30)}", f"d{rng.randrange(500)}", rng.choice([0.0, 1.0, 2.5, -1.0, 7e9]))
            for _ in range(1000)]
    q, d, v = (list(c) for c in zip(*rows, strict=True))
    whole = content_signature(pa.chunked_array([q], pa.string()), pa.chunked_array([d], pa.string()), np.array(v))
    whole_ordered = content_signature(pa.chunked_array([q], pa.string()), pa.chunked_array([d], pa.string()),
                                      np.array(v), ordered=True)
    cuts = [0, 1, 2, 250, 251, 999, 1000]
    total = rows_seen = total_ordered = 0
    for a, b in itertools.pairwise(cuts):
        args = (pa.chunked_array([q[a:b]], pa.string()), pa.chunked_array([d[a:b]], pa.string()), np.array(v[a:b]))
        part, n = signature_part(*args)
        part_ordered, _ = signature_part(*args, ordered=True, first_row=a)
        assert 0 <= part < 1 << 64
        assert n == b - a
        total, total_ordered, rows_seen = (total + part) % (1 << 64), (total_ordered + part_ordered) % (1 << 64), \
            rows_seen + n
    assert finish_signature(total, rows_seen) == whole == reference(rows)
    assert finish_signature(total_ordered, rows_seen) == whole_ordered != whole
    assert finish_signature(total, rows_seen - 1) != whole                     # the row count is part of it


def test_results_say_how_grades_were_read(tmp_path: Path) -> None:
    """The grade type is in the rules, the JSON and the inputs block, and read back."""
    qrels = _write(tmp_path / "q.txt", QRELS)
    run = _write(tmp_path / "a.run", RUN)
    ints = serpeval.evaluate(qrels, run, ["nDCG@5"])
    floats = serpeval.evaluate(qrels, run, ["nDCG@5"], grades="float")
    assert (ints.settings.grades, floats.settings.grades) == ("int", "float")
    assert "grades read as integers (trec_eval); fractional grades refused" in ints.settings.rules()
    assert any(rule.startswith("grades read as fractional numbers") for rule in floats.settings.rules())
    as_json = floats.to_json_dict(per_query=True)
    assert as_json["grades"] == as_json["inputs"]["grades"] == "float"
    assert ints.to_json_dict()["inputs"]["grades"] == "int"
    assert Results.from_json_dict(json.loads(json.dumps(as_json))).settings.grades == "float"
    # the same content (integer grades) signs alike; the rules, and so the rules signature, differ
    assert floats.settings.qrels_signature == ints.settings.qrels_signature
    assert floats.inputs()["rules"] != ints.inputs()["rules"]
    assert ints.means("a") == floats.means("a")
    from serpeval.report.sections_offline import input_lines

    assert "; grades float; " in input_lines(floats.inputs())[-1]            # the HTML report's Inputs lines
    assert "; grades int; " in input_lines(ints.inputs())[-1]


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 doc-long-id-3 2\nq2 0 e1 1\nq2 0 e2 0\n"
RUN = "q1 Q0 d1 1 3.5 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 x9 3 1.0 r\nq2 Q0 e2 1 0.7 r\nq2 Q0 e1 2 0.5 r\n"


def _write(path: Path, text: str) -> str:
    path.write_bytes(text.encode())
    return str(path)


def test_whitespace_and_line_order_keep_a_qrels_signature_a_changed_grade_changes_it(tmp_path: Path) -> None:
    plain = signature_of(read_qrels(_write(tmp_path / "a.txt", QRELS)))
    lines = QRELS.splitlines()
    spaced = "\r\n".join(line.replace(" ", " \t ") for line in lines) + "\r\n\n"      # CRLF, tabs, a blank line
    shuffled = "\n".join(lines[::-1]) + "\n"
    assert signature_of(read_qrels(_write(tmp_path / "b.txt", spaced))) == plain
    assert signature_of(read_qrels(_write(tmp_path / "c.txt", shuffled))) == plain
    # the same judgments from a dict (no blocks column: the other code path)
    as_dict = {"q1": {"d1": 1, "d2": 0, "doc-long-id-3": 2}, "q2": {"e1": 1, "e2": 0}}
    assert signature_of(serpeval.io.as_qrels(as_dict)) == plain
    assert plain == reference([(line.split()[0], line.split()[2], float(line.split()[3])) for line in lines])
    regraded = QRELS.replace("q2 0 e1 1", "q2 0 e1 2")
    assert signature_of(read_qrels(_write(tmp_path / "d.txt", regraded))) != plain
    renamed = QRELS.replace("d2", "d7")
    assert signature_of(read_qrels(_write(tmp_path / "e.txt", renamed))) != plain
    # a float grade equal to the integer one is the same content
    floats = serpeval.io.as_qrels(as_dict, "float")
    assert floats.grades == "float"
    assert signature_of(floats) == plain


def test_run_signature_ignores_line_order_and_the_rank_column(tmp_path: Path) -> None:
    plain = signature_of(read_run(_write(tmp_path / "a.run", RUN)))
    lines = RUN.splitlines()
    reordered = "\n".join(lines[::-1]).replace(" 1 3.5 ", " 9 3.50 ") + "\n"   # other order, rank column, "3.50"
    assert signature_of(read_run(_write(tmp_path / "b.run", reordered))) == plain
    rescored = RUN.replace("0.7", "0.71")
    assert signature_of(read_run(_write(tmp_path / "c.run", rescored))) != plain


def test_subtopic_qrels_sign_the_subtopic_too(tmp_path: Path) -> None:
    one = signature_of(read_subtopic_qrels(_write(tmp_path / "a.txt", "q1 1 d1 1\nq1 2 d2 1\n")))
    assert one == signature_of(read_subtopic_qrels(_write(tmp_path / "b.txt", "q1 2 d2 1\nq1  1 d1 1\n")))
    assert one != signature_of(read_subtopic_qrels(_write(tmp_path / "c.txt", "q1 2 d1 1\nq1 1 d2 1\n")))


def _evaluated(tmp_path: Path, qrels_text: str, runs: dict[str, str], name: str) -> Results:
    qrels = _write(tmp_path / f"{name}.qrels", qrels_text)
    paths = [_write(tmp_path / f"{run}.run", text) for run, text in runs.items()]
    return serpeval.evaluate(qrels, paths, ["AP", "P@2"], missing="zero")


RUN_B = RUN.replace("q1 Q0 d2 2 2.0", "q1 Q0 d2 2 5.0").replace("q2 Q0 e1 2 0.5", "q2 Q0 e1 2 0.9")


def test_every_result_carries_the_inputs(tmp_path: Path) -> None:
    res = _evaluated(tmp_path, QRELS, {"a": RUN, "b": RUN_B}, "x")
    inputs = res.to_json_dict()["inputs"]
    qrels_sig = signature_of(read_qrels(str(tmp_path / "x.qrels")))
    assert inputs["qrels"] == {"source": str(tmp_path / "x.qrels"), "signature": qrels_sig}
    assert [(r["run"], r["signature"], r["qrels_signature"]) for r in inputs["runs"]] == [
        ("a", signature_of(read_run(str(tmp_path / "a.run"))), qrels_sig),
        ("b", signature_of(read_run(str(tmp_path / "b.run"))), qrels_sig)]
    assert inputs["ties"] == "trec_eval"
    assert inputs["serpeval"] == serpeval.__version__
    assert len(inputs["rules"]) == 16
    assert serpeval.evaluate(str(tmp_path / "x.qrels"), str(tmp_path / "a.run"), ["AP"], ties="optimistic"
                             ).inputs()["rules"] != inputs["rules"]          # other rules, other signature
    comparison = compare_results(res)
    assert comparison.to_json_dict()["inputs"] == inputs
    assert comparison.warnings == ()
    decision = gate_results(res)
    assert decision.to_dict()["inputs"] == inputs
    assert decision.to_dict()["warning_count"] == 0
    # read back from its JSON: the same values and signatures
    back = Results.from_json_dict(json.loads(json.dumps(res.to_json_dict(per_query=True))), "x.json")
    assert back.inputs() == res.inputs()
    assert back.to_dicts(per_query=True) == res.to_dicts(per_query=True)


def test_compare_and_gate_warn_when_the_runs_saw_different_qrels(tmp_path: Path) -> None:
    old = _evaluated(tmp_path, QRELS, {"a": RUN}, "old")
    new = _evaluated(tmp_path, QRELS.replace("q2 0 e1 1", "q2 0 e1 2"), {"b": RUN_B}, "new")
    mixed = Results(old.measures, (old.runs[0], new.runs[0]), new.settings)
    warning = (f"the runs were evaluated against different qrels (a: qrels {old.settings.qrels_signature}, "
               f"b: qrels {new.settings.qrels_signature}); their difference mixes the change of system with the "
               "change of judgments. Evaluate them against the same qrels file.")
    comparison = compare_results(mixed)
    assert comparison.warnings == (warning,)
    assert comparison.notes()[0] == f"warning: {warning}"
    assert comparison.to_json_dict()["warning_count"] == 1
    decision = gate_results(mixed)
    assert decision.warnings == (warning,)
    assert decision.to_dict()["warnings"] == [warning]
    assert decision.notes()[0] == f"warning: {warning}"
    # a whitespace-only edit of the qrels is the same qrels: no warning
    spaced = _evaluated(tmp_path, QRELS.replace(" ", "  "), {"b": RUN_B}, "spaced")
    assert compare_results(Results(old.measures, (old.runs[0], spaced.runs[0]), spaced.settings)).warnings == ()


def test_from_json_dict_refuses_what_it_cannot_read() -> None:
    from serpeval.core.errors import InputError

    with pytest.raises(InputError, match=r"^b\.json: not the JSON of an evaluation \(no 'measures' list\); write it "
                                         r"with serpeval evaluate QRELS RUN --format json --per-query\.$"):
        Results.from_json_dict([], "b.json")
    with pytest.raises(InputError, match=r"^b\.json: the evaluation has no per-query values \('per_query'\)"):
        Results.from_json_dict({"measures": ["AP"], "results": []}, "b.json")
    with pytest.raises(InputError, match=r"^b\.json: a malformed evaluation JSON \(KeyError: 'query_id'\)"):
        Results.from_json_dict({"measures": ["AP"], "per_query": [{"run": "a", "AP": 1.0}]}, "b.json")
    with pytest.raises(InputError, match=r"^b\.json: the evaluation has no per-query rows"):
        Results.from_json_dict({"measures": ["AP"], "per_query": []}, "b.json")
