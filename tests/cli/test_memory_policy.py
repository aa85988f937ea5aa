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

    calls: list[str] = []
    monkeypatch.setattr(memory, "keep_freed_memory", lambda: calls.append("malloc") or True)
    monkeypatch.setattr(memory, "fit_to_address_space", lambda: calls.append("limit") or False)
    with pytest.raises(SystemExit):  # argparse's --version exits
        main(["--version"])
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["serpeval", "--version"])
    with pytest.raises(SystemExit):  # no command: nothing to compute, no NumPy to load
        main()
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["serpeval", "measures", "--help"])
    with pytest.raises(SystemExit):  # a command's help: the address-space check only (no NumPy)
        main()
    assert calls == ["limit"]
    monkeypatch.setattr(sys, "argv", ["serpeval", "measures", "--format", "json"])
    assert main() == 0
    assert calls == ["limit", "malloc"]


def test_help_is_asked_for_before_a_double_dash_only() -> None:
    from serpeval.cli import asks_for_help

    assert asks_for_help(["evaluate", "-h"])
    assert asks_for_help(["ab", "plan", "--help"])
    assert not asks_for_help(["evaluate", "qrels", "run"])
    assert not asks_for_help(["evaluate", "--", "-h"])
    assert not asks_for_help(["evaluate", "--helper"])
