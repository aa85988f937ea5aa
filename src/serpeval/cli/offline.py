"""What the offline commands (``evaluate``, ``compare``, ``gate``, ``report``) share: the
evaluation options, reading and evaluating with a progress bar, naming the baseline run,
and the coverage notes and result rows they print.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any

from serpeval.cli._args import POSITIVE_INT, real
from serpeval.core.errors import InputError, MissingQueriesWarning, OptionError, OutOfMemoryError, SingleSubtopicWarning

__all__ = [
    "add_evaluation_options",
    "add_judged_options",
    "add_subtopics_option",
    "add_ties_option",
    "coverage_notes",
    "judged_gap_notes",
    "load_and_evaluate",
    "progress",
    "read_counting",
    "render_results",
    "resolve_run",
    "results_rows",
    "stream_and_evaluate",
    "with_judged_column",
]


def add_evaluation_options(p: argparse.ArgumentParser, missing: str = "skip") -> None:
    """``--missing``, ``--depth``, ``--judged-only`` (shared with ``gate``)."""
    p.add_argument("--missing", choices=("skip", "zero", "error"), default=missing,
                   help="judged queries absent from a run: skip (trec_eval's default), "
                        f"zero (trec_eval -c), error; default {missing}")
    p.add_argument("--depth", type=POSITIVE_INT, metavar="N", help="keep the top N docs per query (-M)")
    p.add_argument("--judged-only", action="store_true", help="drop unjudged docs first (-J)")
    add_ties_option(p)


def add_ties_option(p: argparse.ArgumentParser) -> None:
    """``--ties POLICY``: the tie policy (:mod:`serpeval.core.ties`; names only, no NumPy)."""
    from serpeval.core.ties import TIE_POLICIES

    p.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", metavar="POLICY",
                   help="order within equal scores: trec_eval (default: doc id descending), optimistic "
                        "(higher grade first), pessimistic (lower grade first), expected (each value its "
                        "exact mean over every order of each tie group), rank (the run file's rank column, "
                        "scores ignored); see docs/how-to/ties.md")


def add_judged_options(p: argparse.ArgumentParser, column: bool = True) -> None:
    """``--judged [K]`` (a Judged@K column) and ``--judged-gap POINTS`` (the unequal-judging
    warning of compare and gate)."""
    if column:
        p.add_argument("--judged", nargs="?", const=0, type=POSITIVE_INT, metavar="K",
                       help="add a Judged@K column (the share of the top K that is judged; K "
                            "defaults to the deepest cutoff of the measures, else 10)")
    p.add_argument("--judged-gap", type=real(minimum=0.0), default=5.0, metavar="POINTS",
                   help="warn when the runs' judged rates at a measure's depth differ by more "
                        "than POINTS percentage points (default 5; 100 never warns)")


def with_judged_column(measures: list[str], judged: int | None) -> list[str]:
    """``measures`` plus ``Judged@K`` when ``--judged`` was given (K 0: the deepest cutoff)."""
    if judged is None:
        return measures
    if not judged:
        from serpeval.measures import parse_measures

        cutoffs = [m.cutoff for m in parse_measures(measures) if m.cutoff is not None]
        judged = max(cutoffs, default=10)
    return [*measures, f"Judged@{judged}"]


def judged_gap_notes(qrels: Any, runs: Sequence[Any], results: Any, args: argparse.Namespace) -> list[str]:
    """The warnings of :func:`serpeval.judgments.judged.judged_gaps` (none above 100 points)."""
    if args.judged_gap >= 100:
        return []
    from serpeval.judgments.judged import judged_gaps

    gaps = judged_gaps(qrels, runs, results, threshold=args.judged_gap / 100.0, depth=args.depth)
    return [gap.message() for gap in gaps]


def add_subtopics_option(p: argparse.ArgumentParser) -> None:
    """The qrels options of the commands that evaluate (evaluate, compare, gate, report):
    ``--subtopics`` (subtopic qrels, what the diversity measures need) and ``--grades``
    (:func:`add_grades_option`)."""
    p.add_argument("--subtopics", action="store_true",
                   help="the qrels are subtopic qrels, qid subtopic docid rel (NIST ndeval's format), for "
                        "the diversity measures (alpha_nDCG@20, ERR_IA@20, NRBP, ...); other measures "
                        "use each document's highest grade over its subtopics")
    add_grades_option(p)
    p.add_argument("--propensities", metavar="FILE",
                   help="per-document propensities for psP@k and psnDCG@k: 'doc_id propensity' lines, each in "
                        "(0, 1] (default: Jain et al.'s formula from the qrels, with the measure's A and B)")


def add_grades_option(p: argparse.ArgumentParser) -> None:
    """``--grades int|float``: the qrels' grade type (read by :func:`read_qrels_of`)."""
    p.add_argument("--grades", choices=("int", "float"), default="int",
                   help="the qrels' grades: int (default; a grade like 2.5 is an error) or float (any "
                        "finite real grade: gain measures use it as is, binary measures count grade >= rel; "
                        "see docs/how-to/fractional-grades.md)")


