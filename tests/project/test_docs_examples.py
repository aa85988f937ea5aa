"""Every code block marked runnable in the README and the docs runs, and prints what the page shows (issue 33).

The marker is an HTML comment on the line before a fenced block (invisible on the site and on
a code host)::

    <!-- run -->              the block runs and must exit 0
    <!-- run status=1 -->     ... and must exit 1 (a failing gate)

A ``bash`` (or ``sh``) block runs as under ``bash -euo pipefail``, a ``python`` block as under
this interpreter (how: below). An ``<!-- output -->`` comment before the next fenced block makes that block the
expected output: each of its lines, in order, must be a line of what the command printed
(standard output, then standard error), so a page may show an excerpt. The blocks of one page
run in order in one fresh folder (a tutorial's later steps read the files its earlier ones
wrote), with ``DATA`` set to the shared test collections and ``COLUMNS=200`` for the tables.

How a block runs: a ``bash`` block made only of plain commands (``NAME=value`` assignments,
``serpeval ...`` and other programs, with ``$NAME`` expansions and no other shell syntax: no
quotes, pipes, redirections or substitutions) runs statement by statement as ``bash -e``
would: ``serpeval ARGS`` in this process through :func:`serpeval.cli.main` (what the console
script calls; a fresh interpreter and its imports cost more than most of the commands), any
other program as a child process. Every other ``bash`` block runs under ``bash -euo
pipefail``, and so does the first block of the page :data:`END_TO_END` (a newcomer's first
command, through the installed ``serpeval`` console script, as a user runs it). A ``python``
block runs in this process as ``python -c`` would run it (``__main__``, Python's default
warning filters, a traceback and status 1 on an exception). Standard output and error are
captured at the file descriptors either way.
"""

from __future__ import annotations

import builtins
import os
import re
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
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


#: The page whose first block always runs under bash, through the installed console script.
END_TO_END = "docs/tutorials/first-evaluation.md"

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


#: A word the shell passes through unchanged once ``$NAME`` is expanded (no quoting, globbing,
#: redirection, pipe, substitution or comment).
PLAIN_WORD = re.compile(r"^[\w./=@,:%+-]+$")
EXPANSION = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$")


