"""A/B analysis at scale: serpeval on DuckDB against a straightforward pandas implementation.

Generates (once, under ``bench/.data/``) a log of ``--impressions`` search impressions
(nested layout: one Parquet row per page with its click list; 4 pages per user on average),
then analyses CTR, abandonment, clicks@1 and MRR (delta method, clustered by user):

- serpeval: ``analyze_ab(folder)`` - the aggregation runs in DuckDB over the Parquet file;
  no raw row enters Python memory;
- pandas: what a data scientist would write - ``read_parquet`` with the pyarrow backend,
  ``explode`` the click lists, ``groupby`` impression, user and variant, then the same
  delta-method formulas in NumPy.

Every run is a fresh process (``os.wait4`` gives its peak resident memory); wall time is
measured inside the process around the analysis (library imports excluded for both tools),
median of ``--repeat``.
pandas needs the whole log in memory; when ``--pandas-impressions`` is smaller than the big
log, both tools also run on a log of that size (the ratio is measured there) and the pandas
time at full size is extrapolated linearly from two sizes - and said so.

    python bench/ab_scale.py --impressions 100_000_000 --pandas-impressions 10_000_000

Writes ``bench/results/ab_scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
PER_USER = 4.0

SERPEVAL = r"""
import json, sys, time
import ibis, ibis.backends.duckdb, scipy.stats  # imported before the clock, as pandas is
from serpeval.online.experiments import analyze_ab
t = time.perf_counter()
res = analyze_ab(sys.argv[1], metrics=["ctr", "abandonment", "clicks_at_1", "mrr"],
                 duplicates=sys.argv[2])
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rows": res.exclusions.kept_rows,
                  "results": {r["metric"]: [r["effect"], r["p_value"]] for r in res.to_dicts()}}))
"""

SPARK = r"""
import json, sys, time
import ibis, ibis.backends.pyspark, scipy.stats
from serpeval.online.experiments import analyze_ab
from serpeval.online.logs.sources import spark_session
spark_session()  # the JVM starts before the clock (about 6 s on a quiet machine)
t = time.perf_counter()
res = analyze_ab(sys.argv[1], metrics=["ctr", "abandonment", "clicks_at_1", "mrr"],
                 duplicates=sys.argv[2], backend="spark")
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rows": res.exclusions.kept_rows,
                  "results": {r["metric"]: [r["effect"], r["p_value"]] for r in res.to_dicts()}}))
"""

PANDAS = r"""
import json, sys, time
import numpy as np, pandas as pd
from scipy import stats
t = time.perf_counter()
df = pd.read_parquet(sys.argv[1] + "/impressions.parquet", columns=["variant", "user_id", "clicks"],
                     dtype_backend="pyarrow")
clicks = df["clicks"].explode()                       # one row per click (NA for none)
n_clicks = df["clicks"].list.len().fillna(0).astype("int64")
first = clicks.groupby(level=0).first()               # first click's position
per_page = pd.DataFrame({
    "user_id": df["user_id"], "variant": df["variant"].astype(str),
    "impressions": 1, "clicks": n_clicks, "abandoned": (n_clicks == 0).astype("int64"),
    "click_at_1": (clicks == 1).groupby(level=0).any().astype("int64"),
    "rr": (1.0 / first.astype("float64")).fillna(0.0),
})
users = per_page.groupby("user_id").agg(
    variant=("variant", "first"), impressions=("impressions", "sum"), clicks=("clicks", "sum"),
    abandoned=("abandoned", "sum"), click_at_1=("click_at_1", "sum"), rr=("rr", "sum"))
out = {}
arms = {}
for name, g in users.groupby("variant"):
    x = g["impressions"].to_numpy(float)
    arms[name] = {m: (g[m].to_numpy(float), x) for m in ("clicks", "abandoned", "click_at_1", "rr")}
for metric, col in (("ctr", "clicks"), ("abandonment", "abandoned"), ("clicks_at_1", "click_at_1"),
                    ("mrr", "rr")):
    est = {}
    for name in ("control", "treatment"):
        y, x = arms[name][col]
        r = y.mean() / x.mean()
        c = np.cov(y, x, ddof=1)
        est[name] = (r, (c[0, 0] - 2 * r * c[0, 1] + r * r * c[1, 1]) / x.mean() ** 2 / len(y))
    effect = est["treatment"][0] - est["control"][0]
    p = 2 * stats.norm.sf(abs(effect) / np.sqrt(est["treatment"][1] + est["control"][1]))
    out[metric] = [effect, p]
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rows": len(df), "results": out}))
"""


def ensure_log(impressions: int) -> Path:
    """The generated log folder for about ``impressions`` pages (made once)."""
    from serpeval.online.simulation.generate import write_logs

    folder = DATA / f"ab_{impressions}"
    if not (folder / "impressions.parquet").exists():
        start = time.perf_counter()
        write_logs(
            folder,
            int(impressions / PER_USER),
            rng=2026,
            effect=0.02,
            impressions_per_user=PER_USER,
            progress=sys.stderr.isatty(),
        )
        print(f"generated {folder} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return folder


def run(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; its JSON line plus the peak RSS (MiB) of the process."""
    # files, not pipes: a child that writes more than a pipe holds (Spark's log) would block
    # while we wait for it
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen need not wait
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read(), stderr.read()
    if status != 0:
        raise RuntimeError(f"run failed ({status}): {err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mib"] = usage.ru_maxrss / 1024
    return result


