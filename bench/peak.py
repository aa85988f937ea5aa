"""Peak memory, CPU and wall time of a child process, measured without the parent's footprint.

Why not ``os.wait4(child)`` from the bench itself: Linux keeps a process's pre-``exec`` memory
high-water mark in ``ru_maxrss``. A child forked (or vforked by ``posix_spawn``) from a
process that once held 1.2 GB starts with that mark and keeps it through ``exec``, so every
tool the bench launched reported at least the bench's own peak (1,185 MB on the M shape,
where ``/usr/bin/time`` gave serpeval 552 MB and the C trec_eval 755 MB).

So :func:`spawn` starts a small launcher (:data:`LAUNCHER`: ``python -S -E``, no imports
beyond ``os``, ``sys`` and ``time``; its own peak is about 10 MB). The launcher, whose
``exec`` dropped the bench's pages, starts the measured program and reads the program's own
``ru_maxrss``, CPU time and wall time from its ``wait4``; it writes them to a pipe that only
the launcher holds. The reported peak is therefore max(the program's own peak, the
launcher's ~10 MB at the moment of the spawn): a floor of about 10 MB, not the bench's size.

The launcher runs in a session of its own, so a timeout kills the program and the launcher
together (``killpg``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import NamedTuple

__all__ = ["LAUNCHER", "Done", "spawn"]

#: The launcher: ``argv[1]`` is the result pipe's fd, the rest the program's argv. It writes
#: ``exit_status max_rss_kb user_s system_s wall_s`` to the pipe and exits with the
#: program's exit status (128 + signal when killed by one).
LAUNCHER = """\
import os, sys, time
fd = int(sys.argv[1])
os.set_inheritable(fd, False)
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
os.write(fd, f"{status} {usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime} {wall}".encode())
os.close(fd)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


class Done(NamedTuple):
    """One finished (or stopped) program: wall and CPU seconds (user + system, steadier than
    wall time on a loaded machine), its own peak RSS in MB (``ru_maxrss`` / 1024), its exit
    code, what it wrote on stdout and stderr."""

    wall: float
    cpu: float
    peak: float
    out: str
    stopped: bool = False
    returncode: int = 0
    err: str = ""


def spawn(argv: list[str], timeout: float | None = None, *, check: bool = True) -> Done:
    """Run ``argv`` through :data:`LAUNCHER`; its own peak RSS, CPU and wall time.

    Args:
        argv: the program and its arguments (``argv[0]`` is looked up on PATH).
        timeout: seconds after which the program and the launcher are killed; the result
            then has ``stopped=True`` and NaN for CPU and peak.
        check: raise RuntimeError (with the end of stderr) when the program exits non-zero.
    """
    read_end, write_end = os.pipe()
    start = time.perf_counter()
    try:
        proc = subprocess.Popen([sys.executable, "-S", "-E", "-c", LAUNCHER, str(write_end), *argv],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(write_end,),
                                start_new_session=True)
    finally:
        os.close(write_end)
    try:
        out_bytes, err_bytes = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        os.close(read_end)
        return Done(time.perf_counter() - start, float("nan"), float("nan"), "", True, -9)
    with os.fdopen(read_end, "rb") as pipe:  # the launcher has exited: its few bytes are there
        report = pipe.read()
    out, err = out_bytes.decode(errors="replace"), err_bytes.decode(errors="replace")
    fields = report.split()
    if len(fields) != 5:
        raise RuntimeError(f"{argv[:3]}...: the launcher reported nothing (exit {proc.returncode}):\n{err[-2000:]}")
    status, max_rss_kb = int(fields[0]), int(fields[1])
    user, system, wall = (float(f) for f in fields[2:])
    code = os.waitstatus_to_exitcode(status)
    if check and code != 0:
        raise RuntimeError(f"{argv[:3]}...: exit {code}:\n{err[-2000:]}")
    return Done(wall, user + system, max_rss_kb / 1024, out, False, code, err)
