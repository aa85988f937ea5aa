"""ABDesign: every old keyword of the A/B analyses gives the result of the design that holds it
(issue 28 item 3); the design's checks; conflicts between a design and a keyword refused."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pyarrow as pa
import pytest

from serpeval.core.errors import OptionError
from serpeval.online.experiments import (
    ABDesign,
    analyze_ab,
    analyze_ab_segments,
    analyze_ab_triggered,
    monitor_ab,
    plan_ab,
)
from serpeval.online.logs.schema import LogSchema
from serpeval.stats.srm import SampleRatioMismatchWarning


@pytest.fixture(scope="module")
def small() -> Any:
    """300 users, a known effect, a 7-day pre-period: small enough for one call per keyword."""
    from serpeval.online.simulation.generate import LogGenerator

    return LogGenerator(300, effect=0.2, pre_days=7).generate(rng=5)


def _outcome(call: Any) -> Any:
    """The result's JSON form, or the error's class and message (both forms must agree on either)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SampleRatioMismatchWarning)
        try:
            res = call()
        except Exception as exc:  # the two forms must raise the same
            return type(exc).__name__, str(exc)
    return res.to_json_dict() if hasattr(res, "to_json_dict") else res.to_dicts()


# (keyword, value, extra keywords both forms get): each value changes the analysis from the
# default one, so that a function ignoring its design would fail the test.
ANALYZE_CASES = [
    ("metrics", ("ctr",), {}),
    ("control", "treatment", {}),
    ("variants", ("control", "missing-arm"), {}),
    ("split", {"control": 0.3, "treatment": 0.7}, {}),
    ("alpha", 0.2, {}),
    ("correction", "bonferroni", {}),
    ("use_t", True, {}),
    ("cuped", False, {}),
    ("srm_threshold", 0.9, {}),
    ("duplicates", "exclude", {}),
    ("long_click_seconds", 2.0, {"metrics": ("long_click_rate",)}),
    ("backend", "DuckDB", {}),
    ("schema", LogSchema(unit="uid"), {}),
]


def _logs_for(small: Any, keyword: str) -> Any:
    if keyword == "schema":          # the unit column renamed: only the design's schema finds it
        return small.impressions.rename_columns(["uid" if c == "user_id" else c
                                                 for c in small.impressions.column_names])
    if keyword == "duplicates":      # one impression logged twice: the default refuses it
        return pa.concat_tables([small.impressions, small.impressions.slice(0, 1)])
    return small.impressions


@pytest.mark.parametrize(("keyword", "value", "extra"), ANALYZE_CASES, ids=[c[0] for c in ANALYZE_CASES])
def test_analyze_ab_keyword_equals_design(small: Any, keyword: str, value: Any, extra: dict[str, Any]) -> None:
    logs = _logs_for(small, keyword)
    pre = None if keyword == "schema" else small.pre
    old = _outcome(lambda: analyze_ab(logs, pre=pre, **extra, **{keyword: value}))
    new = _outcome(lambda: analyze_ab(logs, None, ABDesign(**extra, **{keyword: value}), pre=pre))
    assert old == new
    if keyword != "backend":      # DuckDB is the default's engine in another spelling
        assert old != _outcome(lambda: analyze_ab(logs, None, ABDesign(**extra), pre=pre))


def test_the_design_is_read_by_every_analysis(small: Any) -> None:
    design = ABDesign(metrics=("ctr",), control="treatment", alpha=0.2, use_t=True, duplicates="unchecked",
                      long_click_seconds=5.0)
    # plan_ab: metrics, alpha, control, cuped, duplicates, long_click_seconds, backend, schema
    old = plan_ab(small.impressions, metrics=("ctr",), control="treatment", alpha=0.2, duplicates="unchecked",
                  long_click_seconds=5.0).to_dicts()
    assert_same_rows(old, plan_ab(small.impressions, design=design).to_dicts())
    assert old != plan_ab(small.impressions).to_dicts()
    # ... and cuped, as analyze_ab reads it: False plans without the pre-period, True needs one
    without = plan_ab(small.impressions, pre=small.pre, design=ABDesign(cuped=False)).to_dicts()
    assert_same_rows(without, plan_ab(small.impressions).to_dicts())
    assert without != plan_ab(small.impressions, pre=small.pre).to_dicts()
    with pytest.raises(OptionError, match=r"^cuped=True needs a pre-period log"):
        plan_ab(small.impressions, design=ABDesign(cuped=True))
    # monitor_ab: metric (one), control, alpha, use_t, ...
    old = monitor_ab(small.impressions, metric="ctr", control="treatment", alpha=0.2, use_t=True, looks=2,
                     duplicates="unchecked").to_dicts()
    assert_same_rows(old, monitor_ab(small.impressions, design=design, looks=2).to_dicts())
    assert old != monitor_ab(small.impressions, looks=2).to_dicts()
    # analyze_ab_segments: metrics, control, alpha, correction, use_t, ...
    seg = dataclasses.replace(design, correction="bh")
    old = analyze_ab_segments(small.impressions, by="query_id", metrics=("ctr",), control="treatment", alpha=0.2,
                              use_t=True, correction="bh", duplicates="unchecked").to_dicts()
    new = analyze_ab_segments(small.impressions, design=seg, by="query_id").to_dicts()
    assert_same_rows(old, new)