def measure(code: str, repeat: int, *args: str) -> dict:
    runs = [run(code, *args) for _ in range(repeat)]
    return {
        "wall": statistics.median(r["wall"] for r in runs),
        "walls": [r["wall"] for r in runs],
        "peak_mib": max(r["peak_mib"] for r in runs),
        "rows": runs[0]["rows"],
        "results": runs[0]["results"],
    }


def agree(a: dict, b: dict) -> float:
    """Largest relative difference between two tools' (effect, p) per metric."""
    worst = 0.0
    for metric, values in a.items():
        for x, y in zip(values, b[metric], strict=True):
            worst = max(worst, abs(x - y) / max(abs(x), 1e-300))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impressions", type=float, default=100_000_000)
    parser.add_argument(
        "--pandas-impressions",
        type=float,
        default=10_000_000,
        help="largest log pandas is run on (it holds the whole log in memory)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--spark-impressions",
        type=float,
        default=0,
        help="also time local Spark (all cores) on a log of this size, once",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "ab_scale.md")
    args = parser.parse_args()
    big, small = int(args.impressions), int(args.pandas_impressions)
    load = os.getloadavg()
    rows = []
    for size in sorted({small // 2, small, big}):
        folder = ensure_log(size)
        for mode in ("error", "unchecked"):
            if size != big and mode == "unchecked":
                continue
            m = measure(SERPEVAL, args.repeat, str(folder), mode)
            rows.append(
                {
                    "tool": "serpeval (DuckDB)"
                    + (", ids unchecked" if mode == "unchecked" else ""),
                    "size": size,
                    **m,
                }
            )
            print(
                rows[-1]["tool"],
                size,
                f"{m['wall']:.1f} s",
                f"{m['peak_mib']:.0f} MiB",
                file=sys.stderr,
            )
        if size <= small:
            m = measure(PANDAS, args.repeat, str(folder))
            rows.append({"tool": "pandas", "size": size, **m})
            print("pandas", size, f"{m['wall']:.1f} s", f"{m['peak_mib']:.0f} MiB", file=sys.stderr)
    if args.spark_impressions:
        size = int(args.spark_impressions)
        m = measure(SPARK, 1, str(ensure_log(size)), "error")
        rows.append({"tool": "serpeval (local Spark)", "size": size, **m})
        print(
            "spark",
            size,
            f"{m['wall']:.1f} s",
            f"{m['peak_mib']:.0f} MiB (driver)",
            file=sys.stderr,
        )
    write_report(rows, big, small, load, args)


def write_report(
    rows: list[dict], big: int, small: int, load: tuple, args: argparse.Namespace
) -> None:
    by = {(r["tool"], r["size"]): r for r in rows}
    duck_small, pandas_small = by[("serpeval (DuckDB)", small)], by[("pandas", small)]
    pandas_half = by[("pandas", small // 2)]
    big_row = by[("serpeval (DuckDB)", big)]

    def pandas_at_big(key: str) -> float:
        """pandas' ``key`` at the big log, extrapolated linearly from its two sizes."""
        slope = (pandas_small[key] - pandas_half[key]) / (
            pandas_small["rows"] - pandas_half["rows"]
        )
        return pandas_small[key] + slope * (big_row["rows"] - pandas_small["rows"])

    pandas_big, pandas_big_mem = pandas_at_big("wall"), pandas_at_big("peak_mib")
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    lines = [
        "# A/B analysis at scale: serpeval (DuckDB) vs pandas",
        "",
        f"`python bench/ab_scale.py --impressions {big:_} --pandas-impressions {small:_} "
        f"--repeat {args.repeat}` on {os.cpu_count()} cores, {ram:.0f} GiB RAM, load average at "
        f"start {load[0]:.1f} (a shared machine: medians of {args.repeat} runs).",
        "Metrics: CTR, abandonment, clicks@1, MRR, delta method clustered by user.",
        "",
        "| tool | impressions | median wall (s) | runs (s) | peak RSS (MiB) |",
        "|:---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['tool']} | {r['rows']:,} | {r['wall']:.1f} | "
            f"{', '.join(f'{w:.1f}' for w in r['walls'])} | {r['peak_mib']:,.0f} |"
        )
    spark = [r for r in rows if "Spark" in r["tool"]]
    lines += [
        "",
        "- Same numbers: largest relative difference of (effect, p-value) between pandas and "
        f"serpeval on the {small:,}-impression log: "
        f"{agree(pandas_small['results'], duck_small['results']):.1e}.",
        f"- Ratio at {pandas_small['rows']:,} impressions (both measured): pandas / serpeval = "
        f"{pandas_small['wall'] / duck_small['wall']:.1f}x time, "
        f"{pandas_small['peak_mib'] / duck_small['peak_mib']:.1f}x peak memory.",
        f"- pandas at {big_row['rows']:,} impressions was not run (it holds the whole log in "
        f"memory); extrapolated linearly from its two measured sizes: about {pandas_big:.0f} s "
        f"and {pandas_big_mem / 1024:.0f} GiB, i.e. {pandas_big / big_row['wall']:.0f}x "
        "serpeval's time.",
    ]
    if spark:
        same_log = by.get(("serpeval (DuckDB)", spark[0]["size"]))
        lines.append(
            "- Local Spark (one run, JVM start excluded; peak RSS is the Python driver's, the JVM "
            "is separate) gives the same numbers"
            + (
                " (largest relative difference "
                f"{agree(spark[0]['results'], same_log['results']):.1e})"
                if same_log
                else ""
            )
            + "; on one 2-core machine it is slower than DuckDB - Spark pays off on a cluster."
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
