"""The fault suite's tools: run the real command line as a process, small inputs in the shapes
users have, and the one assertion every fault shares (the fixtures are in ``conftest.py``).

Every fault must end with: the expected exit status, exactly one line on stderr (no
``Traceback``) that says what is wrong, and no partial or clobbered output file (a file
that was there keeps its content; no temporary file is left next to it).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Lines ``serpeval trec_eval`` adds after its message, as the C trec_eval does.
TREC_EVAL_TRAILERS = ("trec_eval: Quit in file ", "trec_eval: Cannot initialize measure ")

GOOD = "a good output written earlier\n"


@dataclass
class Outcome:
    """A finished command: its status, standard output and standard error."""

    status: int
    out: str
    err: str


def message_lines(err: str) -> list[str]:
    """The lines of stderr that are messages (trec_eval's trailer lines set aside)."""
    return [line for line in err.splitlines() if not line.startswith(TREC_EVAL_TRAILERS)]


def assert_one_error(outcome: Outcome, *words: str, status: int = 2) -> str:
    """The shared assertion: the status, one line on stderr without a traceback, naming
    ``words`` (the path, the cause). Returns the line."""
    assert "Traceback" not in outcome.err, outcome.err
    lines = message_lines(outcome.err)
    assert len(lines) == 1, outcome.err
    assert outcome.status == status, (outcome.status, outcome.err)
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def assert_untouched(folder: Path, *kept: Path) -> None:
    """Every file in ``kept`` still holds :data:`GOOD`; no temporary file is left in ``folder``."""
    for path in kept:
        assert path.read_text(encoding="utf-8") == GOOD, path
    leftovers = [p.name for p in folder.iterdir() if p.name.startswith(".") and ".tmp" in p.name]
    assert leftovers == [], leftovers


def serpeval_env() -> dict[str, str]:
    """The environment of a child serpeval: this test run's, with this checkout's sources."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.pop("COLUMNS", None)
    return env


def run_process(args: Sequence[str], *, stdin: int | None = subprocess.DEVNULL, stdout: int | None = None,
                preexec: Callable[[], None] | None = None, timeout: float = 120,
                prefix: Sequence[str] = (), env: dict[str, str] | None = None) -> Outcome:
    """``serpeval ARGS`` as a child process (``prefix``: e.g. ``setpriv ...`` before Python)."""
    done = subprocess.run([*prefix, sys.executable, "-m", "serpeval", *args], stdin=stdin,
                          stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE,
                          preexec_fn=preexec, timeout=timeout, env=env or serpeval_env(), check=False)
    out = done.stdout.decode("utf-8", "replace") if done.stdout is not None else ""
    return Outcome(done.returncode, out, done.stderr.decode("utf-8", "replace"))


def run_bash(script: str, *, timeout: float = 120) -> Outcome:
    """A bash script in which ``serpeval`` is this checkout's command line (for ``<(...)``)."""
    env = serpeval_env()
    env["SERPEVAL"] = f"{sys.executable} -m serpeval"
    done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=timeout, env=env,
                          check=False)
    return Outcome(done.returncode, done.stdout.decode("utf-8", "replace"),
                   done.stderr.decode("utf-8", "replace"))


@dataclass
class Inputs:
    """Small valid inputs: qrels, two runs (TREC text), the same as Parquet, and topics."""

    folder: Path
    qrels: Path
    run: Path
    other: Path
    parquet_qrels: Path
    parquet_run: Path
    topics: Path


# Mixed id lengths, a UTF-8 id, ties and a query without relevant documents, as users have.
QRELS = "301 0 FBIS3-10082 1\n301 0 FT921-7107 0\n301 0 é-42 2\n302 0 LA070389-0001 1\n302 0 d7 0\n303 0 x 0\n"
RUN = ("301 Q0 FBIS3-10082 1 12.5 bm25\n301 Q0 é-42 2 12.5 bm25\n301 Q0 zz 3 3 bm25\n"
       "302 Q0 d7 1 9 bm25\n302 Q0 LA070389-0001 2 8.25 bm25\n303 Q0 x 1 1 bm25\n")
OTHER = ("301 Q0 é-42 1 2 dense\n301 Q0 FBIS3-10082 2 1 dense\n302 Q0 LA070389-0001 1 5 dense\n"
         "302 Q0 d7 2 4 dense\n303 Q0 y 1 1 dense\n")


def _table(text: str, kind: str) -> object:
    import pyarrow as pa

    rows = [line.split() for line in text.splitlines()]
    if kind == "qrels":
        return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                         "relevance": [int(r[3]) for r in rows]})
    return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                     "score": [float(r[4]) for r in rows]})


def good(path: Path) -> Path:
    """Write :data:`GOOD` to ``path`` (an earlier output that must survive a failure)."""
    path.write_text(GOOD, encoding="utf-8")
    return path


def can_drop_dac() -> bool:
    """Whether a child can be denied read access to a file (not root, or root able to drop
    CAP_DAC_OVERRIDE with setpriv)."""
    return os.geteuid() != 0 or shutil.which("setpriv") is not None


def no_dac_prefix() -> list[str]:
    """The command prefix that makes a root child obey file permissions (empty if not root)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def gzip_bomb(path: Path, gigabytes: int) -> Path:
    """A small gzip file that decompresses to ``gigabytes`` GB of run lines (several gzip
    members, as ``cat a.gz b.gz`` makes)."""
    member = gzip.compress(b"1 Q0 d 1 1.0 r\n" * (16 * 2**20 // 15), compresslevel=9)
    with path.open("wb") as handle:
        for _ in range(gigabytes * 64):
            handle.write(member)
    return path
