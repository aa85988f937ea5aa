"""Qrels from clicks: thresholds, calibration, counts, the Yandex sample, simulated logs with
known grades, and the command line."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import DATA, need

from serpeval.core.errors import InputError, OptionError, ParseError
from serpeval.judgments.agreement import agreement, cohen_kappa
from serpeval.judgments.clicks import (
    DEFAULT_MODEL,
    ClickQrels,
    _best_thresholds,
    click_log_records,
    clicks_to_qrels,
    read_click_log,
    simulated_clicks,
)
from serpeval.online.clicks import ClickLog, fit_dbn, fit_dcm, fit_pbm

YANDEX = DATA / "clicks-yandex-wscd2012-sample"


@pytest.fixture(scope="module")
def small():
    """A simulated log (30 queries, 6,000 impressions) and its true grades."""
    return simulated_clicks(30, 6_000, rng=3)


# ------------------------------------------------------------------ thresholds

def test_quantile_thresholds_and_ties(small) -> None:
    log, _ = small
    r = clicks_to_qrels(log, model="pbm", quantiles=[0.5, 0.8, 0.95], min_impressions=5)
    labelled = r.impressions >= 5
    assert r.thresholds == pytest.approx(tuple(np.quantile(r.estimate[labelled], [0.5, 0.8, 0.95])))
    # grade = grades[number of thresholds <= estimate], checked item by item.
    expected = np.array([sum(e >= t for t in r.thresholds) for e in r.estimate])
    assert (r.labels[labelled] == expected[labelled]).all()
    assert (r.labels[~labelled] == -1).all()
    # Equal estimates never get different grades.
    for value in np.unique(r.estimate[labelled]):
        assert len(np.unique(r.labels[labelled & (r.estimate == value)])) == 1


@pytest.mark.parametrize("quantiles", [None, [0.5, 0.8, 0.95]])
def test_tied_estimates_at_a_quantile_do_not_fill_the_top_grade(tmp_path, quantiles) -> None:
    """Documents b-e are shown 300 times each and never clicked (one shared estimate), a is
    clicked in a third of its impressions. Every quantile fell on the tied value, and the
    "at least the threshold" rule lifted b-e past all of them: grade 3 for never-clicked
    pairs, grade 0 empty. They now stay in grade 0, and a, the only clicked one, is above."""
    lines = []
    for i in range(300):
        docs = list("abcde")
        docs = docs[i % 5:] + docs[:i % 5]
        lines.append(json.dumps({"query": "q", "docs": docs,
                                 "clicked_ranks": [docs.index("a") + 1] if i % 3 == 0 else []}))
    path = tmp_path / "ties.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = clicks_to_qrels(str(path), model="pbm", quantiles=quantiles)
    grades = {str(doc): int(label) for doc, label in zip(r.doc_ids, r.labels, strict=True)}
    assert grades["a"] > 0
    assert {grades[d] for d in "bcde"} == {0}
    assert list(r.thresholds) == sorted(r.thresholds)


def test_relevance_is_what_the_docstring_says(small) -> None:
    log, _ = small
    dbn, _ = fit_dbn(log, iterations=30, prior="pooled")
    r = clicks_to_qrels(log, model="dbn", iterations=30)
    n = log.n_items
    assert r.estimate == pytest.approx(dbn.attractiveness[:n] * dbn.satisfaction[:n])
    pbm, _ = fit_pbm(log, iterations=1000, prior="pooled")
    assert clicks_to_qrels(log, model="pbm").estimate == pytest.approx(pbm.attractiveness[:n])
    dcm, _ = fit_dcm(log, iterations=1000, prior="pooled")
    assert clicks_to_qrels(log).estimate == pytest.approx(dcm.attractiveness[:n])  # the default


def test_impressions_and_clicks_are_counted(small) -> None:
    log, _ = small
    r = clicks_to_qrels(log, model="pbm", min_impressions=40)
    assert r.impressions.sum() == np.count_nonzero(log.items >= 0)
    assert r.clicks.sum() == log.clicks.sum()
    below = r.impressions < 40
    assert r.unlabelled == below.sum() > 0
    assert len(r.qrels) == (~below).sum()
    assert f"{below.sum():,} seen in fewer than 40 impressions" in " ".join(r.notes())
    rows = r.to_dicts()
    assert rows[-1]["grade"] == "none (< 40 impr.)"
    assert rows[-1]["documents"] == below.sum()
    assert sum(row["documents"] for row in rows) == log.n_items


# ------------------------------------------------------------------ calibration

def _brute_force(values, truth, levels, weights):
    """Every cut of the sorted estimates between distinct values: the best kappa."""
    order = np.argsort(values, kind="stable")
    v, t = values[order], truth[order]
    n = len(v)
    cuts = [p for p in range(n + 1) if p in (0, n) or v[p - 1] != v[p]]
    best = -np.inf
    for chosen in itertools.combinations_with_replacement(cuts, len(levels) - 1):
        inferred = np.zeros(n, dtype=int)
        for j, c in enumerate(chosen):
            inferred[c:] = levels[j + 1]
        confusion = np.zeros((4, 4))
        np.add.at(confusion, (inferred, t), 1)
        k = float(cohen_kappa(confusion, weights))
        best = max(best, k) if np.isfinite(k) else best
    return best


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weights", ["none", "quadratic"])
def test_calibration_search_finds_the_best_cuts(seed, weights) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, 13)
    values = np.round(truth + rng.normal(0, 1, 13), 1)  # ties on purpose
    _, found = _best_thresholds(values, truth, (0, 1, 2, 3), weights)
    assert found == pytest.approx(_brute_force(values, truth, (0, 1, 2, 3), weights), abs=1e-12)


def test_calibration_separable_case_is_perfect() -> None:
    # Estimates 0.1, 0.2 (grade 0), 0.5 (grade 1), 0.8, 0.9 (grade 2): cuts at the midpoints.
    thresholds, value = _best_thresholds(np.array([0.8, 0.1, 0.5, 0.9, 0.2]), np.array([2, 0, 1, 2, 0]),
                                         (0, 1, 2), "quadratic")
    assert value == 1.0
    assert thresholds == pytest.approx((0.35, 0.65))


def test_calibration_counts_what_it_cannot_use(small) -> None:
    log, truth = small
    judged = truth.to_dict()
    first = next(iter(judged))
    judged[first] = {**judged[first], "not-in-the-log": 2, next(iter(judged[first])): -1}
    r = clicks_to_qrels(log, model="pbm", calibrate=judged, min_impressions=30)
    c = r.calibration
    assert c is not None
    assert c["not_in_log"] == 1
    assert c["negative"] == 1
    assert c["below_floor"] == int(np.count_nonzero(r.impressions < 30)) - (
        1 if r.impressions[(r.query_ids == first) & (r.doc_ids == next(iter(judged[first])))][0] < 30 else 0)
    # The reported kappa is the kappa of the labels written, on the judged pairs.
    check = agreement([{q: {d: g for d, g in row.items() if g >= 0} for q, row in judged.items()}, r.qrels],
                      resamples=10)
    assert check.pairs[0].values["kappa_quadratic"] == pytest.approx(c["value"], abs=1e-12)


@pytest.mark.parametrize(("model", "quadratic", "unweighted"), [("dbn", 0.83, 0.53), ("pbm", 0.89, 0.74),
                                                                ("dcm", 0.94, 0.85)])
def test_recovery_of_true_grades_reported_in_the_readme(readme_log, model, quadratic, unweighted) -> None:
    """README: a simulated DBN log with known grades (100 queries, 50,000 impressions, 20 docs per
    query, 4 grades, P(g) ~ 2^-g, seed 0), thresholds calibrated on the true grades of half the
    queries, agreement measured on the other half (1,000 pairs, all seen in >= 20 impressions).
    bench/clicks_to_qrels.py prints the same numbers with their CIs."""
    kappa = held_out_kappa(model, readme_log)
    assert round(kappa["kappa_quadratic"], 2) == quadratic
    assert round(kappa["kappa"], 2) == unweighted


@pytest.fixture(scope="module")
def readme_log():
    """The README's simulated log and its true grades (seed 0), drawn once for the three models."""
    return simulated_clicks(100, 50_000, rng=0)