def read_qrels_of(args: argparse.Namespace) -> Callable[[Any], Any]:
    """The qrels reader the options ask for: subtopic qrels (``--subtopics``, integer grades)
    or qrels with ``--grades``' grade type."""

    from serpeval.core.data import check_grade_kind
    from serpeval.io import read_qrels, read_subtopic_qrels

    grades = check_grade_kind(getattr(args, "grades", "int"))
    if getattr(args, "subtopics", False):
        if grades != "int":
            raise OptionError("--grades float is not available with --subtopics (subtopic grades are integers: "
                              "the diversity measures are binary per subtopic); drop one of them.")
        return read_subtopic_qrels
    return partial(read_qrels, grades=grades)


def progress() -> Any:
    """A transient rich progress display on a terminal's stderr, or a silent stand-in."""

    if not sys.stderr.isatty():
        return nullcontext(None)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)


def load_and_evaluate(qrels_path: str, run_paths: Sequence[str], measures: Sequence[str],
                      args: argparse.Namespace, then: Callable[[Any], Any] | None = None, *,
                      keep_runs: bool = False) -> tuple[Any, list[Any], Any, Any]:
    """Read the qrels and runs, evaluate, then run ``then(results)``; a progress bar on a terminal.

    Runs are read one at a time as they are evaluated and their rows dropped after, so many
    runs cost the memory of one. Returns ``(qrels, runs, results, then(results))`` with
    ``runs`` the :class:`RunFacts` of each run file, or the runs themselves with
    ``keep_runs`` (for what needs their rows after the evaluation: the judged-rate check of
    compare and gate, report's diffs).
    """
    from serpeval.core.read_ahead import ReadAhead, may_read_stdin
    from serpeval.evaluation.evaluate import evaluate
    from serpeval.io import read_run

    reader = read_qrels_of(args)
    if not getattr(args, "subtopics", False):
        _refuse_diversity(qrels_path, measures)
    if getattr(args, "propensities", None):
        _refuse_unused_propensities(args.propensities, measures)

    with progress() as bar:
        task = bar.add_task("reading qrels", total=len(run_paths) + (2 if then else 1)) if bar else None

        def step(text: str) -> None:
            if bar is not None:
                bar.update(task, advance=1, description=text)

        # The first run is read while the qrels are, each next one while the one before is
        # evaluated (unless the qrels come from standard input, as a run may).
        ahead = ReadAhead(run_paths, read_run, ahead=False if may_read_stdin(qrels_path) else None)
        qrels = read_counting(reader, qrels_path, 0)
        runs: list[Any] = []

        def each_run() -> Any:
            """The runs one at a time as evaluate() reaches them; what the notes need is
            kept, the rows are not (memory does not grow with the number of runs)."""
            lines = len(qrels)
            for path in run_paths:
                step(f"reading and evaluating {path}")
                run = read_counting(lambda _: next(ahead), path, lines)
                lines += len(run)
                runs.append(run if keep_runs else RunFacts(run.name, run.source, run.skipped_lines))
                box = [run]  # hold no reference here while evaluate() measures it
                del run
                yield box.pop()

        with warnings.catch_warnings():
            # The notes report the same counts next to the table.
            warnings.simplefilter("ignore", MissingQueriesWarning)
            warnings.simplefilter("ignore", SingleSubtopicWarning)
            results = evaluate(qrels, each_run(), measures, missing=args.missing, depth=args.depth,
                               judged_only=args.judged_only, ties=getattr(args, "ties", "trec_eval"),
                               propensities=getattr(args, "propensities", None))
        outcome = None
        if then is not None:
            step("testing")
            outcome = then(results)
        step("done")
    return qrels, runs, results, outcome


