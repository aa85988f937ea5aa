"""The sweep's HTML page (``serpeval sweep --html``): the numbers of ``SweepResult.to_json_dict()``."""

from __future__ import annotations

import re

from serpeval.report.sweep import sweep_html


def _summary(**changes: object) -> dict[str, object]:
    summary: dict[str, object] = {
        "measure": "nDCG@10", "cv_ci": [-0.0101, 0.0062], "kept": None, "selected": "k1=1.2",
        "selected_mean": 0.3695, "baseline": "k1=1.2", "baseline_mean": 0.3695, "cv_gain": -0.002,
        "cv_ci_level": 95, "significant": False, "in_sample_gain": 0.0, "settings": 2, "alpha": 0.05}
    summary.update(changes)
    return summary


def _cv_card(page: str) -> list[str]:
    card = page[page.index("cross-validated gain"):]
    return re.findall(r'<div class="card-line">(.*?)</div>', card)[:1]


def test_the_cross_validated_interval_is_labelled_with_its_exact_level() -> None:
    """``serpeval sweep --alpha 0.025``: the summary's cv_ci_level is round(100 * 0.975) = 98,
    and the decision card said "98% CI" of a 1 - 0.025 = 97.5% interval."""
    page = sweep_html({"summary": _summary(alpha=0.025, cv_ci_level=98), "sentences": [],
                       "table": []})
    assert _cv_card(page) == ["97.5% CI [-0.0101, +0.0062]"]
    page = sweep_html({"summary": _summary(), "sentences": [], "table": []})
    assert _cv_card(page) == ["95% CI [-0.0101, +0.0062]"]
    # A summary without alpha (older JSON) keeps its own level.
    older = _summary(cv_ci_level=90)
    del older["alpha"]
    assert _cv_card(sweep_html({"summary": older, "sentences": [], "table": []})) == \
        ["90% CI [-0.0101, +0.0062]"]
