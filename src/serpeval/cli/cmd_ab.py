"""``serpeval ab [plan|monitor] LOGS --experiment NAME [--metric ctr ...] [--backend duckdb|spark]``.

Three modes on the same log: the analysis (``ab LOGS``), ``ab monitor LOGS`` (always-valid
p-values look by look) and ``ab plan LOGS`` (units needed for an effect, MDE of the units at
hand); ``ab LOGS --monitor`` / ``--plan``, the older spellings, still work (deprecated in the
help). One word is always the log: a log folder called ``plan`` is analysed.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from serpeval.cli._args import NON_NEGATIVE_INT, PROBABILITY, real
from serpeval.cli.commands import summary
from serpeval.cli.common import (
    ab_rows,
    add_duplicates_option,
    check_outputs,
    ci_label,
    emit,
    engine_status,
    p_text,
    split_measures,
)
from serpeval.cli.segments import add_by_option, refuse_latex_by
from serpeval.cli.teardown import finishing
from serpeval.core.errors import OptionError
from serpeval.report.table import FORMATS

if TYPE_CHECKING:
    from serpeval.online.experiments.options import ABDesign


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ab",
        help=summary("ab"),
        description="Analyse an A/B experiment from impression logs: CTR, abandonment, clicks@1, "
        "MRR, time to first click... clustered by user (delta method), with CIs on "
        "absolute and relative effects, a sample-ratio check, CUPED and a multiple-"
        "testing correction. The aggregation runs in DuckDB (default) or Spark.",
    )
    p.add_argument(
        "logs",
        metavar="[plan|monitor] LOGS",
        help="impressions: Parquet file/folder/glob, CSV, DuckDB database, or a log "
        "folder with impressions.* (clicks.*, pre.*); after 'plan': units per arm needed to "
        "detect --mde; after 'monitor': look by look with always-valid p-values (mSPRT), one metric",
    )
    p.add_argument("after_mode", nargs="?", action=_ModeAndLogs, help=argparse.SUPPRESS)
    p.add_argument("-e", "--experiment", help="experiment name (default: the log's only one)")
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metric (repeatable or comma-separated): ctr, abandonment, clicks_at_1, mrr, "
        "time_to_first_click, long_click_rate, clicks_per_user, impressions_per_user, "
        "user_ctr; default: ctr, abandonment, clicks_at_1, mrr",
    )
    p.add_argument(
        "--backend",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="query engine (default duckdb; spark uses the active or a local session)",
    )
    p.add_argument("--clicks", metavar="PATH", help="separate clicks table (events layout)")
    p.add_argument("--pre", metavar="PATH", help="pre-period impressions for CUPED")
    p.add_argument("--no-cuped", action="store_true", help="ignore a pre-period log")
    p.add_argument("--control", help="control variant (default: 'control' or the first name)")
    p.add_argument(
        "--split",
        metavar="V=SHARE,...",
        help="planned split for the sample-ratio check, "
        "e.g. control=0.5,treatment=0.5 (default: equal)",
    )
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--correction", default="holm", help="holm (default), bonferroni, bh or none")
    p.add_argument("--use-t", action="store_true", help="Welch t instead of z for ratio metrics")
    add_duplicates_option(p)
    p.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="map a column of your log, e.g. --column user_id=uid (repeatable)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--monitor",
        action="store_true",
        help="deprecated: use 'serpeval ab monitor LOGS'",
    )
    mode.add_argument("--plan", action="store_true", help="deprecated: use 'serpeval ab plan LOGS'")
    mode.add_argument(
        "--triggered",
        action="store_true",
        help="triggered analysis: only impressions whose arms' pages differ (the log's "
        "'triggered' column, counterfactual logging), the effect scaled by the trigger rate, "
        "next to the analysis of every impression",
    )
    p.add_argument("--looks", default="daily", help="monitor: 'daily' or a number of looks")
    p.add_argument(
        "--tuning-n",
        type=real(above=0.0),
        help="monitor: units where the confidence sequence is "
        "narrowest (default: units at the last look)",
    )
    p.add_argument(
        "--mde", type=real(above=0.0), default=0.01, help="plan: effect to detect (default 0.01)"
    )
    p.add_argument(
        "--absolute", action="store_true", help="plan: --mde is absolute, not relative"
    )
    p.add_argument("--power", type=PROBABILITY, default=0.8, help="plan: target power (default 0.8)")
    add_by_option(p)
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--digits", type=NON_NEGATIVE_INT, default=4, help="decimals in text output (default 4)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=finishing(run))


#: The words of ``serpeval ab MODE LOGS``, each the deprecated flag it replaces (``--plan``).
MODES = ("plan", "monitor")


class _ModeAndLogs(argparse.Action):
    """The word after ``LOGS``'s place: ``ab plan LOGS`` read ``plan`` as the log, so the
    mode is that word and the log this one. One word is always the log (the analysis), so a
    log folder called ``plan`` is still analysed."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        namespace.mode = None
        if values is None:
            return
        if namespace.logs not in MODES:
            parser.error(f"argument [plan|monitor] LOGS: expected LOGS, or {' or '.join(MODES)} then LOGS; "
                         f"got {namespace.logs!r} {values!r}")
        namespace.mode, namespace.logs = namespace.logs, values