def stream_and_evaluate(qrels_path: str, run_paths: Sequence[str], measures: Sequence[str],
                        args: argparse.Namespace) -> tuple[Any, list[Any], Any]:
    """``evaluate --stream``: the runs read piece by piece in bounded memory
    (:mod:`serpeval.evaluation.stream`), a bar of the bytes read on a terminal.
    Returns ``(qrels, run facts, results)``."""

    from serpeval.cli.progress import bar
    from serpeval.evaluation.stream import evaluate_stream

    if getattr(args, "subtopics", False):
        raise OptionError("--stream does not evaluate diversity measures (--subtopics); drop --stream.")
    if getattr(args, "propensities", None):  # psP/psnDCG would fall back to Jain et al.'s formula
        raise OptionError(f"--stream does not read --propensities {args.propensities}; drop --stream to score "
                          "psP@k and psnDCG@k with them.")
    _refuse_diversity(qrels_path, measures)
    qrels = read_counting(read_qrels_of(args), qrels_path, 0)
    sizes = [os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0 for p in run_paths]
    facts: list[Any] = []
    with bar("reading and evaluating runs") as report, warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # the notes give the counts
        total = sum(sizes)

        def each(done: int, size: int) -> None:
            report(sum(sizes[: len(facts)]) + done, total or size)

        results = evaluate_stream(qrels, list(run_paths), measures, missing=args.missing, depth=args.depth,
                                  judged_only=args.judged_only, progress=each, facts=facts,
                                  ties=getattr(args, "ties", "trec_eval"))
    return qrels, facts, results


def _refuse_diversity(qrels_path: str, measures: Sequence[str]) -> None:
    """A diversity measure without ``--subtopics`` is an error before anything is read (read as
    ordinary qrels, subtopic qrels would fail on the first document judged for two subtopics)."""
    from serpeval.measures import parse_measures
    from serpeval.measures.subtopic_ranking import needs_subtopics_message

    for measure in parse_measures(measures):
        if measure.spec.subtopics:
            raise InputError(needs_subtopics_message(str(measure), qrels_path))


def _refuse_unused_propensities(path: str, measures: Sequence[str]) -> None:
    """``--propensities`` with no measure that reads them (psP@k, psnDCG@k) is an error before
    anything is read: the file would be ignored without a word."""
    from serpeval.measures import parse_measures
    from serpeval.measures.propensity import weight_key

    if not any(weight_key(m) is not None for m in parse_measures(measures)):
        raise OptionError(f"--propensities {path}: no measure asked reads propensities (psP@k and psnDCG@k do); "
                          "add one (-m psP@5) or leave --propensities out.")


@dataclass(frozen=True)
class RunFacts:
    """What the notes say about a run file once its rows are gone."""

    name: str
    source: str
    skipped_lines: int


