"""Argument types of the command line: every value is checked where argparse reads it.

Each type is a callable ``text -> value`` for ``add_argument(type=...)``. A value out of range
raises :class:`argparse.ArgumentTypeError`, which argparse reports as one line naming the
option, the value and the allowed range, and exit status 2, before the command does anything::

    serpeval generate-logs: error: argument --days: must be a positive integer, got -3

One checker per kind, shared by all commands:

========================  =============================================================
``POSITIVE_INT``          counts that need at least one: users, days, resamples, k
``NON_NEGATIVE_INT``      counts that may be zero: pre-period days, digits, seeds
``FINITE``                any finite number (an effect on the logit scale)
``PROBABILITY``           a level strictly between 0 and 1: alpha, power, confidence
``real(...)`` /           finite numbers and integers with other bounds
``integer(...)``
``output_folder``         a folder that exists or can be created (not an existing file)
``new_file``              a file to write in an existing folder (not a folder itself)
``Once``                  (an action) an option that takes one value: a second is refused,
                          not silently kept in the first one's place
========================  =============================================================

Integers may be written as integral numbers too (``1e6``, ``2000.0``); NaN and infinities
are never accepted.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

__all__ = ["FINITE", "NON_NEGATIVE_INT", "POSITIVE_INT", "PROBABILITY", "Once", "integer", "new_file",
           "output_folder", "real"]


def _shown(text: str) -> str:
    """The value as the user typed it: bare when it is one plain word, else quoted."""
    return text if text and text == text.strip() and " " not in text else repr(text)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def integer(minimum: int) -> Callable[[str], int]:
    """An integer >= ``minimum`` (``1e6`` and ``10.0`` count as integers; ``2.5`` does not)."""
    wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            number = _number(text)
            if number is None or not math.isfinite(number) or not number.is_integer():
                raise argparse.ArgumentTypeError(f"must be {wanted}, got {_shown(text)}") from None
            value = int(number)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {_shown(text)}")
        return value

    convert.__name__ = f"integer >= {minimum}"
    return convert


def real(*, minimum: float | None = None, above: float | None = None,
         below: float | None = None) -> Callable[[str], float]:
    """A finite number, optionally ``>= minimum``, ``> above`` and ``< below``."""
    bounds = [f">= {minimum:g}" if minimum is not None else "",
              f"> {above:g}" if above is not None else "",
              f"< {below:g}" if below is not None else ""]
    description = f"a finite number {' and '.join(b for b in bounds if b)}".rstrip()
    if above is not None and below is not None and minimum is None:
        description = f"a number strictly between {above:g} and {below:g}"

    def convert(text: str) -> float:
        value = _number(text)
        if value is None or not math.isfinite(value) \
                or (minimum is not None and value < minimum) \
                or (above is not None and value <= above) or (below is not None and value >= below):
            raise argparse.ArgumentTypeError(f"must be {description}, got {_shown(text)}")
        return value

    convert.__name__ = description
    return convert


POSITIVE_INT = integer(1)
NON_NEGATIVE_INT = integer(0)
FINITE = real()
PROBABILITY = real(above=0.0, below=1.0)


def output_folder(text: str) -> str:
    """A folder to write into: one that exists, or can be created (no file in the way)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a folder name, got ''")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder; give a new or an "
                                         "existing folder")
    ancestor = next((p for p in path.absolute().parents if p.exists()), None)
    if not path.exists() and ancestor is not None and not ancestor.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create the folder {text}: {ancestor} is a file")
    return text


def new_file(text: str) -> str:
    """A file to write: not a folder, and in a folder that exists."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a file name, got ''")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name such as "
                                         f"{path / 'power.png'}")
    parent = path.parent
    if not parent.is_dir():
        what = "is a file" if parent.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"the folder {parent} of {text} {what}")
    return text


class Once(argparse.Action):
    """``add_argument(action=Once)``: an option given twice is refused (argparse would keep the
    last value without a word, where other commands' repeatable options take every one)::

        serpeval sweep: error: argument -m/--measure: given twice (nDCG@10, then AP); it takes one value
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        seen = vars(namespace).setdefault("_given_once", {})  # this parse's, not the parser's
        if self.dest in seen:
            raise argparse.ArgumentError(self, f"given twice ({seen[self.dest]}, then {values}); it takes one value")
        seen[self.dest] = values
        setattr(namespace, self.dest, values)
