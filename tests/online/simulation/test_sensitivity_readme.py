"""The README's sensitivity sentence is what the benchmark's settings say, per population
(issue 27, item 10).

Before: the headline (26x against the best right-sign A/B metric, 305x for ignore-shared team
draft against triggered A/B) pooled generated pairs (438x) with real ones (1.07x), and did not
say that team draft points against nDCG@10 in 8 of the 21 real-pair settings. The sentence is
now computed from ``bench/results/sensitivity_full.csv`` by ``bench/sensitivity_summary.py``;
its numbers are checked against the summary table ``bench/sensitivity.py`` wrote itself from
the same settings (another code path: in-memory floats, not the CSV).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "bench" / "results"


@pytest.fixture(scope="module")
def summary():
    spec = importlib.util.spec_from_file_location("sensitivity_summary", ROOT / "bench" / "sensitivity_summary.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_readme_gives_real_pairs_first_then_generated_with_the_wrong_sign_settings(summary) -> None:
    rows = summary.read(RESULTS / "sensitivity_full.csv")
    paragraph = summary.readme_paragraph(rows)
    # the sentence moved from the README to the sensitivity page of the docs (issue 33)
    readme = _flat((ROOT / "docs" / "how-to" / "sensitivity.md").read_text(encoding="utf-8"))
    assert _flat(paragraph) in readme
    assert paragraph.index("real TREC run pairs") < paragraph.index("generated pairs")
    assert ("in 8 of the 21 (Robust04: navigational, cascade; Core18: navigational; DL20-doc: "
            "navigational, informational, cascade, pbm, dbn)") in paragraph


def _bench_table() -> dict[tuple[str, str, str], tuple[int, float, float, float]]:
    """(comparison, pairs, against) -> (n, median, IQR low, IQR high) from the benchmark's md."""
    out = {}
    text = (RESULTS / "sensitivity_full.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1] in ("real", "generated") and cells[4] != "-":
            low, high = (float(v.rstrip("x")) for v in cells[5].split(" - "))
            out[(cells[0], cells[1], cells[2])] = (int(cells[3]), float(cells[4].rstrip("x")), low, high)
    return out


def test_per_population_numbers_equal_the_benchmarks_own_table(summary) -> None:
    rows = summary.read(RESULTS / "sensitivity_full.csv")
    table = _bench_table()
    assert len(table) == 12
    for (comparison, kind, against), (n, med, low, high) in table.items():
        r = summary.ratios(rows, kind, comparison, against)
        q1, m, q3 = r.quantiles()
        assert r.n == n
        assert float(f"{m:.3g}") == med  # the md table shows 3 significant digits
        assert (float(f"{q1:.3g}"), float(f"{q3:.3g}")) == (low, high)
    # the two figures the issue quotes, by population
    assert float(f"{summary.ratios(rows, 'generated', summary.IGNORE_SHARED, 'vs best A/B').quantiles()[1]:.3g}") \
        == 438
    assert float(f"{summary.ratios(rows, 'real', summary.IGNORE_SHARED, 'vs best A/B').quantiles()[1]:.3g}") == 1.07
    assert len(summary.wrong_sign(rows, "real")) == 8
    assert re.search(r"Pooled, the two populations give medians of 26x and 305x", summary.readme_paragraph(rows))