def assert_same_rows(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """The same segment rows, in one order (the engine returns the segments in any): equal but
    for the last bits of the floats (DuckDB sums in parallel, in no fixed order); NaN == NaN."""
    def in_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda r: (str(r.get("metric")), str(r.get("treatment")), str(r.get("segment"))))

    old, new = in_order(old), in_order(new)
    assert [sorted(r) for r in old] == [sorted(r) for r in new]
    for a, b in zip(old, new, strict=True):
        floats = [k for k, v in a.items() if isinstance(v, float)]
        assert {k: v for k, v in a.items() if k not in floats} == {k: v for k, v in b.items() if k not in floats}
        assert [b[k] for k in floats] == pytest.approx([a[k] for k in floats], rel=1e-9, abs=1e-12, nan_ok=True)


def test_triggered_reads_the_design(small: Any) -> None:
    design = ABDesign(metrics=("ctr",), alpha=0.2, correction="none")
    old = analyze_ab_triggered(small.impressions, metrics=("ctr",), alpha=0.2, correction="none").to_dicts()
    assert_same_rows(old, analyze_ab_triggered(small.impressions, design=design).to_dicts())
    assert old != analyze_ab_triggered(small.impressions, metrics=("ctr",)).to_dicts()


def test_a_keyword_that_conflicts_with_the_design_is_refused(small: Any) -> None:
    design = ABDesign(alpha=0.01)
    with pytest.raises(TypeError, match=r"^analyze_ab\(\): alpha=0.05 conflicts with ABDesign.alpha=0.01; "):
        analyze_ab(small.impressions, design=design, alpha=0.05)
    with pytest.raises(TypeError, match=r"^monitor_ab\(\): metric='mrr' conflicts with ABDesign.metrics=\('ctr',\)"):
        monitor_ab(small.impressions, design=ABDesign(metrics="ctr"), metric="mrr")
    # the same value in both places is one option, not a conflict
    assert analyze_ab(small.impressions, design=design, alpha=0.01, metrics=None).alpha == 0.01


def test_keywords_an_analysis_does_not_read_are_refused(small: Any) -> None:
    with pytest.raises(TypeError, match=r"^plan_ab\(\) got an unexpected keyword argument 'use_t'"):
        plan_ab(small.impressions, use_t=True)
    with pytest.raises(TypeError, match=r"^analyze_ab_segments\(\) got an unexpected keyword argument 'cuped'"):
        analyze_ab_segments(small.impressions, by="query_id", cuped=False)
    with pytest.raises(OptionError, match=r"^analyze_ab_segments has no CUPED"):
        analyze_ab_segments(small.impressions, None, ABDesign(cuped=True), by="query_id")
    with pytest.raises(OptionError, match=r"^monitor_ab follows one metric; the design has 2 \(ctr, mrr\)"):
        monitor_ab(small.impressions, design=ABDesign(metrics=("ctr", "mrr")))
    with pytest.raises(TypeError, match=r"^plan_ab\(logs, experiment, design\): the design was given as the "
                                        r"experiment's name; pass plan_ab\(logs, design=design\)"):
        plan_ab(small.impressions, ABDesign())


@pytest.mark.parametrize(("fields", "message"), [
    ({"metrics": ()}, r"^choose at least one metric\.$"),
    ({"metrics": ("ctrr",)}, r"^unknown A/B metric 'ctrr'\. Did you mean 'ctr'"),
    ({"metrics": 3}, r"^metrics must be a metric name or a list of them; got 3\.$"),
    ({"control": 1}, r"^control must be a variant name; got 1\.$"),
    ({"alpha": 1.5}, r"^alpha must be a number between 0 and 1 \(e\.g\. 0\.05\); got 1\.5\.$"),
    ({"correction": "hlom"}, r"correction"),
    ({"srm_threshold": 0}, r"^srm_threshold must be a number between 0 and 1 \(e\.g\. 0\.001\); got 0\.$"),
    ({"duplicates": "drop"}, r"^duplicates must be one of error, exclude, unchecked; got 'drop'\.$"),
    ({"long_click_seconds": -1}, r"^long_click_seconds must be a number of seconds >= 0; got -1\.$"),
    ({"long_click_seconds": float("nan")}, r"^long_click_seconds must be a number of seconds >= 0; got nan\.$"),
    ({"backend": "polars"}, r"^unknown backend 'polars'; choose one of: duckdb, spark\.$"),
    ({"schema": {"unit": "uid"}}, r"^schema must be a LogSchema; got dict\.$"),
])
def test_design_checks_its_fields(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        ABDesign(**fields)


def test_design_canonical_forms_and_replace() -> None:
    d = ABDesign(metrics="ctr", variants="treatment", split=[0.5, 0.5], correction="Bonf", cuped=0)
    assert (d.metrics, d.variants, d.split, d.correction, d.cuped) == (("ctr",), ("treatment",), (0.5, 0.5),
                                                                       "bonferroni", False)
    assert dataclasses.replace(d, correction="bonferroni") == d
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.alpha = 0.1  # type: ignore[misc]
    assert d.options()["correction"] == "bonferroni"
