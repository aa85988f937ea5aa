"""The measure-name grammar: dialects, canonical round trip, and pinned error messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serpeval.core.errors import InvalidParameterError, UnknownMeasureError
from serpeval.measures import REGISTRY, parse_measure, parse_measures


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("nDCG@10", "nDCG@10"), ("NDCG@10", "nDCG@10"), ("ndcg@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"), ("ndcg_cut.10", "nDCG@10"), ("ndcg", "nDCG"),
        ("nDCG(gain=exp)@10", "nDCG(gain=exp)@10"), ("nDCG(gain='exp')@10", "nDCG(gain=exp)@10"),
        ("nDCG(gain=linear)@10", "nDCG@10"),
        ("P@5", "P@5"), ("P_5", "P@5"), ("P.5", "P@5"), ("Precision@5", "P@5"),
        ("P(rel=2)@5", "P(rel=2)@5"), ("P( rel = 2 ) @ 5", "P(rel=2)@5"),
        ("R@100", "R@100"), ("Recall@100", "R@100"), ("recall_100", "R@100"),
        ("MAP", "AP"), ("map", "AP"), ("AP@100", "AP@100"), ("map_cut_100", "AP@100"),
        ("MRR", "RR"), ("mrr@10", "RR@10"), ("recip_rank", "RR"),
        ("bpref", "Bpref"), ("Rprec", "Rprec"), ("infAP", "infAP"), ("success_10", "Success@10"),
        ("set_F", "SetF"), ("SetF(beta=0.5)", "SetF(beta=0.5)"), ("num_rel_ret", "NumRelRet"),
        ("ERR@20", "ERR@20"), ("Judged@10", "Judged@10"),
    ],
)
def test_dialects_parse_to_the_canonical_measure(text: str, canonical: str) -> None:
    assert str(parse_measure(text)) == canonical


def test_equal_measures_are_equal_and_hashable() -> None:
    assert parse_measure("ndcg_cut_10") == parse_measure("nDCG@10")
    assert len({parse_measure("MAP"), parse_measure("AP"), parse_measure("map")}) == 1
    assert [str(m) for m in parse_measures(["AP", "MAP", "P@5"])] == ["AP", "P@5"]


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("nDGC@10", UnknownMeasureError, r"Unknown measure 'nDGC' in 'nDGC@10'\. Did you mean 'nDCG'"),
        ("P(rel=two)@5", InvalidParameterError,
         r"Invalid measure 'P\(rel=two\)@5': the 'rel' parameter of P must be an int in \[0, 9007199254740991\]\. "
         r"Got 'two' instead\."),
        ("P", InvalidParameterError, r"Invalid measure 'P': P needs a cutoff, e.g\. 'P@10'\."),
        ("P@0", InvalidParameterError,
         r"the cutoff must be an integer from 1 to 9223372036854775807 \(2\^63 - 1\); got 0"),
        ("P@x", InvalidParameterError,
         r"the cutoff after '@' must be an integer from 1 to 2\^63 - 1, written with the digits 0-9; got 'x'"),
        ("Bpref@10", InvalidParameterError, r"Bpref takes no cutoff"),
        ("nDCG(gain=log)@10", InvalidParameterError, r"must be one of linear, exp\. Got 'log'"),
        ("nDCG(depth=3)", InvalidParameterError,
         r"nDCG has no parameter 'depth' \(parameters: gain, gains, judged_only\)"),
        ("nDCG(cutoff=3)@5", InvalidParameterError, r"the cutoff is given twice \(cutoff= and @\)"),
        ("nDCG(dcg=log10)@5", InvalidParameterError, r"dcg parameter is 'log2' \(gain=linear\) or 'exp-log2'"),
        ("AP(judged_only=yes)", InvalidParameterError, r"must be True or False\. Got 'yes' instead"),
        ("bpref@10-l2", InvalidParameterError, r"ranx's bpref takes no cutoff; write 'bpref'"),
        ("rbp-l2", InvalidParameterError, r"ranx's rbp needs its persistence after a dot"),
        ("P(rel)@5", InvalidParameterError, r"parameters are written name=value"),
        ("P(rel=1,rel=2)@5", InvalidParameterError, r"parameter 'rel' given twice"),
        ("", InvalidParameterError, r"expected Name\[\(param=value,\.\.\.\)\]\[@cutoff\]"),
    ],
)
def test_errors_are_pinned(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_measure(text)


def _bound(spec, draw) -> object:
    params = {}
    for p in spec.params:
        if p.choices:
            params[p.name] = draw(st.sampled_from(p.choices))
        elif p.type is int:
            params[p.name] = draw(st.integers(int(p.minimum or 0), 5))
        elif p.type is float:
            high = 10.0 if p.maximum is None else p.maximum
            params[p.name] = draw(st.floats(p.minimum or 0.0, high, allow_nan=False))
    cutoff = None
    if spec.cutoff == "required" or (spec.cutoff == "optional" and draw(st.booleans())):
        cutoff = draw(st.integers(1, 1000))
    return spec.bind(params, cutoff, spec.name)


@given(st.data())
def test_canonical_form_round_trips(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(REGISTRY.specs))
    measure = _bound(spec, data.draw)
    assert parse_measure(str(measure)) == measure
    assert parse_measure(str(measure)).params == measure.params


# Issue 27 item 15: Python's int() reads "1_0" (digit grouping) and "١٠" (Arabic-Indic digits) as
# 10, so P@1_0 and P@١٠ were P@10. Cutoffs and numeric parameters are ASCII digits only.
@pytest.mark.parametrize("text", [
    "P@1_0", "P@\u0661\u0660", "P@\uff11\uff10", "P@+10", "nDCG@\u0967\u0966", "ndcg@\u0661\u0660",
    "nDCG(cutoff=1_0)", "P_\u0661\u0660", "ndcg_cut.\u0661\u0660", "P(rel=\u0661)@5", "RBP(p=0.\u0665)",
    "P(rel=1_0)@5", "ndcg@10-l\u0662",
])
def test_numbers_in_measure_names_are_ascii_digits_only(text: str) -> None:
    with pytest.raises((InvalidParameterError, UnknownMeasureError)):
        parse_measure(text)


@pytest.mark.parametrize("text", ["P@" + "9" * 5000, "P_" + "9" * 5000, "P@0" + "0" * 5000 + "1" + "0" * 19])
def test_a_cutoff_of_thousands_of_digits_is_refused_as_out_of_range(text: str) -> None:
    """More digits than Python's int() converts (4,300) was an internal ValueError."""
    with pytest.raises(InvalidParameterError, match=r"the cutoff must be an integer from 1 to 9223372036854775807 "
                                                     r"\(2\^63 - 1\); got a number of (5,000|20) digits"):
        parse_measure(text)


def test_leading_zeros_and_blanks_around_the_cutoff_still_read() -> None:
    assert str(parse_measure("P@010")) == str(parse_measure("P@ 10")) == str(parse_measure("P_010")) == "P@10"
    assert str(parse_measure("P@" + "0" * 5000 + "10")) == str(parse_measure("P_" + "0" * 5000 + "10")) == "P@10"
