"""``serpeval demo``: the whole tool on a deterministic synthetic collection.

:func:`make_collection` generates a graded test collection (queries, judgments with grades
0-3, some documents left unjudged) and two rankers of different quality whose scores are
noisy functions of the true grades. The demo is a list of sections (:data:`SECTIONS`); each
takes the collection and a :class:`rich.console.Console` and adds its part of the story.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from serpeval.data import Qrels, Run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["SECTIONS", "DemoCollection", "make_collection", "run_demo"]

GRADE_PROBABILITIES = (0.62, 0.22, 0.11, 0.05)  # grades 0, 1, 2, 3


@dataclass(frozen=True)
class DemoCollection:
    """A test collection with two runs.

    Attributes:
        qrels: judgments (grades 0-3) for every query.
        runs: ``{"baseline": Run, "candidate": Run}`` (or the runs of a real collection).
        topics: ``{query_id: text}``.
        true_grades: for synthetic data, the grade of every document (judged or not),
            ``{query_id: {doc_id: grade}}``; the online simulations use it as the truth.
        description: one line saying what the data is.
        measures: the measures the demo reports.
    """

    qrels: Qrels
    runs: dict[str, Run]
    topics: dict[str, str]
    description: str
    true_grades: dict[str, dict[str, int]] | None = None
    measures: tuple[str, ...] = ("nDCG@10", "nDCG(gain=exp)@10", "AP", "P@10", "R@50", "RR", "Judged@10")


def make_collection(
    n_queries: int = 200,
    docs_per_query: int = 100,
    judged_per_query: int = 60,
    depth: int = 50,
    seed: int = 2024,
) -> DemoCollection:
    """Generate the demo collection deterministically from ``seed``.

    Each query has ``docs_per_query`` candidate documents with latent grades drawn from
    :data:`GRADE_PROBABILITIES`; the first ``judged_per_query`` of them (a random pool) are
    judged. Ranker scores are ``signal * grade + noise`` with standard normal noise: the
    baseline's signal is 0.55, the candidate's 0.75, so the candidate is better on average
    but not on every query. Each run keeps its top ``depth`` docs per query.
    """
    rng = np.random.default_rng(seed)
    grades = rng.choice(len(GRADE_PROBABILITIES), size=(n_queries, docs_per_query),
                        p=GRADE_PROBABILITIES)
    qids = np.array([f"{101 + i}" for i in range(n_queries)], dtype=object)
    doc_numbers = rng.permutation(n_queries * docs_per_query).reshape(n_queries, docs_per_query)
    docs = np.char.add("doc", np.char.zfill(doc_numbers.astype(str), 6)).astype(object)

    pool = np.argsort(rng.random((n_queries, docs_per_query)), axis=1)[:, :judged_per_query]
    judged_docs = np.take_along_axis(docs, pool, axis=1)
    judged_grades = np.take_along_axis(grades, pool, axis=1)
    qrels = Qrels(
        pa.array(np.repeat(qids, judged_per_query).tolist(), pa.string()),
        pa.array(judged_docs.ravel().tolist(), pa.string()),
        judged_grades.ravel().astype(np.int64),
        source="<demo qrels>",
    )

    def ranker(signal: float, name: str) -> Run:
        """Scores signal * grade + noise; the run keeps each query's top ``depth`` docs."""
        scores = np.round(signal * grades + rng.standard_normal(grades.shape), 6)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        return Run(
            pa.array(np.repeat(qids, depth).tolist(), pa.string()),
            pa.array(np.take_along_axis(docs, top, axis=1).ravel().tolist(), pa.string()),
            np.take_along_axis(scores, top, axis=1).ravel(),
            name=name, source=f"<demo {name}>",
        )

    runs = {"baseline": ranker(0.55, "baseline"), "candidate": ranker(0.75, "candidate")}
    topics = {q: f"synthetic topic {q}" for q in qids.tolist()}
    truth = {
        q: dict(zip(row_docs.tolist(), row_grades.tolist(), strict=True))
        for q, row_docs, row_grades in zip(qids.tolist(), docs, grades, strict=True)
    }
    return DemoCollection(
        qrels=qrels,
        runs=runs,
        topics=topics,
        true_grades=truth,
        description=(f"synthetic collection: {n_queries} queries, {docs_per_query} docs each, "
                     f"{judged_per_query} judged (grades 0-3), runs of depth {depth}, seed {seed}"),
    )


def load_collection(folder: str) -> DemoCollection:
    """A real collection folder: ``qrels.txt[.gz]``, ``runs/*``, optional ``topics*.tsv``."""
    from pathlib import Path

    from serpeval.errors import InputError
    from serpeval.io import read_qrels, read_run
    from serpeval.report.topics import read_topics

    root = Path(folder)
    qrels_files = sorted(root.glob("qrels*.txt*")) or sorted(root.glob("qrels*"))
    if not qrels_files:
        raise InputError(f"{folder}: no qrels file (expected qrels.txt or qrels.txt.gz).")
    run_files = [p for p in (root / "runs").glob("*") if p.is_file()] if (root / "runs").is_dir() else []
    # By name before the first dot, so that "bm25" (the baseline) comes before "bm25-rm3".
    run_files.sort(key=lambda p: (p.name.split(".")[0], p.name))
    if len(run_files) < 2:
        raise InputError(f"{folder}/runs: need at least two run files to compare; found {len(run_files)}.")
    # topics.tsv (short titles) reads best in reports; else the first other topics file.
    topic_files = sorted(root.glob("topics*.tsv"), key=lambda p: (p.name != "topics.tsv", p.name))
    topics = read_topics(topic_files[0]) if topic_files else {}
    runs = {}
    for path in run_files[:2]:
        run = read_run(path)
        runs[run.name] = run
    return DemoCollection(
        qrels=read_qrels(qrels_files[0]),
        runs=runs,
        topics=topics,
        description=f"{folder}: {qrels_files[0].name}, runs {', '.join(runs)}",
        measures=("nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10"),
    )


