"""Every JSON that ``simulate``, ``ab`` and ``interleaving-report`` write is read back by
``serpeval report`` (issue 27, item 15: the round trip).

Before: ``report --simulation`` refused the file ``simulate -f json`` writes when a size is
unreachable (``rows[].null_reasons: expected a string ...``), ``report --ab`` /
``--interleaving`` refused the ``--triggered`` files and ``report --segments`` the ``--by``
files of the same commands.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from serpeval.cli.app import main

pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (pip install '.[test]')")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("roundtrip")
    assert main(["generate-logs", str(root / "ab"), "--users", "600", "--pre-days", "3",
                 "--changed-queries", "0.5", "--effect", "0.1"]) == 0
    assert main(["generate-logs", str(root / "il"), "--users", "600", "--interleaving",
                 "--changed-queries", "0.5"]) == 0
    return root


#: (name, command writing JSON, the report option that reads it)
PAIRS = [
    ("simulate", ["simulate", "--generate", "0.05", "-c", "navigational", "--bootstrap", "20",
                  "--mc-impressions", "0"], "--simulation"),
    ("simulate-unreachable", ["simulate", "--generate", "0", "-c", "navigational", "--bootstrap", "20",
                              "--mc-impressions", "0"], "--simulation"),
    ("ab", ["ab", "{ab}", "-m", "ctr,mrr"], "--ab"),
    ("ab-by", ["ab", "{ab}", "-m", "ctr", "--by", "query_id"], "--ab"),
    ("ab-by-segments", ["ab", "{ab}", "-m", "ctr", "--by", "query_id"], "--segments"),
    ("ab-triggered", ["ab", "{ab}", "-m", "ctr,mrr", "--triggered"], "--ab"),
    ("ab-monitor", ["ab", "{ab}", "-m", "ctr", "--monitor"], "--ab-monitor"),
    ("ab-plan", ["ab", "{ab}", "-m", "ctr", "--plan"], "--ab-plan"),
    ("interleaving", ["interleaving-report", "{il}", "--resamples", "50"], "--interleaving"),
    ("interleaving-by", ["interleaving-report", "{il}", "--resamples", "50", "--by", "query_id"],
     "--interleaving"),
    ("interleaving-by-segments", ["interleaving-report", "{il}", "--resamples", "50", "--by", "query_id"],
     "--segments"),
    ("interleaving-triggered", ["interleaving-report", "{il}", "--resamples", "50", "--triggered"],
     "--interleaving"),
]


@pytest.mark.parametrize(("name", "command", "option"), PAIRS, ids=[p[0] for p in PAIRS])
def test_report_reads_what_the_command_writes(logs, tmp_path, capsys, name, command, option) -> None:
    written = tmp_path / f"{name}.json"
    argv = [a.format(ab=logs / "ab", il=logs / "il") for a in command]
    assert main([*argv, "-f", "json", "-o", str(written)]) == 0
    capsys.readouterr()
    page = tmp_path / "report.html"
    assert main(["report", option, str(written), "-o", str(page)]) == 0, capsys.readouterr().err
    assert page.stat().st_size > 0
    if name == "simulate-unreachable":  # the case that was refused: a size written as null
        rows = json.loads(written.read_text(encoding="utf-8"))["rows"]
        assert any("null_reasons" in r for r in rows)
    if name.endswith("triggered"):  # the triggered estimates reach the page, labelled
        text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))
        assert "the effect among triggered impressions x the trigger rate" in text


def test_a_wrong_type_under_null_reasons_is_still_refused(tmp_path, capsys) -> None:
    from serpeval.report.online_schema import schema_problem

    row = {"method": "A/B", "metric": "CTR", "effect (B-A)": 0.0, "impressions needed": None,
           "needed CI low": None, "needed CI high": None}
    assert schema_problem("simulation", {"rows": [{**row, "null_reasons": {"impressions needed": "+Infinity"}}]}) \
        is None
    assert schema_problem("simulation", {"rows": [{**row, "null_reasons": {"impressions needed": 3}}]}) == \
        'rows[0].null_reasons["impressions needed"]: expected a string, found 3'
