"""Query ids kept as blocks of equal neighbours (the TREC reader's run-end encoded column):
the blocks are exact, expanding them gives the column the careful reader gives, evaluating
never expands them, and everything that needs the column still gets it."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import serpeval
from serpeval.core import data as data_module
from serpeval.core import native
from serpeval.core.columns import Blocks, take
from serpeval.core.data import Qrels, Run
from serpeval.core.errors import DuplicateError
from serpeval.core.id_codes import codes_in
from serpeval.io.trec import _careful_run, read_trec_qrels, read_trec_run

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not built")

_IDS = st.sampled_from(["q1", "q10", "q2", "Q1", "é", "q1 ", "long-query-id-" * 3, "x"]).map(str.strip)


def _grouped_file(blocks: list[tuple[str, int]]) -> bytes:
    lines, row = [], 0
    for qid, rows in blocks:
        for _ in range(rows):
            lines.append(f"{qid} Q0 d{row} 0 {row % 7}.25 tag\n")
            row += 1
    return "".join(lines).encode()


def _read(data: bytes, chunk_limit: int = 2**31 - 1, pieces: int = 1) -> pa.ChunkedArray:
    columns = native.TrecColumns(True, True, len(data), chunk_limit)
    kept = b""
    step = max(1, len(data) // pieces)
    for start in range(0, len(data) + 1, step):
        piece = kept + data[start:start + step]
        used = columns.feed(np.frombuffer(piece, dtype=np.uint8), final=start + step >= len(data))
        assert used is not None
        kept = piece[used:]
    return columns.finish()[0]


@settings(max_examples=200)
@given(st.lists(st.tuples(_IDS, st.integers(1, 6)), min_size=1, max_size=12),
       st.sampled_from([60, 97, 2**31 - 1]), st.integers(1, 5))
def test_blocks_are_the_maximal_runs_of_equal_neighbours_in_each_chunk(blocks, chunk_limit, pieces) -> None:
    data = _grouped_file(blocks)
    column = _read(data, chunk_limit, pieces)
    assert pa.types.is_run_end_encoded(column.type)
    want, _, _, _ = _careful_run(data, "<bytes>", True)
    assert column.to_pylist() == want
    for chunk in column.chunks:
        heads = chunk.values.to_pylist()
        ends = chunk.run_ends.to_numpy()
        assert all(a != b for a, b in itertools.pairwise(heads))  # maximal: neighbours differ
        assert np.all(np.diff(ends) > 0)
        assert ends[-1] == len(chunk)


def test_a_grouped_run_keeps_its_blocks_and_evaluating_it_never_expands_them(tmp_path, monkeypatch) -> None:
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(50) for d in range(0, 30, 4)))
    run_path.write_text("".join(f"q{q} Q0 d{d} 0 {-d}.5 bm25\n" for q in range(60) for d in range(30)))
    expanded = []
    original = data_module._decoded
    monkeypatch.setattr(data_module, "_decoded", lambda values: expanded.append(len(values)) or original(values))
    run, qrels = read_trec_run(run_path), read_trec_qrels(qrels_path)
    assert "query_ids" not in vars(run)
    assert "query_ids" not in vars(qrels)
    blocks = run.query_id_blocks()
    assert isinstance(blocks, Blocks)
    assert blocks.heads.to_pylist() == [f"q{q}" for q in range(60)]
    assert blocks.lengths.tolist() == [30] * 60
    res = serpeval.evaluate(qrels, [run, run.renamed("again")], ["nDCG@10", "AP", "RR"])
    assert expanded == []
    # the column is there when asked for, once, and the numbers are those of a plain column
    assert run.query_ids.to_pylist() == [f"q{q}" for q in range(60) for _ in range(30)]
    assert run.query_ids is run.query_ids
    assert expanded == [1800]
    plain = Run(pa.array(run.query_ids.to_pylist(), pa.string()), run.doc_ids, run.scores, name="bm25")
    again = serpeval.evaluate(qrels, plain, ["nDCG@10", "AP", "RR"])
    assert np.array_equal(res.runs[0].values, again.runs[0].values)
    assert np.array_equal(res.runs[1].values, again.runs[0].values)


def test_a_run_with_blocks_pickles_and_renames_as_a_run() -> None:
    column = _read(_grouped_file([("a", 3), ("b", 2)]))
    run = Run(column, pa.array([f"d{i}" for i in range(5)]), np.arange(5.0), name="r")
    copy = pickle.loads(pickle.dumps(run))
    assert copy.query_ids.to_pylist() == ["a", "a", "a", "b", "b"]
    renamed = run.renamed("s")
    assert "query_ids" not in vars(renamed)
    assert renamed.query_ids.to_pylist() == ["a", "a", "a", "b", "b"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = run.nothing


def test_a_file_not_grouped_by_query_gets_a_plain_column() -> None:
    column = _read(b"".join(b"q%d Q0 d%d 0 1 t\n" % (i % 3, i) for i in range(30)))
    run = Run(column, pa.array([f"d{i}" for i in range(30)]), np.zeros(30))
    assert "query_ids" in vars(run)
    assert run.query_ids.type == pa.string()
    assert run.query_ids.to_pylist() == [f"q{i % 3}" for i in range(30)]


def test_expanding_cuts_chunks_whose_bytes_would_pass_the_offsets_limit(monkeypatch) -> None:
    """Chunks of at most the limit's bytes, also within one block longer than the limit."""
    column = _read(_grouped_file([("aaaa", 7), ("bb", 1), ("c", 4), ("dddddd", 2), ("ee", 3)]))
    monkeypatch.setattr(data_module, "_STRING_LIMIT", 10)
    decoded = data_module._decoded(column)
    assert decoded.to_pylist() == column.to_pylist()
    assert max(len("".join(chunk.to_pylist()).encode()) for chunk in decoded.chunks) <= 10
    assert decoded.num_chunks > 3


