"""Start-up time of the ``serpeval`` program: ``serpeval --help`` and ``serpeval CMD --help``.

Usage::

    python bench/cli_startup.py [--repeats 5] [--command evaluate] [--command ab ...]

Each case runs ``repeats`` times as a fresh process (the console script next to this Python,
as a user runs it), alternating between cases; the table gives the median and the fastest
wall time, and how many modules the command line loaded (``python -X importtime``: a
``serpeval --help`` that imports NumPy shows it here). The target of issue 28 item 4 is
``serpeval --help`` <= 0.25 s. The machine is shared and noisy: quote medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def program() -> list[str]:
    """The ``serpeval`` console script of this interpreter's environment (else ``-m serpeval``)."""
    script = Path(sys.executable).parent / "serpeval"
    if script.exists():
        return [str(script)]
    found = shutil.which("serpeval")
    return [found] if found else [sys.executable, "-m", "serpeval"]


def timed(command: list[str]) -> float:
    """Wall-clock seconds of one run of ``command`` (its output discarded)."""
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def loaded(args: list[str]) -> tuple[int, bool]:
    """Modules imported by ``serpeval ARGS`` (``-X importtime``) and whether NumPy was one."""
    code = f"import sys; sys.argv = ['serpeval'] + {args!r}; from serpeval.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    names = [line.split("|")[-1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line and "cumulative" not in line]
    return len(names), "numpy" in names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--command", action="append", help="a command whose --help to time "
                        "(repeatable; default evaluate)")
    opts = parser.parse_args()
    cases = [["--help"]] + [[name, "--help"] for name in (opts.command or ["evaluate"])]
    base = program()
    times: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    for _ in range(opts.repeats):
        for i, case in enumerate(cases):
            times[i].append(timed(base + case))
    load = os.getloadavg()[0]
    print(f"median of {opts.repeats} fresh processes, {os.cpu_count()} CPUs, load average {load:.1f}\n")
    print("| command | median wall | fastest | modules loaded | NumPy loaded |")
    print("| --- | --- | --- | --- | --- |")
    for i, case in enumerate(cases):
        modules, numpy = loaded(case)
        print(f"| serpeval {' '.join(case)} | {statistics.median(times[i]):.3f} s | "
              f"{min(times[i]):.3f} s | {modules} | {'yes' if numpy else 'no'} |")


if __name__ == "__main__":
    main()
