"""The production shape next to the research shape: serpeval (CLI and API), pytrec_eval, ranx,
the C trec_eval and Arrow's read floor side by side in one run, plus where serpeval's time goes.

Workloads (generated deterministically by ``bench/data.py``, git-ignored under ``bench/.data``):

* ``Q1M``: 1,000,000 queries x 10 docs (10M run lines, 6M qrels lines): the production shape;
* ``M``: 10,000 queries x 1,000 docs (10M run lines, 300k qrels lines): the research shape.

Every tool evaluates nDCG@10, AP, P@10, R@100, RR in a fresh process (import, parse both
files, evaluate, print the means); repetitions go round-robin over the tools so that all see
the same machine load; wall time, CPU time and peak RSS are the child's own, read by a small
launcher (``bench/peak.py``: ``ru_maxrss`` from the launcher's ``wait4``, the true high-water
mark, which polling with psutil can miss, and not floored by this large parent's own peak,
which Linux would otherwise carry into every child it spawns), medians reported. ranx gets
one untimed warm-up per workload (its numba cache); the
C ``trec_eval`` (``--trec-eval PATH`` or ``$SERPEVAL_TREC_EVAL``; skipped with a note when
absent) is quadratic in the number of queries, so it is stopped after ``--cap`` seconds.

The stage profile runs serpeval's CLI in a fresh process with timers around the hot-path
functions (exclusive time: a stage's time excludes the stages it calls) and reports the
median seconds per stage: read, encode ids, rank (sort), join with qrels, measures, output,
and the rest (imports, argument parsing, other glue).

``--many N`` also times ``serpeval evaluate QRELS RUN x N`` (the M run N times) against N
fresh reads of the run, and reports peak memory for 1 and N runs.

    python bench/bench_production.py --repeat 3
    python bench/bench_production.py --shapes Q1M --tools serpeval,profile --repeat 5

Writes ``bench/results/production.md`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_core import CHILD, MEASURES  # noqa: E402
from data import generate  # noqa: E402
from peak import Done, spawn  # noqa: E402

SHAPES = {"Q1M": (1_000_000, 10), "M": (10_000, 1_000)}
SLOW = {"pytrec_eval", "ranx", "trec_eval (C)"}
TOOLS = ["serpeval", "serpeval (Python API)", "pytrec_eval", "ranx", "trec_eval (C)", "floor (Arrow CSV tokenize)"]

PROFILE_CHILD = """
import json, sys, time
STAGES = {
    "read": [("serpeval.io.trec", "read_trec_run"), ("serpeval.io.trec", "read_trec_qrels")],
    "encode ids": [("serpeval.core.id_codes", "codes_in"), ("serpeval.core.id_codes", "factorize"),
                   ("serpeval.core.fingerprints", "fingerprint"), ("serpeval.core.duplicates", "find_duplicate"),
                   ("serpeval.core.fingerprints", "pair_key"), ("serpeval.core.fingerprints", "doc_pair_keys")],
    "rank (sort)": [("serpeval.core.order", "sort_order")],
    "join with qrels": [("serpeval.ranking", n) for n in ("index_qrels", "_lookup_grades", "_match_grades",
                                                          "_check_duplicates", "_count_ties")]
                       + [("serpeval.core.hash_index", "KeyTable"), ("serpeval.core.hash_index", "grades_in_groups"),
                          ("serpeval.core.duplicates", "grouped_duplicate")]
                       + [("serpeval.core.native", n) for n in ("Groups", "first_repeat", "sort_descending")],
    "output": [("serpeval.cli.offline", "coverage_notes"), ("serpeval.core.strict_json", "dumps"),
               ("serpeval.cli.common", "write_output")],
}
spent = {name: 0.0 for name in [*STAGES, "measures"]}
cpu = dict(spent)
stack = []

