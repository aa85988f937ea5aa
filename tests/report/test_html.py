"""The HTML report read back without a browser: its numbers are the results' numbers."""

from __future__ import annotations

import re
import warnings

import pyarrow as pa
import pytest

import serpeval
from serpeval.cli.demo.collection import make_collection
from serpeval.comparison.compare import compare_results
from serpeval.core.errors import InputError, MissingQueriesWarning
from serpeval.report.formatting import count, number, signed
from serpeval.report.html import html_report, report_data, save_html


@pytest.fixture(scope="module")
def collection():
    return make_collection(n_queries=40, seed=7)


@pytest.fixture(scope="module")
def results(collection):
    return serpeval.evaluate(collection.qrels, collection.runs, ["nDCG@10", "AP", "P@10", "NumRet"])


@pytest.fixture(scope="module")
def comparison(results):
    return compare_results(results, test="t")


@pytest.fixture(scope="module")
def report(results, comparison, collection) -> str:
    return html_report(results, comparison, topics=collection.topics)


def test_sections_in_order(report, parse) -> None:
    sections = parse(report).sections
    assert list(sections) == ["overview", "metrics", "per-query", "distributions", "rules"]
    assert sections["metrics"].title == "Metrics"


def test_means_table_shows_the_comparison_means_and_markers(report, parse, comparison) -> None:
    means = parse(report).sections["metrics"].tables[0]
    assert means.header == ["run", "queries", "nDCG@10", "AP", "P@10", "NumRet"]
    assert means.column("run") == ["baseline", "candidate"]
    expected = comparison.means()
    for row in means.rows:
        system = row[0]
        for j, measure in enumerate(means.header[2:], start=2):
            marker = comparison.row(system, measure).marker if system == "candidate" else ""
            assert row[j] == f"{number(expected[system][measure])} {marker}".strip()
    # The candidate is better by construction; the markers say which differences are real.
    assert means.rows[1][2].endswith("▲")


def test_differences_table_is_the_comparison(report, parse, comparison) -> None:
    table = parse(report).sections["metrics"].tables[1]
    assert table.header[:5] == ["measure", "system", "mean", "baseline mean", "Δ"]
    for row, pair in zip(table.rows, comparison.rows, strict=True):
        assert row[0] == pair.measure
        assert row[1] == pair.system
        assert row[4] == signed(pair.delta)
        assert row[5] == f"[{signed(pair.ci_low)}, {signed(pair.ci_high)}]"
        assert row[-2] == f"{pair.wins}/{pair.ties}/{pair.losses}"
        assert row[-1] == pair.marker


def test_per_query_deltas_are_sorted_and_complete(report, parse, comparison, collection) -> None:
    section = parse(report).sections["per-query"]
    # One panel (bar chart + table) per comparison row.
    assert len(section.tables) == len(comparison.rows) == section.svgs
    first = section.tables[0]
    assert first.header == ["#", "query", "text", "baseline", "candidate", "Δ"]
    per_query = {r["query_id"]: r for r in comparison.to_dicts(per_query=True)
                 if r["measure"] == "nDCG@10"}
    assert len(first.rows) == len(per_query) == len(comparison.query_ids)
    deltas = [float(keys[-1]) for keys in first.sort_keys]
    assert deltas == sorted(deltas, reverse=True)           # best query first
    for row in first.rows:
        truth = per_query[row[1]]
        assert row[2] == collection.topics[row[1]]
        assert row[3:] == [number(truth["baseline_value"]), number(truth["value"]),
                           signed(truth["delta"])]
    won = sum(1 for c in first.row_classes if c == "better")
    lost = sum(1 for c in first.row_classes if c == "worse")
    pair = comparison.row("candidate", "nDCG@10")
    assert (won, lost) == (pair.wins, pair.losses)
    # One bar per query, each with a tooltip naming the query and its text.
    assert any(tip.startswith(f"{first.rows[0][1]} — {first.rows[0][2]}\n") for tip in section.tips)


