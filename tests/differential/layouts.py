"""TREC files written in every layout users' files come in, from the same logical rows.

A :class:`Layout` says how the bytes look: separators (one space, tabs, runs of blanks,
vertical tabs and form feeds), line ends (LF, CRLF, a lone CR, mixed), a UTF-8 byte order
mark, ``#`` comments and blank lines, columns after the run tag, gzip, row order, a
missing final newline, and what the ignored ``iter`` and ``rank`` columns hold. The
readers must give the same rows from all of them; :func:`write` returns the rows in the
order the file holds them, and how many lines a reader must skip.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tests.differential.shapes import Collection

BOM = b"\xef\xbb\xbf"
_MIXED_SEPARATORS = [" ", "\t", "  ", " \t", "\x0b", "\x0c", "\t\t "]
_EOLS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


@dataclass(frozen=True)
class Layout:
    """How the bytes of one file look (see the module docstring)."""

    sep: str = "single"  # single | tabs | spaces | mixed
    eol: str = "lf"  # lf | crlf | cr | mixed
    bom: bool = False
    comments: bool = False  # '#' comment lines and blank lines between rows
    extra_columns: bool = False  # runs only: fields after the tag
    gzip: bool = False
    shuffled: bool = False
    final_newline: bool = True
    iter: str = "Q0"
    rank: str = "sequential"  # sequential | zero | random

    @property
    def name(self) -> str:
        parts = [self.sep, self.eol]
        parts += [flag for flag in ("bom", "comments", "extra_columns", "gzip", "shuffled") if getattr(self, flag)]
        parts += [] if self.final_newline else ["no_final_newline"]
        return "+".join(parts)

    @property
    def fast(self) -> bool:
        """Whether the fast (Arrow) reader should take the file."""
        return self.sep == "single" and not self.comments and not self.extra_columns


PLAIN = Layout()


def draw_layout(rng: np.random.Generator, kind: str, *, keep_order: bool = False,
                comments: bool = True) -> Layout:
    """A random layout; about half are plain enough for the fast reader.

    ``keep_order`` keeps the rows in collection order (files spread over Arrow blocks);
    ``comments=False`` leaves out ``#`` lines (trec_eval 9.0.8 refuses them in runs).
    """
    fast = rng.random() < 0.5
    return Layout(
        sep="single" if fast else str(rng.choice(["single", "tabs", "spaces", "mixed"])),
        eol=str(rng.choice(["lf", "crlf", "cr"] if fast else ["lf", "crlf", "cr", "mixed"])),
        bom=bool(rng.random() < 0.3),
        comments=comments and not fast and bool(rng.random() < 0.5),
        extra_columns=kind == "run" and not fast and bool(rng.random() < 0.4),
        gzip=not keep_order and bool(rng.random() < 0.2),
        shuffled=not keep_order and bool(rng.random() < 0.3),
        final_newline=bool(rng.random() < 0.8),
        iter=str(rng.choice(["Q0", "0", "q0", "iter"])) if kind == "run" else str(rng.choice(["0", "Q0", "1"])),
        rank=str(rng.choice(["sequential", "zero", "random"])),
    )


@dataclass
class Written:
    """A file written by :func:`write`: its path, its rows in file order, its skipped lines."""

    path: Path
    rows: list[tuple[str, str, str]]
    skipped: int
    layout: Layout
    tag: str = ""


def write(folder: Path, name: str, coll: Collection, kind: str, layout: Layout,
          rng: np.random.Generator) -> Written:
    """Write the ``kind`` (``run`` or ``qrels``) rows of ``coll`` to ``folder/name``."""
    rows = coll.run if kind == "run" else coll.qrels
    filler = coll.run_filler if kind == "run" else coll.qrels_filler
    order = rng.permutation(len(rows)).tolist() if layout.shuffled else list(range(len(rows)))
    tag = "tag-" + layout.name
    lines: list[str] = []
    skipped = 0
    rank: dict[str, int] = {}
    for position, i in enumerate(order):
        if layout.comments and rng.random() < 0.15:
            lines.append(str(rng.choice(["# a comment", "", "   ", "\t", "#", "  # indented comment"])))
            skipped += 1
        q, d, value = rows[i]
        if kind == "run":
            rank[q] = rank.get(q, 0) + 1
            rank_text = {"sequential": str(rank[q]), "zero": "0"}.get(layout.rank, str(int(rng.integers(-5, 2000))))
            last = position == len(order) - 1
            fields = [q, layout.iter, d, rank_text, value, filler.get(i, tag if last else _tag(rng, tag))]
            if layout.extra_columns and rng.random() < 0.5:
                fields += ["extra", "columns"][: int(rng.integers(1, 3))]
        else:
            fields = [q, filler.get(i, layout.iter), d, value]
        lines.append(_join(fields, layout, rng))
    if layout.comments:
        lines += ["", "# the end"]
        skipped += 2
    data = _end_lines(lines, layout, rng).encode("utf-8")
    if layout.bom:
        data = BOM + data
    path = folder / (name + (".gz" if layout.gzip else ""))
    path.write_bytes(gzip.compress(data, compresslevel=1) if layout.gzip else data)
    return Written(path, [rows[i] for i in order], skipped, layout, tag)


def _tag(rng: np.random.Generator, tag: str) -> str:
    """The tag of a line that is not the last: any word (only the last line's is reported)."""
    return tag if rng.random() < 0.9 else "other-tag"


def _join(fields: list[str], layout: Layout, rng: np.random.Generator) -> str:
    if layout.sep == "single":
        return " ".join(fields)
    if layout.sep == "tabs":
        return "\t".join(fields)
    if layout.sep == "spaces":
        seps = [" " * int(rng.integers(1, 4)) for _ in fields[1:]]
    else:
        seps = [str(rng.choice(_MIXED_SEPARATORS)) for _ in fields[1:]]
    line = fields[0] + "".join(s + f for s, f in zip(seps, fields[1:], strict=True))
    if rng.random() < 0.3:
        line = str(rng.choice([" ", "\t", "  "])) + line
    if rng.random() < 0.3:
        line += str(rng.choice([" ", "\t", " \t"]))
    return line


def _end_lines(lines: list[str], layout: Layout, rng: np.random.Generator) -> str:
    if layout.eol == "mixed":
        ends = [str(rng.choice(list(_EOLS.values()))) for _ in lines]
    else:
        ends = [_EOLS[layout.eol]] * len(lines)
    for i in range(1, len(lines)):
        if ends[i - 1] == "\r" and not lines[i] and ends[i].startswith("\n"):
            ends[i] = "\r"  # CR then an empty LF-ended line would read as one CRLF
    if not layout.final_newline and lines:
        ends[-1] = ""
    return "".join(line + end for line, end in zip(lines, ends, strict=True))
