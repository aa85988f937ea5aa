"""Core measures against trec_eval's own reference outputs (test/ of usnistgov/trec_eval).

Every per-topic and ``all`` value that trec_eval prints for a measure the core has must be
equal when printed the same way (4 decimals, counts as integers).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import serpeval
from serpeval.measures.spec import aggregate

# trec_eval output name -> serpeval measure (the rel threshold is set per case)
MEASURES = {
    "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    "map": "AP", "Rprec": "Rprec", "bpref": "Bpref", "recip_rank": "RR",
    "P_5": "P@5", "P_10": "P@10", "P_15": "P@15", "P_20": "P@20", "P_30": "P@30",
    "P_100": "P@100", "P_200": "P@200", "P_500": "P@500", "P_1000": "P@1000",
    "recall_5": "R@5", "recall_10": "R@10", "recall_100": "R@100", "recall_1000": "R@1000",
    "infAP": "infAP", "ndcg": "nDCG", "ndcg_cut_5": "nDCG@5", "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_100": "nDCG@100", "ndcg_cut_1000": "nDCG@1000",
    "map_cut_5": "AP@5", "map_cut_100": "AP@100", "map_cut_1000": "AP@1000",
    "success_1": "Success@1", "success_5": "Success@5", "success_10": "Success@10",
    "set_P": "SetP", "set_recall": "SetR", "set_F": "SetF",
}

CASES = {
    # reference file: (qrels, run, evaluate() options, relevance threshold)
    "out.test.aq": ("qrels.test", "results.test", {}, 1),
    "out.test.aqc": ("qrels.test", "results.trunc", {"missing": "zero"}, 1),
    "out.test.aqcM": ("qrels.test", "results.trunc", {"missing": "zero", "depth": 100}, 1),
    "out.test.aql": ("qrels.rel_level", "results.test", {}, 2),
}


def read_reference(path: Path) -> dict[str, dict[str, str]]:
    values: dict[str, dict[str, str]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        values[name][qid] = value
    return values


def printed(name: str, value: float) -> str:
    return str(int(value)) if name.startswith("num_") else f"{value:.4f}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_core_measures_equal_trec_eval(reference: Path, case: str) -> None:
    qrels, run, options, rel = CASES[case]
    expected = read_reference(reference / case)
    measures = []
    for text in MEASURES.values():
        m = serpeval.parse_measure(text)
        params = {"rel": rel} if m.spec.param("rel") else {}
        measures.append(m.spec.bind(params, m.cutoff, text))
    res = serpeval.evaluate(reference / qrels, reference / run, measures, **options)
    (result,) = res.runs
    compared = 0
    mismatches = []
    for (trec_name, _), measure in zip(MEASURES.items(), measures, strict=True):
        column = result.column(res.measures.index(measure))
        for qid, value in zip(result.query_ids, column, strict=True):
            compared += 1
            if printed(trec_name, value) != expected[trec_name][qid]:
                mismatches.append((trec_name, qid, printed(trec_name, value), expected[trec_name][qid]))
        if trec_name == "num_rel" and options.get("missing") == "zero":
            continue  # trec_eval -c quirk: the 'all' row counts rel > 0 regardless of -l (trec_eval issue)
        compared += 1
        total = measure.aggregate(column)
        if printed(trec_name, total) != expected[trec_name]["all"]:
            mismatches.append((trec_name, "all", printed(trec_name, total), expected[trec_name]["all"]))
    assert not mismatches
    assert compared > 100


def test_gm_map_equals_trec_eval(reference: Path) -> None:
    expected = read_reference(reference / "out.test.aq")
    res = serpeval.evaluate(reference / "qrels.test", reference / "results.test", ["AP"])
    assert f"{aggregate(res.runs[0].column(0), 'gmean'):.4f}" == expected["gm_map"]["all"]
