"""Every code block marked runnable in the README and the docs runs, and prints what the page shows (issue 33).

The marker is an HTML comment on the line before a fenced block (invisible on the site and on
a code host)::

    <!-- run -->              the block runs and must exit 0
    <!-- run status=1 -->     ... and must exit 1 (a failing gate)

A ``bash`` (or ``sh``) block runs under ``bash -euo pipefail``, a ``python`` block under this
interpreter. An ``<!-- output -->`` comment before the next fenced block makes that block the
expected output: each of its lines, in order, must be a line of what the command printed
(standard output, then standard error), so a page may show an excerpt. The blocks of one page
run in order in one fresh folder (a tutorial's later steps read the files its earlier ones
wrote), with ``DATA`` set to the shared test collections and ``COLUMNS=200`` for the tables.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*(run|output)\b([^>]*)-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)[^\n]*$")


@dataclass
class Block:
    """One runnable block of a page."""

    page: str
    line: int  # 1-based line of the block's opening fence
    lang: str
    code: str
    status: int = 0
    expected: list[str] | None = None


def _fenced(lines: list[str], start: int, page: str) -> tuple[str, str, int]:
    """The fenced block opening at ``lines[start]``: (language, body, index after it)."""
    match = FENCE.match(lines[start])
    if match is None:
        raise AssertionError(f"{page}:{start + 1}: a run/output marker must be followed by a fenced code block")
    fence = match.group(1)
    for end in range(start + 1, len(lines)):
        if lines[end].strip() == fence:
            return match.group(2), "\n".join(lines[start + 1:end]) + "\n", end + 1
    raise AssertionError(f"{page}:{start + 1}: the code block is not closed")


def parse(text: str, page: str) -> list[Block]:
    """The runnable blocks of one Markdown page, with their expected outputs."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    in_fence: str | None = None
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if in_fence is not None:
            if line.strip() == in_fence:
                in_fence = None
            i += 1
            continue
        marker = MARKER.match(line.strip())
        if marker is None:
            if fence is not None:
                in_fence = fence.group(1)
            i += 1
            continue
        kind, attributes = marker.group(1), marker.group(2)
        lang, body, after = _fenced(lines, i + 1, page)
        if kind == "run":
            if lang not in ("bash", "sh", "python"):
                raise AssertionError(f"{page}:{i + 2}: a runnable block is bash, sh or python, not {lang!r}")
            status = re.search(r"status=(\d+)", attributes)
            blocks.append(Block(page, i + 2, lang, body, int(status.group(1)) if status else 0))
        else:
            if not blocks or blocks[-1].expected is not None:
                raise AssertionError(f"{page}:{i + 1}: an output block must follow a runnable block")
            blocks[-1].expected = body.splitlines()
        i = after
    return blocks


def pages() -> list[Path]:
    """The README and every page of the site (not the generator's folder)."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "gen" not in p.parts)]


RUNNABLE = {str(p.relative_to(ROOT)): parse(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))
            for p in pages()}


def missing_lines(expected: list[str], printed: list[str]) -> list[str]:
    """The expected lines that are not found, in order, among the printed ones."""
    position = 0
    missing = []
    for line in expected:
        want = line.rstrip()
        for j in range(position, len(printed)):
            if printed[j].rstrip() == want:
                position = j + 1
                break
        else:
            missing.append(line)
    return missing


def run_block(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if block.lang == "python":
        argv = [sys.executable, "-c", block.code]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", block.code]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_parser_reads_markers_statuses_and_outputs() -> None:
    text = "\n".join([
        "text", "```bash", "<!-- run -->", "```", "", "<!-- run status=1 -->", "```bash", "false", "```",
        "<!-- output -->", "```text", "a", "b", "```", "<!-- run -->", "```python", "print(1)", "```",
    ])
    blocks = parse(text, "page.md")
    assert [(b.lang, b.status, b.expected, b.line) for b in blocks] == [
        ("bash", 1, ["a", "b"], 7), ("python", 0, None, 16)]
    with pytest.raises(AssertionError, match=r"page\.md:1: an output block must follow"):
        parse("<!-- output -->\n```text\nx\n```\n", "page.md")
    with pytest.raises(AssertionError, match="not 'yaml'"):
        parse("<!-- run -->\n```yaml\nx: 1\n```\n", "page.md")


def test_expected_lines_are_matched_in_order() -> None:
    printed = ["header", "a", "noise", "b", "tail"]
    assert missing_lines(["a", "b"], printed) == []
    assert missing_lines(["b", "a"], printed) == ["a"]  # order matters
    assert missing_lines(["a", "c"], printed) == ["c"]


def test_the_docs_have_runnable_examples() -> None:
    """Every tutorial runs, and so do the README's examples."""
    for page, blocks in RUNNABLE.items():
        if page.startswith("docs/tutorials/") or page == "README.md":
            assert blocks, f"{page} has no runnable block (mark its examples with <!-- run -->)"
    assert sum(len(b) for b in RUNNABLE.values()) >= 20


@pytest.mark.parametrize("page", [p for p, blocks in RUNNABLE.items() if blocks])
def test_runnable_blocks(page: str, tmp_path: Path) -> None:
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA} (set SERPEVAL_DATA to the data folder)")
    env = {**os.environ, "DATA": str(DATA), "COLUMNS": "200", "PYTHONUNBUFFERED": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("FORCE_COLOR", None)
    for block in RUNNABLE[page]:
        done = run_block(block, tmp_path, env)
        where = f"{page}:{block.line}"
        assert done.returncode == block.status, (
            f"{where}: exit status {done.returncode}, the page says {block.status}\n{done.stdout}\n{done.stderr}")
        if block.expected is not None:
            printed = (done.stdout + done.stderr).splitlines()
            missing = missing_lines(block.expected, printed)
            assert not missing, f"{where}: the output shown is not what the block prints; not found: {missing}\n" + \
                "\n".join(printed)
