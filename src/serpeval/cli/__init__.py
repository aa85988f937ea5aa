"""The ``serpeval`` command line: thin wrappers that parse arguments, call the API, render."""

from __future__ import annotations

from serpeval.cli.app import main

__all__ = ["main"]