def held_out_kappa(model: str, simulated) -> dict[str, float]:
    log, truth = simulated
    judged = truth.to_dict()
    queries = sorted(judged)
    calibration = {q: judged[q] for q in queries[::2]}
    held_out = {q: judged[q] for q in queries[1::2]}
    r = clicks_to_qrels(log, model=model, min_impressions=20, calibrate=calibration)
    return agreement([held_out, r.qrels], resamples=10).pairs[0].values


# ------------------------------------------------------------------ real clicks

@pytest.fixture(scope="module")
def yandex():
    train = need(YANDEX / "serps.train.jsonl.gz")
    return read_click_log(train), read_click_log(YANDEX / "serps.test.jsonl.gz")


@pytest.fixture(scope="module")
def yandex_labels(yandex):
    """``clicks_to_qrels(training log, model=...)`` with the defaults otherwise (no model: the
    default one), fitted once per model for the tests below (a result is only read, never changed)."""
    done: dict[str, ClickQrels] = {}

    def labels(model: str | None = None) -> ClickQrels:
        key = DEFAULT_MODEL if model is None else model
        if key not in done:
            done[key] = clicks_to_qrels(yandex[0]) if model is None else clicks_to_qrels(yandex[0], model=model)
        assert done[key].model == (model or DEFAULT_MODEL)  # the result of the model asked for
        return done[key]

    return labels


