"""Gain tables in serpeval's measure grammar (issue 27, item 15): grades and gains are ASCII
numbers, and a trec_eval-style ``ndcg.NAME=GAIN`` whose NAME is not an integer grade is refused
rather than read as plain nDCG. ``serpeval trec_eval`` keeps the C program's reading (its
``gain_init.c`` ignores such pairs), checked at the end."""

from __future__ import annotations

import pytest

from serpeval.core.errors import InvalidParameterError
from serpeval.measures import parse_measure
from serpeval.measures.gains import parse_gain_table


@pytest.mark.parametrize("text", [
    "nDCG(gains=١:3)",          # Arabic-Indic one as the grade: Python's int() reads it as 1
    "nDCG(gains=1:٣)",          # ... and as the gain: float() reads it as 3
    "nDCG(gains=1_0:3)",        # Python's digit grouping: int("1_0") is 10
    "nDCG(gains=1:1_5)",
    "nDCG(gains=２:3)",         # fullwidth two
    "DCG(gains={0:0,١:1})@10",  # ir_measures' dict spelling
    "nDCG(gains=1:inf)",
])
def test_a_gain_table_that_is_not_ascii_numbers_is_refused(text: str) -> None:
    with pytest.raises(InvalidParameterError, match="gains"):
        parse_measure(text)


@pytest.mark.parametrize(("text", "table"), [
    ("1:3;2:9.5", {1: 3.0, 2: 9.5}),
    ("{0:0,1:1,2:3}", {0: 0.0, 1: 1.0, 2: 3.0}),
    ("-1:-0.5;+2:1e1;3:.25", {-1: -0.5, 2: 10.0, 3: 0.25}),
])
def test_ascii_gain_tables_are_read(text: str, table: dict[int, float]) -> None:
    assert parse_gain_table(text) == table


@pytest.mark.parametrize("text", ["ndcg.x=1", "ndcg.1=3,x=1", "ndcg_cut.1=3,a=2", "dcg.one=3",
                                  "ndcg.1_0=3", "ndcg.1=abc", "ndcg.1=3,", "ndcg.1=3e"])
def test_a_trec_gain_pair_that_is_not_grade_equals_gain_is_refused(text: str) -> None:
    """``ndcg.x=1`` used to parse as plain nDCG (the pair silently dropped)."""
    with pytest.raises(InvalidParameterError) as caught:
        parse_measure(text)
    message = str(caught.value)
    assert repr(text) in message
    assert "GRADE=GAIN" in message
    assert "integer grades" in message


@pytest.mark.parametrize("text", ["ndcg.١=3", "ndcg.1=٣"])
def test_a_trec_gain_pair_in_other_digits_is_refused(text: str) -> None:
    """Refused by the grammar's ASCII trec_eval spelling (the same message as any malformed name)."""
    with pytest.raises(InvalidParameterError, match=repr(text)):
        parse_measure(text)


def test_trec_gain_pairs_in_the_grammar_still_read() -> None:
    assert str(parse_measure("ndcg.1=3,2=9")) == "nDCG(gains=1:3;2:9)"
    assert str(parse_measure("ndcg.-1=0.5,2=1e1")) == "nDCG(gains=-1:0.5;2:10)"


def test_the_trec_eval_command_keeps_c_behaviour(tmp_path) -> None:
    """trec_eval 10.0's gain_init.c skips a pair whose name is not an integer: ``-m ndcg.x=1``
    is plain ndcg there (checked against the C program: ``ndcg_x=1 all 0.8100``), and
    serpeval trec_eval keeps that."""
    import io
    import math

    from serpeval.cli.cmd_trec_eval import run

    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 x 3\n", encoding="utf-8")
    (tmp_path / "r").write_text("1 Q0 c 1 3 r\n1 Q0 a 2 2 r\n1 Q0 b 3 1 r\n2 Q0 x 1 1 r\n", encoding="utf-8")
    out = io.BytesIO()
    assert run(["-m", "ndcg.x=1", str(tmp_path / "q"), str(tmp_path / "r")], stdout=out) == 0
    # Query 1 ranks c (0), a (1), b (2): DCG = 1/log2 3 + 2/log2 4, IDCG = 2 + 1/log2 3.
    # Query 2: its only doc first, 1. Mean of the two, as plain ndcg (x=1 ignored):
    q1 = (1 / math.log2(3) + 1) / (2 + 1 / math.log2(3))
    assert out.getvalue().decode().split() == ["ndcg_x=1", "all", f"{(q1 + 1) / 2:.4f}"]