def test_distributions_draw_every_query(report, parse, results) -> None:
    section = parse(report).sections["distributions"]
    n_points = sum(len(r.query_ids) for r in results.runs) * len(results.measures)
    assert section.svgs == len(results.measures)
    assert section.marks["circle"] == n_points
    # The mean ticks: one per run for measures averaged over queries (not NumRet, a sum).
    mean_tips = [t for t in section.tips if ": mean " in t]
    assert len(mean_tips) == len(results.runs) * 3
    mean_ap = number(results.aggregate("baseline", "AP"))
    assert f"baseline: mean AP = {mean_ap} over 40 queries" in mean_tips


def test_rules_state_the_evaluation_and_the_test(report, parse, results, comparison) -> None:
    rules = parse(report).sections["rules"]
    assert set(results.settings.rules()) <= set(rules.items)
    assert f"p-values: {comparison.method}" in rules.items       # Student's paired t-test, df = 39
    assert set(comparison.notes()) <= set(rules.items)
    coverage = rules.tables[0]
    assert coverage.column("evaluated") == ["40", "40"]


def test_self_contained_and_offline(report, parse) -> None:
    parsed = parse(report)
    assert all("src" not in s for s in parsed.scripts)       # scripts inline
    assert parsed.links == []                                # no stylesheets, images, frames
    assert "Content-Security-Policy" in report
    assert "default-src 'none'" in report
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", report)


def test_user_text_is_escaped() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"b": 1}, "q3": {"c": 1}}
    evil = "<script>alert('run')</script>"
    runs = {evil: {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 2.0, "b": 1.0}, "q3": {"c": 1.0}},
            "plain & simple": {"q1": {"b": 2.0, "a": 1.0}, "q2": {"b": 2.0}, "q3": {"x": 1.0}}}
    topics = {"q1": "<img src=x onerror=alert(1)>", "q2": 'quotes " and \' and &amp;'}
    res = serpeval.evaluate(qrels, runs, ["RR"])
    html = html_report(res, compare_results(res, rng=0), topics=topics)
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "plain &amp; simple" in html
    assert "&amp;amp;" in html


def test_single_run_report_has_no_comparison(collection, parse) -> None:
    res = serpeval.evaluate(collection.qrels, {"only": collection.runs["baseline"]}, ["AP", "P@10"])
    parsed = parse(html_report(res))
    assert list(parsed.sections) == ["overview", "metrics", "per-query", "distributions", "rules"]
    assert parsed.sections["per-query"].title == "Per-query values"
    table = parsed.sections["per-query"].tables[0]
    values = [float(k[1]) for k in table.sort_keys]            # worst AP first
    assert values == sorted(values)
    assert len(values) == 40
    means = parsed.sections["metrics"].tables[0]
    assert means.column("AP") == [number(res.aggregate("only", "AP"))]


def test_uncomparable_runs_still_report_and_say_why(parse, tmp_path) -> None:
    """``serpeval report`` on runs with no common query: the evaluation, and why no tests."""
    from serpeval.cli import main

    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "one").write_text("q1 Q0 a 1 1.0 one\n")
    (tmp_path / "two").write_text("q2 Q0 b 1 1.0 two\n")
    out = tmp_path / "r.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        assert main(["report", str(tmp_path / "q.txt"), str(tmp_path / "one"), str(tmp_path / "two"),
                     "-m", "AP", "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "no significance tests: a comparison needs at least 2 queries" in html
    coverage = parse(html).sections["rules"].tables[0]
    assert coverage.column("missing") == ["1", "1"]
    assert coverage.column("missing queries") == ["q2 (skipped)", "q1 (skipped)"]


