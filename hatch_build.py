"""Build serpeval's compiled kernels (src/serpeval/core/_native.c and _trec_reader.c) with the
machine's C compiler, into one library.

A plain C shared library, no Python headers: serpeval loads it with ctypes. When no compiler
is found or the build fails, the install still succeeds (with a warning) and serpeval runs
its NumPy implementations, which give the same numbers, only slower.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = [Path("src/serpeval/core/_native.c"), Path("src/serpeval/core/_trec_reader.c")]
LIBRARY = SOURCES[0].with_name("_native.so")


def compiler() -> list[str] | None:
    """The C compiler command: $CC, Python's own, or cc/gcc/clang on the PATH."""
    for candidate in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc", "clang"):
        if candidate:
            words = candidate.split()
            if shutil.which(words[0]):
                return words
    return None


def build(root: Path) -> str | None:
    """Compile the kernels next to their source; returns an error message or None."""
    cc = compiler()
    if cc is None:
        return "no C compiler found (set CC)"
    target = root / LIBRARY
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")  # two installs at once each write their own
    command = [*cc, "-O3", "-std=c99", "-fPIC", "-shared", "-o", str(partial), *(str(root / s) for s in SOURCES)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except OSError as error:
        return f"{' '.join(command)}: {error}"
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return f"{' '.join(command)} failed: {done.stderr.strip()[:2000]}"
    partial.replace(target)  # atomically: a running serpeval never loads half a library
    return None


class NativeKernelsHook(BuildHookInterface):
    """Compiles the kernels for wheels (regular and editable); the sdist ships the source."""

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or os.environ.get("SERPEVAL_NATIVE") == "0":
            return
        error = build(Path(self.root))
        if error is not None:
            self.app.display_warning(
                f"serpeval: the compiled kernels were not built ({error}); serpeval will use its "
                "NumPy code instead: the same numbers, slower on large runs."
            )
            return
        if version != "editable":  # an editable install imports them from src/ itself
            build_data["force_include"][str(Path(self.root) / LIBRARY)] = "serpeval/core/_native.so"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