def read_counting(read: Callable[[str], Any], path: str, lines: int) -> Any:
    """``read(path)``; running out of memory says which file and how many lines were read."""
    try:
        return read(path)
    except MemoryError:
        raise OutOfMemoryError(f"out of memory while reading {path} ({lines:,} lines read so far).") from None


def resolve_run(value: str | None, paths: Sequence[str], names: Sequence[str]) -> str | None:
    """A run name from ``--baseline`` given as a name or as one of the paths."""
    if value is None or value in names:
        return value
    for path, name in zip(paths, names, strict=True):
        if value == path:
            return name
    return value  # compare_results reports the unknown name with the choices


def coverage_notes(results: Any, qrels: Any, runs: list[Any]) -> list[str]:
    """One line per fact a reader must know: skipped queries, ignored rows, ties, skipped lines."""
    notes = []
    single = getattr(qrels, "single_subtopic_note", None)
    if single is not None and any(m.spec.subtopics for m in results.measures) and single() is not None:
        notes.append(single())
    if qrels.skipped_lines:
        notes.append(f"qrels {qrels.source}: {qrels.skipped_lines} blank/comment line(s) skipped")
    if getattr(qrels, "grades", "int") == "float":
        notes.append(f"qrels {qrels.source}: fractional grades (--grades float): gain measures use each grade as "
                     "it is; binary measures count grade >= rel (0.5 is not relevant at rel=1)")
    for run, result in zip(runs, results.runs, strict=True):
        c = result.coverage
        if run.skipped_lines:
            notes.append(f"{c.run}: {run.skipped_lines} blank/comment line(s) skipped")
        if c.missing:
            action = {"skip": "skipped", "zero": "counted as 0", "error": "refused"}[c.missing_policy]
            notes.append(f"{c.run}: {len(c.missing)} of {c.judged_queries} judged queries have no "
                         f"results ({action})")
        if c.unjudged_queries:
            notes.append(f"{c.run}: {_plural(c.unjudged_queries, 'run query', 'run queries')} "
                         f"({_plural(c.unjudged_rows, 'line')}) without judgments ignored")
        if c.truncated_rows:
            notes.append(f"{c.run}: {c.truncated_rows} lines below depth {results.settings.depth} ignored")
        if c.dropped_unjudged:
            notes.append(f"{c.run}: {c.dropped_unjudged} unjudged docs removed (judged only)")
        ties = getattr(results.settings, "ties", "trec_eval")
        if c.ties:
            notes.append(f"{c.run}: {_plural(c.ties, 'group')} of tied scores, " + _TIE_NOTES[ties])
    ties = getattr(results.settings, "ties", "trec_eval")
    rule = "ties by doc id desc (trec_eval)" if ties == "trec_eval" else f"ties {ties} (--ties)"
    notes.append(f"rules: {rule}; missing queries: "
                 f"{results.settings.missing}; nDCG gain linear unless gain=exp; ideal from all judgments")
    return notes


_TIE_NOTES = {
    "trec_eval": "broken by doc id descending",
    "optimistic": "ordered higher grade first (--ties optimistic)",
    "pessimistic": "ordered lower grade first (--ties pessimistic)",
    "expected": "each value the mean over every order within them (--ties expected)",
    "rank": "ordered by the run's rank column (--ties rank)",
}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def results_rows(results: Any, per_query: bool = False) -> tuple[list[dict[str, Any]], dict[tuple[int, str], str]]:
    """Rows of the results table (counts as integers) and the best value per column in bold."""
    rows = results.to_dicts(per_query=per_query)
    styles = {}
    if not per_query and len(rows) > 1:
        for m in results.measures:
            if m.spec.bounds is None:
                continue
            values = [row[str(m)] for row in rows]
            best = max(values) if m.spec.higher_is_better else min(values)
            for j, v in enumerate(values):
                if v == best:
                    styles[(j, str(m))] = "bold"
    for row in rows:
        for m in results.measures:
            if m.spec.aggregate == "sum":
                row[str(m)] = int(row[str(m)])
    return rows, styles


