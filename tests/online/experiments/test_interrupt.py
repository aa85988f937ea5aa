"""Ctrl-C and ``interleaving-report`` / ``ab`` (issue 27, item 15).

Before: a Ctrl-C once the report was written, while Python tore the process down (about
half a second with DuckDB, ibis, pyarrow and scipy loaded), killed it by the signal: status
-2 (130 from a shell) with no ``interrupted`` line. Now the teardown ignores it: the complete
output and the command's status stand (:mod:`serpeval.cli.teardown`). A Ctrl-C during the
work is still ``interrupted``, 130.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from tests.faults.helpers import serpeval_env

from serpeval.cli.app import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture(scope="module")
def il_log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interrupt") / "il"
    assert main(["generate-logs", str(folder), "--users", "500", "--interleaving"]) == 0
    return folder


def _start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "serpeval", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or serpeval_env())


@pytest.mark.parametrize("command", ["interleaving-report", "ab"])
def test_ctrl_c_while_python_tears_down_keeps_the_output_and_status(il_log, tmp_path, command) -> None:
    """The signal is sent 0.15 s after the output file appears (it is renamed into place, so
    it is complete): the command is then past its work, in Python's teardown (before the fix,
    every such attempt ended with status -2 and nothing on stderr: the teardown lasts 0.4 -
    0.7 s, so one attempt a command catches it; each attempt is a whole start-up of the
    engines, ~2 s of CPU). Sent at any other moment it must give one of the same two outcomes."""
    log = il_log
    if command == "ab":
        log = tmp_path / "ab"
        assert main(["generate-logs", str(log), "--users", "500"]) == 0
    out = tmp_path / "report.txt"
    args = {"interleaving-report": ["interleaving-report", str(log), "--resamples", "200"],
            "ab": ["ab", str(log), "-m", "ctr"]}[command]
    child = _start([*args, "-o", str(out)])
    while not out.exists():
        assert child.poll() is None, child.communicate()
        time.sleep(0.005)
    time.sleep(0.15)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert (child.returncode, text) in ((0, ""), (130, "interrupted\n")), (child.returncode, text)
    assert out.read_text(encoding="utf-8").strip()


STAND_IN = '''\
import os
import time
open(os.environ["SERPEVAL_TEST_REACHED"], "w").close()
time.sleep(600)
'''


def test_ctrl_c_while_the_engine_loads_is_interrupted(il_log, tmp_path) -> None:
    """The engine (duckdb, replaced by a stand-in that marks the moment and waits) loading:
    ``interrupted``, 130, no traceback, no output file."""
    stand_ins = tmp_path / "stand-ins"
    stand_ins.mkdir()
    (stand_ins / "duckdb.py").write_text(STAND_IN, encoding="utf-8")
    reached = tmp_path / "reached"
    env = serpeval_env()
    env["PYTHONPATH"] = os.pathsep.join([str(stand_ins), env["PYTHONPATH"]])
    env["SERPEVAL_TEST_REACHED"] = str(reached)
    out = tmp_path / "report.txt"
    child = _start(["interleaving-report", str(il_log), "-o", str(out)], env)
    while not reached.exists():
        assert child.poll() is None, child.communicate()
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert (child.returncode, err.decode()) == (130, "interrupted\n")
    assert not out.exists()