def test_yandex_grades_from_train_predict_clicks_on_test(yandex, yandex_labels) -> None:
    """Pairs graded higher from the training log are clicked more at rank 1 of the test log
    (a check on real behaviour, no true grades exist)."""
    train, test = yandex
    r = yandex_labels("pbm")
    assert r.min_impressions == 10
    assert r.fit.impressions == 35_064
    assert r.impressions.sum() == 350_640  # every impression shows 10 results
    assert r.counts["clicks_not_shown"] == 417  # the sample's README
    encoded = test.encode_like(train)
    grade_of = np.append(r.labels, -1)  # the unseen code -> no grade
    first = grade_of[encoded.items[:, 0]]
    ctr = [encoded.clicks[first == g, 0].mean() for g in r.grades]
    assert all(np.diff(ctr) > 0), ctr


def _ctr_sanity(r):
    """What a label set inferred from a real log must at least get right, by scipy's Spearman:
    (rho with the raw click-through rate over the labelled pairs, never-clicked pairs with at
    least 20 impressions and a grade above 0, the 30 highest-CTR pairs graded 0)."""
    from scipy.stats import spearmanr

    labelled = r.labels >= 0
    ctr = r.clicks / np.maximum(r.impressions, 1)
    rho = spearmanr(r.estimate[labelled], ctr[labelled]).statistic
    never = labelled & (r.clicks == 0) & (r.impressions >= 20)
    top = np.flatnonzero(labelled)[np.argsort(-ctr[labelled], kind="stable")[:30]]
    return rho, int(never.sum()), int((r.labels[never] > 0).sum()), int((r.labels[top] == 0).sum())