def _apply_mode(args: argparse.Namespace) -> None:
    """Turn ``ab plan`` / ``ab monitor`` into the flags the analysis reads, refusing a mode
    word together with a mode flag (``ab plan LOGS --monitor``)."""
    if args.mode is None:
        return
    for other in MODES:
        if other != args.mode and getattr(args, other):
            raise OptionError(f"ab {args.mode}: --{other} is the mode 'ab {other}'; give one mode.")
    if args.triggered:
        raise OptionError(f"ab {args.mode}: --triggered is another analysis: run 'ab LOGS --triggered' "
                          "on its own.")
    setattr(args, args.mode, True)


def _split(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    out = {}
    for part in text.split(","):
        name, sep, share = part.partition("=")
        if name.strip() in out:
            raise OptionError(f"--split {text!r}: variant {name.strip()!r} appears twice.")
        try:
            out[name.strip()] = float(share)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise OptionError(
                f"--split {text!r}: expected VARIANT=SHARE pairs, e.g. control=0.5,treatment=0.5."
            )
    total = math.fsum(out.values())
    if not abs(total - 1.0) <= _SPLIT_TOLERANCE:  # also NaN and inf
        raise OptionError(
            f"--split {text!r}: the shares sum to {total:g}; the planned shares of the arms must "
            "sum to 1 (e.g. control=0.5,treatment=0.5, or control=0.7,treatment=0.3)."
        )
    return out


#: how far from 1 the --split shares may sum (decimals typed by hand: 0.333,0.333,0.334)
_SPLIT_TOLERANCE = 1e-6


def _event_store(args: argparse.Namespace) -> None:
    """When ``logs`` is serpeval serve's event store (DuckDB file, postgresql:// URL) or a UBI
    export: its A/B impressions and clicks in the log layout replace it; what was read and
    left out goes to standard error."""
    from serpeval.online.events.logs import is_event_source, read_event_logs

    if not is_event_source(args.logs):
        return
    if args.clicks:
        raise OptionError("--clicks does not apply to an event store: its clicks are the stored UBI events.")
    read = read_event_logs(args.logs, args.experiment, design="ab")
    args.logs, args.clicks = read.impressions, read.clicks
    for note in read.notes():
        print(note, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from serpeval.online.experiments import analysis, monitor, plan
    from serpeval.online.experiments.options import ABDesign
    from serpeval.online.logs.schema import LogSchema
    from serpeval.stats.srm import SampleRatioMismatchWarning

    _apply_mode(args)
    check_outputs({"-o": args.output}, [args.logs, args.clicks, args.pre])
    _event_store(args)
    refuse_latex_by(args)
    schema = LogSchema.from_pairs(args.column)
    metrics = split_measures(args.metrics) or None
    # One design for every mode: each analysis reads the fields it needs (ABDesign's docstring).
    design = ABDesign(metrics=tuple(metrics) if metrics else None, control=args.control,
                      cuped=False if args.no_cuped else None, alpha=args.alpha, correction=args.correction,
                      use_t=args.use_t, duplicates=args.duplicates, backend=args.backend, schema=schema)
    if args.monitor and metrics and len(dict.fromkeys(metrics)) > 1:   # as monitor_ab refuses it
        raise OptionError(f"ab monitor follows one metric; got {len(dict.fromkeys(metrics))} "
                          f"({', '.join(dict.fromkeys(metrics))}). Choose one: -m {metrics[0]}.")
    if args.by and (args.plan or args.monitor):
        raise OptionError("--by goes with the analysis, not with --plan or --monitor.")
    if args.by and args.triggered:
        raise OptionError("--by and --triggered are separate analyses: run one, then the other.")
    if args.triggered:
        return _run_triggered(args, replace(design, split=_split(args.split)))
    with engine_status(args.backend):
        if args.plan:
            planned = plan.plan_ab(args.logs, args.experiment, design, mde=args.mde, relative=not args.absolute,
                                   power=args.power, pre=args.pre, clicks=args.clicks)
            rows = planned.to_dicts()
            return emit(args, _plan_rows(rows, args.format), list(planned.notes), "A/B plan", rows)
        if args.monitor:
            looks: str | int = args.looks if args.looks == "daily" else _int(args.looks)
            one = replace(design, metrics=tuple((metrics or ["ctr"])[:1]))   # two or more: refused above
            seq = monitor.monitor_ab(args.logs, args.experiment, one,
                                     looks=looks, tuning_n=args.tuning_n, clicks=args.clicks)
            notes = [
                *seq.notes,
                f"always-valid p-values and confidence sequence: mSPRT, narrowest at "
                f"{seq.tuning_n:,.0f} units; p is the fixed-horizon p "
                "(stopping at its first dip below alpha is invalid)",
            ]
            return emit(
                args,
                _monitor_rows(seq.to_dicts(), args.format),
                notes,
                f"{seq.experiment}: {seq.metric} look by look",
                seq.to_dicts(),
            )
        if args.by:
            from serpeval.online.experiments.segments import analyze_ab_segments

            args.segment_result = analyze_ab_segments(
                args.logs, args.experiment, replace(design, correction=args.by_correction, cuped=None), by=args.by,
                clicks=args.clicks)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SampleRatioMismatchWarning)  # shown as a banner below
            res = analysis.analyze_ab(args.logs, args.experiment, replace(design, split=_split(args.split)),
                                      pre=args.pre, clicks=args.clicks)
    if res.srm.mismatch:
        _banner(res.srm.message())
    notes = [*res.notes, *res.rules()]
    arms = ", ".join(f"{v} {c['units']:,} units" for v, c in res.variants.items())
    title = f"{res.experiment}: {arms} ({res.backend})"
    status = emit(args, ab_rows(res.to_dicts(), args.format, res.alpha), notes, title, res.to_json_dict())
    if res.srm.mismatch:
        _banner(res.srm.message())
    return status


def _run_triggered(args: argparse.Namespace, design: ABDesign) -> int:
    """``--triggered``: both analyses side by side (:func:`~serpeval.online.experiments.analyze_ab_triggered`)."""
    from serpeval.online.experiments.triggered import analyze_ab_triggered
    from serpeval.stats.srm import SampleRatioMismatchWarning

    with engine_status(args.backend), warnings.catch_warnings():
        warnings.simplefilter("ignore", SampleRatioMismatchWarning)  # in the notes
        res = analyze_ab_triggered(args.logs, args.experiment, design, pre=args.pre, clicks=args.clicks)
    rows = res.to_dicts()
    title = f"{res.untriggered.experiment}: triggered analysis ({res.untriggered.backend})"
    payload = {"results": rows, "trigger_rate": res.trigger_rate,
               "unit_trigger_rate": res.unit_trigger_rate, "rates": res.rates, "notes": res.notes(),
               "untriggered": res.untriggered.to_json_dict(), "triggered": res.triggered.to_json_dict()}
    banners = [text for text, check in zip(res.srm_messages(), (res.untriggered.srm, res.triggered.srm),
                                            strict=True) if check.mismatch]
    for text in banners:
        _banner(text)
    status = emit(args, triggered_rows(rows, args.format, res.untriggered.alpha), res.notes(), title, payload)
    for text in banners:
        _banner(text)
    return status


def triggered_rows(rows: list[dict[str, Any]], fmt: str, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Triggered-analysis rows: every field for the machine formats, a digest for reading."""
    if fmt not in ("table", "markdown", "latex"):
        return rows

    def interval(r: dict[str, Any], prefix: str) -> str:
        return (f"{r[prefix + 'effect']:+.3g} [{r[prefix + 'ci_lower']:+.3g}, "
                f"{r[prefix + 'ci_upper']:+.3g}]")

    return [
        {
            "metric": r["metric"],
            "treatment": r["treatment"],
            f"all: effect [{ci_label(alpha)} CI]": interval(r, ""),
            "p": p_text(r["p_value"]),
            f"triggered x rate [{ci_label(alpha)} CI]": interval(r, "triggered_"),
            "p trig.": p_text(r["triggered_p_value"]),
            "rate": f"{r['scale']:.1%}",
            "SE ratio": f"{r['se_ratio']:.2f}",
            "verdict": r["verdict"],
        }
        for r in rows
    ]


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OptionError(f"--looks must be 'daily' or a number; got {text!r}.") from None


def _banner(message: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(f"[bold white on red] {message} [/]")


def _monitor_rows(rows: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """Look-by-look rows: timestamps as text; readable labels and p-values in the display formats."""
    out = [{**r, "end": r["end"].isoformat(sep=" ")} for r in rows]
    if fmt in ("table", "markdown", "latex"):
        for r in out:
            r["p_value"], r["always_valid_p"] = p_text(r["p_value"]), p_text(r["always_valid_p"])
        return [_labelled(r) for r in out]
    return out


def _plan_rows(rows: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """Plan rows: every field for the machine formats; readable labels for reading."""
    if fmt not in ("table", "markdown", "latex"):
        return rows
    return [_labelled({**r, "relative": "relative" if r.get("relative") else "absolute"}) for r in rows]


#: Field names of the plan and monitor rows -> the column headers a person reads.
_LABELS = {
    "sd_per_unit": "sd per unit", "units_observed": "units observed", "mde": "MDE",
    "relative": "MDE is", "units_per_arm": "units per arm", "mde_at_observed": "MDE now",
    "rel_mde_at_observed": "relative MDE now", "variance_reduction": "variance reduction",
    "units_control": "units control", "units_treatment": "units treatment",
    "value_control": "control value", "value_treatment": "treatment value", "ci_lower": "CI low",
    "ci_upper": "CI high", "p_value": "p", "cs_lower": "always-valid low",
    "cs_upper": "always-valid high", "always_valid_p": "always-valid p",
}


def _labelled(row: dict[str, Any]) -> dict[str, Any]:
    """A display row: readable headers; unit counts (users, by default) with thousands separators."""
    out = {}
    for key, value in row.items():
        label = _LABELS.get(key, key)
        if label.startswith("units") and isinstance(value, (int, float)) and math.isfinite(value):
            value = f"{math.ceil(value):,}"
        out[label] = value
    return out
