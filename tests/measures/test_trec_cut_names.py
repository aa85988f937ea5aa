"""trec_eval's cutoff families (``ndcg_cut``, ``map_cut``, ``relative_P``, ``unj``) written
without their cutoff.

``ndcg_cut`` alone was "Unknown measure 'ndcg_cut' ... Did you mean 'ndcg_cut' or 'dcg_cut'
or 'nDCG'?": it suggested the very spelling it refused, and `serpeval measures ndcg_cut`
could not describe the measure that ``ndcg_cut_10`` names.
"""

from __future__ import annotations

import re

import pytest

from serpeval.cli import main
from serpeval.core.errors import InvalidParameterError, UnknownMeasureError
from serpeval.measures import parse_measure


@pytest.mark.parametrize(("name", "example"), [
    ("ndcg_cut", "'ndcg_cut_10' or 'ndcg_cut.10' (nDCG@10)"),
    ("map_cut", "'map_cut_10' or 'map_cut.10' (AP@10)"),
    ("relative_P", "'relative_P_10' or 'relative_P.10' (RelP@10)"),
    ("ndcg_cut@10", "'ndcg_cut_10' or 'ndcg_cut.10' (nDCG@10)"),
])
def test_a_cutoff_family_without_its_cutoff_says_how_to_write_it(name: str, example: str) -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(f"takes its cutoff in the name, e.g. {example}")):
        parse_measure(name)
    assert str(parse_measure(name.split("@")[0] + "_10")) in {"nDCG@10", "AP@10", "RelP@10"}


def test_suggestions_are_names_that_parse() -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure("ndcg_cutt_10")
    message = str(info.value)
    assert "'ndcg_cut_10'" in message
    assert "'ndcg_cut'" not in message
    for suggested in ("ndcg_cut_10", "dcg_cut_10"):
        parse_measure(suggested)


def test_measures_command_describes_a_cutoff_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures", "ndcg_cut"]) == 0
    assert capsys.readouterr().out.startswith("nDCG: normalised DCG")
    assert main(["measures", "nosuch"]) == 2
    assert "Unknown measure 'nosuch'" in capsys.readouterr().err