def test_the_header_counts_the_queries_the_numbers_use(collection) -> None:
    """A run without some queries: the header said "3 run(s), 40 evaluated queries" while every
    table and test used the 37 queries of every run."""
    import html as markup

    import pyarrow.compute as pc

    table = collection.runs["baseline"].to_arrow()
    short = table.filter(pc.invert(pc.is_in(table["query_id"], pa.array(["101", "102", "103"]))))
    runs = {"a": collection.runs["baseline"], "b": collection.runs["candidate"], "c": short}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        res = serpeval.evaluate(collection.qrels, runs, ["AP"])
    pairs = compare_results(res)
    assert len(pairs.query_ids) == 37
    page = html_report(res, pairs)
    subtitle = markup.unescape(re.search(r'<p class="subtitle">(.*?)</p>', page, re.S)[1])
    assert re.sub("<[^>]+>", "", subtitle).startswith("3 run(s), 40 queries evaluated, 37 in every run, 1 measure(s)")
    assert "Means over the 37 queries every run was evaluated on" in page
    assert report_data(res).subtitle.startswith("3 run(s), 40 queries evaluated, 37 in every run,")
    same = serpeval.evaluate(collection.qrels, {"a": runs["a"], "b": runs["b"]}, ["AP"])
    assert report_data(same).subtitle.startswith("2 run(s), 40 evaluated queries, 1 measure(s)")


def test_all_pairs_names_both_systems(collection, parse) -> None:
    runs = {"a": collection.runs["baseline"], "b": collection.runs["candidate"],
            "c": collection.runs["baseline"]}
    res = serpeval.evaluate(collection.qrels, runs, ["AP"])
    pairwise = compare_results(res, pairs="all", correction="none")
    table = parse(html_report(res, pairwise)).sections["metrics"].tables[1]
    assert table.header[:3] == ["measure", "system", "vs"]
    assert "p (uncorrected)" in table.header
    assert [row[1:3] for row in table.rows] == [["b", "a"], ["c", "a"], ["c", "b"]]
    assert table.rows[1][5] == "+0.0000"                    # c is a copy of a


def test_a_975_percent_interval_is_not_called_98_percent(results, parse) -> None:
    """--confidence 0.975: every label of the report said "98% CI" (``f"{0.975:.0%}"``)."""
    narrow = compare_results(results, test="t", confidence=0.975)
    html = html_report(results, narrow)
    differences = parse(html).sections["metrics"].tables[1]
    assert "97.5% CI" in differences.header
    pair = narrow.rows[0]
    assert differences.rows[0][5] == f"[{signed(pair.ci_low)}, {signed(pair.ci_high)}]"
    assert "Δ with 97.5% CI" in html                                     # the forest plot's axis
    # The sections the report writes; the rules section quotes Comparison.notes() as given.
    written = html[:html.index('<section id="rules">')]
    assert "98%" not in written.replace("97.5%", "")


def _card_titles(html: str) -> list[str]:
    return re.findall(r'<div class="card-title">(.*?)</div>', html)


def test_overview_without_a_comparison_never_drops_half_a_run(collection, parse) -> None:
    """3 runs x 5 measures = 15 cards: the overview showed the first 12, so the third run had
    its nDCG@10 and AP cards but not its P@10, R@50 or RR. Like the comparison's overview, it
    now shows the first measure for every run (the metrics table has the rest)."""
    runs = {"a": collection.runs["baseline"], "b": collection.runs["candidate"],
            "c": collection.runs["baseline"]}
    measures = ["nDCG@10", "AP", "P@10", "R@50", "RR"]
    res = serpeval.evaluate(collection.qrels, runs, measures)
    html = html_report(res)
    assert _card_titles(html) == ["nDCG@10: a", "nDCG@10: b", "nDCG@10: c"]
    values = re.findall(r'<div class="card-value">(.*?)</div>', html)
    assert values == [number(res.aggregate(run, "nDCG@10")) for run in runs]
    assert "nDCG@10 shown; the metrics table has every measure." in html
    # Few enough: every run and measure, run by run.
    two = serpeval.evaluate(collection.qrels, {"a": runs["a"], "b": runs["b"]}, measures)
    assert _card_titles(html_report(two)) == [f"{m}: {r}" for r in ("a", "b") for m in measures]
    assert parse(html).sections["metrics"].tables[0].column("run") == ["a", "b", "c"]


