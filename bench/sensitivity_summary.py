"""The sensitivity benchmark's summary per population of run pairs, and the README's sentence.

Reads the settings ``bench/sensitivity.py --full`` wrote (``bench/results/sensitivity_full.csv``;
nothing is simulated again) and summarises them separately for the two populations, which
differ by orders of magnitude and must not be pooled into one headline:

* **real** pairs: the three TREC run pairs (Robust04 bm25 vs bm25-rm3, Core18 title-rm3 vs
  desc-rm3, DL20-doc bm25 vs bm25rm3) under seven click models: 21 settings;
* **generated** pairs (:func:`serpeval.online.simulation.simulator.synthetic_pair`: 200 queries,
  5 grades, B 0.5%, 1%, 2% or 5% above A in nDCG@10, three seeds each) under the same seven
  click models: 84 settings.

Per population and comparison: median, interquartile range and range of the ratios
(impressions the A/B test needs / impressions team draft needs; ``np.percentile``'s linear
interpolation, as the benchmark's own table), how many settings count, and the settings in
which team draft points against the offline nDCG@10 difference, by name. Writes
``bench/results/sensitivity_full_summary.md``; :func:`readme_paragraph` is the README's text
(``tests/online/simulation/test_sensitivity_readme.py`` checks that the README says exactly this).

    python bench/sensitivity_summary.py [CSV]
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CSV = HERE / "results" / "sensitivity_full.csv"
OUT = HERE / "results" / "sensitivity_full_summary.md"
TEAM_DRAFT, IGNORE_SHARED = "team draft vs A/B", "team draft ignore-shared vs triggered A/B"
COMPARISONS = (TEAM_DRAFT, IGNORE_SHARED, "triggered team draft vs triggered A/B")
AGAINST = ("vs best A/B", "vs CTR")
WRONG = "interleaving wrong sign"


@dataclass(frozen=True)
class Ratios:
    """The ratios of one population, comparison and reference metric."""

    settings: int
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    def quantiles(self) -> tuple[float, float, float]:
        q1, med, q3 = np.percentile(self.values, [25, 50, 75])
        return float(q1), float(med), float(q3)


def read(path: Path = CSV) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # a reason: wrong sign, no difference
        return None


def ratios(rows: list[dict[str, str]], kind: str, comparison: str, against: str) -> Ratios:
    chosen = [r for r in rows if r["kind"] == kind and r["comparison"] == comparison]
    values = tuple(v for r in chosen if (v := _number(r[against])) is not None)
    return Ratios(len(chosen), values)


def wrong_sign(rows: list[dict[str, str]], kind: str, comparison: str = TEAM_DRAFT) -> list[tuple[str, str]]:
    """(pair, click model) of the settings where team draft points against nDCG@10."""
    return [(r["pair"], r["click model"]) for r in rows
            if r["kind"] == kind and r["comparison"] == comparison and r["vs best A/B"] == WRONG]


def ctr_wrong(rows: list[dict[str, str]], kind: str) -> int:
    """Settings of team draft vs A/B where CTR points the wrong way (or sees nothing)."""
    return sum(1 for r in rows if r["kind"] == kind and r["comparison"] == TEAM_DRAFT
               and r["vs CTR"].startswith("CTR wrong sign"))


def x(value: float) -> str:
    """A ratio as the README writes it: three significant digits below 10, whole numbers
    (thousands separated) above."""
    return f"{value:,.0f}x" if value >= 10 else f"{value:.3g}x"


def _interval(r: Ratios, more: str = "") -> str:
    q1, med, q3 = r.quantiles()
    return f"**{x(med)}** (IQR {x(q1)}–{x(q3)}, n = {r.n}{more})"


def pooled(rows: list[dict[str, str]], comparison: str) -> float:
    """The median over both populations together (what the README once gave as the headline)."""
    both = [*ratios(rows, "real", comparison, "vs best A/B").values,
            *ratios(rows, "generated", comparison, "vs best A/B").values]
    return float(np.median(both))


def _named(settings: list[tuple[str, str]]) -> str:
    by_pair: dict[str, list[str]] = {}
    for pair, model in settings:
        by_pair.setdefault(pair.split()[0], []).append(model)
    return "; ".join(f"{pair}: {', '.join(models)}" for pair, models in by_pair.items())


def readme_paragraph(rows: list[dict[str, str]]) -> str:
    """The README's sentence: real pairs first, generated second, each population named."""
    real, gen = "real", "generated"
    n_real = sum(1 for r in rows if r["kind"] == real and r["comparison"] == TEAM_DRAFT)
    n_gen = sum(1 for r in rows if r["kind"] == gen and r["comparison"] == TEAM_DRAFT)
    wrong_real, wrong_gen = wrong_sign(rows, real), wrong_sign(rows, gen)
    wrong_shared = wrong_sign(rows, real, IGNORE_SHARED)
    ctr_note = f"; CTR points the wrong way in {ctr_wrong(rows, gen)} of {n_gen}"
    return (
        "The folklore \"interleaving needs about 100x fewer queries to detect a 1% relevance "
        "gain\", measured with `python bench/sensitivity.py --full` under seven click models; a "
        "ratio is the impressions an A/B test needs ÷ the impressions team draft needs, over the "
        "settings where both point the way the offline nDCG@10 difference does (the others are "
        "excluded and counted). The two populations of run pairs differ by orders of magnitude, "
        "so they are given apart (`python bench/sensitivity_summary.py`). **On the three real TREC "
        "run pairs** (Robust04 bm25 vs bm25-rm3, Core18 title-rm3 vs desc-rm3, DL20-doc bm25 vs "
        f"bm25rm3; {n_real} settings), team draft points against nDCG@10 in {len(wrong_real)} of "
        f"the {n_real} ({_named(wrong_real)}); where it points the right way, the best A/B metric "
        f"that does too needs {_interval(ratios(rows, real, TEAM_DRAFT, 'vs best A/B'))} as many "
        "impressions as team draft (below 1x: the A/B test needed fewer), CTR "
        f"{_interval(ratios(rows, real, TEAM_DRAFT, 'vs CTR'))}, and a triggered A/B test "
        f"{_interval(ratios(rows, real, IGNORE_SHARED, 'vs best A/B'))} as many as team draft with "
        f"ignore-shared (which points the wrong way in {len(wrong_shared)} of the {n_real}). "
        f"**On generated pairs** ({n_gen} settings: 200 queries and 5 grades, B 0.5%, 1%, 2% or 5% "
        "above A in nDCG@10, three seeds each), team draft points the right way in "
        f"{n_gen - len(wrong_gen)} of {n_gen} and the best right-sign A/B metric needs "
        f"{_interval(ratios(rows, gen, TEAM_DRAFT, 'vs best A/B'))} as many impressions, CTR "
        f"{_interval(ratios(rows, gen, TEAM_DRAFT, 'vs CTR'), ctr_note)}"
        ", and a triggered A/B test "
        f"{_interval(ratios(rows, gen, IGNORE_SHARED, 'vs best A/B'))} as many as team draft with "
        f"ignore-shared. Pooled, the two populations give medians of {x(pooled(rows, TEAM_DRAFT))} "
        f"and {x(pooled(rows, IGNORE_SHARED))}, which describe neither."
    )