def timed(stage, fn):
    def wrapper(*args, **kwargs):
        start, start_cpu = time.perf_counter(), time.process_time()
        stack.append([0.0, 0.0])
        try:
            return fn(*args, **kwargs)
        finally:
            inner, inner_cpu = stack.pop()
            total, total_cpu = time.perf_counter() - start, time.process_time() - start_cpu
            spent[stage] += total - inner
            cpu[stage] += total_cpu - inner_cpu
            if stack:
                stack[-1][0] += total
                stack[-1][1] += total_cpu
    return wrapper

import importlib
for name in ("serpeval.cli.app", "serpeval.cli.cmd_evaluate", "serpeval.cli.offline", "serpeval.io",
             "serpeval.io.trec", "serpeval.ranking", "serpeval.evaluation.evaluate", "serpeval.core.strict_json",
             "serpeval.cli.common"):
    importlib.import_module(name)
for stage, names in STAGES.items():
    for module_name, attr in names:
        original = getattr(importlib.import_module(module_name), attr, None)
        if original is None:
            continue
        if isinstance(original, type):  # a class: time its construction
            original.__init__ = timed(stage, original.__init__)
            continue
        wrapped = timed(stage, original)
        for m in [m for n, m in list(sys.modules.items()) if n.startswith("serpeval")]:
            for key, value in list(vars(m).items()):
                if value is original:
                    setattr(m, key, wrapped)
from serpeval.measures import Measure
Measure.compute = timed("measures", Measure.compute)
start, start_cpu = time.perf_counter(), time.process_time()
from serpeval.cli import main
sys.argv = ["/usr/bin/serpeval", "evaluate", sys.argv[1], sys.argv[2], "-m", "MEASURES", "-f", "json", "-o",
            sys.argv[3]]
try:
    main()
except SystemExit:
    pass
for table, total in ((spent, time.perf_counter() - start), (cpu, time.process_time() - start_cpu)):
    table["rest"] = total - sum(table.values())
    table["total (in process)"] = total
