"""Per-group (segment) breakdowns: hand-worked numbers, error rates, the interaction test, the group gate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from serpeval import compare
from serpeval.comparison.segment_gate import gate_groups
from serpeval.comparison.segments import (
    Groups,
    group_means,
    group_tests,
    interaction_test,
    resolve_groups,
    segment_breakdown,
)
from serpeval.core.errors import DuplicateError, OptionError, ParseError
from serpeval.evaluation.evaluate import evaluate
from serpeval.io.groups import read_groups


def _binomial_upper(n: int, p: float, level: float = 0.999) -> float:
    """The largest rate a correct procedure exceeds with probability < 1 - level."""
    return stats.binom.ppf(level, n, p) / n


# ----------------------------------------------------------------------------- hand-worked
def _tiny():
    """6 queries, RR: the baseline finds the relevant doc at rank 2 everywhere (RR 0.5); the
    candidate finds it at rank 1 on q1, q2, q3 (group "head") and rank 2 / 2 / 4 on q4, q5, q6
    (group "tail"), so the per-query deltas are head +.5, +.5, +.5 and tail 0, 0, -.25."""
    qids = ["q1", "q2", "q3", "qé4", "q 5", "q6"]
    qrels = {q: {"rel": 1} for q in qids}
    base = {q: {"x": 2.0, "rel": 1.0} for q in qids}
    cand = {q: {"rel": 2.0, "x": 1.0} for q in qids[:3]}
    cand.update({"qé4": {"x": 2.0, "rel": 1.0}, "q 5": {"x": 2.0, "rel": 1.0},
                 "q6": {"a": 4.0, "b": 3.0, "c": 2.0, "rel": 1.0}})
    groups = {"q1": "head", "q2": "head", "q3": "head", "qé4": "tail", "q 5": "tail", "q6": ["tail", "hard"],
              "q-unknown": "tail"}
    return qrels, {"base": base, "cand": cand}, groups


def test_hand_worked_per_group_numbers() -> None:
    qrels, runs, groups = _tiny()
    c = compare(qrels, runs, ["RR"], groups=groups, rng=0)
    s = c.segments
    rows = {r.group: r for r in s.rows}
    assert [r.group for r in s.rows] == ["head", "tail", "hard"]
    # head: deltas .5, .5, .5 -> mean .5, sd 0: t = inf, p = 0; means 1.0 vs .5
    assert rows["head"].queries == 3
    assert rows["head"].mean == 1.0
    assert rows["head"].baseline_mean == 0.5
    assert rows["head"].delta == 0.5
    assert rows["head"].p_value == 0.0
    # tail: deltas 0, 0, -.25 -> mean -1/12; scipy's paired t-test on the same numbers
    t = stats.ttest_rel([0.5, 0.5, 0.25], [0.5, 0.5, 0.5])
    assert rows["tail"].delta == pytest.approx(-0.25 / 3)
    assert rows["tail"].p_value == pytest.approx(t.pvalue)
    half = stats.t.ppf(0.975, 2) * np.std([0, 0, -0.25], ddof=1) / np.sqrt(3)
    assert rows["tail"].ci_low == pytest.approx(-0.25 / 3 - half)
    # hard: one query -> no test, not in Holm's family (2 tests): head 2*0 = 0, tail 1*p
    assert rows["hard"].queries == 1
    assert np.isnan(rows["hard"].p_value)
    assert rows["hard"].too_small
    assert rows["tail"].p_value_corrected == pytest.approx(t.pvalue)   # the larger: times 1
    assert rows["head"].significant
    assert not rows["tail"].significant
    assert s.unknown == ("q-unknown",)
    assert s.ungrouped == ()
    assert s.multi == 1
    notes = "\n".join(s.notes())
    assert "1 queries in the groups were not compared" in notes
    assert "fewer than 10 queries" in notes
    assert json.loads(json.dumps(c.to_json_dict()))["segments"]["groups"] == ["head", "tail", "hard"]


def test_holm_and_bh_across_groups_match_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    x = rng.normal(0.1, 1, size=(2, 90))
    y = rng.normal(0.0, 1, size=(2, 90))
    membership = np.zeros((90, 3), dtype=bool)
    membership[np.arange(90), np.arange(90) % 3] = True
    for method, name in (("holm", "holm"), ("bh", "fdr_bh")):
        p, corrected, *_ = group_tests(x, y, membership, correction=method)
        for row in range(2):
            assert corrected[row] == pytest.approx(multipletests(p[row], method=name)[1])
            for k in range(3):
                members = membership[:, k]
                assert p[row, k] == pytest.approx(stats.ttest_rel(x[row, members], y[row, members]).pvalue)


# ----------------------------------------------------------------------------- error rates
def test_effect_in_one_segment_is_found_and_the_others_not() -> None:
    rng = np.random.default_rng(11)
    n = 240
    segment = np.repeat(["de", "en", "fr", "ja"], n // 4)
    base = rng.uniform(0.2, 0.8, n)
    cand = base + rng.normal(0, 0.1, n) + np.where(segment == "ja", 0.08, 0.0)
    membership = np.stack([segment == g for g in ("de", "en", "fr", "ja")], axis=1)
    _, corrected, *_ = group_tests(cand, base, membership)
    assert corrected[3] <= 0.05
    assert (corrected[:3] > 0.05).all()
    _f, p_perm, p_anova, _ = interaction_test(cand - base, membership, n_permutations=999, rng=1)
    assert p_perm <= 0.05
    assert p_anova <= 0.05


def test_aa_over_many_segmentations_keeps_the_family_wise_error() -> None:
    """No effect anywhere; each replicate draws a new segmentation into 6 groups of unequal
    size. Holm keeps P(any significant group) <= 0.05; uncorrected it is ~1 - .95^6 = .26."""
    rng = np.random.default_rng(2024)
    replicates, n, groups = 600, 120, 6
    any_holm = any_none = 0
    for _ in range(replicates):
        base = rng.uniform(0, 1, n)
        cand = base + rng.normal(0, 0.1, n)
        labels = rng.choice(groups, size=n, p=[0.3, 0.25, 0.15, 0.12, 0.1, 0.08])
        membership = labels[:, None] == np.arange(groups)[None, :]
        p, corrected, *_ = group_tests(cand, base, membership)
        any_holm += bool(np.nanmin(corrected) <= 0.05)
        any_none += bool(np.nanmin(p) <= 0.05)
    assert any_holm / replicates <= _binomial_upper(replicates, 0.05)
    assert any_none / replicates > 0.15          # the test can fail: without correction it does


def test_interaction_test_size_and_power() -> None:
    rng = np.random.default_rng(7)
    replicates, n = 200, 90
    membership = np.zeros((n, 3), dtype=bool)
    membership[np.arange(n), np.arange(n) % 3] = True
    size = power = 0
    for _ in range(replicates):
        d = rng.normal(0.02, 0.1, n)                  # the same mean delta in every group
        size += interaction_test(d, membership, n_permutations=199, rng=rng)[1] <= 0.05
        shifted = d + np.where(membership[:, 2], 0.1, 0.0)   # one group differs by one sd
        power += interaction_test(shifted, membership, n_permutations=199, rng=rng)[1] <= 0.05
    assert size / replicates <= _binomial_upper(replicates, 0.05)
    assert power / replicates >= 0.8


def test_interaction_f_equals_scipy_and_statsmodels_anova() -> None:
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(3)
    d = rng.normal(0, 1, 40)
    labels = np.array([0] * 10 + [1] * 17 + [2] * 13)
    membership = labels[:, None] == np.arange(3)[None, :]
    f, p_perm, p_anova, used = interaction_test(d, membership, n_permutations=999, rng=0)
    ref = stats.f_oneway(*(d[labels == k] for k in range(3)))
    assert f == pytest.approx(ref.statistic)
    assert p_anova == pytest.approx(ref.pvalue)
    table = anova_lm(ols("d ~ C(g)", pd.DataFrame({"d": d, "g": labels})).fit())
    assert f == pytest.approx(table["F"].iloc[0])
    assert used == 999
    assert abs(p_perm - p_anova) < 0.06


def test_multi_membership_interaction_has_no_parametric_p() -> None:
    d = np.array([0.1, 0.2, 0.3, -0.1, 0.0, 0.4, 0.2, -0.2])
    membership = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [0, 1], [1, 0]], dtype=bool)
    f, p_perm, p_anova, _ = interaction_test(d, membership, n_permutations=500, rng=0)
    assert np.isfinite(f)
    assert 0 < p_perm <= 1
    assert np.isnan(p_anova)
    # F on memberships by hand: group 1 = q1 q2 q3 q6 q8, group 2 = q4 q5 q6 q7
    g1, g2 = d[[0, 1, 2, 5, 7]], d[[3, 4, 5, 6]]
    allv = np.concatenate([g1, g2])
    ssb = len(g1) * (g1.mean() - allv.mean()) ** 2 + len(g2) * (g2.mean() - allv.mean()) ** 2
    ssw = ((g1 - g1.mean()) ** 2).sum() + ((g2 - g2.mean()) ** 2).sum()
    assert f == pytest.approx((ssb / 1) / (ssw / (9 - 2)))


# ----------------------------------------------------------------------------- groups
def test_read_groups_tsv_jsonl_parquet_and_errors(tmp_path) -> None:
    tsv = tmp_path / "g.tsv"
    tsv.write_text("# segments\nq1\thead\n\nq1\tEnglish \nq 2\ttail\r\n", encoding="utf-8")
    pairs = read_groups(tsv)
    assert pairs.query_ids == ("q1", "q1", "q 2")
    assert pairs.groups == ("head", "English", "tail")
    (tmp_path / "bad.tsv").write_text("q1\thead\nq2 head\n")
    with pytest.raises(ParseError, match=r"bad.tsv:2: expected 'query_id<TAB>group'"):
        read_groups(tmp_path / "bad.tsv")
    (tmp_path / "three.tsv").write_text("q1\thead\nq2\thead\tEnglish\n")   # was one group "head<TAB>English"
    with pytest.raises(ParseError, match=r"three.tsv:2: expected 'query_id<TAB>group', found 3 tab-separated"):
        read_groups(tmp_path / "three.tsv")
    (tmp_path / "dup.tsv").write_text("q1\thead\nq1\thead\n")
    with pytest.raises(DuplicateError, match=r"dup.tsv:2: .*first on line 1"):
        read_groups(tmp_path / "dup.tsv")
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_text('{"qid": "q1", "groups": ["a", "b"]}\n{"qid": 7, "group": "c"}\n{"qid": "q9", "group": null}\n')
    pairs = read_groups(jsonl)
    assert pairs.query_ids == ("q1", "q1", "7")
    assert pairs.groups == ("a", "b", "c")
    assert pairs.empty == 1
    # A repeated key is refused, not resolved to its last value (same rule as JSONL qrels/runs).
    jsonl.write_text('{"qid": "q1", "group": "a"}\n{"qid": "q2", "qid": "q3", "group": "b"}\n')
    with pytest.raises(ParseError, match=r'g.jsonl:2: key \["qid"\] appears twice in the object'):
        read_groups(jsonl)
    jsonl.write_text('{"qid": "q1", "group": "a"}\n{"qid": "q2", "group": {"x": 1, "x": 2}}\n')
    with pytest.raises(ParseError, match=r'g.jsonl:2: key \["group"\]\["x"\] appears twice'):
        read_groups(jsonl)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"query_id": ["q1", "q2"], "lang": ["de", "ja"]}), tmp_path / "t.parquet")
    assert read_groups(tmp_path / "t.parquet", "lang").groups == ("de", "ja")
    with pytest.raises(Exception, match="columns: query_id, lang"):
        read_groups(tmp_path / "t.parquet", "country")


def test_builtin_relevant_bins_and_unknown_builtin() -> None:
    qids = np.array([f"q{i}" for i in range(8)])
    qrels = {q: {f"d{j}": 1 for j in range(i + 1)} for i, q in enumerate(qids)}   # 1..8 relevant
    g = resolve_groups("builtin:relevant", query_ids=qids, qrels=qrels)
    # quartile edges (lower) of 1..8 at .25, .5, .75: 2, 4, 6 -> bins 1-2, 3-4, 5-6, 7-8
    assert g.order == ("1-2 relevant", "3-4 relevant", "5-6 relevant", "7-8 relevant")
    with pytest.raises(OptionError, match="builtin:relevant, builtin:difficulty"):
        resolve_groups("builtin:nope", query_ids=qids)
    with pytest.raises(OptionError, match="needs the query texts"):
        resolve_groups("builtin:length", query_ids=qids)
    g = resolve_groups("builtin:length", query_ids=qids, topics={"q0": "a b", "q1": "a", "q2": "a b c d"})
    assert g.query_ids == ("q0", "q1", "q2")


def test_difficulty_tertiles_name_the_easy_group_only_when_there_is_one() -> None:
    """Baseline scores 0, 0, .5, .5, .5, .5: tertile edges (lower) at ranks 2 and 4 are 0 and .5;
    the edge .5 is the maximum, so only two bins: 0 and .5. Naming them hard/medium called the
    best-scored queries 'medium'; two bins are named by their range only."""
    qids = np.array(list("abcdef"))
    g = resolve_groups("builtin:difficulty", query_ids=qids, baseline_values=np.array([0, 0, .5, .5, .5, .5]),
                       baseline_name="bm25", measure="AP")
    assert g.order == ("0 bm25 AP", "0.5 bm25 AP")
    assert g.labels == ("0 bm25 AP",) * 2 + ("0.5 bm25 AP",) * 4
    three = resolve_groups("builtin:difficulty", query_ids=qids, baseline_values=np.arange(6) / 10)
    # edges (lower) of 0..0.5 at 1/3 and 2/3: .1 and .3 -> 0-0.1, 0.2-0.3, 0.4-0.5
    assert three.order == ("hard: 0-0.1", "medium: 0.2-0.3", "easy: 0.4-0.5")


def test_a_mapping_without_a_group_for_a_query_is_counted() -> None:
    """{q: None}, {q: ""} and {q: []} put q in no group; the breakdown says how many."""
    g = Groups.from_mapping({"q1": "a", "q2": None, "q3": "", "q4": [], "q5": ["a", None, "b"]})
    assert (g.query_ids, g.labels, g.order, g.empty) == (("q1", "q5", "q5"), ("a", "a", "b"), ("a", "b"), 3)
    qrels, runs, _ = _tiny()
    qids = sorted(qrels)
    c = compare(qrels, runs, ["RR"], groups={q: (None if i == 0 else "x") for i, q in enumerate(qids)}, rng=0)
    assert c.segments.empty == 1
    assert "1 group entries had an empty group value" in " ".join(c.segments.notes())


def test_difficulty_of_a_lower_is_better_measure_calls_low_values_easy() -> None:
    """Unjudged@k: lower is better, so the lowest baseline tertile is the easy one."""
    qids = np.array(list("abcdef"))
    values = np.arange(6) / 10
    up = resolve_groups("builtin:difficulty", query_ids=qids, baseline_values=values, measure="P@10")
    down = resolve_groups("builtin:difficulty", query_ids=qids, baseline_values=values, measure="Unjudged@10")
    assert [o.split(":")[0] for o in up.order] == ["hard", "medium", "easy"]
    assert [o.split(":")[0] for o in down.order] == ["easy", "medium", "hard"]
    assert up.labels[0].startswith("hard: 0-0.1")
    assert down.labels[0].startswith("easy: 0-0.1")


def test_difficulty_groups_carry_the_regression_to_the_mean_note() -> None:
    qrels, runs, _ = _tiny()
    c = compare(qrels, runs, ["RR"], groups="builtin:difficulty", rng=0)
    assert "regress to the mean" in " ".join(c.segments.notes())


def test_no_query_in_any_group_is_an_error() -> None:
    qrels, runs, _ = _tiny()
    with pytest.raises(OptionError, match="no compared query is in any group"):
        compare(qrels, runs, ["RR"], groups={"zz": "a"})


def test_group_means_and_group_gate() -> None:
    qrels, runs, groups = _tiny()
    results = evaluate(qrels, runs, ["RR"])
    g = resolve_groups(groups, query_ids=results.runs[0].query_ids)
    means = group_means(results, g)
    row = next(r for r in means.to_dicts() if r["group"] == "tail" and r["run"] == "cand")
    assert row["queries"] == 3
    assert row["RR"] == pytest.approx((0.5 + 0.5 + 0.25) / 3)
    gate = gate_groups(results, g, max_drop=0.01, min_queries=3)
    checks = {c.group: c for c in gate.checks}
    assert checks["head"].passed
    assert checks["head"].gated
    assert not checks["tail"].passed
    assert not gate.passed
    assert not checks["hard"].gated
    assert checks["hard"].passed
    assert gate.correction == "none"
    nsd = gate_groups(results, g, max_drop=0.01, min_queries=3, rule="no-significant-drop")
    assert nsd.correction == "holm"
    assert nsd.passed


def test_breakdown_with_wilcoxon_and_all_pairs() -> None:
    qrels, runs, groups = _tiny()
    runs = {**runs, "third": runs["cand"]}
    c = compare(qrels, runs, ["RR", "P@1"], groups=groups, test="wilcoxon", pairs="all", rng=0)
    assert len(c.segments.rows) == 2 * 3 * 3
    assert len(c.segments.interactions) == 2 * 3
    assert segment_breakdown(c, Groups.from_mapping(groups)).test == "wilcoxon"


def test_readme_robust04_breakdown(trec) -> None:
    """The README's table: Robust04 BM25 vs BM25+RM3 by quartiles of relevant documents."""
    folder = trec / "robust04"
    if not (folder / "runs" / "bm25-rm3.run.gz").exists():
        pytest.skip(f"Robust04 runs not found in {folder}")
    c = compare(folder / "qrels.txt.gz", [folder / "runs" / "bm25.run.gz", folder / "runs" / "bm25-rm3.run.gz"],
                ["nDCG@10", "AP"], groups="builtin:relevant", rng=0)
    s = c.segments
    assert s.groups == ("3-20 relevant", "21-41 relevant", "42-89 relevant", "93-448 relevant")
    ndcg = [r for r in s.rows if r.measure == "nDCG@10"]
    ap = [r for r in s.rows if r.measure == "AP"]
    assert [r.queries for r in ndcg] == [64, 61, 62, 62]
    assert [round(r.delta, 4) for r in ap] == [0.0251, 0.0693, 0.1095, 0.1149]
    assert [round(r.p_value, 4) for r in ndcg] == [0.4142, 0.0137, 0.0881, 0.556]
    assert [round(r.p_value_corrected, 4) for r in ndcg] == [0.8283, 0.0548, 0.2644, 0.8283]
    assert [r.significant for r in ap] == [False, True, True, True]
    assert not any(r.significant for r in ndcg)
    ndcg_i, ap_i = s.interactions
    assert round(ndcg_i.statistic, 3) == 1.883
    assert round(ap_i.statistic, 3) == 9.124
    assert round(ndcg_i.p_anova, 4) == 0.1329
    assert ap_i.p_value < 0.001


