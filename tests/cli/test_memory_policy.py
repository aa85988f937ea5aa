"""The programs' memory policy (``serpeval.cli.memory``): glibc's malloc keeps freed memory
for reuse when serpeval runs as a program; never inside a caller's Python process."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

CHECK = "from serpeval.cli.memory import keep_freed_memory; print(keep_freed_memory())"


def run_python(code: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, **env}, timeout=120)
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_applied_on_glibc_and_turned_off_by_the_environment() -> None:
    assert run_python(CHECK) == "True"
    assert run_python(CHECK, SERPEVAL_MALLOC="system") == "False"


def test_main_with_argv_leaves_the_callers_malloc_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from serpeval.cli import main, memory

    calls: list[bool] = []
    monkeypatch.setattr(memory, "keep_freed_memory", lambda: calls.append(True) or True)
    with pytest.raises(SystemExit):  # argparse's --version exits
        main(["--version"])
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["serpeval", "--version"])
    with pytest.raises(SystemExit):  # no command: nothing to compute, no NumPy to load
        main()
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["serpeval", "measures", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert calls == [True]
