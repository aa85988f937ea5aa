"""Text that reaches a person is safe: right-to-left overrides in names, ids and topics are
isolated in the HTML report, ``|`` is escaped in markdown tables, a TSV query id may start with
``{``, and a JSONL line with an empty query id is refused with ``path:line``."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

import serpeval
from serpeval.cli import main
from serpeval.comparison.compare import compare_results
from serpeval.core.errors import ParseError
from serpeval.io.topics import read_topics
from serpeval.report.bidi import FSI, PDI, bdi, isolate, shorten, visible_length
from serpeval.report.html import html_report
from serpeval.report.table import markdown_cell, render

RLO = "\u202e"        # RIGHT-TO-LEFT OVERRIDE: shows what follows it backwards
RUN_OVERRIDE = f"bm25{RLO}1v-esned"          # on screen, unisolated: "bm25dense-v1" ...
RUN_HEBREW = "דירוג-חדש"                    # a right-to-left run name
QUERY = f"q{RLO}01"
TOPIC = f"best{RLO} <b>pizza</b> in town"
RTL_CLASSES = {"R", "AL", "AN", "RLO", "RLE", "LRO", "LRE"}


def _unisolated(html: str) -> list[str]:
    """Right-to-left letters and overrides of ``html`` outside every ``<bdi>`` element and
    every FSI ... PDI isolate (nesting followed), with a little context."""
    outside, depth = [], 0
    for match in re.finditer(rf"</?bdi>|[{FSI}{PDI}]|[^\x00-\x7f]", html):
        token = match.group()
        if token in ("<bdi>", FSI):
            depth += 1
        elif token in ("</bdi>", PDI):
            depth -= 1
            assert depth >= 0, html[max(0, match.start() - 60):match.end()]
        elif depth == 0 and unicodedata.bidirectional(token) in RTL_CLASSES:
            outside.append(html[max(0, match.start() - 40):match.end() + 40])
    assert depth == 0
    return outside


@pytest.fixture(scope="module")
def evaluated():
    qrels = {QUERY: {"d1": 2, "d2": 0, "d3": 1}, "q02": {"d4": 1, "d5": 0}, "q03": {"d6": 1},
             "q04": {"d7": 1, "d8": 1}}
    runs = {
        RUN_OVERRIDE: {QUERY: {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q02": {"d5": 2.0, "d4": 1.0},
                       "q03": {"d6": 1.0}, "q04": {"d7": 2.0, "x": 1.0}},
        RUN_HEBREW: {QUERY: {"d2": 3.0, "d3": 2.0, "d1": 1.0}, "q02": {"d4": 2.0, "d5": 1.0},
                     "q03": {"x": 1.0, "d6": 0.5}, "q04": {"d8": 2.0, "d7": 1.0}},
    }
    results = serpeval.evaluate(qrels, runs, ["RR", "nDCG@10"])
    return results, compare_results(results, test="t")


@pytest.fixture(scope="module")
def report(evaluated, online_files) -> str:
    results, comparison = evaluated
    ab = json.loads(online_files["ab"].read_text(encoding="utf-8"))
    for row in ab["results"]:
        row["treatment"] = RUN_HEBREW
    ab["variants"][1]["variant"] = RUN_HEBREW
    ab["srm"]["variants"][1] = RUN_HEBREW
    ab["experiment"] = f"exp{RLO}eerf"
    return html_report(results, comparison, topics={QUERY: TOPIC, "q02": "plain text"},
                       online_results={"ab": ab})


def test_every_right_to_left_text_is_isolated(report) -> None:
    assert _unisolated(report) == []
    # In HTML text as <bdi> elements; in attributes and SVG (tooltips) as FSI ... PDI.
    assert f"<bdi>{RUN_OVERRIDE}</bdi>" in report
    assert f"<bdi>{RUN_HEBREW}</bdi>" in report
    assert f"<bdi>{QUERY}</bdi>" in report
    assert f"{FSI}{RUN_OVERRIDE}{PDI}" in report                       # a tooltip
    assert report.count(RLO) >= 10


def test_isolated_text_is_still_escaped_and_reads_back_as_given(report, parse) -> None:
    assert "<b>pizza" not in report
    assert "<bdi>best\u202e &lt;b&gt;pizza&lt;/b&gt; in town</bdi>" in report
    sections = parse(report).sections
    means = sections["metrics"].tables[0]
    assert sorted(means.column("run")) == sorted([RUN_OVERRIDE, RUN_HEBREW])   # no controls added
    per_query = sections["per-query"].tables[0]
    assert QUERY in per_query.column("query")
    assert TOPIC in per_query.column("text")
    assert sections["ab"].tables[1].column("variant") == ["control", RUN_HEBREW]


def test_plain_names_are_left_alone(evaluated) -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"b": 1}}
    runs = {"bm25": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 1.0}},
            "dense": {"q1": {"b": 2.0, "a": 1.0}, "q2": {"b": 2.0}}}
    results = serpeval.evaluate(qrels, runs, ["RR"])
    html = html_report(results, compare_results(results, test="t"),
                       topics={"q1": "café crème", "q2": "naïve"})
    assert "<bdi>" not in html
    assert FSI not in html
    assert PDI not in html
    assert "café crème" in html


def test_isolate_bdi_and_shorten() -> None:
    assert isolate("bm25") == "bm25"
    assert isolate("café") == "café"                                   # no right-to-left text
    assert isolate(3) == 3
    assert isolate(None) is None
    assert isolate(RUN_HEBREW) == f"{FSI}{RUN_HEBREW}{PDI}"
    assert isolate(f"a{RLO}b") == f"{FSI}a{RLO}b{PDI}"
    # A stray PDI in the text would close the isolate early: isolate controls are dropped.
    assert isolate(f"x{PDI}{RLO}y\u2066") == f"{FSI}x{RLO}y{PDI}"
    assert isolate(isolate(f"a{RLO}b")) == isolate(f"a{RLO}b")
    assert str(bdi(f"<{FSI}a{RLO}b{PDI}>")) == f"&lt;<bdi>a{RLO}b</bdi>&gt;"
    assert str(bdi(f"{PDI}x{FSI}y")) == f"{PDI}x<bdi>y</bdi>"           # always well formed
    long = isolate("א" * 30)
    assert shorten(long, 18) == FSI + "א" * 16 + PDI + "…"
    assert visible_length(long) == 30


def _cells(line: str) -> list[str]:
    """A GitHub markdown table row's cells, unescaped: split at pipes without a backslash
    before them, then ``\\|`` is a pipe and a backslash escapes the character after it."""
    inner = line.strip()[1:-1]
    cells = re.split(r"(?<!\\)\|", inner)
    return [re.sub(r"\\(.)", r"\1", c.strip().replace("\\|", "|")) for c in cells]


def test_markdown_escapes_pipes_and_line_breaks() -> None:
    names = ["bm25|rm3", "a\\|b", "two\nlines", "plain"]
    text = render([{"run": n, "RR": 0.5} for n in names], "markdown")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert _cells(rows[0]) == ["run", "RR"]
    for name, line in zip(names, rows[2:], strict=True):
        assert _cells(line) == [name.replace("\n", " "), "0.5000"]
    assert markdown_cell("x|y") == "x\\|y"
    assert render([{"a|b": 1}], "markdown").splitlines()[0] == "| a\\|b |"


def test_compare_markdown_with_a_pipe_in_a_run_name(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 0\n")
    (tmp_path / "bm25|rm3.run").write_text("q1 Q0 a 1 2 x\nq1 Q0 b 2 1 x\nq2 Q0 d 1 2 x\nq2 Q0 c 2 1 x\n")
    (tmp_path / "dense.run").write_text("q1 Q0 b 1 2 y\nq1 Q0 a 2 1 y\nq2 Q0 c 1 2 y\nq2 Q0 d 2 1 y\n")
    assert main(["compare", str(tmp_path / "qrels.txt"), str(tmp_path / "bm25|rm3.run"),
                 str(tmp_path / "dense.run"), "-m", "RR", "-f", "markdown"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    header = _cells(rows[0])
    body = [_cells(line) for line in rows[2:]]
    assert all(len(cells) == len(header) for cells in body)
    assert [c[header.index("system")] for c in body] == ["bm25|rm3", "dense"]


def test_latex_escapes_the_characters_ot1_prints_as_others() -> None:
    """In LaTeX's default OT1 encoding a bare | prints as an em dash, < and > as the inverted !
    and ?: a run named bm25|rm3 or a p-value <0.0001 came out wrong in the PDF. Each of the
    special characters is spelled as its text command."""
    from serpeval.report.table import latex_escape

    assert latex_escape("bm25|rm3") == r"bm25\textbar{}rm3"
    assert latex_escape("<0.0001") == r"\textless{}0.0001"
    assert latex_escape("a>b") == r"a\textgreater{}b"
    assert latex_escape("50% & $x_1$ #2 {~^\\}") == (
        r"50\% \& \$x\_1\$ \#2 \{\textasciitilde{}\textasciicircum{}\textbackslash{}\}")
    text = render([{"run": "bm25|rm3", "p": "<0.0001"}], "latex")
    assert r"bm25\textbar{}rm3 & \textless{}0.0001 \\" in text


def test_topics_tsv_ids_may_start_with_a_brace(tmp_path: Path) -> None:
    path = tmp_path / "topics.tsv"
    path.write_text('{101}\tfirst topic\n{"id": 2}\tsecond\n103\tthird\n', encoding="utf-8")
    assert read_topics(path) == {"{101}": "first topic", '{"id": 2}': "second", "103": "third"}
    # A file whose first line is a JSON object is JSONL, every line of it.
    jsonl = tmp_path / "queries.jsonl"
    jsonl.write_text('{"_id": "1", "text": "a"}\n{"_id": "{2}", "text": "b"}\n', encoding="utf-8")
    assert read_topics(jsonl) == {"1": "a", "{2}": "b"}
    jsonl.write_text('{"_id": "1", "text": "a"}\n3\tthree\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"queries.jsonl:2: not valid JSON"):
        read_topics(jsonl)
    jsonl.write_text('{"_id": "1", "text": \n', encoding="utf-8")           # broken JSON, no tab
    with pytest.raises(ParseError, match=r"queries.jsonl:1: not valid JSON"):
        read_topics(jsonl)


@pytest.mark.parametrize("empty", ["", "  "])
def test_jsonl_with_an_empty_query_id_is_refused(empty: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.io import read_qrels, read_run

    qrels = tmp_path / "qrels.jsonl"
    qrels.write_text('{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n\n'      # line 2 blank
                     f'{{"query_id": "{empty}", "doc_id": "d2", "relevance": 1}}\n')
    with pytest.raises(ParseError, match=rf"qrels.jsonl:3: the query id \('query_id'\) is empty: "
                                         rf"'{empty}'; every line needs a query id\."):
        read_qrels(qrels)
    run = tmp_path / "run.jsonl"
    run.write_text(f'{{"qid": "{empty}", "docno": "d1", "score": 1.5}}\n')
    with pytest.raises(ParseError, match=r"run.jsonl:1: the query id \('qid'\) is empty"):
        read_run(run)
    good = tmp_path / "good.jsonl"
    good.write_text('{"query_id": "q1", "doc_id": "d1", "score": 1.5}\n')
    assert main(["evaluate", str(qrels), str(good)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{qrels}:3: the query id" in err