@pytest.mark.parametrize("part", [0, 1], ids=["train", "test"])
def test_yandex_default_labels_follow_the_clicks(yandex, yandex_labels, part) -> None:
    """Issue 27 item 4: the default (then DBN with a Beta(1, 1) prior, 100 EM iterations, every
    pair labelled) inverted labels on the real log: Spearman with CTR -0.16, 483 of 517 never-
    clicked pairs graded 1-3, 258 labels on a single impression. The default must follow the
    clicks, label only pairs with enough impressions and say how many it left out."""
    r = clicks_to_qrels(yandex[1]) if part else yandex_labels()
    rho, never, never_graded, top_zero = _ctr_sanity(r)
    assert rho > 0.8
    assert never > 20
    assert never_graded == 0
    assert top_zero == 0
    assert r.fit.converged
    assert r.min_impressions == 10
    few = r.impressions < 10
    assert r.unlabelled == few.sum() > 0
    assert (r.labels[few] == -1).all()
    assert f"{few.sum():,} seen in fewer than 10 impressions get no grade" in " ".join(r.notes())
    assert (r.labels[~few] >= 0).all()


@pytest.mark.parametrize("model", ["pbm", "dcm", "dbn"])
def test_yandex_every_model_ranks_with_the_clicks(yandex_labels, model) -> None:
    """No model's estimate may run against the raw CTR on the real log (DBN's was -0.06 on the
    pairs with >= 10 impressions); PBM's and DCM's pass the whole sanity check."""
    r = yandex_labels(model)
    rho, _never, never_graded, top_zero = _ctr_sanity(r)
    assert rho > (0.8 if model != "dbn" else 0.2)
    if model != "dbn":
        assert never_graded == 0
        assert top_zero == 0


def test_pooled_prior_hand_worked() -> None:
    """One result per page, so every shown result is examined and DCM's attractiveness is the
    posterior click rate. Pair a: 10 impressions, 2 clicks; pair b: 2 impressions, no click.
    The pooled prior's mean is m = 2 / 12 with weight 2: a = (2 + 2m) / (10 + 2) = 0.19444,
    b = 2m / (2 + 2) = 0.08333, below a. Beta(1, 1) gives a = 3 / 12 = 0.25 and b = 1 / 4 =
    0.25: the unclicked pair ties with the clicked one on the strength of the prior alone."""
    records = ([{"query": "q", "docs": ["a"], "clicked_ranks": [1]}] * 2
               + [{"query": "q", "docs": ["a"], "clicked_ranks": []}] * 8
               + [{"query": "q", "docs": ["b"], "clicked_ranks": []}] * 2)
    log = ClickLog.from_records(records)
    code = {k.split("\x1f")[1]: i for i, k in enumerate(log.item_keys.to_pylist())}
    m = 2 / 12
    pooled, report = fit_dcm(log, prior="pooled")
    assert pooled.attractiveness[code["a"]] == pytest.approx((2 + 2 * m) / 12)
    assert pooled.attractiveness[code["b"]] == pytest.approx(2 * m / 4)
    assert pooled.attractiveness[-1] == pytest.approx(m)  # unseen pairs: the pooled mean
    assert report.prior == "pooled"
    assert report.converged
    flat, _ = fit_dcm(log)
    assert flat.attractiveness[code["a"]] == pytest.approx(0.25) == flat.attractiveness[code["b"]]
    r = clicks_to_qrels(log, grades="0,1", min_impressions=1)
    assert r.estimate[code["a"]] == pytest.approx((2 + 2 * m) / 12)
    assert r.labels[code["b"]] == 0
    assert r.labels[code["a"]] == 1


def test_cli_writes_qrels_counts_and_they_evaluate(tmp_path, small, capsys) -> None:
    from serpeval import evaluate, read_qrels
    from serpeval.cli.app import main

    log, truth = small
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in click_log_records(log)))
    out, counts = tmp_path / "clicks.qrels", tmp_path / "counts.jsonl"
    assert main(["clicks-to-qrels", str(path), "--model", "pbm", "--min-impressions", "10",
                 "-o", str(out), "--counts", str(counts)]) == 0
    summary = capsys.readouterr().out
    assert "qrels from clicks: pbm, quantile thresholds" in summary
    qrels = read_qrels(out)
    lines = [json.loads(x) for x in counts.read_text().splitlines()]
    assert len(lines) == log.n_items
    assert sum(x["relevance"] is not None for x in lines) == len(qrels)
    assert all(x["impressions"] >= 10 for x in lines if x["relevance"] is not None)
    run = {q: {d: float(g) for d, g in row.items()} for q, row in truth.to_dict().items()}
    assert evaluate(qrels, run, ["nDCG@10"]).aggregate("run", "nDCG@10") > 0.5


