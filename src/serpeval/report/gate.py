"""The gate's decision as one screen of text: what ``serpeval gate`` prints.

:func:`explain_gate` renders a :class:`~serpeval.comparison.gate.GateResult`: the decision,
each measure's delta, one-sided bound, allowed drop and p-value, why each check passed or
failed, the largest per-query drops, and the result's notes. It formats; every number is
the result's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.comparison.compare import TEST_NAMES
from serpeval.report.comparison import format_p, text_table
from serpeval.report.table import fit_text

if TYPE_CHECKING:
    from serpeval.comparison.gate import GateCheck, GateResult

__all__ = ["explain_gate"]


def explain_gate(result: GateResult, top: int = 10, digits: int = 4, width: int | None = None) -> str:
    """One screen: the decision, each measure's delta, bound and p, the worst regressions.

    ``width``: the terminal's columns (sentences wrapped, tables fitted or shown as records);
    ``None`` keeps the fixed layout of pipes and files.
    """
    level = f"{1 - result.alpha:.0%}"
    decision = "PASS" if result.passed else "FAIL"
    lines = [f"serpeval gate: {decision} - candidate {result.candidate} vs "
             f"baseline {result.baseline} ({result.rule}, one-sided {TEST_NAMES[result.test]}, "
             f"alpha {result.alpha:g}, {result.checks[0].queries} queries)"]
    side = "lower" if result.rule == "non-inferiority" else "upper"
    bound_name = f"{level} {side} bound"
    rows = [{"measure": c.measure, "baseline": f"{c.baseline_mean:.{digits}f}",
             "candidate": f"{c.candidate_mean:.{digits}f}", "delta": f"{c.delta:+.{digits}f}",
             bound_name: f"{c.bound:+.{digits}f}", "allowed": f"{-c.margin:+.{digits}f}",
             "p": format_p(c.p_value_corrected, digits),
             "W/T/L": f"{c.wins}/{c.ties}/{c.losses}",
             "result": "pass" if c.passed else "FAIL"} for c in result.checks]
    lines.append(text_table(rows, list(rows[0]), width=width).rstrip("\n"))
    lines += [_reason(result, c, bound_name, digits) for c in result.checks]
    shown = next((c for c in result.checks if not c.passed), result.checks[0])
    if shown.regressions and top > 0:
        lines.append(f"Largest per-query drops on {shown.measure} "
                     f"({shown.losses} of {shown.queries} queries worse):")
        regress = [{"query": r.query_id, "baseline": f"{r.baseline:.{digits}f}",
                    "candidate": f"{r.candidate:.{digits}f}", "delta": f"{r.delta:+.{digits}f}"}
                   for r in shown.regressions[:top]]
        lines.append(text_table(regress, list(regress[0]), width=width).rstrip("\n"))
    lines += result.notes()
    return "".join(fit_text([line], width) if "\n" not in line else line + "\n" for line in lines)


def _reason(result: GateResult, c: GateCheck, bound_name: str, digits: int) -> str:
    """Why one check passed or failed, in a sentence."""
    h0 = _hypothesis(result, c)
    alpha = f"{result.alpha:g}"
    if result.rule == "non-inferiority":
        if c.passed:
            return (f"{c.measure}: {h0} rejected ({_p_is(c.p_value, digits)} <= {alpha}): "
                    f"not worse by more than {c.margin:.{digits}f}.")
        return (f"{c.measure}: cannot rule out a drop of more than {c.margin:.{digits}f} "
                f"({_p_is(c.p_value, digits)} > {alpha}; {bound_name} "
                f"{c.bound:+.{digits}f} <= {-c.margin:+.{digits}f}).")
    if c.passed:
        return (f"{c.measure}: no significant drop of more than {c.margin:.{digits}f} "
                f"(Holm-corrected {_p_is(c.p_value_corrected, digits)} > {alpha}).")
    return (f"{c.measure}: significantly worse by more than {c.margin:.{digits}f} "
            f"({h0} rejected, Holm-corrected {_p_is(c.p_value_corrected, digits)} <= {alpha}).")


def _hypothesis(result: GateResult, check: GateCheck) -> str:
    """The null hypothesis tested for ``check``, in words."""
    sign = "<=" if result.rule == "non-inferiority" else ">="
    return f"H0: delta {sign} {-check.margin:+.4f}"


def _p_is(value: float, digits: int) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = format_p(value, digits)
    return f"p < {text[1:]}" if text.startswith("<") else f"p = {text}"
