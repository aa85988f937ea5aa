"""The diversity measures against NIST's ndeval program itself (``ndeval -traditional``).

The tests compare serpeval with pyndeval (ndeval's C code wrapped for Python), which breaks
tied scores by doc id ascending, so they hand it serpeval's order. This check runs the real
command-line program on files, ties included: compile ``ndeval.c`` (NIST's, version 4.5;
pyndeval ships a copy at ``src/ndeval.c`` of github.com/seanmacavaney/pyndeval) and give its
path. ``-traditional`` ranks by score, ties by doc id descending: serpeval's one rule.

    python bench/diversity_ndeval_c.py /path/to/ndeval.c --collections 100

For each generated collection (the shapes of ``tests/measures/test_diversity.py``: queries
without relevant subtopics, documents relevant to several subtopics, graded and zero
judgments, tied scores, short runs, unjudged documents and queries, Unicode ids) it writes
the qrels (numeric topics and subtopics, as ndeval requires) and the run, runs ndeval, and
compares every printed per-topic value and every mean (``amean``) with serpeval's to
ndeval's 6 decimals. nNRBP of a topic without a relevant subtopic is ndeval's ``nan`` (0/0)
and serpeval's 0; those are counted as equal and its mean is left out. Prints
``N/N printed values equal``; exits 1 when one differs.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

COLUMNS = {
    **{f"{nd}@{k}": f"{ours}@{k}" for nd, ours in (("ERR-IA", "ERR_IA"), ("nERR-IA", "nERR_IA"),
                                                    ("alpha-DCG", "alpha_DCG"), ("alpha-nDCG", "alpha_nDCG"),
                                                    ("P-IA", "P_IA"), ("strec", "StRecall")) for k in (5, 10, 20)},
    "NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA",
}


def check(ndeval: Path, seed: int, folder: Path) -> tuple[int, int]:
    """Values equal and values compared for one generated collection."""
    from tests.measures.test_diversity import collection

    import serpeval
    from serpeval.core.subtopics import subtopic_qrels_from_rows

    rng = random.Random(seed)
    qrels, run = collection(seed)
    topics = {q: str(i + 1) for i, q in enumerate(dict.fromkeys([r[0] for r in qrels] + [r[0] for r in run]))}
    subtopics: dict[str, str] = {}
    rows = [(topics[q], subtopics.setdefault(s, str(len(subtopics) + 1)), d, max(g, 0)) for q, s, d, g in qrels]
    rows.sort(key=lambda r: (int(r[0]), int(r[1])))  # subtopic numbers first appear in increasing order
    ranked = [(topics[q], d, score) for q, d, score in run]
    rng.shuffle(ranked)  # -traditional ignores the file order and the rank column
    rank: dict[str, int] = {}
    lines = []
    for q, d, score in ranked:
        rank[q] = rank.get(q, 0) + 1
        lines.append(f"{q} Q0 {d} {rank[q]} {score!r} tag\n")
    (folder / "qrels.txt").write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in rows), encoding="utf-8")
    (folder / "run.txt").write_text("".join(lines), encoding="utf-8")
    out = subprocess.run([str(ndeval), "-traditional", str(folder / "qrels.txt"), str(folder / "run.txt")],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    header = out[0].split(",")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = serpeval.evaluate(subtopic_qrels_from_rows(rows), folder / "run.txt", list(COLUMNS.values()))
    (result,) = res.runs
    evaluated = set(result.query_ids.tolist())
    equal = compared = 0
    for line in out[1:]:
        fields = line.split(",")
        topic = fields[1]
        if topic != "amean" and topic not in evaluated:
            continue  # ndeval prints run topics without judgments as zeros; serpeval ignores them
        for name, printed in zip(header[2:], fields[2:], strict=True):
            if topic == "amean":
                if name == "nNRBP" and "nan" in printed:
                    continue
                ours = res.means(result.name)[COLUMNS[name]]
            else:
                ours = res.per_query(result.name, COLUMNS[name])[topic]
            compared += 1
            same = ours == 0.0 if "nan" in printed else f"{ours:.6f}" == printed
            equal += same
            if not same:
                print(f"collection {seed}, topic {topic}, {name}: ndeval {printed}, serpeval {ours!r}")
    return equal, compared


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ndeval_c", type=Path, help="NIST's ndeval.c")
    parser.add_argument("--collections", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        binary = folder / "ndeval"
        subprocess.run(["cc", "-O2", "-o", str(binary), str(args.ndeval_c), "-lm"], check=True)
        equal = compared = 0
        for seed in range(args.collections):
            e, c = check(binary, seed, folder)
            equal, compared = equal + e, compared + c
    print(f"{equal}/{compared} printed values equal (ndeval -traditional, {args.collections} collections)")
    return 0 if equal == compared else 1


if __name__ == "__main__":
    sys.exit(main())