def test_a_blank_title_falls_back_to_the_run_names(results) -> None:
    """``serpeval report ... --title "$TITLE"`` with TITLE unset gave a page with an empty <h1>
    and <title>."""
    for blank in ("", "   "):
        html = html_report(results, title=blank)
        assert "<title>serpeval report: baseline vs candidate</title>" in html
        assert "<h1>serpeval report: baseline vs candidate</h1>" in html
    assert "<h1>Mine</h1>" in html_report(results, title="Mine")


def test_tie_groups_say_what_the_tie_policy_did(collection) -> None:
    """--ties optimistic orders a tie group higher grade first; the coverage table's "tie
    groups" column said every group was "broken by doc id descending" whatever the policy."""
    def tie_help(ties: str) -> str:
        res = serpeval.evaluate(collection.qrels, collection.runs, ["AP"], ties=ties)
        return re.findall(r'title="(groups of equal scores[^"]*)"', html_report(res))[0]

    assert tie_help("optimistic") == ("groups of equal scores; ties: higher grade first (unjudged "
                                      "as not relevant), then doc id descending")
    assert "lower grade first" in tie_help("pessimistic")
    assert "doc id descending" in tie_help("trec_eval")
    assert "exact expectation over every order" in tie_help("expected")


def test_topics_without_the_evaluated_queries_are_noted(collection, tmp_path, capsys,
                                                        parse) -> None:
    """--topics of another collection (or id scheme) gave a report whose text column was empty
    (or, where ids overlap, held other topics' texts) without a word."""
    from serpeval.cli import main
    from serpeval.io import write_trec_qrels, write_trec_run

    write_trec_qrels(collection.qrels, tmp_path / "qrels.txt")
    for name, run in collection.runs.items():
        write_trec_run(run, tmp_path / f"{name}.run")
    ids = sorted(collection.topics)                    # 40 queries: 101 ... 140
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\t{collection.topics[q]}\n" for q in ids[:10]), encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "qrels.txt"), str(tmp_path / "baseline.run"),
                 str(tmp_path / "candidate.run"), "-m", "AP", "--topics", str(topics),
                 "-o", str(out)]) == 0
    note = (f"topics {topics}: no text for 30 of the 40 evaluated queries ({', '.join(ids[10:15])}, "
            "...); the file has 10 ids. Check that it is the topics file of these qrels.")
    assert note in " ".join(capsys.readouterr().out.split())
    assert note in parse(out.read_text(encoding="utf-8")).sections["rules"].items
    # Every query with its text: no note.
    topics.write_text("".join(f"{q}\t{collection.topics[q]}\n" for q in ids), encoding="utf-8")
    assert main(["report", str(tmp_path / "qrels.txt"), str(tmp_path / "baseline.run"),
                 str(tmp_path / "candidate.run"), "-m", "AP", "--topics", str(topics),
                 "-o", str(out)]) == 0
    assert "no text for" not in capsys.readouterr().out


def test_topics_keyed_by_numbers_still_match_the_query_ids(parse) -> None:
    """Query ids are text ("301"); topics from a pandas index or written {301: "..."} have int
    keys, and every text went missing from the report without a word."""
    qrels = {"301": {"d1": 1, "d2": 0}, "302": {"d1": 1}}
    res = serpeval.evaluate(qrels, {"a": {"301": {"d1": 2.0, "d2": 1.0}, "302": {"d2": 1.0}}},
                            ["P@1"])
    html = html_report(res, topics={301: "International Organized Crime", 302: "Polio"})
    table = parse(html).sections["per-query"].tables[0]
    assert dict(zip(table.column("query"), table.column("text"), strict=True)) == \
        {"301": "International Organized Crime", "302": "Polio"}


def test_nothing_to_report_is_an_error() -> None:
    with pytest.raises(InputError, match="nothing to report"):
        html_report()


def test_save_html_writes_utf8(tmp_path, results) -> None:
    path = save_html(tmp_path / "r.html", results, title="Ünïcode ✓")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>")
    assert "<title>Ünïcode ✓</title>" in text
    assert save_html(tmp_path / "s.html", results) == tmp_path / "s.html"
    assert "Per-query values" in (tmp_path / "s.html").read_text(encoding="utf-8")


