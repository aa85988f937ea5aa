"""Render a :class:`~serpeval.comparison.compare.Comparison`: terminal table, markdown, LaTeX, JSON, CSV.

Human formats (``table``, ``markdown``) show one row per system and measure: mean, delta
with sign, the interval, p, corrected p, d_z, wins/ties/losses over queries, and a marker
(▲ significantly better, ▼ significantly worse). ``latex`` is a ranx-style booktabs table:
systems x measures, each system lettered, and a superscript on a mean listing the systems
it is significantly better than (``0.464$^{a}$``), aligned with ``\\hphantom``. ``json``,
``csv`` and ``tsv`` carry the full-precision fields of :meth:`Comparison.to_dicts`. Nothing
here recomputes a statistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from serpeval.core.strict_json import dumps
from serpeval.report.formatting import format_p, level
from serpeval.report.table import (
    DEFAULT_WIDTH,
    FORMATS,
    fit_text,
    fitted_widths,
    latex_escape,
    markdown_cell,
    record_layout,
    render,
    table_of,
    table_text,
)

if TYPE_CHECKING:
    from serpeval.comparison.results import Comparison, PairResult

__all__ = ["FORMATS", "format_p", "human_rows", "latex_table", "legend", "render_comparison",
           "rich_comparison_table", "system_letter", "text_table"]


def _signed(value: float, digits: int) -> str:
    return "nan" if math.isnan(value) else f"{value:+.{digits}f}"


def _interval(low: float, high: float, digits: int) -> str:
    if math.isnan(low) or math.isnan(high):
        return ""
    return f"[{_signed(low, digits)}, {_signed(high, digits)}]"


def _columns(c: Comparison) -> list[str]:
    ci = f"{level(c.confidence)} CI"
    p_corr = "p (uncorr.)" if c.correction == "none" else f"p ({_correction_label(c)})"
    means = ["vs", "mean", "vs mean"] if c.pairs == "all" else ["mean"]
    return ["measure", "system", *means, "Δ", ci, "p", p_corr, "d_z", "W/T/L", "sig"]


def _correction_label(c: Comparison) -> str:
    from serpeval.comparison.results import CORRECTION_NAMES

    return CORRECTION_NAMES[c.correction]


def human_rows(c: Comparison, digits: int = 4
               ) -> tuple[list[dict[str, Any]], list[str], dict[tuple[int, str], str]]:
    """Formatted rows, their columns, and rich styles marking significant deltas."""
    cols = _columns(c)
    ci_col, p_corr_col = cols[-6], cols[-4]
    rows: list[dict[str, Any]] = []
    styles: dict[tuple[int, str], str] = {}
    by_measure: dict[str, list[PairResult]] = {}
    for row in c.rows:
        by_measure.setdefault(row.measure, []).append(row)
    counts = {str(m) for m in c.measures if m.spec.aggregate == "sum"}
    for measure, group in by_measure.items():
        places = 0 if measure in counts else digits  # sums of counts are whole numbers
        if c.pairs == "baseline":
            rows.append({"measure": measure, "system": c.baseline, ci_col: "(baseline)",
                         "mean": f"{group[0].baseline_mean:.{places}f}"})
        for r in group:
            out: dict[str, Any] = {"measure": measure, "system": r.system}
            if c.pairs == "all":
                out.update({"vs": r.baseline, "mean": f"{r.mean:.{places}f}",
                            "vs mean": f"{r.baseline_mean:.{places}f}"})
            else:
                out["mean"] = f"{r.mean:.{places}f}"
            out.update({"Δ": _signed(r.delta, places),
                        ci_col: _interval(r.ci_low, r.ci_high, max(places, 1)),
                        "p": format_p(r.p_value, digits),
                        p_corr_col: format_p(r.p_value_corrected, digits),
                        "d_z": _signed(r.effect_size, 2), "W/T/L": f"{r.wins}/{r.ties}/{r.losses}",
                        "sig": r.marker})
            if r.marker:
                style = "bold green" if r.improved else "bold red"
                for col in ("Δ", "sig", p_corr_col):
                    styles[(len(rows), col)] = style
            rows.append(out)
    return rows, cols, styles


def legend(c: Comparison) -> str:
    reference = "the baseline" if c.pairs == "baseline" else "the vs system"
    return (f"sig: ▲ significantly better / ▼ worse than {reference} "
            f"(corrected p <= {c.alpha:g}); W/T/L: queries won/tied/lost")


def _per_query_rows(c: Comparison, digits: int) -> list[dict[str, Any]]:
    return [{"measure": r["measure"], "query_id": r["query_id"], "system": r["system"],
             "baseline": r["baseline"], "value": round(r["value"], digits + 2),
             "baseline value": round(r["baseline_value"], digits + 2),
             "Δ": _signed(r["delta"], digits)}
            for r in c.to_dicts(per_query=True)]


def render_comparison(c: Comparison, fmt: str = "table", *, per_query: bool = False,
                      digits: int = 4, color: bool = False, width: int | None = None) -> str:
    """The comparison as ``table``, ``markdown``, ``latex``, ``json``, ``csv`` or ``tsv``."""
    if fmt == "json":
        return dumps(c.to_json_dict(per_query=per_query)) + "\n"
    if fmt in ("csv", "tsv"):
        rows = c.to_dicts(per_query=per_query)
        if not per_query and c.inputs:   # the inputs' content signatures, as the last columns
            runs = {r["run"]: r for r in c.inputs["runs"]}
            for row in rows:
                mine, theirs = runs.get(row["system"], {}), runs.get(row["baseline"], {})
                row["system_signature"] = mine.get("signature", "")
                row["baseline_signature"] = theirs.get("signature", "")
                row["qrels_signature"] = mine.get("qrels_signature") or c.inputs["qrels"]["signature"]
        return render(rows, fmt)
    notes = [*c.notes(), legend(c)]
    if per_query:  # the notes that explain the summary table's columns (CI, d_z, sig) stay with it
        per_query_notes = [n for n in c.notes() if not n.startswith(("p-values:", f"{level(c.confidence)} CI"))]
        return render(_per_query_rows(c, digits), fmt, digits=digits, title=c.description(),
                      notes=per_query_notes, color=color, width=width)
    if fmt == "latex":
        return latex_table(c, digits=digits)
    rows, cols, styles = human_rows(c, digits)
    if fmt == "table":
        return fit_text([c.description()], width) + text_table(rows, cols, styles, notes=notes,
                                                               color=color, width=width)
    if fmt == "markdown":
        return _markdown(rows, cols, title=c.description(), notes=notes)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


_TEXT_COLUMNS = ("measure", "system", "vs", "query_id", "query", "result", "group", "segment", "metric", "prefers",
                 "run")


def _markdown(rows: Sequence[dict[str, Any]], cols: list[str], *, title: str,
              notes: Sequence[str]) -> str:
    """A GitHub table: names left-aligned, numbers right-aligned."""
    lines = [f"**{' '.join(title.splitlines())}**", "",
             "| " + " | ".join(map(markdown_cell, cols)) + " |",
             "|" + "|".join(":---" if c in _TEXT_COLUMNS else "---:" for c in cols) + "|"]
    lines += ["| " + " | ".join(markdown_cell(row.get(c, "")) for c in cols) + " |"
              for row in rows]
    lines += ["", *(f"_{note}_  " for note in notes)]
    return "\n".join(lines) + "\n"


def rich_comparison_table(rows: Sequence[dict[str, Any]], cols: list[str],
                          styles: dict[tuple[int, str], str] | None = None, *,
                          width: int | None = None) -> Any:
    """A :class:`rich.table.Table` of preformatted cells: names left, numbers right.

    A new section (a rule) starts wherever the ``measure`` column changes. With ``width``,
    columns are sized to fit it (:func:`~serpeval.report.table.fitted_widths`: cells wrap at
    spaces, numbers stay whole; boxed, else compact); a table that cannot fit keeps its natural widths.
    """
    headers, grid, right, sections = _grid(rows, cols)
    fit = fitted_widths(headers, grid, width) if width else None
    return table_of(headers, grid, right, styles=styles, sections=sections,
                    widths=fit[0] if fit else None, compact=bool(fit and fit[1]))


def _grid(rows: Sequence[dict[str, Any]],
          cols: list[str]) -> tuple[list[str], list[list[str]], list[bool], list[int]]:
    """Headers, cell texts, right alignment and the rows that start a new measure."""
    grid = [[str(row.get(col, "")) for col in cols] for row in rows]
    sections = [i for i in range(1, len(rows)) if rows[i].get("measure") != rows[i - 1].get("measure")]
    return list(cols), grid, [col not in _TEXT_COLUMNS for col in cols], sections


def text_table(rows: Sequence[dict[str, Any]], cols: list[str],
               styles: dict[tuple[int, str], str] | None = None, *, notes: Sequence[str] = (),
               color: bool = False, width: int | None = None) -> str:
    """:func:`rich_comparison_table` as text at ``width`` (``None``: the fixed width of pipes
    and files), then ``notes``; the record layout when the table cannot fit ``width``. ANSI
    colours only when ``color``."""
    if width is not None:
        headers, grid, _, _ = _grid(rows, cols)
        if fitted_widths(headers, grid, width) is None:
            return record_layout(headers, grid, width) + fit_text(notes, width)
    table = rich_comparison_table(rows, cols, styles, width=width or DEFAULT_WIDTH)
    return table_text(table, width=width, color=color) + fit_text(notes, width)


def system_letter(index: int) -> str:
    """``a``..``z``, then ``aa``, ``ab``, ... (ranx caps at 26 systems; we do not)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def latex_table(c: Comparison, digits: int = 4, label: str = "tab:comparison") -> str:
    """A booktabs table, systems x measures, with ranx-style significance superscripts."""
    from serpeval.comparison.results import CORRECTION_NAMES, TEST_NAMES

    letters = [system_letter(i) for i in range(len(c.systems))]
    index = {name: i for i, name in enumerate(c.systems)}
    beats: dict[tuple[str, str], set[int]] = {}
    for r in c.rows:
        if r.significant and r.delta != 0:
            winner, loser = (r.system, r.baseline) if r.improved else (r.baseline, r.system)
            beats.setdefault((winner, r.measure), set()).add(index[loser])
    means = c.means()
    lines = ["\\begin{table}[t]", "\\centering"]
    names = [latex_escape(str(m)) for m in c.measures]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    caption = (f"{listed} on {len(c.query_ids)} "
               f"queries. A superscript lists the systems a system is significantly better than "
               f"({latex_escape(TEST_NAMES[c.test])}, {CORRECTION_NAMES[c.correction]} correction, "
               f"$p \\le {c.alpha:g}$"
               + (f", each system against baseline {latex_escape(c.baseline or '')}"
                  if c.pairs == "baseline" else "")
               + "). Best in bold.")
    lines += [f"\\caption{{{caption}}}", f"\\label{{{label}}}",
              f"\\begin{{tabular}}{{cl{'c' * len(c.measures)}}}", "\\toprule",
              "\\# & System & " + " & ".join(latex_escape(str(m)) for m in c.measures) + " \\\\",
              "\\midrule"]
    best = {}
    for m in c.measures:
        values = [means[s][str(m)] for s in c.systems]
        best[str(m)] = max(values) if m.spec.higher_is_better else min(values)
    for i, system in enumerate(c.systems):
        cells = [letters[i], latex_escape(system)]
        for m in c.measures:
            value = means[system][str(m)]
            text = f"{value:.{digits}f}"
            if value == best[str(m)]:
                text = f"\\textbf{{{text}}}"
            won = sorted(beats.get((system, str(m)), set()))
            rest = [j for j in range(len(c.systems)) if j != i and j not in won]
            if won:
                text += "$^{" + "".join(letters[j] for j in won) + "}$"
            if rest:
                text += "\\hphantom{$^{" + "".join(letters[j] for j in rest) + "}$}"
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"