def test_log_round_trips_through_records(small) -> None:
    log, _ = small
    again = ClickLog.from_records(click_log_records(log))
    assert (again.items == log.items).all()
    assert (again.clicks == log.clicks).all()


def test_errors_say_what_to_do(tmp_path, small) -> None:
    log, truth = small
    with pytest.raises(OptionError, match="unknown click model 'ubm'"):
        clicks_to_qrels(log, model="ubm")
    with pytest.raises(OptionError, match="distinct non-negative integers"):
        clicks_to_qrels(log, grades="0,2,1")
    with pytest.raises(OptionError, match="exclude each other"):
        clicks_to_qrels(log, quantiles=[0.5, 0.7, 0.9], calibrate=truth)
    with pytest.raises(OptionError, match="3 increasing shares"):
        clicks_to_qrels(log, quantiles=[0.5, 0.7])
    with pytest.raises(InputError, match="lower --min-impressions"):
        clicks_to_qrels(log, min_impressions=10**6)
    with pytest.raises(InputError, match="calibration needs at least 2"):
        clicks_to_qrels(log, calibrate={"elsewhere": {"x": 1}})
    import pyarrow as pa
    import pyarrow.parquet as pq

    generated = tmp_path / "impressions.parquet"
    pq.write_table(pa.table({"query_id": [1], "n_shown": [10], "clicks": [[1]]}), generated)
    with pytest.raises(InputError, match="generate-logs log records the clicked positions"):
        read_click_log(generated)
    assert Path(generated).exists()


