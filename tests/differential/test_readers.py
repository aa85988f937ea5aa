"""One reading of the same bytes: both TREC readers on every file of the harness.

Three readers: serpeval's own (``core/_trec_reader.c``, with the compiled kernels) takes
every file of data rows; Arrow's (without them) takes a file only when it is provably
single-space separated; the careful one (split on any whitespace) takes everything. Here
each file is read by all three, and each must give the rows the file was written from, in
file order, with the same skipped-line count and run tag.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from tests.differential.compare import TALLY
from tests.differential.conftest import Case
from tests.differential.layouts import Written

from serpeval.core import native
from serpeval.io import read_qrels, read_run
from serpeval.io import trec as trec_module


def read(kind: str, path: Path) -> Any:
    return read_qrels(path) if kind == "qrels" else read_run(path)


def contents(kind: str, data: Any) -> dict[str, Any]:
    numbers = data.relevance.tolist() if kind == "qrels" else data.scores.tolist()
    out = {"query_ids": data.query_ids.to_pylist(), "doc_ids": data.doc_ids.to_pylist(), "numbers": numbers,
           "skipped_lines": data.skipped_lines}
    if kind == "run":
        out["tag"] = data.tag
    return out


def expected(kind: str, written: Written) -> dict[str, Any]:
    parse = int if kind == "qrels" else float
    out = {"query_ids": [q for q, _, _ in written.rows], "doc_ids": [d for _, d, _ in written.rows],
           "numbers": [parse(v) for _, _, v in written.rows], "skipped_lines": written.skipped}
    if kind == "run":
        out["tag"] = written.tag
    return out


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_fast_and_careful_readers_give_the_written_rows(case: Case, kind: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    written = case.qrels if kind == "qrels" else case.run
    want = expected(kind, written)
    taken: dict[str, Any] = {}
    for reader in ("_native_rows", "_arrow_rows"):
        if reader == "_native_rows" and not native.available():
            continue
        original = getattr(trec_module, reader)

        def spy(*args: Any, original: Any = original, reader: str = reader, **kwargs: Any) -> Any:
            taken[reader] = original(*args, **kwargs)
            return taken[reader]

        with monkeypatch.context() as patch:
            patch.setattr(trec_module, "_fast_rows", spy)
            assert contents(kind, read(kind, written.path)) == want, reader
    # Arrow takes exactly the plain layouts (else it is never tested, or slow); serpeval's
    # reader takes every layout (all hold plain data rows).
    assert (taken["_arrow_rows"] is not None) == written.layout.fast, written.layout.name
    if native.available():
        assert taken["_native_rows"] is not None, written.layout.name
    with monkeypatch.context() as patch:
        patch.setattr(trec_module, "_fast_rows", lambda *args, **kwargs: None)
        assert contents(kind, read(kind, written.path)) == want
    TALLY.add("readers (all paths)", [written.path], 0, (1 + len(taken)) * 3 * len(written.rows))
    if kind in case.spec.scenario.blocks:
        # as Arrow parsed the file (Qrels then joins the doc ids into one array)
        assert taken["_arrow_rows"] is not None, written.layout.name
        assert_long_ids_in_one_block(taken["_arrow_rows"][1], first=kind == "run")


def assert_long_ids_in_one_block(doc_ids: Any, first: bool) -> None:
    """The file spans several Arrow blocks, and its long ids sit in one end of them."""
    longest = [pc.max(pc.binary_length(chunk)).as_py() for chunk in doc_ids.chunks]
    assert len(longest) >= 3, f"expected a table of several blocks, got chunks of {longest} bytes at most"
    holding = [i for i, n in enumerate(longest) if n > 16]
    assert holding, longest
    assert any(n <= 16 for n in longest), longest
    assert holding == (list(range(len(holding))) if first else list(range(len(longest) - len(holding), len(longest))))