def test_membership_equals_a_dictionary_lookup_on_awkward_ids() -> None:
    """The vectorized membership against the obvious loop: Unicode, spaces, ids that are
    prefixes of others, numbers as text, queries in no / several groups, unknown queries."""
    rng = np.random.default_rng(5)
    pool_ids = ["1", "10", "100", "q 1", "q1", "é", "日本", "a-b", "A", "a", "x" * 40, "0", "01"]
    evaluated = np.array(rng.permutation(pool_ids)[:9])
    mapping = {q: list(rng.choice(["head", "tail", "日本語", "g 1"], rng.integers(0, 3), replace=False))
               for q in pool_ids}
    g = Groups.from_mapping(mapping)
    matrix, counts = g.membership(evaluated)
    want = np.zeros_like(matrix)
    position = {q: i for i, q in enumerate(evaluated.tolist())}
    for q, label in zip(g.query_ids, g.labels, strict=True):
        if q in position:
            want[position[q], g.order.index(label)] = True
    assert (matrix == want).all()
    assert counts["unknown"] == sorted({q for q in g.query_ids if q not in position})
    assert counts["ungrouped"] == [q for q in evaluated.tolist() if not want[position[q]].any()]
    assert counts["multi"] == int((want.sum(axis=1) > 1).sum())
    empty_matrix, empty_counts = g.membership(np.array([], dtype=str))
    assert empty_matrix.shape == (0, len(g.order))
    assert empty_counts["unknown"] == sorted(set(g.query_ids))