def test_codes_and_takes_from_blocks_equal_those_from_the_column() -> None:
    column = _read(_grouped_file([("q2", 3), ("q1", 2), ("q3", 1), ("q2", 2)]))
    run = Run(column, pa.array([f"d{i}" for i in range(8)]), np.zeros(8))
    blocks = run.query_id_blocks()
    universe = pa.array(["q1", "q2", "q9"])
    for among in (None, universe):
        from_blocks, names_b = codes_in(blocks, among)
        from_column, names_c = codes_in(run.query_ids, among)
        assert from_blocks.tolist() == from_column.tolist()
        assert names_b.equals(names_c)
    rows = np.array([7, 0, 3, 5, 4])
    assert take(blocks, rows).to_pylist() == take(run.query_ids, rows).to_pylist()


def test_a_judgment_given_twice_is_still_named_with_its_lines(tmp_path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq2 0 c 2\nq2 0 a 0\n")
    with pytest.raises(DuplicateError, match=r"qrels.txt:5: document 'a' is judged twice for query 'q2' "
                                             r"\(first at line 3\)"):
        read_trec_qrels(path)
    assert isinstance(Qrels(_read(_grouped_file([("a", 2)])), ["x", "y"], [1, 0]).query_id_blocks(), Blocks)


@pytest.mark.parametrize("column", [
    pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int64()), pa.array(["a", "bb"], pa.large_string())),
    pa.RunEndEncodedArray.from_arrays(pa.array([2, 5], pa.int32()), pa.array(["a", "bb"])).slice(1, 3),
], ids=["int64-ends-large-strings", "a-slice"])
def test_other_run_end_encoded_columns_become_plain_string_columns(column) -> None:
    """Given by a user (a Parquet file may hold one), any run-end encoded column is taken:
    expanded at once into the plain ``string`` column the rest of serpeval reads."""
    run = Run(pa.chunked_array([column]), ["x", "y", "z"], np.zeros(3))
    assert "query_ids" in vars(run)
    assert run.query_ids.type == pa.string()
    assert run.query_ids.to_pylist() == column.to_pylist()
