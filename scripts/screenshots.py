"""Regenerate the documentation's pictures (issue 33): the HTML report and terminal tables.

    python scripts/screenshots.py [--data ../shared/data] [--only svg|png]

* ``docs/report-robust04.png``: the HTML report of Robust04, BM25 vs BM25+RM3
  (``serpeval report``), at 1280x800, taken by Debian's Chromium driven by Playwright, as the
  browser test of tests/report does (never a downloaded browser; ``$SERPEVAL_CHROMIUM`` or
  ``chromium`` on PATH);
* ``docs/img/*.svg``: what ``serpeval compare``, ``gate`` and ``evaluate`` print on a terminal,
  colours included, recorded by rich (``Console.export_svg``) from the commands' own output.

Each picture is what the current code prints on the shared TREC data; the pages that show
them (docs/how-to/reports.md, compare.md, gate.md, the tutorials) link to the files here.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: name -> (title, argv relative to the TREC data folder)
TERMINAL: dict[str, tuple[str, list[str]]] = {
    "evaluate-robust04": ("serpeval evaluate", [
        "evaluate", "robust04/qrels.txt.gz", "robust04/runs/bm25.run.gz", "robust04/runs/bm25-rm3.run.gz",
        "-m", "nDCG@10", "-m", "AP", "-m", "P@10", "-m", "RR"]),
    "compare-robust04": ("serpeval compare", [
        "compare", "robust04/qrels.txt.gz", "robust04/runs/bm25.run.gz", "robust04/runs/bm25-rm3.run.gz",
        "-m", "nDCG@10", "-m", "AP", "-m", "P@10"]),
    "gate-core18": ("serpeval gate", [
        "gate", "core18/qrels.txt", "--baseline", "core18/runs/title-rm3.run.gz", "--candidate",
        "core18/runs/desc-rm3.run.gz", "-m", "nDCG@10", "--top", "3"]),
}


def terminal_output(argv: list[str], cwd: Path, width: int = 140) -> tuple[str, int]:
    """What ``serpeval ARGV`` prints on a colour terminal ``width`` columns wide (ANSI codes
    kept), and its exit status; run in this process, in ``cwd``."""
    from serpeval.cli import main

    out = io.StringIO()
    saved = {key: os.environ.get(key) for key in ("FORCE_COLOR", "COLUMNS", "NO_COLOR")}
    os.environ.update({"FORCE_COLOR": "1", "COLUMNS": str(width)})
    os.environ.pop("NO_COLOR", None)
    old_cwd = Path.cwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = main(argv)
    finally:
        os.chdir(old_cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return out.getvalue(), status


def to_svg(text: str, title: str, width: int = 140) -> str:
    """Terminal output (with or without ANSI colours) as an SVG picture of a terminal window."""
    from rich.console import Console
    from rich.text import Text

    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    console.print(Text.from_ansi(text.rstrip("\n")), soft_wrap=True)
    return console.export_svg(title=title)


def write_svgs(trec: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (title, argv) in TERMINAL.items():
        text, _status = terminal_output(argv, trec)
        path = out / f"{name}.svg"
        path.write_text(to_svg(text, "$ " + title), encoding="utf-8")
        written.append(path)
    return written


def write_report_png(trec: Path, out: Path) -> Path:
    """The Robust04 HTML report, rendered by headless Chromium, as a 1280x800 PNG."""
    from playwright.sync_api import sync_playwright

    from serpeval.cli import main

    chromium = os.environ.get("SERPEVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("scripts/screenshots.py: no chromium on PATH (apt-get install -y chromium) "
                         "or $SERPEVAL_CHROMIUM")
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        old_cwd = Path.cwd()
        try:  # relative paths: the report names the qrels as robust04/qrels.txt.gz
            os.chdir(trec)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                status = main(["report", "robust04/qrels.txt.gz", "robust04/runs/bm25.run.gz",
                               "robust04/runs/bm25-rm3.run.gz", "-m", "nDCG@10,AP,P@10,R@100,RR",
                               "--topics", "robust04/topics.tsv", "-o", str(html)])
        finally:
            os.chdir(old_cwd)
        if status != 0:
            raise SystemExit(f"scripts/screenshots.py: serpeval report exited {status}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(html.as_uri())
            page.wait_for_load_state("load")
            path = out / "report-robust04.png"
            page.screenshot(path=str(path))
            browser.close()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    default_data = Path(os.environ.get("SERPEVAL_DATA", ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", type=Path, default=default_data,
                        help="the shared data folder (holding trec/); default ../shared/data or $SERPEVAL_DATA")
    parser.add_argument("--only", choices=("svg", "png"), help="only the terminal SVGs or only the report PNG")
    args = parser.parse_args(argv)
    trec = args.data / "trec"
    if not (trec / "robust04").is_dir():
        raise SystemExit(f"scripts/screenshots.py: no TREC data at {trec} (give --data)")
    written: list[Path] = []
    if args.only in (None, "svg"):
        written += write_svgs(trec, DOCS / "img")
    if args.only in (None, "png"):
        written.append(write_report_png(trec, DOCS))
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
