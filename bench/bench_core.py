"""End-to-end speed and peak memory: serpeval vs ranx vs pytrec_eval, and the parsing floor.

Each tool runs in a fresh process (import + parse qrels and run + evaluate nDCG@10, AP,
P@10, R@100, RR) on the same generated files: serpeval as its command line
(``serpeval evaluate ... -f json``) and through its Python API, ranx and pytrec_eval as the
Python scripts their users write; wall time and peak RSS (the child's own ``ru_maxrss``,
read by bench/peak.py's small launcher) are taken by this parent. ranx gets one untimed
warm-up run first so that its numba cache is on disk (its per-process JIT load is still
counted, as users pay it). The "floor" is Arrow's CSV reader tokenizing the run into
(query, doc, score) columns, the least any reader must do.

    python bench/data.py --queries 10000 --docs 1000
    python bench/bench_core.py --queries 10000 --docs 1000 --repeat 5

Prints a table of medians and writes it to ``bench/results/core_<q>x<d>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import generate  # noqa: E402
from peak import spawn  # noqa: E402

MEASURES = ["nDCG@10", "AP", "P@10", "R@100", "RR"]

CHILD = {
    "serpeval": """
import sys
from serpeval.cli import main
qrels, run = sys.argv[1:3]
sys.argv = ["/usr/bin/serpeval", "evaluate", qrels, run, "-m", ",".join({measures}), "-f", "json"]
main()
""",
    "serpeval (Python API)": """
import serpeval, json, sys
res = serpeval.evaluate(sys.argv[1], sys.argv[2], {measures})
print(json.dumps(res.means(res.run_names[0])))
""",
    "pytrec_eval": """
import json, sys
import pytrec_eval
def load(path, n):
    out = {{}}
    with open(path) as f:
        for line in f:
            parts = line.split()
            out.setdefault(parts[0], {{}})[parts[2]] = int(parts[3]) if n == 4 else float(parts[4])
    return out
qrels, run = load(sys.argv[1], 4), load(sys.argv[2], 6)
names = {{"ndcg_cut.10": "nDCG@10", "map": "AP", "P.10": "P@10", "recall.100": "R@100", "recip_rank": "RR"}}
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
keys = {{"ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10", "recall_100": "R@100", "recip_rank": "RR"}}
print(json.dumps({{v: sum(q[k] for q in per_query.values()) / len(per_query) for k, v in keys.items()}}))
""",
    "ranx": """
import json, sys, warnings
warnings.simplefilter("ignore")
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
names = {{"ndcg@10": "nDCG@10", "map": "AP", "precision@10": "P@10", "recall@100": "R@100", "mrr": "RR"}}
res = evaluate(qrels, run, list(names))
print(json.dumps({{names[k]: float(v) for k, v in res.items()}}))
""",
    "floor (Arrow CSV tokenize)": """
import json, sys
import pyarrow as pa, pyarrow.csv as csv
read = csv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"], block_size=1 << 24)
parse = csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False)
convert = csv.ConvertOptions(column_types={{"q": pa.string(), "d": pa.string(), "s": pa.float64()}},
                             include_columns=["q", "d", "s"])
table = csv.read_csv(sys.argv[2], read_options=read, parse_options=parse, convert_options=convert)
print(json.dumps({{"rows": table.num_rows}}))
""",
}


def run_child(tool: str, qrels: Path, run: Path) -> tuple[float, float, dict]:
    """Wall seconds, peak RSS in MB and the printed JSON of one fresh process (its own peak,
    through bench/peak.py's launcher: not floored by this process's size after ``generate``)."""
    code = CHILD[tool].format(measures=MEASURES)
    try:
        done = spawn([sys.executable, "-c", code, str(qrels), str(run)])
    except RuntimeError as error:
        raise RuntimeError(f"{tool} failed:\n{error}") from None
    out = done.out
    payload = json.loads(out) if out.lstrip().startswith("{\n") else json.loads(out.strip().splitlines()[-1])
    if "results" in payload:  # the CLI's JSON: the first run's row
        payload = {k: v for k, v in payload["results"][0].items() if k in MEASURES}
    return done.wall, done.peak, payload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tools", default=",".join(CHILD))
    args = parser.parse_args()
    qrels, run = generate(args.queries, args.docs)
    tools = [t.strip() for t in args.tools.split(",")]
    if "ranx" in tools:
        run_child("ranx", qrels, run)  # warm the numba cache (not timed)
    rows = {}
    values = {}
    for tool in tools:
        walls, peaks = [], []
        for _ in range(args.repeat):
            wall, peak, out = run_child(tool, qrels, run)
            walls.append(wall)
            peaks.append(peak)
            values[tool] = out
            print(f"{tool:28s} {wall:7.2f} s  {peak:7.0f} MB", flush=True)
        rows[tool] = (statistics.median(walls), min(walls), max(peaks))
    ours = rows.get("serpeval", (float("nan"),) * 3)[0]
    lines = [
        f"End-to-end on {args.queries:,} queries x {args.docs:,} docs ({run.stat().st_size / 1e6:.0f} MB run), "
        f"fresh process each, median of {args.repeat} (machine: {os.cpu_count()} cores, shared)",
        "",
        "| tool | median s | min s | peak MB | time / serpeval's |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for tool, (median, low, peak) in rows.items():
        lines.append(f"| {tool} | {median:.2f} | {low:.2f} | {peak:.0f} | {median / ours:.2f} |")
    if "serpeval" in values:
        lines += ["", "Means agree: " + ", ".join(
            f"{tool}: max |diff| {max(abs(values[tool][m] - values['serpeval'][m]) for m in MEASURES):.1e}"
            for tool in values if tool not in ("serpeval",) and "floor" not in tool)]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"core_{args.queries}x{args.docs}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