def test_notes_count_the_family_the_correction_ran_over() -> None:
    # Groups: "solo" has one query (no test, not in the family), "head" and "tail" have 3.
    # Holm over 2 p-values multiplies the smaller by 2: the note must say 2 groups, not 3.
    qrels, runs, _ = _tiny()
    groups = {"q1": "head", "q2": "head", "q3": "head", "qé4": "tail", "q 5": "tail", "q6": "solo"}
    c = compare(qrels, runs, ["RR"], groups=groups, rng=0)
    rows = {r.group: r for r in c.segments.rows}
    assert np.isnan(rows["solo"].p_value)
    tested = sorted(r.p_value for r in c.segments.rows if np.isfinite(r.p_value))
    assert min(r.p_value_corrected for r in c.segments.rows if np.isfinite(r.p_value)) == tested[0] * 2
    note = c.segments.notes()[0]
    assert "correction across the 2 groups with a test (of 3;" in note
    disjoint = compare(qrels, runs, ["RR"], groups={q: g for q, g in groups.items() if g != "solo"}, rng=0)
    assert "correction across the 2 groups within each measure" in disjoint.segments.notes()[0]


def test_bootstrap_group_notes_do_not_claim_a_bca_interval() -> None:
    # The per-group intervals are t intervals (the note says so); the p-value's method must not
    # also say "BCa interval".
    qrels, runs, groups = _tiny()
    c = compare(qrels, runs, ["RR"], groups=groups, test="bootstrap", n_resamples=200, rng=0)
    note = c.segments.notes()[0]
    assert "studentized p = (b + 1) / (B + 1);" in note
    assert "BCa" not in note
    assert "95% t intervals" in note
