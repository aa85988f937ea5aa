"""The gate's decision as one screen of text: what ``serpeval gate`` prints.

:func:`explain_gate` renders a :class:`~serpeval.comparison.gate.GateResult`: the decision,
each measure's delta, one-sided bound, allowed drop and p-value, why each check passed or
failed, the largest per-query drops, and the result's notes. It formats; every number is
the result's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from serpeval.comparison.compare import TEST_NAMES
from serpeval.report.comparison import format_p, text_table
from serpeval.report.formatting import level as confidence_level
from serpeval.report.table import fit_text
from serpeval.stats.registry import PAIRED_TESTS

if TYPE_CHECKING:
    from serpeval.comparison.gate import GateCheck, GateResult

__all__ = ["explain_gate", "gate_failure_report"]


def gate_failure_report(status: str, reason: str, exit_code: int, **context: Any) -> dict[str, Any]:
    """The ``--json`` report of a gate that stopped before deciding (exit 7: nothing evaluated).

    ``decision`` is ``"error"`` (never ``"pass"``), ``passed`` False, with the ``exit_code``,
    a short ``status``, the ``reason`` as the command printed it, and ``context`` (the qrels,
    runs and measures given), so a CI dashboard that reads the report sees why.
    """
    return {"decision": "error", "passed": False, "exit_code": exit_code, "status": status,
            "reason": reason, **context}


def explain_gate(result: GateResult, top: int = 10, digits: int = 4, width: int | None = None) -> str:
    """One screen: the decision, each measure's delta, bound and p, the worst regressions.

    ``width``: the terminal's columns (:func:`serpeval.cli.common.table_width`): the tables
    fit it (or switch to the record layout) and the sentences wrap at spaces to it, never
    inside a number; None keeps every sentence on one line (pipes and files)."""
    level = confidence_level(1 - result.alpha)
    decision = "PASS" if result.passed else "FAIL"
    lines = [f"serpeval gate: {decision} - candidate {result.candidate} vs "
             f"baseline {result.baseline} ({result.rule}, one-sided {TEST_NAMES[result.test]}, "
             f"alpha {result.alpha:g}, {result.checks[0].queries} queries)"]
    side = "lower" if result.rule == "non-inferiority" else "upper"
    location = PAIRED_TESTS[result.test].location
    bound_name = f"{level} {side} bound" + ("" if location == "mean" else f" ({location})")
    rows = [{"measure": c.measure, "baseline": f"{c.baseline_mean:.{digits}f}",
             "candidate": f"{c.candidate_mean:.{digits}f}", "delta": f"{c.delta:+.{digits}f}",
             bound_name: f"{c.bound:+.{digits}f}", "allowed": f"{-c.margin:+.{digits}f}",
             "p": format_p(c.p_value_corrected, digits),
             "W/T/L": f"{c.wins}/{c.ties}/{c.losses}",
             "result": "pass" if c.passed else "FAIL"} for c in result.checks]
    lines = [fit_text(lines, width).rstrip("\n")]
    lines.append(text_table(rows, list(rows[0]), width=width).rstrip("\n"))
    lines.append(fit_text([_reason(result, c, bound_name, digits) for c in result.checks],
                          width).rstrip("\n"))
    shown = next((c for c in result.checks if not c.passed), result.checks[0])
    if shown.regressions and top > 0:
        lines.append(fit_text([f"Largest per-query drops on {shown.measure} "
                               f"({shown.losses} of {shown.queries} queries worse):"],
                              width).rstrip("\n"))
        regress = [{"query": r.query_id, "baseline": f"{r.baseline:.{digits}f}",
                    "candidate": f"{r.candidate:.{digits}f}", "delta": f"{r.delta:+.{digits}f}"}
                   for r in shown.regressions[:top]]
        lines.append(text_table(regress, list(regress[0]), width=width).rstrip("\n"))
    notes = result.notes()
    if notes:
        lines.append(fit_text(notes, width).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _reason(result: GateResult, c: GateCheck, bound_name: str, digits: int) -> str:
    """Why one check passed or failed, in a sentence."""
    h0 = _hypothesis(result, c)
    alpha = f"{result.alpha:g}"
    if result.rule == "non-inferiority":
        if c.passed and PAIRED_TESTS[result.test].location != "mean":
            mean = (f" The mean delta, {c.delta:+.{digits}f}, is below the allowed drop: the "
                    f"{TEST_NAMES[result.test]} decides on the typical query, --test t on the mean."
                    if c.delta < -c.margin else "")
            return (f"{c.measure}: {h0} rejected ({_p_is(c.p_value, digits)} <= {alpha}): the typical query "
                    f"is not worse by more than {c.margin:.{digits}f}.{mean}")
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
    """The null hypothesis tested for ``check``, in words: of the mean delta, or of the
    location the test is about (the signed-rank test's pseudo-median)."""
    sign = "<=" if result.rule == "non-inferiority" else ">="
    location = PAIRED_TESTS[result.test].location
    subject = "delta" if location == "mean" else f"the {location} of the per-query deltas"
    return f"H0: {subject} {sign} {-check.margin:+.4f}"


def _p_is(value: float, digits: int) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = format_p(value, digits)
    return f"p < {text[1:]}" if text.startswith("<") else f"p = {text}"
