"""Click models fitted by EM on the real Yandex WSCD 2012 sample, judged on held-out impressions.

Fits PBM, DBN, SDBN and DCM on ``serps.train.jsonl.gz`` (35,064 impressions) and reports, on
``serps.test.jsonl.gz`` (21,413 impressions), the mean log-likelihood per impression and the
perplexity (per rank and averaged) against the rank-CTR baseline, plus PBM's fitted position
biases (examination probabilities) and DBN's continuation gamma.

    python bench/click_models_yandex.py

Writes ``bench/results/click_models_yandex.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "clicks-yandex-wscd2012-sample"


def main() -> int:
    sys.path.insert(0, str(HERE.parent / "src"))
    from serpeval.online.clicks import (
        ClickLog,
        evaluate_model,
        fit_dbn,
        fit_dcm,
        fit_pbm,
        rank_ctr_baseline,
    )

    train = ClickLog.read_jsonl(DATA / "serps.train.jsonl.gz")
    test = ClickLog.read_jsonl(DATA / "serps.test.jsonl.gz").encode_like(train)
    rows, fitted = [], {}
    for name, fit in (("rank CTR (baseline)", None), ("PBM", fit_pbm), ("DBN", fit_dbn),
                      ("SDBN", lambda log: fit_dbn(log, gamma=1.0)), ("DCM", fit_dcm)):
        start = time.perf_counter()
        if fit is None:
            model, iterations = rank_ctr_baseline(train), "-"
        else:
            model, report = fit(train)
            iterations = f"{report.iterations}{'' if report.converged else ' (cap)'}"
        seconds = time.perf_counter() - start
        fitted[name] = model
        res = evaluate_model(model, test)
        rows.append(f"| {name} | {res['log_likelihood']:.4f} | {res['perplexity']:.4f} | "
                    f"{' '.join(f'{p:.3f}' for p in res['perplexity_by_rank'])} | {iterations} | {seconds:.1f} |")
    pbm, dbn = fitted["PBM"], fitted["DBN"]
    text = "\n".join([
        "# Click models on the Yandex WSCD 2012 sample (bench/click_models_yandex.py)", "",
        f"Train {len(train):,} impressions, test {len(test):,} ({test.counts['unseen_cells']:,} "
        "held-out (query, doc) cells unseen in training get the Beta(1, 1) prior mean). "
        "Log-likelihood: mean natural log of each test impression's click vector; perplexity: "
        "2^-(mean log2 P(observed click at rank r)) from unconditional click probabilities, "
        "averaged over ranks 1-10 (lower is better).", "",
        "| model | log-likelihood | perplexity | perplexity by rank 1..10 | EM iterations | fit s |",
        "|---|---:|---:|---|---:|---:|", *rows, "",
        "PBM examination by rank (position bias): "
        + ", ".join(f"{p:.3f}" for p in pbm.examination) + ".",
        f"DBN continuation gamma: {dbn.gamma:.3f}.", ""])
    print(text)
    (HERE / "results" / "click_models_yandex.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
