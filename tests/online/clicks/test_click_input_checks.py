"""Malformed click-log records and heterogeneity shifts: refused at the record, or read as
the JSON-lines reader reads them, never turned into ids "None" or rows for other impressions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from serpeval.core.errors import InputError, ParseError
from serpeval.online.clicks import ClickLog, click_model


def test_null_ids_in_records_are_refused_not_renamed_none() -> None:
    # Before: str(None) made a query (or document) id "None" silently; the JSON reader
    # refuses the same line.
    with pytest.raises(ParseError, match=r'line 2: no "query" id'):
        ClickLog.from_records([{"query": "q", "docs": ["a"]}, {"query": None, "docs": ["a"]}])
    with pytest.raises(ParseError, match="a null document id at rank 2"):
        ClickLog.from_records([{"query": "q", "docs": ["a", None], "clicked_ranks": [1]}])


def test_malformed_records_name_the_record() -> None:
    with pytest.raises(ParseError, match=r"record 2: missing field\(s\) query"):  # before: KeyError
        ClickLog.from_records([{"query": "q", "docs": ["a"]}, {"docs": ["a"]}])
    with pytest.raises(ParseError, match='record 1: "docs" must be a list'):  # before: "abc" read as a, b, c
        ClickLog.from_records([{"query": "q", "docs": "abc", "clicked_ranks": [1]}])
    with pytest.raises(ParseError, match="line 1: an impression without documents"):  # before: TypeError
        ClickLog.from_records([{"query": "q", "docs": None}])


def test_null_clicked_ranks_read_as_no_clicks_in_records_and_files(tmp_path: Path) -> None:
    # a null list of clicked ranks is no click, as a missing one is (and as the JSON reader
    # read it on a line next to others); before, records raised TypeError and a file where
    # every line had null crashed in Arrow (no kernel for the null type)
    log = ClickLog.from_records([{"query": "q", "docs": ["a", "b"], "clicked_ranks": None}])
    assert log.counts["clicks"] == 0
    assert not log.clicks.any()
    path = tmp_path / "null.jsonl"
    path.write_text('{"query": "q", "docs": ["a", "b"], "clicked_ranks": null}\n'
                    '{"query": "q", "docs": ["b", "a"], "clicked_ranks": null}\n', encoding="utf-8")
    log = ClickLog.read_jsonl(path)
    assert log.counts["impressions"] == 2
    assert log.counts["clicks"] == 0
    path.write_text('{"query": "q", "docs": null, "clicked_ranks": []}\n', encoding="utf-8")
    with pytest.raises(ParseError, match="line 1: an impression without documents"):
        ClickLog.read_jsonl(path)


def test_shift_needs_one_finite_value_per_impression() -> None:
    user = click_model("navigational", levels=3)
    grades = np.array([[2, 1, 0]])
    # hand-worked: shift 1 moves click[2] = .95 to .95 e / (.95 e + .05) = 0.981006
    assert user.click_probabilities(grades, shift=[1.0])[0, 0] == pytest.approx(0.95 * np.e / (0.95 * np.e + 0.05))
    # Before: two shifts for one impression broadcast into two rows of probabilities
    with pytest.raises(InputError, match=r"one number per impression \(1\); got shape \(2,\)"):
        user.click_probabilities(grades, shift=[0.0, 1.0])
    with pytest.raises(InputError, match="one number per impression"):
        user.sample(np.zeros((3, 2), dtype=int), rng=0, shift=[0.0, 1.0])
    # Before: NaN gave NaN probabilities and no clicks at all, silently
    with pytest.raises(InputError, match="shift must be finite"):
        user.sample(grades, rng=0, shift=np.nan)
    with pytest.raises(InputError, match="shift must be finite"):
        user.click_count_distribution(grades, shift=np.inf)


def test_per_rank_models_on_longer_pages_say_what_to_do() -> None:
    # Before: "impressions have 12 slots but examination is given for 10 ranks." - no model
    # named, no way out (what `serpeval simulate -k 12 -c pbm` printed)
    with pytest.raises(InputError, match=r"pbm: impressions have 12 slots.*10 ranks\. Show at most 10 results"):
        click_model("pbm", levels=3).click_probabilities(np.zeros((1, 12), dtype=int))
    with pytest.raises(InputError, match=r"dcm: .*continuation is given for 10 ranks"):
        click_model("dcm", levels=3).sample(np.zeros((1, 12), dtype=int), rng=0)


@pytest.mark.parametrize("prior", [(float("nan"), 1.0), (float("inf"), 1.0), ("a", "b"), None])
def test_fit_refuses_a_prior_that_is_not_two_finite_counts(prior: object) -> None:
    from serpeval.core.errors import OptionError
    from serpeval.online.clicks import fit_pbm

    log = ClickLog.from_records([{"query": "q", "docs": ["a", "b"], "clicked_ranks": [1]}] * 5)
    # Before: (nan, 1) fitted every attractiveness to 1/2 silently, (inf, 1) failed with
    # "attractiveness must be probabilities ... found nan", ("a", "b") and None raised TypeError
    with pytest.raises(OptionError, match="prior must be two finite non-negative pseudo-counts"):
        fit_pbm(log, prior=prior)  # type: ignore[arg-type]
    # two finite counts still fit, as a NumPy array too
    _, report = fit_pbm(log, prior=np.array([2.0, 3.0]))
    assert report.prior == "beta(2, 3)"