print(json.dumps({"wall": spent, "cpu": cpu}))
"""


def run_tool(tool: str, qrels: Path, run: Path, binary: str | None, cap: float) -> tuple[Done, dict]:
    """One fresh process of ``tool`` and the means it printed."""
    if tool == "trec_eval (C)":
        names = ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.10", "-m", "recall.100", "-m", "recip_rank"]
        done = spawn([str(binary), *names, str(qrels), str(run)], cap)
        if done.stopped:
            return done, {}
        keys = {"ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10", "recall_100": "R@100", "recip_rank": "RR"}
        fields = (line.split() for line in done.out.splitlines())
        return done, {keys[f[0]]: float(f[2]) for f in fields if f and f[0] in keys}
    done = spawn([sys.executable, "-c", CHILD[tool].format(measures=MEASURES), str(qrels), str(run)], cap)
    if done.stopped:
        return done, {}
    text = done.out.strip()
    payload = json.loads(text) if text.startswith("{\n") else json.loads(text.splitlines()[-1])
    if "results" in payload:
        payload = {k: v for k, v in payload["results"][0].items() if k in MEASURES}
    return done, payload


def profile(qrels: Path, run: Path) -> tuple[Done, dict[str, float]]:
    """Stage seconds of one fresh ``serpeval evaluate`` process."""
    code = PROFILE_CHILD.replace('"MEASURES"', repr(",".join(MEASURES)))
    out_file = HERE / ".data" / "profile_out.json"
    done = spawn([sys.executable, "-c", code, str(qrels), str(run), str(out_file)], None)
    out_file.unlink(missing_ok=True)
    return done, json.loads(done.out.strip().splitlines()[-1])


def many_runs(qrels: Path, run: Path, n: int, repeat: int) -> list[str]:
    """``evaluate QRELS RUN x n`` against n fresh reads of RUN (and one run), medians."""
    evaluate = ("import sys\nfrom serpeval.cli import main\n"
                "sys.argv = ['serpeval', 'evaluate', *sys.argv[1:], '-f', 'json', '-o', '/dev/null']\nmain()\n")
    # under the CLI's memory policy, as `serpeval evaluate` runs
    read = ("import sys\nfrom serpeval.cli.memory import keep_freed_memory\nkeep_freed_memory()\n"
            "from serpeval.io import read_run\nfor p in sys.argv[1:]:\n    read_run(p)\n")
    rows: dict[str, list[Done]] = {}
    for _ in range(repeat):
        for label, code, argv in (
            (f"evaluate QRELS RUN x {n}", evaluate, [str(qrels)] + [str(run)] * n),
            ("evaluate QRELS RUN x 1", evaluate, [str(qrels), str(run)]),
            (f"read RUN x {n} (read_run only)", read, [str(run)] * n),
        ):
            done = spawn([sys.executable, "-c", code, *argv], None)
            rows.setdefault(label, []).append(done)
            print(f"  {label:34s} {done.wall:7.2f} s {done.cpu:7.2f} cpu s {done.peak:7.0f} MB", flush=True)
    med = {label: (statistics.median(d.wall for d in runs), statistics.median(d.cpu for d in runs),
                   max(d.peak for d in runs)) for label, runs in rows.items()}
    many, reads = med[f"evaluate QRELS RUN x {n}"], med[f"read RUN x {n} (read_run only)"]
    lines = [f"## Many runs, one qrels: {n} runs of the M shape (the same file {n} times), median of {repeat}", "",
             "| command | median wall s | median CPU s | peak MB |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {label} | {w:.2f} | {c:.2f} | {p:.0f} |" for label, (w, c, p) in med.items()]
    lines += ["", f"evaluate x {n} / read x {n}: {many[0] / reads[0]:.2f} wall, {many[1] / reads[1]:.2f} CPU "
              f"(target <= 1.2); peak with {n} runs / peak with 1: {many[2] / med['evaluate QRELS RUN x 1'][2]:.2f}"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="Q1M,M", help="comma-separated: Q1M, M")
    parser.add_argument("--tools", default=",".join([*TOOLS, "profile"]),
                        help="comma-separated tools (and 'profile' for serpeval's stages)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per tool (serpeval, floor)")
    parser.add_argument("--peer-repeat", type=int, default=1,
                        help="fresh processes for the slow peers (pytrec_eval, ranx, trec_eval); default 1")
    parser.add_argument("--trec-eval", default=os.environ.get("SERPEVAL_TREC_EVAL") or shutil.which("trec_eval.c"),
                        help="path of the C trec_eval binary (default $SERPEVAL_TREC_EVAL)")
    parser.add_argument("--cap", type=float, default=300.0, help="stop any tool after this many seconds")
    parser.add_argument("--many", type=int, default=0, help="also time evaluate with the M run N times")
    parser.add_argument("--many-repeat", type=int, default=1, help="repetitions of the --many comparison")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "production.md")
    parser.add_argument("--src", type=Path, help="run serpeval from this source tree (PYTHONPATH), e.g. a "
                        "`git archive` of an older commit, for before/after numbers")
    args = parser.parse_args()
    if args.src is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(args.src.resolve()), os.environ.get("PYTHONPATH", "")])
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    notes = []
    if "trec_eval (C)" in tools and not (args.trec_eval and Path(args.trec_eval).is_file()):
        tools.remove("trec_eval (C)")
        notes.append("trec_eval (C): skipped, no binary (pass --trec-eval PATH or set $SERPEVAL_TREC_EVAL; "
                     "build it from github:usnistgov/trec_eval).")
    lines = [f"# Production shape vs research shape ({os.cpu_count()} cores, shared machine, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"Fresh process per tool and repetition, round-robin, median of {args.repeat} "
             f"({args.peer_repeat} for pytrec_eval, ranx, trec_eval); peak = the child's own ru_maxrss, "
             "read by a small launcher (bench/peak.py), not floored by the bench process's size. "
             f"Measures: {', '.join(MEASURES)}.", ""]
    warmed = False
    for shape in [s.strip() for s in args.shapes.split(",") if s.strip()]:
        queries, docs = SHAPES[shape]
        qrels, run = generate(queries, docs)
        lines_run = queries * docs
        print(f"== {shape}: {queries:,} x {docs:,}", flush=True)
        measured = [t for t in tools if t != "profile"]
        if "ranx" in measured and not warmed:
            warm_qrels, warm_run = generate(100, 100)  # numba's cache warm-up (any shape), not timed
            run_tool("ranx", warm_qrels, warm_run, args.trec_eval, args.cap)
            warmed = True
        runs: dict[str, list[Done]] = {t: [] for t in measured}
        means: dict[str, dict] = {}
        stopped: set[str] = set()
        stages: list[dict[str, float]] = []
        for i in range(args.repeat):
            for tool in measured:
                if tool in stopped or (tool in SLOW and i >= args.peer_repeat):
                    continue
                done, out = run_tool(tool, qrels, run, args.trec_eval, args.cap)
                if done.stopped:
                    stopped.add(tool)
                    print(f"  {tool:28s} stopped after {args.cap:.0f} s", flush=True)
                    continue
                runs[tool].append(done)
                means[tool] = out
                print(f"  {tool:28s} {done.wall:7.2f} s {done.cpu:7.2f} cpu s {done.peak:7.0f} MB", flush=True)
            if "profile" in tools:
                done, spent = profile(qrels, run)
                stages.append(spent)
                print(f"  {'profile':28s} {done.wall:7.2f} s {done.cpu:7.2f} cpu s {done.peak:7.0f} MB  cpu: "
                      + ", ".join(f"{k} {v:.2f}" for k, v in spent["cpu"].items()), flush=True)
            print(f"  -- repetition {i + 1} done", flush=True)
        ours = statistics.median(d.wall for d in runs["serpeval"]) if runs.get("serpeval") else float("nan")
        our_cpu = statistics.median(d.cpu for d in runs["serpeval"]) if runs.get("serpeval") else float("nan")
        lines += [f"## {shape}: {queries:,} queries x {docs:,} docs ({lines_run / 1e6:.0f}M run lines, "
                  f"{run.stat().st_size / 1e6:.0f} MB run, {qrels.stat().st_size / 1e6:.0f} MB qrels)", "",
                  "| tool | runs | median wall s | min wall s | median CPU s | peak MB | wall / serpeval CLI | "
                  "CPU / serpeval CLI |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for tool in measured:
            done_runs = runs[tool]
            if tool in stopped and not done_runs:
                lines.append(f"| {tool} | 1 | > {args.cap:.0f} (stopped) | | | | > {args.cap / ours:.0f} | |")
            elif done_runs:
                wall = statistics.median(d.wall for d in done_runs)
                cpu = statistics.median(d.cpu for d in done_runs)
                lines.append(f"| {tool} | {len(done_runs)} | {wall:.2f} | {min(d.wall for d in done_runs):.2f} | "
                             f"{cpu:.2f} | {statistics.median(d.peak for d in done_runs):.0f} | {wall / ours:.2f} | "
                             f"{cpu / our_cpu:.2f} |")
        if "serpeval" in means:
            agree = [f"{tool}: {max(abs(means[tool][m] - means['serpeval'][m]) for m in MEASURES):.1e}"
                     for tool in means if tool != "serpeval" and "floor" not in tool and means[tool]]
            lines += ["", "Max |difference| of the means from serpeval's: " + ", ".join(agree)]
        if stages:
            keys = list(stages[0]["cpu"])
            lines += ["", f"Stage profile of `serpeval evaluate` (seconds, median of {len(stages)} fresh processes; "
                      "exclusive times: a stage excludes the stages it calls; 'rest' = imports, argument parsing, "
                      "building the results, glue):", "",
                      "| clock | " + " | ".join(keys) + " |", "| --- |" + " ---: |" * len(keys)]
            for clock in ("cpu", "wall"):
                lines.append(f"| {clock} | " + " | ".join(f"{statistics.median(s[clock][k] for s in stages):.2f}"
                                                          for k in keys) + " |")
        lines.append("")
    if args.many:
        qrels, run = generate(*SHAPES["M"])
        print(f"== many runs: {args.many}", flush=True)
        lines += [*many_runs(qrels, run, args.many, args.many_repeat), ""]
    lines += notes
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
