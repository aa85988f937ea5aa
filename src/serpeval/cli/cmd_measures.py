"""``serpeval measures [NAME]``: the registry, one line per measure, or one measure in detail."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from serpeval.cli.commands import summary
from serpeval.cli.common import table_width, write_output
from serpeval.core.errors import MeasureError


def register(sub: Any) -> None:
    p = sub.add_parser("measures", help=summary("measures"),
                       description="List every registered measure with a one-line definition, "
                                   "or show one measure (its formula and edge cases).")
    p.add_argument("name", nargs="?", help="a measure name in any dialect, e.g. ndcg_cut_10")
    p.add_argument("-f", "--format", choices=("table", "markdown", "json", "csv"), default="table",
                   help="output format of the measure list (default table)")
    p.set_defaults(func=run)


def describe_rows() -> list[dict[str, Any]]:
    """One row per registered measure."""
    from serpeval.measures import REGISTRY
    from serpeval.measures.spec import format_value

    rows = []
    for spec in REGISTRY:
        usage = spec.name
        # Parameters with a value by default; optional ones (an empty default, such as a
        # custom gain table, and switches such as judged_only) are described by
        # `serpeval measures NAME`.
        shown = [p for p in spec.params if p.default != "" and p.type is not bool]
        if shown:
            usage += "(" + ",".join(f"{p.name}={format_value(p.default)}" for p in shown) + ")"
        if spec.cutoff == "required":
            usage += "@k"
        elif spec.cutoff == "optional":
            usage += "[@k]"
        rows.append({
            "measure": usage,
            "definition": spec.summary,
            "aggregate": spec.aggregate,
            "aliases": ", ".join(spec.aliases),
            "trec_eval": ", ".join(_trec_names(spec)),
        })
    return rows


def _trec_names(spec: Any) -> list[str]:
    """The measure's trec_eval names, cutoff families as ``ndcg_cut_k``."""
    return [*spec.trec, *(f"{n}_k" for n in spec.trec_cut)]


def run(args: argparse.Namespace) -> int:
    from serpeval.measures import REGISTRY, parse_measure
    from serpeval.measures.srw import PEER_FAMILY
    from serpeval.report.formatting import plain_text
    from serpeval.report.table import render

    if args.name:
        try:
            measure = parse_measure(args.name)
            spec = measure.spec
        except MeasureError as problem:
            # A bare name is enough to describe a measure whose cutoff is required (``P``,
            # and trec_eval's cutoff families ``ndcg_cut``, ``P``); anything else keeps its
            # own error (a bad parameter value, an unknown name).
            found = REGISTRY.lookup(args.name) or REGISTRY.for_trec_name(args.name)
            if found is None:
                raise problem from None
            spec, measure = found, None
        lines = [f"{spec.name}: {spec.summary}"]
        if measure is not None and str(measure) != spec.name:
            lines.append(f"parsed as: {measure}")
        doc = plain_text(inspect.getdoc(spec.kernel) or "")
        lines += ["", doc, ""]
        for p in spec.params:
            default = "none" if p.default == "" else p.default
            lines.append(f"  {p.name} ({p.describe()}, default {default}): {p.description}")
        lines.append(f"cutoff: {spec.cutoff}; aggregate: {spec.aggregate}; "
                     f"{'higher' if spec.higher_is_better else 'lower'} is better")
        if spec.aliases:
            lines.append("aliases: " + ", ".join(spec.aliases))
        if spec.trec or spec.trec_cut:
            lines.append("trec_eval: " + ", ".join(_trec_names(spec)))
        if spec.reference:
            lines.append("reference: " + spec.reference)
        if spec.notes:
            lines.append("ir_measures / ranx: " + spec.notes)
        peers = [s.name for s in REGISTRY if s.family == PEER_FAMILY and s.name.split("_", 1)[-1] == spec.name]
        if peers:
            lines.append("OpenSearch SRW / Quepid define it their own way: " + ", ".join(peers)
                         + " (serpeval measures NAME says how)")
        from serpeval.measures.expected import method

        lines.append("ties=expected: " + method(spec))
        write_output("\n".join(lines) + "\n", None)
        return 0
    write_output(render(describe_rows(), args.format, width=table_width() or 160), None)
    return 0
