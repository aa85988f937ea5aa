"""The demo's trec_eval section: the drop-in's output, and its agreement with pytrec_eval."""

from __future__ import annotations

import io
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from serpeval.cli.demo.collection import DemoCollection


def section(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Run ``serpeval trec_eval -m official`` on the candidate run; check ``--compat 9.0.8``
    against pytrec_eval (trec_eval 9.0.8 compiled) on every measure of every query."""
    from serpeval.cli.cmd_trec_eval import run
    from serpeval.io.trec import write_trec_qrels, write_trec_run
    from serpeval.trec_eval.compute import compute_evaluation
    from serpeval.trec_eval.options import Options

    name = list(collection.runs)[-1]
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = Path(tmp) / "qrels", Path(tmp) / "run"
        write_trec_qrels(collection.qrels, qrels_path)
        write_trec_run(collection.runs[name], run_path)
        out, err = io.BytesIO(), io.StringIO()
        status = run(["-m", "official", str(qrels_path), str(run_path)], stdout=out, stderr=err)
    console.print(f"[bold]Drop-in trec_eval[/bold] - serpeval trec_eval -m official qrels {name} "
                  f"(exit {status}); the same lines as NIST's trec_eval:")
    lines = out.getvalue().decode().splitlines()
    shown = [line for line in lines if not line.startswith("iprec_at_recall")]
    console.print("\n".join(shown), markup=False, highlight=False)
    console.print(f"({len(lines) - len(shown)} iprec_at_recall lines not shown; "
                  "serpeval trec_eval -q -m all_trec prints all 96 measures per query)")
    try:
        import pytrec_eval
    except ImportError:
        return
    opts = Options(per_query=True, measures=["all_trec"], compat="9.0.8")
    evaluation = compute_evaluation(opts, collection.qrels, collection.runs[name])
    theirs = pytrec_eval.RelevanceEvaluator(collection.qrels.to_dict(), {"all_trec"}).evaluate(
        collection.runs[name].to_dict())
    compared = differ = 0
    for column, values in zip(evaluation.columns, evaluation.per_topic, strict=True):
        if values is None or column.kind == "str":
            continue
        for qid, value in zip(evaluation.topics.to_pylist(), values.tolist(), strict=True):
            expected = theirs[qid].get(column.name)
            if expected is None or math.isnan(expected):
                continue
            compared += 1
            differ += value != expected
    state["trec_eval_oracle"] = {"compared": compared, "differ": differ}
    console.print(f"--compat 9.0.8 against pytrec_eval (trec_eval 9.0.8 compiled): {compared:,} "
                  f"per-query values compared, {differ} differ (equal as doubles, not just to 4 "
                  "decimals).")
