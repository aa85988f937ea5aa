"""Regenerate the trec_eval conformance fixtures (inputs and the binaries' outputs).

Not a test: run it by hand with the two reference binaries, built outside this repository
(nothing here builds them)::

    python tests/trec_eval/make_fixtures.py --trec-eval-10 /path/to/trec_eval-10.0 \\
        --trec-eval-9 /path/to/trec_eval-9.0.8

It writes ``fixtures/cases/<case>/{qrels,run}`` (small generated inputs covering the edge
cases of trec_eval's rules, :mod:`serpeval.trec_eval.compute`) and ``fixtures/expected.jsonl.gz``: one record per
(case, version, command) with the exit status and the exact stdout bytes. Every input is
generated from fixed seeds, so rerunning it reproduces the same files.

One adjustment: trec_eval 10.0 exits 4 when a qrels topic is missing from the run and -c
is not given (a regression serpeval does not copy: it skips such topics, as 9.0.8 does).
For those commands the 10.0 output is produced on the qrels restricted to the run's topics,
which is what skipping means; the record says so (``"qrels": "restricted"``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent / "fixtures"
CASES = HERE / "cases"

COMMON = [
    [],
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-q", "-J", "-m", "all_trec"],
    ["-q", "-l2", "-m", "all_trec"],
    ["-q", "-M", "25", "-m", "all_trec"],
    ["-q", "-c", "-J", "-M30", "-l", "2", "-m", "all_trec"],
    ["-n", "-m", "set", "-m", "official"],
]
PARAMS = ["-q", "-m", "P.3,7", "-m", "ndcg.1=3,2=9", "-m", "G.2=5", "-m", "ndcg_rel.0=1,3=5",
          "-m", "Rndcg.1=2", "-m", "set_F.0.5", "-m", "11pt_avg.0.2,0.5,0.8",
          "-m", "iprec_at_recall.0.33,0.66", "-m", "Rprec_mult.0.5,1.5",
          "-m", "utility.2,-1,-0.5,0.1", "-N", "1000", "-m", "success.2,4", "-m", "relstring.15",
          "-m", "yaap", "-m", "map_cut.7,70", "-m", "relative_P.4", "-m", "ndcg_cut.4,40"]
# 10.0 only. dcg, ideal_dcg and ndcg share one parameter block in 10.0 (m_ndcg.c), so a
# parameter given to one leaks into the others and two parameterised ones crash it: each
# is exercised without the others' parameters. rbp reads uninitialised variables in 10.0;
# inside -m all_trec it follows the clean definition, so it is only recorded there.
NEW_10 = [["-q", "-m", "dcg", "-m", "ideal_dcg", "-m", "ndcg", "-m", "rbp_resid.p=0.8",
           "-m", "unj.3,7"],
          ["-q", "-m", "ideal_dcg.2=4"],
          ["-q", "-m", "all_trec", "-m", "rbp.p=0.95,3=-1,1=0.5"]]
LOW_LEVEL = ["-q", "-l0", "-m", "all_trec"]
# Parameter spellings trec_eval reads its own way (issue 27): a gain pair whose level is not
# an integer (10.0 ignores it, 9.0.8 reads atol("x") = 0), relstring of length 0, a cutoff
# list item "1.5" (atol: 1), digits of other scripts (C's isdigit is ASCII: atol("١٠") is 0,
# a negative-cutoff error for P), and a non-ASCII name padded by printf to 22 *bytes*.
# Each is its own command, since one refusal ends the whole command.
HOSTILE = [["-q", "-m", "ndcg.x=1"], ["-q", "-m", "relstring.0"], ["-q", "-m", "success.1.5"],
           ["-q", "-m", "P.1_0"], ["-q", "-m", "P.\u0661\u0660"], ["-q", "-m", "iprec_at_recall.\u0660.5"],
           ["-q", "-m", "utility.\u0661,-1,0,0"], ["-q", "-m", "ndcg.\u0661=3,2=5"],
           ["-q", "-l\u0662", "-m", "P.1,5"]]
HOSTILE_CASES = ("graded", "missing")


# ----------------------------------------------------------------------------- inputs


def _write(case: str, qrels: list[str], run: list[str], eol: str = "\n") -> None:
    folder = CASES / case
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").write_bytes(("\n".join(qrels) + "\n").encode())
    (folder / "run").write_bytes((eol.join(run) + eol).encode())


def _random_case(rng: np.random.Generator, topics: list[str], n_docs: int, grades: list[int],
                 score_digits: int, tag: str = "run") -> tuple[list[str], list[str]]:
    qrels, run = [], []
    for t in topics:
        pool = [f"d{i}" for i in range(int(n_docs * 1.5))]
        judged = rng.choice(pool, size=n_docs // 2, replace=False)
        for doc in judged:
            qrels.append(f"{t} 0 {doc} {rng.choice(grades)}")
        for doc in rng.choice(pool, size=n_docs, replace=False):
            score = round(float(rng.normal(5, 2)), score_digits)
            run.append(f"{t} Q0 {doc} 1 {score} {tag}")
    return qrels, run


def make_inputs() -> list[str]:
    """Write every case's qrels and run; return the case names."""
    rng = np.random.default_rng(20260318)
    cases = []

    # Heavy ties (one decimal), grades -1..3: tie order decides P@k, RR, AP, nDCG.
    q, r = _random_case(rng, ["101", "102", "103", "104"], 60, [-1, 0, 0, 1, 1, 2, 3], 0)
    _write("ties", q, r)
    cases.append("ties")

    # Graded 0..4 with negative grades: gain measures, rbp normalisation, G, ndcg_rel, Rndcg.
    q, r = _random_case(rng, ["201", "202", "203", "204", "205"], 80, [-2, -1, 0, 0, 1, 2, 3, 4], 3)
    _write("graded", q, r)
    cases.append("graded")

    # Random, mostly distinct scores, larger: broad coverage of every measure.
    q, r = _random_case(rng, [str(300 + i) for i in range(8)], 120, [0, 0, 0, 1, 1, 2, 3, -1], 6)
    _write("random", q, r)
    cases.append("random")

    # Scores equal in float32 but not in float64, odd spellings of numbers, docno tie order.
    qrels = [f"401 0 {d} {g}" for d, g in [("d9", 1), ("d10", 0), ("doc_a", 2), ("doc_b", 0),
                                            ("D1", 1), ("d1", 0), ("é1", 1), ("e1", 0),
                                            ("x1", 1), ("x2", 1), ("x3", 0)]]
    qrels += [f"402 0 n{i} {i % 3}" for i in range(12)]
    run = [f"401 Q0 {d} {k} {s} f32" for k, (d, s) in enumerate([
        ("d9", "0.1234567890123"), ("d10", "0.1234567890124"), ("doc_a", "0.12345679"),
        ("doc_b", "1.00000000000000001"), ("D1", "1.0"), ("d1", "1"), ("é1", "1.5e-03"),
        ("e1", "+1.5e-3"), ("x1", "-0.0"), ("x2", "0.0"), ("x3", "16777217"), ("x4", "16777216"),
        ("x5", "1e3"), ("x6", "999.99999999999")], start=1)]
    run += [f"402 Q0 n{i} 1 {0.5 + i * 1e-9!r} f32" for i in range(12)]
    _write("float32", qrels, run)
    cases.append("float32")

    # Topics on one side only: qrels topics absent from the run, run topics without qrels,
    # a topic with judgments but no relevant doc, one whose retrieved docs are all unjudged.
    qrels = [f"501 0 a{i} {int(i < 3)}" for i in range(8)]
    qrels += [f"502 0 b{i} 0" for i in range(5)]                 # no relevant doc
    qrels += [f"503 0 c{i} {i % 2}" for i in range(6)]           # absent from the run
    qrels += [f"504 0 e{i} {1 + i % 2}" for i in range(4)]       # run retrieves only unjudged
    qrels += [f"505 0 f{i} 1" for i in range(3)]                 # absent from the run
    run = [f"501 Q0 a{i} {i} {10 - i} side" for i in range(6)]
    run += [f"502 Q0 b{i} {i} {5 - i} side" for i in range(3)]
    run += [f"504 Q0 z{i} {i} {3 - i} side" for i in range(4)]
    run += [f"599 Q0 a{i} {i} {1.0} side" for i in range(4)]     # no qrels
    _write("missing", qrels, run)
    cases.append("missing")

    # Very short runs (1-3 docs): cutoffs beyond the end, Rprec with R > n.
    qrels = [f"60{t} 0 s{i} {int(i % 2 == 0) + (t == 3)}" for t in range(1, 5) for i in range(9)]
    run = ["601 Q0 s0 1 1.0 short", "602 Q0 s1 1 2.0 short", "602 Q0 s2 2 1.0 short",
           "603 Q0 s4 1 0.5 short", "603 Q0 s3 2 0.4 short", "603 Q0 zz 3 0.3 short",
           "604 Q0 q 1 7 short"]
    _write("short", qrels, run)
    cases.append("short")

    # Opaque ids: strcmp order of topics (-5 < 003 < 10 < 1e3 < 3 < 9 < A < Q-2 < a < ü1).
    topics = ["003", "3", "-5", "1e3", "Q-2", "a", "ü1", "10", "9", "A"]
    q, r = _random_case(rng, topics, 12, [0, 1, 2, -1], 1, tag="ids")
    _write("ids", q, r)
    cases.append("ids")

    # Layout: CRLF, tabs, runs of blanks, leading blanks, extra columns, garbage rank/iter.
    q, r = _random_case(rng, ["701", "702"], 30, [0, 1, 2], 2, tag="layout")
    r = [("  " if i % 5 == 0 else "") + line.replace(" ", "\t" if i % 3 == 0 else "   ", 2)
         + (" extra cols here" if i % 4 == 0 else "") for i, line in enumerate(r)]
    r = [line.replace(" 1 ", " x ") if i % 7 == 0 else line for i, line in enumerate(r)]
    r.insert(5, "")
    r.insert(9, "   \t ")
    _write("layout", q, r, eol="\r\n")
    cases.append("layout")

    # '#' comment lines in the run: accepted by 10.0, refused (exit 2) by 9.0.8.
    q, r = _random_case(rng, ["801", "802"], 20, [0, 1], 2, tag="comments")
    r = ["# a comment", *r[:10], "  # indented comment", *r[10:]]
    _write("comments", q, r)
    cases.append("comments")

    # A duplicate docno: exit 4, unless -M cuts the second copy away.
    qrels = [f"901 0 u{i} {i % 2}" for i in range(10)]
    run = [f"901 Q0 u{i} {i} {20 - i} dup" for i in range(10)]
    run += ["901 Q0 u1 11 1.0 dup"]
    _write("duplicates", qrels, run)
    cases.append("duplicates")
    return cases


