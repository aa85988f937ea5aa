"""The ``serpeval`` command line: thin wrappers that parse arguments, call the API, render."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``serpeval`` (see :func:`serpeval.cli.app.main`).

    The command line's modules are imported only here, so that a Ctrl-C while they load
    is reported as ``interrupted`` (status 130) like one at any later moment.
    """
    try:
        from serpeval.cli.app import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return run(argv)