def test_demo_report_section_gathers_the_state(tmp_path, collection, results, comparison,
                                               simulation_result, parse) -> None:
    from rich.console import Console

    from serpeval.cli.demo.offline import section_report

    console = Console(record=True, width=200)
    path = tmp_path / "demo.html"
    state = {"results": results, "comparison": comparison, "online": simulation_result,
             "report_path": str(path)}
    section_report(collection, console, state)
    assert f"wrote {path}" in console.export_text()
    sections = parse(path.read_text(encoding="utf-8")).sections
    assert list(sections) == ["overview", "metrics", "per-query", "distributions", "sensitivity",
                              "rules"]


def test_demo_report_shows_the_ab_state(tmp_path, collection, results, online_files,
                                        parse) -> None:
    """The demo's A/B section stores ``ab``, ``ab_monitor`` and ``interleaving_log``; the
    report draws them in the A/B, A/B over time and interleaving sections."""
    from rich.console import Console

    from serpeval.cli.demo.offline import section_report
    from serpeval.report.online_inputs import read_online_json

    path = tmp_path / "demo.html"
    state = {"results": results, "report_path": str(path),
             **{key: read_online_json(kind, online_files[kind]) for key, kind in
                (("ab", "ab"), ("ab_monitor", "ab_monitor"), ("interleaving_log", "interleaving"))}}
    section_report(collection, Console(record=True, width=200), state)
    sections = parse(path.read_text(encoding="utf-8")).sections
    assert list(sections) == ["overview", "metrics", "per-query", "distributions",
                              "interleaving", "ab", "ab-over-time", "rules"]
    assert sections["interleaving"].svgs == 2                      # Δ (B − A), and over time


def test_demo_report_names_the_interleaved_rankers(tmp_path, collection, online_files,
                                                   parse) -> None:
    """The demo writes its interleaving log with teams A (its first run, the baseline) and B
    (the second, the candidate), and its terminal names them; the report said "B = B vs A = A"
    and "B (B) won". The page now names the runs, and keeps every count."""
    from serpeval.report.html import save_demo_report
    from serpeval.report.online_inputs import read_online_json

    data = read_online_json("interleaving", online_files["interleaving"])
    assert data["teams"] == ["A", "B"]
    first, second = list(collection.runs)[:2]
    assert (first, second) == ("baseline", "candidate")
    path = save_demo_report(collection, {"interleaving_log": data,
                                         "report_path": str(tmp_path / "demo.html")})
    html = path.read_text(encoding="utf-8")
    row = data["results"][0]
    assert "B = candidate vs A = baseline: preference Δ (B − A)" in html
    assert (f"candidate (B) won {count(row['wins B'])}, baseline (A) won {count(row['wins A'])}, "
            f"ties {count(row['ties'])}") in html
    assert "winner: B = candidate (the candidate)" in html
    days = parse(html).sections["interleaving"].tables[1]
    assert days.header[3:5] == ["wins baseline", "wins candidate"]
    over = data["over_time"]["rows"]
    assert days.column("wins baseline") == [count(r["wins_a"]) for r in over]
    assert days.column("wins candidate") == [count(r["wins_b"]) for r in over]


def test_demo_command_writes_where_told(tmp_path, monkeypatch, capsys) -> None:
    from serpeval.cli import main
    from serpeval.cli.demo import offline as demo

    # The offline sections and the report only (the online simulation has tests of its own).
    offline_only = [demo.section_offline, demo.section_compare, demo.section_report]
    monkeypatch.setattr(demo, "SECTIONS", offline_only)
    path = tmp_path / "out.html"
    assert main(["demo", "--queries", "30", "-o", str(path)]) == 0
    assert f"wrote {path}" in capsys.readouterr().out
    assert "synthetic topic 101" in path.read_text(encoding="utf-8")


def test_load_collection_robust04_baseline_first_with_titles() -> None:
    from tests.conftest import TREC, need

    from serpeval.cli.demo.collection import load_collection

    collection = load_collection(str(need(TREC / "robust04")))
    assert list(collection.runs) == ["bm25", "bm25-rm3"]
    assert collection.topics["301"] == "International Organized Crime"