def test_several_files_are_one_log(tmp_path, small) -> None:
    log, _ = small
    records = click_log_records(log)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"
    first.write_text("".join(json.dumps(r) + "\n" for r in records[:2500]))
    import gzip

    second.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records[2500:]).encode()))
    both = read_click_log([first, second])
    assert len(both) == len(log)
    assert both.n_items == log.n_items
    one = clicks_to_qrels(log, model="pbm")
    two = clicks_to_qrels([first, second], model="pbm")
    assert sorted(zip(one.query_ids, one.doc_ids, one.labels, strict=True)) == sorted(
        zip(two.query_ids, two.doc_ids, two.labels, strict=True))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(records[0]) + "\n" + json.dumps({**records[1], "clicked_ranks": [11]}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl: line 2: clicked rank 11"):
        read_click_log([first, bad])


def test_result_displays_in_notebooks(small) -> None:
    from tests.core.test_notebook_display import check_display

    check_display(clicks_to_qrels(small[0], model="pbm", min_impressions=50))


@pytest.mark.parametrize(("lines", "where"), [
    (['{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1]}', "",
      '{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1]'], r":3: not valid JSON"),
    (['{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1]}',
      '{"query": "q1", "docs": "a b", "clicked_ranks": [1]}'], r':2: "docs" is a str here but a list'),
    (['{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1]}',
      '{"query": "q2", "docs": ["a"], "clicked_ranks": ["1"]}'], r':2: "clicked_ranks" must hold 1-based integer'),
], ids=["broken JSON", "docs not a list", "rank not an integer"])
def test_a_bad_click_log_line_is_named_by_file_and_line(tmp_path, lines, where) -> None:
    """Arrow's reader names a 0-based row ("row 2" for line 3); the error names file:line."""
    import gzip

    for name, write in (("log.jsonl", lambda p, t: p.write_text(t, encoding="utf-8")),
                        ("log.jsonl.gz", lambda p, t: p.write_bytes(gzip.compress(t.encode())))):
        path = tmp_path / name
        write(path, "\n".join(lines) + "\n")
        with pytest.raises(ParseError, match=re.escape(str(path)) + where):
            read_click_log(path)


# ------------------------------------------------------------------ issue 27 items 4 and 15: the command line

def test_cli_default_labels_the_real_log_with_enough_evidence(yandex, tmp_path, capsys) -> None:
    """The command's defaults (DCM, pooled prior, >= 10 impressions): the summary says how many
    pairs got no grade, and the qrels hold only the pairs seen in >= 10 impressions."""
    from serpeval.cli.app import main

    out, counts = tmp_path / "y.qrels", tmp_path / "y.jsonl"
    path = YANDEX / "serps.train.jsonl.gz"
    assert main(["clicks-to-qrels", str(path), "-o", str(out), "--counts", str(counts), "-f", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"] == "dcm"
    assert summary["min_impressions"] == 10
    assert summary["fit"]["converged"] is True
    assert summary["fit"]["tol"] == 1e-6
    rows = [json.loads(x) for x in counts.read_text().splitlines()]
    few = [x for x in rows if x["impressions"] < 10]
    assert summary["unlabelled"] == len(few) > 0
    assert all(x["relevance"] is None for x in few)
    assert len(out.read_text().splitlines()) == len(rows) - len(few)
    single = sum(x["impressions"] == 1 for x in rows)
    assert single > 200  # labels that rested on one impression before: none now


def _log(tmp_path: Path, lines: list[str], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


GOOD = '{"query": "q1", "docs": ["a", "b", "c"], "clicks": ["b"], "clicked_ranks": [2]}'


def test_deep_json_is_refused_before_the_reader_sees_it(tmp_path) -> None:
    """Issue 27 item 15: a line nested 50,000 deep crashed pyarrow's JSON reader (exit 139).
    The nesting is bounded first; brackets inside strings do not count."""
    deep = '{"query": "q", "docs": ["a"], "clicked_ranks": [], "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    path = _log(tmp_path, [GOOD, deep])
    with pytest.raises(ParseError, match=re.escape(f"{path}:2:") + r" JSON nested 50,001 deep"):
        read_click_log(path)
    with pytest.raises(ParseError, match=re.escape(f"{path}:2:")):
        ClickLog.read_jsonl(path)
    brackets = '{"query": "q[[[[", "docs": ["' + "[{" * 100 + '"], "clicked_ranks": []}'
    assert len(read_click_log(_log(tmp_path, [GOOD, brackets], "ok.jsonl"))) == 2


def test_cli_deep_json_is_one_error_line_not_a_crash(tmp_path) -> None:
    import subprocess
    import sys

    deep = '{"query": "q", "docs": ["a"], "clicked_ranks": [], "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    path = _log(tmp_path, [GOOD, deep])
    done = subprocess.run([sys.executable, "-m", "serpeval", "clicks-to-qrels", str(path), "-o",
                           str(tmp_path / "out.qrels")], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"serpeval clicks-to-qrels: error: {path}:2: JSON nested 50,001 deep")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("lines", "where"), [
    ([GOOD, '{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1.5]}'],
     r'(:|: line )2: "clicked_ranks" must hold 1-based integer ranks; found 1.5'),
    (['{"query": "q1", "docs": ["a", "b"], "clicked_ranks": ["1"]}'] * 2,
     r'(:|: line )1: "clicked_ranks" must hold 1-based integer ranks; found \'1\''),
    (['{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [true]}'],
     r'(:|: line )1: "clicked_ranks" must hold 1-based integer ranks; found True'),
    ([GOOD, '{"query": "q1", "docs": ["a", "b", "c"], "clicks": ["a"], "clicked_ranks": [2]}'],
     r': line 2: "clicks" and "clicked_ranks" disagree: clicked_ranks names b, clicks names a\.'),
    ([GOOD, '{"query": "q1", "docs": ["a", "b", "c"], "clicks": ["a", "c"], "clicked_ranks": [1]}'],
     r': line 2: "clicks" and "clicked_ranks" disagree: clicked_ranks names a, clicks names a, c\.'),
], ids=["fractional rank", "string ranks", "boolean rank", "other document", "missing rank"])
def test_contradicting_click_logs_are_refused(tmp_path, lines, where) -> None:
    path = _log(tmp_path, lines)
    with pytest.raises(ParseError, match=re.escape(str(path)) + where):
        read_click_log(path)


def test_cli_contradictions_and_a_log_without_clicks(tmp_path, capsys) -> None:
    """Refused with one line naming the file and line (exit 2); a click on a document that was
    not shown cannot be placed on the page, so it is counted and reported (the real Yandex log
    has 417), not refused."""
    from serpeval.cli.app import main

    out = str(tmp_path / "out.qrels")
    bad = _log(tmp_path, [GOOD, '{"query": "q1", "docs": ["a", "b"], "clicked_ranks": [1.5]}'])
    assert main(["clicks-to-qrels", str(bad), "-o", out]) == 2
    err = capsys.readouterr().err
    assert re.match(re.escape(f"serpeval clicks-to-qrels: error: {bad}") + "(:|: line )2: ", err)
    assert len(err.strip().splitlines()) == 1
    silent = _log(tmp_path, ['{"query": "q1", "docs": ["a", "b"], "clicks": [], "clicked_ranks": []}'] * 30,
                  "silent.jsonl")
    assert main(["clicks-to-qrels", str(silent), "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"serpeval clicks-to-qrels: error: {silent}: no clicks in 30 impressions")
    elsewhere = _log(tmp_path, [GOOD] * 20 + ['{"query": "q1", "docs": ["a", "b", "c"], "clicks": ["x", "b"], '
                                              '"clicked_ranks": [2]}'] * 3, "elsewhere.jsonl")
    assert main(["clicks-to-qrels", str(elsewhere), "-o", out, "-f", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["log_counts"]["clicks_not_shown"] == 3
    assert any("on a document not shown 3" in note for note in summary["notes"])


def test_query_texts_as_ids_write_as_json_lines_or_parquet(tmp_path, capsys) -> None:
    """A log whose queries are their texts ("wind power") cannot be written as TREC qrels (the
    space would split the line: the writer refuses it, naming JSON lines and Parquet); -o
    x.jsonl and -o x.parquet write the same qrels, which read back through serpeval's qrels
    reader equal to clicks_to_qrels' own."""
    import numpy as np

    from serpeval.cli.app import main
    from serpeval.io import read_qrels
    from serpeval.judgments.clicks import clicks_to_qrels

    rng = np.random.default_rng(3)
    queries = {"wind power": ["w1", "w2", "w3"], "solar cells": ["s1", "s2", "s3"], "café menu": ["c1", "c2", "c3"]}
    lines = []
    for _ in range(600):
        text = list(queries)[int(rng.integers(3))]
        clicked = [r for r in (1, 2, 3) if rng.random() < 0.6 / r]
        lines.append(json.dumps({"query": text, "docs": queries[text], "clicked_ranks": clicked}, ensure_ascii=False))
    log = _log(tmp_path, lines)
    expected = clicks_to_qrels([str(log)]).qrels
    assert len(expected) == 9
    assert main(["clicks-to-qrels", str(log), "-o", str(tmp_path / "q.qrels")]) == 2
    err = capsys.readouterr().err
    assert "holds whitespace" in err
    assert "JSON lines or Parquet" in err
    assert not (tmp_path / "q.qrels").exists()
    for name in ("q.jsonl", "q.parquet"):
        assert main(["clicks-to-qrels", str(log), "-o", str(tmp_path / name), "-f", "json"]) == 0
        capsys.readouterr()
        back = read_qrels(tmp_path / name)
        assert back.to_dict() == expected.to_dict()
        assert set(back.to_dict()) == set(queries)
