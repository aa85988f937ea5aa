"""How the report writes numbers, against hand-written expected strings."""

from __future__ import annotations

import math

from serpeval.report.formatting import count, interval, level, number, p_value, percent, signed, sort_key


def test_number_digits_separators_and_missing() -> None:
    assert number(0.46391) == "0.4639"
    assert number(0.46391, 2) == "0.46"
    assert number(12345.0) == "12,345"        # a whole float from 1000 on reads as a count
    assert number(999.0) == "999.0000"
    assert number(1234567) == "1,234,567"
    assert number(None) == number(math.nan) == "—"


def test_signed_percent_and_count() -> None:
    assert signed(0.0176) == "+0.0176"
    assert signed(-0.01764, 2) == "-0.02"
    assert percent(0.0236) == "+2.36%"
    assert percent(-0.5, 1) == "-50.0%"
    assert percent(0.125, 1, sign=False) == "12.5%"
    assert count(12344.6) == "12,345"
    assert count(math.inf) == "inf"
    assert signed(None) == percent(math.nan) == count(None) == "—"


def test_interval_and_p_value() -> None:
    assert interval(-0.0345, -0.0007) == "[-0.0345, -0.0007]"
    assert interval(0.0081, 0.0393, as_percent=True) == "[+0.81%, +3.93%]"
    assert interval(None, 0.1) == interval(0.1, math.nan) == ""
    assert p_value(0.04321) == "0.0432"
    assert p_value(0.00004) == "<0.0001"
    assert p_value(0.00006) == "0.0001"
    assert p_value(None) == "—"


def test_sort_key_is_the_number_and_empty_when_missing() -> None:
    assert sort_key(3) == "3.0"
    assert float(sort_key(0.1)) == 0.1
    assert sort_key(None) == sort_key(math.nan) == ""


def test_sort_key_of_an_infinity_is_what_javascript_reads() -> None:
    """report.js sorts by parseFloat(data-sort): parseFloat("inf") is NaN (sorted as missing,
    after every number in both directions); parseFloat("Infinity") is Infinity."""
    assert sort_key(math.inf) == "Infinity"
    assert sort_key(-math.inf) == "-Infinity"
    assert float(sort_key(math.inf)) == math.inf                 # Python reads it back too


def test_confidence_level_is_exact_not_rounded() -> None:
    """A 97.5% interval (``--confidence 0.975``, or ``--alpha 0.025``) was labelled "98% CI"
    (``f"{0.975:.0%}"``) and a 99.9% one "100% CI"."""
    assert level(0.95) == level(1 - 0.05) == "95%"
    assert level(0.975) == level(1 - 0.025) == "97.5%"
    assert level(1 - 0.1) == "90%"                               # 0.9000000000000000222...
    assert level(0.999) == "99.9%"
    assert level(0.8) == "80%"


def test_plain_text_drops_markup_and_keeps_words() -> None:
    from serpeval.report.formatting import plain_text

    assert plain_text("see :func:`dcg` and ``x`` of *all* docs; :func:`~serpeval.measures.gains.exp_shift`; "
                      "2 * 3 * 4") == "see dcg and x of all docs; exp_shift; 2 * 3 * 4"


def test_measure_help_has_no_markup(capsys) -> None:
    from serpeval.cli import main

    assert main(["measures", "ndcg_cut_10"]) == 0
    out = capsys.readouterr().out
    assert "nDCG@k = DCG@k / IDCG@k." in out
    assert "``" not in out
    assert ":func:" not in out


def test_log_tables_show_p_values_as_the_other_tables_do() -> None:
    from serpeval.cli.common import _is_p, p_cell

    assert [_is_p(c) for c in ("p", "p (sign test)", "p (units)", "p adj.", "prefer A", "preference")] == \
        [True, True, True, True, False, False]
    assert p_cell(1.2e-53, 4) == "<0.0001"
    assert p_cell(0.0123, 4) == "0.0123"
    assert p_cell("B", 4) == "B"
