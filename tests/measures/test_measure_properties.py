"""Registry-wide properties, checked with Hypothesis for every registered measure.

Each spec declares which properties hold (``MeasureSpec.properties``); the invariants that
hold for every measure (shuffling lines, order-preserving score transforms, aggregates) are
checked for all of them. New measures are picked up automatically.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from serpeval.core.data import Qrels, Run
from serpeval.measures import REGISTRY, Measure
from serpeval.measures.spec import PROPERTIES, aggregate
from serpeval.ranking import rank

CUTOFF = 5
# Many measures x many properties: fewer examples per test keeps the suite fast.
EXAMPLES = settings(max_examples=20)


def measures_of(spec, cutoffs=(None, CUTOFF)) -> list[Measure]:
    if spec.cutoff == "required":
        return [spec.bind({}, CUTOFF, spec.name)]
    if spec.cutoff == "none":
        return [spec.bind({}, None, spec.name)]
    return [spec.bind({}, c, spec.name) for c in cutoffs]


# The diversity measures need subtopic qrels: tests/measures/test_diversity.py checks them.
ALL = [m for spec in REGISTRY if not spec.subtopics for m in measures_of(spec)]


def with_property(name: str) -> list[Measure]:
    return [m for m in ALL if name in m.spec.properties]


@st.composite
def collections(draw, max_queries: int = 4, max_docs: int = 12) -> tuple[dict, dict]:
    """Qrels with grades -1..3 and a run mixing judged and unjudged docs, integer scores (ties)."""
    n_queries = draw(st.integers(1, max_queries))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        n_docs = draw(st.integers(1, max_docs))
        grades = draw(st.lists(st.integers(-1, 3), min_size=n_docs, max_size=n_docs))
        judged = draw(st.lists(st.booleans(), min_size=n_docs, max_size=n_docs))
        if not any(judged):
            judged[0] = True
        qrels[f"q{q}"] = {f"d{i}": g for i, (g, j) in enumerate(zip(grades, judged, strict=True)) if j}
        retrieved = draw(st.lists(st.booleans(), min_size=n_docs, max_size=n_docs))
        scores = draw(st.lists(st.integers(0, 6), min_size=n_docs, max_size=n_docs))
        ranking = {f"d{i}": float(s) for i, (s, keep) in enumerate(zip(scores, retrieved, strict=True)) if keep}
        if ranking:
            run[f"q{q}"] = ranking
    assume(run)
    return qrels, run


def values(qrels: dict, run: dict, measure: Measure, **options) -> dict[str, float]:
    r = rank(Qrels.from_dict(qrels), Run.from_dict(run), **options)
    return dict(zip(r.query_ids.tolist(), measure.compute(r).tolist(), strict=True))


def test_every_spec_declares_known_properties() -> None:
    for spec in REGISTRY:
        assert spec.properties <= PROPERTIES
        assert spec.summary, spec.name
        assert spec.reference, spec.name
        assert spec.kernel.__doc__, f"{spec.name}: the kernel needs a docstring with the formula"
        if "bounded" in spec.properties:
            assert spec.bounds is not None


@pytest.mark.parametrize("measure", ALL, ids=str)
@EXAMPLES
@given(data=collections())
def test_invariant_to_line_order_and_order_preserving_score_transforms(measure: Measure, data) -> None:
    qrels, run = data
    base = values(qrels, run, measure)
    shuffled = {q: dict(reversed(list(d.items()))) for q, d in reversed(list(run.items()))}
    assert values(qrels, shuffled, measure) == base
    scaled = {q: {d: 3.0 * s + 7.0 for d, s in docs.items()} for q, docs in run.items()}
    assert values(qrels, scaled, measure) == base


@pytest.mark.parametrize("measure", ALL, ids=str)
@EXAMPLES
@given(data=collections())
def test_aggregate_matches_per_query_values_under_each_policy(measure: Measure, data) -> None:
    qrels, run = data
    for missing in ("skip", "zero"):
        per_query = np.array(list(values(qrels, run, measure, missing=missing).values()))
        expected = {"mean": np.mean, "sum": np.sum,
                    "gmean": lambda v: np.exp(np.mean(np.log(np.maximum(v, 1e-5))))}[measure.spec.aggregate]
        assert aggregate(per_query, measure.spec.aggregate) == pytest.approx(expected(per_query), rel=1e-12)


@pytest.mark.parametrize("measure", with_property("bounded"), ids=str)
@EXAMPLES
@given(data=collections())
def test_bounded(measure: Measure, data) -> None:
    low, high = measure.spec.bounds
    for v in values(*data, measure).values():
        assert low - 1e-12 <= v <= high + 1e-12


@pytest.mark.parametrize("measure", with_property("ideal_is_one"), ids=str)
@EXAMPLES
@given(data=collections())
def test_ideal_ranking_scores_one(measure: Measure, data) -> None:
    qrels, _ = data
    ideal = {q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}
    result = values(qrels, ideal, measure)
    for q, docs in qrels.items():
        n_relevant = sum(g >= 1 for g in docs.values())
        # With a cutoff below R even the ideal ranking misses relevant docs (AP@k divides by R).
        if n_relevant and (measure.cutoff is None or n_relevant <= measure.cutoff):
            assert result[q] == pytest.approx(1.0, abs=1e-12), q


@pytest.mark.parametrize("measure", with_property("no_relevant_is_zero"), ids=str)
@EXAMPLES
@given(data=collections())
def test_no_relevant_judgment_gives_zero(measure: Measure, data) -> None:
    qrels, run = data
    for q, v in values(qrels, run, measure).items():
        if all(g < 1 for g in qrels[q].values()):
            assert v == 0.0


@pytest.mark.parametrize(
    "spec", [s for s in REGISTRY if "cutoff_monotone" in s.properties and not s.subtopics], ids=lambda s: s.name
)
@EXAMPLES
@given(data=collections())
def test_non_decreasing_in_the_cutoff(spec, data) -> None:
    previous = None
    for k in (1, 2, 3, 5, 8, 13):
        current = values(*data, spec.bind({}, k, spec.name))
        if previous is not None:
            for q in current:
                assert current[q] >= previous[q] - 1e-12
        previous = current


@pytest.mark.parametrize("measure", with_property("swap_improves"), ids=str)
@EXAMPLES
@given(data=collections(), pick=st.integers(0, 100))
def test_moving_a_better_doc_up_never_lowers_the_value(measure: Measure, data, pick: int) -> None:
    qrels, run = data
    q = sorted(run)[pick % len(run)]
    order = sorted(run[q], key=lambda d: (-run[q][d], [-ord(c) for c in d]))  # ranked order
    gain = [max(qrels[q].get(d, 0), 0) for d in order]
    swaps = [i for i in range(len(order) - 1) if gain[i] < gain[i + 1]]
    assume(swaps)
    i = swaps[pick % len(swaps)]
    better = dict(run)
    scores = {d: float(len(order) - rank_) for rank_, d in enumerate(order)}
    scores[order[i]], scores[order[i + 1]] = scores[order[i + 1]], scores[order[i]]
    before = values(qrels, {**run, q: {d: float(len(order) - r) for r, d in enumerate(order)}}, measure)[q]
    better[q] = scores
    assert values(qrels, better, measure)[q] >= before - 1e-12