def render_results(results: Any, fmt: str, *, per_query: bool = False, digits: int = 4,
                   notes: Any = (), color: bool = False, title: str | None = None,
                   width: int | None = None) -> str:
    """The results table: one row per run (or per run and query), best value per column in bold;
    CSV/TSV run rows end with the run's and the qrels' content signatures
    (:func:`~serpeval.core.fingerprints.content_signature`)."""
    from serpeval.report.table import render

    rows, styles = results_rows(results, per_query)
    if fmt in ("csv", "tsv") and not per_query:   # the inputs' signatures, as two last columns
        settings = results.settings
        for row, run in zip(rows, results.runs, strict=True):
            row["run_signature"] = getattr(run, "signature", "")
            row["qrels_signature"] = getattr(run, "qrels_signature", "") or getattr(settings, "qrels_signature", "")
    return render(rows, fmt, digits=digits, notes=notes, styles=styles, color=color, title=title,
                  width=width)


def add_group_options(p: argparse.ArgumentParser, *, topics: bool = True, gate: bool = False) -> None:
    """``--groups``, ``--group-column``, ``--group-correction``, ``--group-min-queries``
    (and ``--topics`` for ``builtin:length`` where the command has none)."""
    p.add_argument("--groups", metavar="FILE|builtin:NAME",
                   help="per-group breakdown: a file (TSV qid<TAB>group, a query may be in several "
                        "groups; JSONL; Parquet) or builtin:relevant (quartiles of the number of "
                        "relevant docs), builtin:difficulty (baseline score tertiles; regression to "
                        "the mean prone), builtin:length (query words; needs --topics)")
    p.add_argument("--group-column", metavar="COLUMN",
                   help="the column of --groups holding the group (JSONL/Parquet/topics file)")
    from serpeval.stats.registry import correction_names

    choices = ("auto", *correction_names(all_pairs=False)) if gate else correction_names(all_pairs=False)
    p.add_argument("--group-correction", choices=choices, default=choices[0],
                   help="correction across groups (default " + choices[0]
                        + ("; auto: none for non-inferiority, an intersection-union test, holm for "
                           "no-significant-drop" if gate else "") + ")")
    p.add_argument("--group-min-queries", type=POSITIVE_INT, default=10, metavar="N",
                   help="smallest group a test is trusted on" + (" and gated" if gate else "")
                        + " (default 10)")
    if topics:
        p.add_argument("--topics", metavar="FILE", help="query texts (TSV/JSONL) for --groups builtin:length")


def refuse_latex_groups(args: argparse.Namespace) -> None:
    """``--groups`` with ``-f latex`` is refused before any file is read: the per-group
    breakdown has no LaTeX layout (it was dropped from compare's output, and appended as a
    text table to evaluate's LaTeX)."""
    if getattr(args, "groups", None) and getattr(args, "format", None) == "latex":
        raise OptionError("--groups has no LaTeX layout; use -f table, markdown, csv, tsv or json for the "
                          "per-group breakdown (and a separate run without --groups for the LaTeX table).")


def group_topics(args: argparse.Namespace) -> Any:
    """The topics ``{query: text}`` for ``--groups builtin:length`` (None without --topics)."""
    if not getattr(args, "topics", None) or args.groups != "builtin:length":
        return None
    from serpeval.io.topics import read_topics

    return read_topics(args.topics)


def resolve_cli_groups(args: argparse.Namespace, query_ids: Any, qrels: Any,
                       baseline_values: Any = None, baseline_name: str = "", measure: str = "") -> Any:
    """The :class:`~serpeval.comparison.segments.Groups` of ``--groups``."""
    from serpeval.comparison.segments import resolve_groups

    return resolve_groups(args.groups, query_ids=query_ids, qrels=qrels, baseline_values=baseline_values,
                          baseline_name=baseline_name, measure=measure, topics=group_topics(args),
                          column=args.group_column)