@dataclass
class Done:
    """What a block did: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def plain_statements(code: str) -> list[list[str]] | None:
    """The statements of a bash block made only of plain commands (see the module docstring),
    each as its words with ``$NAME`` still unexpanded; None when the block needs a shell."""
    statements = []
    for line in code.replace("\\\n", " ").splitlines():
        for statement in line.split(";"):
            words = statement.split()
            if not words:
                continue
            if not all(PLAIN_WORD.match(EXPANSION.sub("x", word)) for word in words):
                return None
            statements.append(words)
    return statements


def _expand(word: str, variables: dict[str, str], where: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in variables:
            return variables[name]
        if name in os.environ:
            return os.environ[name]
        raise AssertionError(f"{where}: ${name} is not set (bash -u would stop here)")

    return EXPANSION.sub(value, word)


def _in_process(run: Callable[[], int | None], capfd: pytest.CaptureFixture[str]) -> Done:
    capfd.readouterr()
    try:
        status = run()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) or exc.code is None else 1
        if status == 1 and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)  # sys.exit("message"), as the interpreter prints it
    sys.stdout.flush()
    sys.stderr.flush()
    out, err = capfd.readouterr()
    return Done(int(status or 0), out, err)


def run_python(code: str, where: str, capfd: pytest.CaptureFixture[str]) -> Done:
    """``python -c CODE`` in this process: as ``__main__``, under Python's default warning
    filters (not the test run's), an exception printed as a traceback with status 1."""

    def run() -> int:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__", append=True)
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.filterwarnings("ignore", category=category, append=True)
            try:
                exec(compile(code, where, "exec"), {"__name__": "__main__", "__builtins__": builtins})
            except Exception:
                traceback.print_exc()
                return 1
        return 0

    return _in_process(run, capfd)


def run_plain(statements: list[list[str]], where: str, cwd: Path, env: dict[str, str],
              capfd: pytest.CaptureFixture[str]) -> Done:
    """The statements of a plain bash block in order, stopping at the first that fails (``bash
    -e``): ``serpeval`` in this process, other programs as children."""
    from serpeval.cli import main

    variables: dict[str, str] = {}
    out, err, status = [], [], 0
    for words in statements:
        assignment = ASSIGNMENT.match(words[0])
        if assignment is not None and len(words) == 1:
            variables[assignment.group(1)] = _expand(assignment.group(2), variables, where)
            continue
        argv = [_expand(word, variables, where) for word in words]
        assert all(PLAIN_WORD.match(word) for word in argv), f"{where}: an expansion needs a shell: {argv}"
        if argv[0] == "serpeval":
            done = _in_process(partial(main, argv[1:]), capfd)
        else:
            child = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
            done = Done(child.returncode, child.stdout, child.stderr)
        out.append(done.stdout)
        err.append(done.stderr)
        status = done.returncode
        if status != 0:
            break
    return Done(status, "".join(out), "".join(err))


def run_block(block: Block, cwd: Path, env: dict[str, str], capfd: pytest.CaptureFixture[str],
              *, shell: bool = False) -> Done:
    """Run one block in ``cwd`` (the current folder, whose environment is ``env``); ``shell``:
    a bash block runs under bash even when it is plain."""
    where = f"{block.page}:{block.line}"
    if block.lang == "python":
        return run_python(block.code, where, capfd)
    statements = None if shell else plain_statements(block.code)
    if statements is not None:
        return run_plain(statements, where, cwd, env, capfd)
    argv = ["bash", "-euo", "pipefail", "-c", block.code]
    child = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return Done(child.returncode, child.stdout, child.stderr)


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


def test_plain_blocks_run_in_process_and_the_others_under_bash() -> None:
    code = "R=$DATA/x; serpeval evaluate $R/q.txt \\\n    ${R}/r.run -m nDCG@10\nhead -2 out.txt\n"
    assert plain_statements(code) == [
        ["R=$DATA/x"], ["serpeval", "evaluate", "$R/q.txt", "${R}/r.run", "-m", "nDCG@10"], ["head", "-2", "out.txt"]]
    for code in ("serpeval evaluate q r > out.txt\n", "serpeval trec_eval q <(zcat r.gz)\n", "a | b\n",
                 "cmp a b && echo same\n", "echo 'x y'\n", "ls *.run\n", "echo $(date)\n", "x  # note\n"):
        assert plain_statements(code) is None, code
    assert _expand("${R}/$R", {"R": "a"}, "page.md:1") == "a/a"
    with pytest.raises(AssertionError, match=r"page\.md:1: \$NOT_SET_ANYWHERE is not set"):
        _expand("$NOT_SET_ANYWHERE", {}, "page.md:1")


def test_the_docs_have_runnable_examples() -> None:
    """Every tutorial runs, and so do the README's examples."""
    for page, blocks in RUNNABLE.items():
        if page.startswith("docs/tutorials/") or page == "README.md":
            assert blocks, f"{page} has no runnable block (mark its examples with <!-- run -->)"
    first = RUNNABLE[END_TO_END][0]
    why = f"{END_TO_END}'s first block no longer runs serpeval: set END_TO_END to a page whose first block does"
    assert first.lang == "bash", why
    assert "serpeval " in first.code, why
    assert sum(len(b) for b in RUNNABLE.values()) >= 20


#: Pages whose runnable blocks are each self-contained (a reader may copy any one of them
#: alone): each block runs as its own test, in a fresh folder of its own, so that a slow page
#: is several tests. A block of such a page that needs an earlier one's files fails.
SELF_CONTAINED = {"README.md"}


def _cases() -> list[tuple[str, tuple[int, ...]]]:
    """``(page, the indices of the blocks the test runs, in order)``."""
    cases: list[tuple[str, tuple[int, ...]]] = []
    for page, blocks in RUNNABLE.items():
        if page in SELF_CONTAINED:
            cases += [(page, (number,)) for number in range(len(blocks))]
        elif blocks:
            cases.append((page, tuple(range(len(blocks)))))
    return cases


def _case_id(case: tuple[str, tuple[int, ...]]) -> str:
    page, numbers = case
    return f"{page}:{RUNNABLE[page][numbers[0]].line}" if page in SELF_CONTAINED else page


def test_self_contained_pages_run_every_block() -> None:
    ran = [(page, number) for page, numbers in _cases() for number in numbers]
    assert sorted(ran) == sorted((page, n) for page, blocks in RUNNABLE.items() for n in range(len(blocks)))
    assert all(RUNNABLE[page] for page in SELF_CONTAINED)


@pytest.mark.parametrize("case", _cases(), ids=_case_id)
def test_runnable_blocks(case: tuple[str, tuple[int, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capfd: pytest.CaptureFixture[str]) -> None:
    page, numbers = case
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA} (set SERPEVAL_DATA to the data folder)")
    for name, value in (("DATA", str(DATA)), ("COLUMNS", "200"), ("PYTHONUNBUFFERED", "1"),
                        ("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ)
    for number in numbers:
        block = RUNNABLE[page][number]
        done = run_block(block, tmp_path, env, capfd, shell=page == END_TO_END and number == 0)
        where = f"{page}:{block.line}"
        assert done.returncode == block.status, (
            f"{where}: exit status {done.returncode}, the page says {block.status}\n{done.stdout}\n{done.stderr}")
        if block.expected is not None:
            printed = (done.stdout + done.stderr).splitlines()
            missing = missing_lines(block.expected, printed)
            assert not missing, f"{where}: the output shown is not what the block prints; not found: {missing}\n" + \
                "\n".join(printed)