def summary_markdown(rows: list[dict[str, str]]) -> str:
    lines = ["# Interleaving vs A/B sensitivity, per population (bench/sensitivity_summary.py)", "",
             "From `bench/results/sensitivity_full.csv` (`bench/sensitivity.py --full`). Ratio = "
             "impressions the A/B test needs / impressions team draft needs.", "",
             "| pairs | comparison | against | settings | n | median | IQR | range |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in ("real", "generated"):
        for comparison in COMPARISONS:
            for against in AGAINST:
                r = ratios(rows, kind, comparison, against)
                if not r.n:
                    lines.append(f"| {kind} | {comparison} | {against} | {r.settings} | 0 | - | - | - |")
                    continue
                q1, med, q3 = r.quantiles()
                lines.append(f"| {kind} | {comparison} | {against} | {r.settings} | {r.n} | {med:.3g}x | "
                             f"{q1:.3g}x - {q3:.3g}x | {min(r.values):.3g}x - {max(r.values):.3g}x |")
    for kind in ("real", "generated"):
        for comparison in COMPARISONS:
            wrong = wrong_sign(rows, kind, comparison)
            lines.append("")
            lines.append(f"{kind}, {comparison}: team draft points against nDCG@10 in {len(wrong)} "
                         f"setting(s){': ' + _named(wrong) if wrong else ''}.")
    lines += ["", "## The README's sentence", "", readme_paragraph(rows), ""]
    return "\n".join(lines)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else CSV
    OUT.write_text(summary_markdown(read(path)), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
