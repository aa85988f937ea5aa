"""How well ``clicks-to-qrels`` recovers known grades (the README's kappa), and split-half
agreement on the real Yandex click sample.

Simulated log (``serpeval.judgments.clicks.simulated_clicks``): 100 queries with Zipf popularity,
20 documents each, grades 0-3 drawn with P(g) ~ 2^-g, 50,000 impressions, every impression a fresh
noisy ranking (grade + N(0, 1.5)) of which the top 10 are shown, clicks from the ``dbn`` preset
(users' logit shift N(0, 0.5)), seed 0. For each fitted model (DBN, PBM, DCM) and threshold rule,
the agreement of the inferred grades with the true grades on the pairs seen in >= 20 impressions:

- ``calibrated (held out)``: thresholds calibrated (max quadratic kappa) on the true grades of the
  even-numbered half of the queries, agreement measured on the other half;
- ``quantile, true shares``: quantile thresholds at the true grade shares (0.533, 0.8, 0.933);
- ``quantile, equal shares``: the default (0.25, 0.5, 0.75).

Real log: labels inferred independently from the Yandex train and test files (PBM, quantiles at
0.5, 0.8, 0.95, pairs seen in >= 10 impressions in each), their agreement on the pairs both label.

    python bench/clicks_to_qrels.py

Writes ``bench/results/clicks_to_qrels.md``. About a minute on 2 cores.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("SERPEVAL_DATA", HERE.parent.parent / "shared" / "data"))


def main() -> int:
    sys.path.insert(0, str(HERE.parent / "src"))
    from serpeval.judgments.agreement import agreement
    from serpeval.judgments.clicks import clicks_to_qrels, read_click_log, simulated_clicks
    from serpeval.report.table import render

    log, truth = simulated_clicks(100, 50_000, rng=0)
    judged = truth.to_dict()
    queries = sorted(judged)
    calibration = {q: judged[q] for q in queries[::2]}
    held_out = {q: judged[q] for q in queries[1::2]}
    rows = []
    for model in ("dbn", "pbm", "dcm"):
        for rule, options, reference in (
            ("calibrated (held out)", {"calibrate": calibration}, held_out),
            ("quantile, true shares", {"quantiles": [8 / 15, 12 / 15, 14 / 15]}, judged),
            ("quantile, equal shares", {}, judged),
        ):
            inferred = clicks_to_qrels(log, model=model, min_impressions=20, **options)
            pair = agreement([reference, inferred.qrels], resamples=1000, rng=0).pairs[0]
            low, high = pair.intervals["kappa_quadratic"]
            rows.append({"model": model, "thresholds": rule, "pairs": pair.both,
                         "kappa": pair.values["kappa"], "kappa (quadratic)": pair.values["kappa_quadratic"],
                         "95% CI (quadratic)": f"[{low:.3f}, {high:.3f}]",
                         "alpha (ordinal)": pair.values["alpha"]})
    text = render(rows, "markdown", digits=3, title="inferred vs true grades, simulated DBN log")
    real = DATA / "clicks-yandex-wscd2012-sample"
    if real.exists():
        halves = [clicks_to_qrels(read_click_log(real / f"serps.{part}.jsonl.gz"), model="pbm",
                                  min_impressions=10, quantiles=[0.5, 0.8, 0.95]).qrels for part in ("train", "test")]
        pair = agreement(halves, names=["train", "test"], resamples=1000, rng=0).pairs[0]
        low, high = pair.intervals["kappa_quadratic"]
        text += "\n" + render([{"log": "Yandex WSCD 2012 sample", "pairs": pair.both, "kappa": pair.values["kappa"],
                                "kappa (quadratic)": pair.values["kappa_quadratic"],
                                "95% CI (quadratic)": f"[{low:.3f}, {high:.3f}]"}],
                              "markdown", digits=3, title="PBM labels from train vs from test (split half)")
    out = HERE / "results" / "clicks_to_qrels.md"
    out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