# ----------------------------------------------------------------------------- sections


def section_offline(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Evaluate both runs; say which is better on nDCG@10, by how much, on how many queries."""
    from serpeval.cli.cmd_evaluate import results_rows
    from serpeval.evaluate import evaluate
    from serpeval.report.table import rich_table

    results = evaluate(collection.qrels, collection.runs, collection.measures)
    state["results"] = results
    console.print(f"[bold]Offline evaluation[/bold] - {collection.description}")
    rows, styles = results_rows(results)
    console.print(rich_table(rows, styles=styles))
    baseline, candidate = list(collection.runs)[:2]
    key = "nDCG@10"
    a = results.per_query(baseline, key)
    b = results.per_query(candidate, key)
    common = sorted(set(a) & set(b))
    delta = np.array([b[q] - a[q] for q in common])
    mean_a = float(np.mean([a[q] for q in common]))
    mean_b = float(np.mean([b[q] for q in common]))
    better, worse = (candidate, baseline) if mean_b >= mean_a else (baseline, candidate)
    diff = abs(mean_b - mean_a)
    relative = diff / min(mean_a, mean_b) * 100 if min(mean_a, mean_b) > 0 else float("inf")
    wins = int(np.sum(delta > 0)) if better == candidate else int(np.sum(delta < 0))
    losses = int(np.sum(delta < 0)) if better == candidate else int(np.sum(delta > 0))
    console.print(
        f"{better} beats {worse} on {key} by {diff:+.4f} ({relative:.1f}% relative): "
        f"better on {wins} queries, worse on {losses}, tied on {len(common) - wins - losses}."
    )
    state["better"], state["worse"] = better, worse


def section_compare(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Is the difference real? Randomization test, Holm correction, CI, d_z; then the CI gate."""
    from serpeval.ci_gate import gate_results
    from serpeval.comparison import compare_results
    from serpeval.evaluate import evaluate
    from serpeval.report.comparison import human_rows, legend, rich_comparison_table

    results = state.get("results") or evaluate(collection.qrels, collection.runs, collection.measures)
    comparison = compare_results(results, test="randomization", rng=0)
    state["comparison"] = comparison
    console.print(f"[bold]Significance[/bold] - {comparison.description()}")
    rows, cols, styles = human_rows(comparison)
    console.print(rich_comparison_table(rows, cols, styles))
    for note in [*comparison.notes(), legend(comparison)]:
        console.print(note, markup=False)
    key = str(comparison.measures[0])
    row = comparison.rows[0]
    verdict = "a real difference" if row.significant else "not distinguishable from chance"
    console.print(f"{row.system} vs {row.baseline} on {key}: {row.delta:+.4f} "
                  f"(95% CI [{row.ci_low:+.4f}, {row.ci_high:+.4f}], p = {row.p_value:.4f}, "
                  f"d_z = {row.effect_size:+.2f}): {verdict}.", markup=False)
    first, second = results.runs[0].name, results.runs[1].name
    decision = gate_results(results, [key], max_drop=0.01)
    console.print(f"serpeval gate --baseline {first} --candidate {second} -m {key} --max-drop 0.01 "
                  f"would {'PASS (exit 0)' if decision.passed else 'FAIL (exit 1)'}: one-sided 95% "
                  f"lower bound of the delta {decision.checks[0].bound:+.4f} vs -0.0100.", markup=False)


def section_report(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Write what the sections above stored in ``state`` as one HTML report; print its path."""
    from pathlib import Path

    from rich.markup import escape

    from serpeval.report import DEFAULT_HTML_PATH
    from serpeval.report.html import save_demo_report

    replaced = Path(state.get("report_path", DEFAULT_HTML_PATH)).exists()
    path = save_demo_report(collection, state)
    console.print(f"[bold]Report[/bold] - wrote {escape(str(path.resolve()))} "
                  f"({path.stat().st_size / 1024:,.0f} KB{', replaced the previous file' if replaced else ''}); "
                  "open it in a browser (it needs no network).")


def section_online(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """Interleaving vs an A/B test on the two rankers with simulated users."""
    from serpeval.online._demo import section

    section(collection, console, state)


def section_ab(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """The two rankers as an A/B test and an interleaving experiment, analysed from logs."""
    from serpeval.online.ab._demo import section

    section(collection, console, state)


def section_trec_eval(collection: DemoCollection, console: Console, state: dict[str, Any]) -> None:
    """The drop-in trec_eval on the candidate run, checked against pytrec_eval."""
    from serpeval.trec_eval._demo import section

    section(collection, console, state)


Section = Callable[[DemoCollection, "Console", dict[str, Any]], None]

#: The demo's sections, in order. Later features add theirs before section_report, which
#: gathers what the others stored and must stay last.
SECTIONS: list[Section] = [section_offline, section_compare, section_online, section_ab,
                           section_trec_eval, section_report]


def run_demo(collection: DemoCollection | None = None, console: Console | None = None,
             state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run every section on ``collection`` (default: :func:`make_collection`); return the state.

    ``state`` seeds the shared state, e.g. ``{"report_path": "report.html"}``.
    """
    import sys

    from rich.console import Console

    console = console or Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    collection = collection or make_collection()
    state = dict(state or {})
    for section in SECTIONS:
        section(collection, console, state)
        console.print()
    return state
