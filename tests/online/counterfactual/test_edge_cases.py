"""Unusual logs and candidates, as real users bring them: missing values, repeated documents,
inconsistent designs, lists the design could not show, click lists with junk, candidates named
alike or given as one mapping, logging rankings longer than the page, unions too large for the
exact marginals, one user, and the interleaved comparison's support against an enumeration of
the pair's lists."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.online.counterfactual import counterfactual, read_log
from serpeval.online.counterfactual.api import candidate_lists, encode_candidate
from serpeval.online.counterfactual.diagnostics import support_shares
from serpeval.online.counterfactual.estimators import Context, terms
from serpeval.online.counterfactual.logging_model import LoggingModel
from serpeval.online.interleaving import propensities
from serpeval.online.interleaving.probabilistic import interleave_batch, softmax_weights
from serpeval.online.simulation.counterfactual import log_table, simulate_log, synthetic_pool
from serpeval.report.counterfactual import counterfactual_text


@pytest.fixture(scope="module")
def pool():
    return synthetic_pool(12, k=3, pool_size=8, rng=1)


@pytest.fixture(scope="module")
def table(pool):
    return log_table(simulate_log(pool, 3000, "navigational", rng=2), experiment="exp")


def _set(table: pa.Table, column: str, values: pa.Array | list) -> pa.Table:
    return table.set_column(table.schema.get_field_index(column), column, values)


def _small(rows: int = 4, **columns: list) -> pa.Table:
    base = {"user_id": list(range(rows)), "query_id": ["q"] * rows, "shown": [["a", "b"]] * rows,
            "clicks": [[1]] * rows, "logging_design": ["probabilistic"] * rows,
            "logging_rankings": [[["a", "b", "c"], ["b", "c", "a"]]] * rows}
    base.update(columns)
    return pa.table(base)


# ------------------------------------------------------------------ reading the log
@pytest.mark.parametrize("column", ["user_id", "query_id"])
@pytest.mark.parametrize("kind", [pa.string(), pa.int64()])
def test_a_missing_id_is_refused_naming_its_row(column: str, kind: pa.DataType) -> None:
    values = pa.array([1, None, 3, 4], pa.int64()).cast(kind)
    with pytest.raises(InputError, match=rf"<table>: row 2: {column} is missing"):
        read_log(_small(**{column: values}))


def test_large_integer_user_ids_are_distinct_clusters() -> None:
    # ids past 2**53 collapse when cast to float; 4 users must stay 4 clusters
    log = read_log(_small(user_id=pa.array([2**60, 2**60 + 1, 2**60 + 2, 2**60 + 3], pa.int64())))
    assert log.n_units == 4


def test_repeated_documents_are_refused() -> None:
    # neither a ranking nor a shown list can hold a document twice (the serving code refuses both)
    with pytest.raises(InputError, match=r"row 1: the shown list holds a document twice"):
        read_log(_small(shown=[["a", "a"]] * 4))
    twice = [[["a", "b", "c"], ["b", "c", "a"]]] * 2 + [[["a", "b", "a"], ["b", "c", "a"]]] * 2
    with pytest.raises(InputError, match=r"row 3: logging ranking 1 lists document 'a' twice"):
        read_log(_small(logging_rankings=twice))
    with pytest.raises(InputError, match=r"row 1: logging ranking 2 is empty"):
        read_log(_small(logging_rankings=[[["a", "b"], []]] * 4))


def test_rows_with_another_number_of_rankings_are_refused() -> None:
    # Before: the 2-ranker row was recomputed as a 3-ranker interleaving with an empty third ranking:
    # P([a, b]) = 0.3424 where the serving function gives 0.4303.
    rankings = [[["a", "b", "c"], ["a", "c", "b"]], [["x", "y"], ["y", "x"], ["z", "x"]]]
    table = _small(2, query_id=["q1", "q2"], shown=[["a", "b"], ["x", "y"]], logging_rankings=rankings)
    assert propensities(rankings[0], ["a", "b"]).list_probability == pytest.approx(0.43027888446215157)
    with pytest.raises(InputError, match=r"row 2 has 3 logging rankings where row 1 has 2"):
        read_log(table)


@pytest.mark.parametrize("shares", [[0.3, 0.3], [1.0], [0.5, 0.5, 0.5], [1.5, -0.5]])
def test_ab_shares_must_be_one_positive_share_per_arm_summing_to_1(shares: list[float]) -> None:
    table = _small(logging_design=["ab"] * 4, arm_shares=[shares] * 4, shown=[["a", "b", "c"]] * 4)
    with pytest.raises(InputError, match=r"an A/B log needs one positive share per arm \(2"):
        read_log(table)


@pytest.mark.parametrize("tau", [float("nan"), -1.0, 0.0])
def test_a_bad_tau_names_the_log(tau: float) -> None:
    with pytest.raises(InputError, match=r"<table>: tau is .*positive number"):
        read_log(_small(tau=[tau] * 4))


def test_click_junk_is_counted_never_silently_dropped() -> None:
    clicks = pa.array([[1, 1, 2], [None, 2], [1.5, 3], [0, 2, 2]], pa.list_(pa.float64()))
    log = read_log(_small(clicks=clicks))
    # row 1: 1, 1 (repeat), 2; row 2: null, 2; row 3: 1.5, 3 (outside 2 shown); row 4: 0 (outside), 2, 2 (repeat)
    np.testing.assert_array_equal(log.clicks, [[True, True], [False, True], [False, False], [False, True]])
    assert log.skipped == {"clicks without an integer position": 2, "clicks outside the shown positions": 2,
                           "repeated clicks on a position (counted once)": 2}


def test_impressions_that_show_nothing_are_skipped_and_counted(table) -> None:
    shown = table.column("shown").to_pylist()
    emptied = [None if i % 10 == 0 else ([] if i % 10 == 1 else s) for i, s in enumerate(shown)]
    gone = table.drop_columns(["propensity"])
    with_empty = _set(gone, "shown", pa.array(emptied, pa.list_(pa.string())))
    kept = gone.filter(pa.array([i % 10 > 1 for i in range(table.num_rows)]))
    log = read_log(with_empty)
    assert log.skipped == {"impressions that show no document": 600}
    assert len(log) == table.num_rows - 600
    a = counterfactual(with_empty, {"B": {q: [d] for q, d in zip(table.column("query_id").to_pylist(),
                                                                    [s[0] for s in shown], strict=True)}},
                       k=1, estimators=["ips"])
    b = counterfactual(kept, {"B": {q: [d] for q, d in zip(table.column("query_id").to_pylist(),
                                                              [s[0] for s in shown], strict=True)}},
                       k=1, estimators=["ips"])
    assert a.estimates[0].value == b.estimates[0].value
    assert a.skipped == {"impressions that show no document": 600}


def test_a_missing_propensity_is_not_checked_and_errors_name_the_logs_row(table) -> None:
    prop = table.column("propensity").to_pylist()
    prop[5] = None
    read_log(_set(table, "propensity", pa.array(prop, pa.float64())))  # accepted: nothing to check there
    # two experiments, a wrong propensity in the second one's 4th row: row n + 4 of the file
    n = table.num_rows
    second = _set(table, "experiment", pa.array(["exp-2"] * n))
    wrong = second.column("propensity").to_pylist()
    wrong[3] *= 2
    mixed = pa.concat_tables([_set(table, "experiment", pa.array(["exp"] * n)),
                              _set(second, "propensity", pa.array(wrong))])
    with pytest.raises(InputError, match=rf"row {n + 4}: logged propensity [0-9.]+ differs from [0-9.]+,"):
        counterfactual(mixed, {"B": {"q": ["x"]}}, experiment="exp-2")
    with pytest.raises(InputError, match="no experiment column"):
        read_log(table.drop_columns(["experiment"]), experiment="exp")


def test_simulated_ab_log_records_the_split_it_draws(pool) -> None:
    # shares (3, 1) are drawn as 0.75 / 0.25; the log must say so (before: (3.0, 1.0), propensities 3x)
    log = simulate_log(pool, 400, design="ab", shares=(3, 1), rng=3)
    assert log.shares == (0.75, 0.25)
    read_log(log_table(log))  # its propensity column agrees with the recomputed one
    with pytest.raises(OptionError, match="one positive traffic share per logging arm"):
        simulate_log(pool, 10, design="ab", shares=(1, 0), rng=3)


# ------------------------------------------------------------------ candidates
def test_candidates_named_alike_are_all_estimated(tmp_path, pool, table) -> None:
    for folder, name in (("x", "A"), ("y", "B")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "cand.run").write_text("".join(
            f"{q} Q0 {d} {i + 1} {10 - i} r\n" for q, docs in pool.lists(name).items() for i, d in enumerate(docs)))
    paths = [str(tmp_path / "x" / "cand.run"), str(tmp_path / "y" / "cand.run")]
    res = counterfactual(table, paths, k=1, estimators=["interleaved"])
    assert res.candidates == paths  # before: one "cand", the second file overwriting the first
    a, b = (res.get(p, "interleaved") for p in paths)
    assert a.value == 0.0  # ranker A against itself: the outcome is 0 on every impression
    assert b.value != 0.0
    assert list(candidate_lists([paths[0], paths[0]])) == ["cand#1", "cand#2"]


def test_one_candidate_given_as_a_mapping(pool, table) -> None:
    lists = pool.lists("B")
    scored = {q: {d: 10.0 - i for i, d in enumerate(docs)} for q, docs in lists.items()}
    want = counterfactual(table, {"candidate": lists}, k=2, estimators=["snips"]).estimates[0].value
    for given in (lists, scored):
        res = counterfactual(table, given, k=2, estimators=["snips"])
        assert res.candidates == ["candidate"]
        assert res.estimates[0].value == want


def test_ranked_lists_holding_a_document_twice_are_refused(table) -> None:
    with pytest.raises(InputError, match=r"query 'q0000' lists document 'd' twice"):
        counterfactual(table, {"C": {"q0000": ["d", "e", "d"]}})


def test_logging_rankings_longer_than_the_page() -> None:
    """The page shows 3 of each ranker's top 6. Ranker B, a logging ranker, has the logging
    probability under the pair (B, A): its interleaved weight is exactly 1 on every impression.
    Before, candidates were cut to the page's 3 documents, so B's softmax differed from the
    logged one: weights from 0 to 5.8."""
    rng = np.random.default_rng(1)
    rows = []
    for q in range(5):
        docs = [f"q{q}d{i}" for i in range(9)]
        a, b = (list(rng.permutation(docs)[:6]) for _ in range(2))
        union = list(dict.fromkeys(a + b))
        code = {d: i for i, d in enumerate(union)}
        w = softmax_weights([np.array([[code[d] for d in a]]), np.array([[code[d] for d in b]])], len(union), 3.0)
        shown, _ = interleave_batch(np.repeat(w, 200, axis=0), 3, rng)
        rows += [{"user_id": len(rows) + i, "query_id": f"q{q}", "shown": [union[c] for c in s],
                  "clicks": [j + 1 for j in range(3) if rng.random() < 0.3], "logging_design": "probabilistic",
                  "logging_rankings": [a, b]} for i, s in enumerate(shown)]
    table = pa.Table.from_pylist(rows)
    ranker_b = {r["query_id"]: r["logging_rankings"][1] for r in rows}
    est = counterfactual(table, {"B": ranker_b}, estimators=["interleaved"]).get("B", "interleaved")
    assert est.diagnostics["mean_weight"] == pytest.approx(1.0, rel=1e-12)
    assert est.diagnostics["ess"] == pytest.approx(len(rows), rel=1e-12)


def test_a_union_too_large_for_the_marginals_still_answers_the_other_estimators() -> None:
    wide = synthetic_pool(5, k=12, pool_size=40, noises={"A": 5.0, "B": 5.0}, rng=9)
    assert max(len(d) for d in wide.docs) > 20
    log = simulate_log(wide, 3000, "navigational", rng=1)
    res = counterfactual(log, {"B": wide.lists("B")}, k=1)  # before: an OptionError for the whole call
    for name in ("interleaved", "ips", "snips", "cascade_ips", "dr"):
        assert res.get("B", name).refused is None, name
    for name in ("iips", "pbm_ips"):
        assert "needs the design's exact position marginals" in res.get("B", name).refused


def test_support_without_marginals_equals_support_from_them(pool) -> None:
    # oracle: support read off the exact position marginals (P(d at j) > 0), on a log small enough for them
    log = simulate_log(pool, 500, "navigational", rng=5)
    cands = {"A": pool.lists("A"), "short": {q: d[:1] for q, d in pool.lists("B").items()},
             "new": {q: ["unseen", *d[:2]] for q, d in pool.lists("B").items()}}
    for name, ranked in cands.items():
        lists, answered = encode_candidate(log, ranked, 3)
        ctx = Context(log, LoggingModel(log, int(lists.max()) + 1), "clicks")
        got = support_shares(ctx, lists, answered)
        m = ctx.model.marginals()
        valid = lists >= 0
        inside = valid & (lists < m.shape[1])
        code = np.where(inside, lists, 0)
        j = np.broadcast_to(np.arange(3), lists.shape)
        rows = np.broadcast_to(np.arange(len(lists))[:, None], lists.shape)
        counts = np.bincount(log.context, minlength=len(lists))
        want = float(counts @ (inside & (m[rows, code, j] > 0)).sum(axis=1)) / float(counts @ valid.sum(axis=1))
        anywhere = float(counts @ (inside & (m.sum(axis=2)[rows, code] > 0)).sum(axis=1)) / float(
            counts @ valid.sum(axis=1))
        assert got["position"] == pytest.approx(want, abs=1e-15), name
        assert got["anywhere"] == pytest.approx(anywhere, abs=1e-15), name
    assert terms("ips", ctx, lists).x.shape == (len(log),)


def test_one_user_is_refused_not_given_a_number_without_interval(pool, table) -> None:
    one = _set(table, "user_id", pa.array([7] * table.num_rows))
    res = counterfactual(one, {"B": pool.lists("B")}, k=2, estimators=["snips", "interleaved"])
    for e in res.estimates:  # before: a value with se, interval and effect interval all NaN
        assert e.refused == ("the impressions on the candidate's queries come from 1 user; the intervals "
                             "cluster on users and need at least 2")
    assert "1 user;" in counterfactual_text(res)


def test_csv_ranking_only_is_the_ranking(pool, table) -> None:
    res = counterfactual(table, {"B": pool.lists("B")}, k=2, estimators=["snips"])
    csv = counterfactual_text(res, "csv", all_estimators=False)
    assert csv.splitlines()[0] == "candidate,verdict,estimator,effect,effect_low,effect_high,ess,support,reason"
    assert counterfactual_text(res, "csv").splitlines()[0].startswith("candidate,estimator,value")


def test_cli_bad_log_is_one_line_exit_2(tmp_path, table, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    from serpeval.cli import main

    path = tmp_path / "log.parquet"
    ab = _set(table.drop_columns(["tau", "propensity"]), "logging_design", pa.array(["ab"] * table.num_rows))
    pq.write_table(ab.append_column("arm_shares", pa.array([[0.4, 0.4]] * table.num_rows)), path)
    run = tmp_path / "B.run"
    run.write_text("q0000 Q0 x 1 1 r\n")
    assert main(["counterfactual", str(path), "-c", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "arm_shares is [0.4, 0.4]" in err[0]


def test_the_text_report_says_what_was_left_out(pool, table) -> None:
    clicks = table.column("clicks").to_pylist()
    clicks[0], clicks[1] = [9], [1, 1]  # one click past the 3 shown, one repeated
    res = counterfactual(_set(table, "clicks", pa.array(clicks)), {"B": pool.lists("B")}, k=2, estimators=["snips"])
    assert res.skipped == {"clicks outside the shown positions": 1, "repeated clicks on a position (counted once)": 1}
    text = counterfactual_text(res, "markdown", all_estimators=False)
    assert "left out of the log: 1 clicks outside the shown positions; 1 repeated clicks on a position" in text


def test_estimators_one_name_repeats_or_none(pool, table) -> None:
    one = counterfactual(table, {"B": pool.lists("B")}, k=2, estimators="snips")  # before: 's', 'n', ... unknown
    twice = counterfactual(table, {"B": pool.lists("B")}, k=2, estimators=["snips", "snips"])
    assert [e.estimator for e in one.estimates] == [e.estimator for e in twice.estimates] == ["snips"]
    with pytest.raises(OptionError, match="no estimator asked for"):
        counterfactual(table, {"B": pool.lists("B")}, estimators=[])


def test_unreadable_log_paths_are_input_errors(tmp_path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_text("garbage")
    with pytest.raises(InputError, match=r"bad.parquet: not a readable Parquet log"):  # before: a bare ArrowInvalid
        read_log(bad)
    with pytest.raises(InputError, match=r": a directory; expected a log file"):
        read_log(tmp_path)


def test_a_list_the_design_could_not_show_is_refused() -> None:
    """Under an A/B split of [a, b, c] and [b, c, a], a row showing [c, a, b] has probability 0.
    Before, such rows were kept with weight 0: with every 10th row one of them and a click
    probability of 1/2 on the page, IPS of arm A gave 0.45 (the truth is 0.5)."""
    rows = 20
    shown = [["c", "a", "b"] if i % 10 == 0 else [["a", "b", "c"], ["b", "c", "a"]][i % 2] for i in range(rows)]
    table = _small(rows, shown=shown, logging_design=["ab"] * rows, arm_shares=[[0.5, 0.5]] * rows,
                   logging_rankings=[[["a", "b", "c"], ["b", "c", "a"]]] * rows)
    with pytest.raises(InputError, match=r"row 1: the shown list has probability 0 under the logged design "
                                         r"\(ab: no arm shows it\) \(2 such rows\)"):
        counterfactual(table, {"A": {"q": ["a", "b", "c"]}}, estimators=["ips"])


def test_missing_ids_inside_lists_are_refused_naming_the_row() -> None:
    with pytest.raises(InputError, match=r"row 2: shown holds a missing document id"):
        read_log(_small(shown=[["a", "b"], ["a", None], ["a", "b"], ["a", "b"]]))
    rankings = [[["a", "b", "c"], ["b", "c", "a"]]] * 2 + [[["a", None, "c"], ["b", "c", "a"]]] * 2
    with pytest.raises(InputError, match=r"row 3: logging_rankings holds a missing document id"):
        read_log(_small(logging_rankings=rankings))
    rankings = [[["a", "b", "c"], ["b", "c", "a"]]] * 3 + [[["a", "b", "c"], None]]
    with pytest.raises(InputError, match=r"row 3: logging ranking 2 is missing"):
        read_log(_small(logging_rankings=rankings).slice(1))  # a sliced table (its row 3): offsets not from 0
    ab = {"logging_design": ["ab"] * 4, "shown": [["a", "b", "c"]] * 4}
    with pytest.raises(InputError, match=r"arm_shares is missing \(or holds a missing share\)"):
        read_log(_small(arm_shares=[[0.5, 0.5], None, [0.5, 0.5], [0.5, 0.5]], **ab))


def _pair_mass(log, lists, k: int, tau: float = 3.0) -> float:
    """Oracle: the impression-weighted probability that the pair (C, A) shows a top k of logged
    documents only, by enumerating every top-k list the pair can draw (plain Python)."""
    import itertools

    counts = np.bincount(log.context, minlength=len(lists))
    total = 0.0
    for c in range(len(lists)):
        cand = [int(d) for d in lists[c] if d >= 0]
        a = log.context_rankings[c][0]
        docs = sorted(set(cand) | set(a))
        weights = []
        for r in (cand, a):
            w = {d: (len(r) + 1) ** -tau for d in docs}
            w.update({d: (i + 1) ** -tau for i, d in enumerate(r)})
            weights.append(w)
        logged = len(log.context_docs[c])
        mass = 0.0
        for top in itertools.permutations(docs, min(k, len(docs))):
            p, placed = 1.0, set()
            for d in top:
                p *= sum(w[d] / sum(w[e] for e in docs if e not in placed) for w in weights) / 2
                placed.add(d)
            mass += p if all(d < logged for d in top) else 0.0
        total += counts[c] * mass
    return total / counts.sum()


def test_interleaved_support_is_the_pairs_probability_of_a_loggable_top_k(monkeypatch) -> None:
    from serpeval.online.counterfactual.diagnostics import interleaved_support
    from serpeval.online.interleaving import probabilistic

    pool = synthetic_pool(4, k=3, pool_size=9, noises={"A": 1.0, "B": 1.0, "X": 9.0}, rng=2)
    log = simulate_log(pool, 200, "navigational", rng=1)
    lists, answered = encode_candidate(log, pool.lists("X"), 3)
    ctx = Context(log, LoggingModel(log, int(lists.max()) + 1), "clicks")
    exact = {k: _pair_mass(log, lists, k) for k in (1, 2, 3)}
    for k in (1, 2, 3):
        assert interleaved_support(ctx, lists, 0, k, answered) == pytest.approx(exact[k], rel=1e-12)
    monkeypatch.setattr(probabilistic, "MAX_MARGINAL_DOCS", 0)  # the bound used above the programme's size
    bounds = {k: interleaved_support(ctx, lists, 0, k, answered) for k in (1, 2, 3)}
    assert bounds[1] == pytest.approx(exact[1], rel=1e-12)  # slot 1: nothing placed yet, the bound is exact
    assert all(bounds[k] <= exact[k] + 1e-12 for k in (2, 3))  # never above the exact support


def test_documents_the_candidate_ranks_below_k_count_in_the_interleaved_support() -> None:
    """C = B's top 2, then 3 documents no logging ranker has. At k = 2 the pair (C, A) draws
    those 3 into the top 2 in 13% of its lists, which the log can never show: over 40 logs the
    estimate averaged 0.053 where the on-policy truth is 0.082 (SE 0.001), every time with
    support 100%. It is now refused, its support the pair's loggable mass."""
    pool = synthetic_pool(20, k=5, pool_size=30, noises={"A": 1.5, "B": 1.0, "X": 20.0}, rng=21)
    codes = np.full((20, 5), -1)
    for q in range(20):
        logged = set(pool.rankers["A"][q]) | set(pool.rankers["B"][q])
        row = [*pool.rankers["B"][q][:2], *[c for c in range(len(pool.docs[q])) if c not in logged][:3]]
        codes[q, :len(row)] = row
    pool = pool.with_ranker("C", codes)
    log = simulate_log(pool, 5000, "navigational", rng=np.random.default_rng([0, 3]))
    est = counterfactual(log, {"C": pool.lists("C")}, k=2, estimators=["interleaved"]).get("C", "interleaved")
    lists, _ = encode_candidate(log, pool.lists("C"), 5)
    assert est.diagnostics["support"] == pytest.approx(_pair_mass(log, lists, 2), rel=1e-12)
    assert est.diagnostics["support"] < 0.95
    assert est.refused.startswith("only 87% of the top-k lists the candidate's interleaving")


def test_log_table_of_a_wide_union_says_how_to_write_it() -> None:
    wide = synthetic_pool(3, k=12, pool_size=40, noises={"A": 5.0, "B": 5.0}, rng=9)
    log = simulate_log(wide, 50, "navigational", rng=1)
    with pytest.raises(OptionError, match=r"pass marginals=False"):
        log_table(log)
    table = log_table(log, marginals=False)
    assert "position_propensities" not in table.column_names
    assert len(read_log(table)) == 50  # its propensity column agrees with the recomputed one