# ----------------------------------------------------------------------------- outputs


def commands(case: str) -> list[tuple[str, list[str]]]:
    """(version, arguments) pairs to record for a case."""
    out = []
    for version in ("10.0", "9.0.8"):
        flag_sets = [*COMMON, PARAMS, *(NEW_10 if version == "10.0" else [])]
        if case == "graded":
            flag_sets.append(LOW_LEVEL)
        if case in HOSTILE_CASES:
            flag_sets += HOSTILE
        if case == "duplicates":
            flag_sets = [["-q", "-m", "all_trec"], ["-q", "-M", "5", "-m", "all_trec"]]
        out += [(version, flags) for flags in flag_sets]
    return out


def run_binary(binary: str, args: list[str], qrels: Path, run: Path) -> tuple[int, bytes]:
    done = subprocess.run([binary, *args, str(qrels), str(run)], capture_output=True, check=False)
    return done.returncode, done.stdout


def restricted_qrels(qrels: Path, run: Path, folder: Path) -> Path:
    run_topics = {line.split()[0] for line in run.read_bytes().decode().splitlines()
                  if line.split() and not line.split()[0].startswith("#")}
    kept = [line for line in qrels.read_text().splitlines() if line.split()[0] in run_topics]
    path = folder / "qrels.restricted"
    path.write_text("\n".join(kept) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trec-eval-10", required=True, help="trec_eval 10.0 binary")
    parser.add_argument("--trec-eval-9", required=True, help="trec_eval 9.0.8 binary (tag v9.0.8)")
    args = parser.parse_args()
    binaries = {"10.0": args.trec_eval_10, "9.0.8": args.trec_eval_9}
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in make_inputs():
            qrels, run = CASES / case / "qrels", CASES / case / "run"
            for version, flags in commands(case):
                used = qrels
                note = "full"
                if version == "10.0" and "-c" not in flags:
                    used = restricted_qrels(qrels, run, Path(tmp))
                    if used.read_text() != qrels.read_text():
                        note = "restricted"
                    else:
                        used = qrels
                rc, stdout = run_binary(binaries[version], flags, used, run)
                records.append({"case": case, "version": version, "args": flags, "rc": rc,
                                "qrels": note, "stdout": stdout.decode("utf-8")})
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    (HERE / "expected.jsonl.gz").write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    print(f"{len(records)} outputs written to {HERE / 'expected.jsonl.gz'}")


if __name__ == "__main__":
    main()
