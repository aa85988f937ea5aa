"""The compiled kernels (``core/_native.c``) against the NumPy code they replace: equal
outputs on the shapes real ids have, and equal evaluations end to end.

``scripts/test.sh`` sets ``SERPEVAL_EXPECT_NATIVE=1``: there a kernel library that failed to
build is a test failure, not a skip (the comparisons below would otherwise compare the
NumPy code with itself).
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval import evaluate
from serpeval.core import native
from serpeval.core.data import Qrels, Run
from serpeval.core.errors import DuplicateError
from serpeval.core.fingerprints import doc_pair_keys, fingerprint, pair_key
from serpeval.core.hash_index import KeyTable, Stored, StringTable
from serpeval.io import trec
from serpeval.ranking import index_qrels

if not native.available():
    if os.environ.get("SERPEVAL_EXPECT_NATIVE") == "1":
        pytest.fail(f"the compiled kernels are not loaded ({native.LIBRARY} missing, stale or unloadable): "
                    "pip install -e . builds them", pytrace=False)
    pytest.skip("the compiled kernels are not built here (pip install -e . builds them)", allow_module_level=True)


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the NumPy implementations (as on a machine without a C compiler)."""
    monkeypatch.setattr(native, "available", lambda: False)


def without_kernels(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "available", lambda: False)
        return fn(*args, **kwargs)


# Ids as collections mix them: empty, short, exactly 8 or 16 bytes, long, multi-byte UTF-8, NUL.
ids = st.one_of(
    st.text(max_size=3),
    st.text(alphabet="ab\x00é中", min_size=7, max_size=17),
    st.text(min_size=0, max_size=80),
    # "D" and 1 to 8 digits (the strings of from_regex(r"D[0-9]{1,8}"), drawn ~3x faster)
    st.text(alphabet="0123456789", min_size=1, max_size=8).map("D".__add__),
)


def chunked(values: list[str], cuts: list[int]) -> pa.ChunkedArray:
    """``values`` as several chunks, some of them slices with an offset into a larger array."""
    bounds = sorted({0, len(values), *[c % (len(values) + 1) for c in cuts]})
    chunks = []
    for start, stop in itertools.pairwise(bounds):
        whole = pa.array(["pad", *values[start:stop], "tail"], pa.string())
        chunks.append(whole.slice(1, stop - start))
    return pa.chunked_array(chunks, pa.string())


@settings(max_examples=200, deadline=None)
@given(st.lists(ids, max_size=60), st.lists(st.integers(0, 60), max_size=4))
def test_fingerprint_equals_numpy(values: list[str], cuts: list[int]) -> None:
    column = chunked(values, cuts)
    assert fingerprint(column).tolist() == without_kernels(fingerprint, column).tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(ids, max_size=60), st.lists(st.integers(0, 60), max_size=4), st.data())
def test_pair_keys_equal_numpy(values: list[str], cuts: list[int], data: st.DataObject) -> None:
    codes = np.array(data.draw(st.lists(st.integers(-1, 2**31 - 1), min_size=len(values), max_size=len(values))),
                     dtype=np.int32)
    column = chunked(values, cuts)
    expected = pair_key(codes, without_kernels(fingerprint, column))
    assert doc_pair_keys(codes, column).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(ids, min_size=1, max_size=40, unique=True), st.lists(ids, max_size=60),
       st.lists(st.integers(0, 60), max_size=3), st.integers(0, 3))
def test_find_equals_numpy(stored_values: list[str], probed: list[str], cuts: list[int], codes_seed: int) -> None:
    rng = np.random.default_rng(codes_seed)
    stored = pa.chunked_array([pa.array(stored_values, pa.string())])
    stored_codes = rng.integers(0, 3, len(stored_values)).astype(np.int32)
    values = chunked(probed + stored_values, cuts)  # some absent, all stored present
    codes = rng.integers(0, 3, len(values)).astype(np.int32)
    table = KeyTable(doc_pair_keys(stored_codes, stored))
    keys = doc_pair_keys(codes, values)
    # Plant fingerprint collisions: a few probes carry the key of another stored string.
    planted = rng.random(len(keys)) < 0.2
    keys[planted] = table._keys[rng.integers(0, len(stored_values), int(planted.sum()))]
    ours = table.find(keys.copy(), values, Stored(stored), codes, stored_codes)
    theirs = without_kernels(lambda: table.find(keys.copy(), values, Stored(stored), codes, stored_codes))
    assert ours.tolist() == theirs.tolist()
    assert set(ours.tolist()) <= {-2, -1, *range(len(stored_values))}
    for i, row in enumerate(ours.tolist()):  # a confirmed row is the same string and code
        if row >= 0:
            assert values[i].as_py() == stored_values[row]
            assert codes[i] == stored_codes[row]


@pytest.mark.parametrize("kernels", [True, False], ids=["compiled", "numpy"])
def test_string_table_with_collisions_falls_back_to_exact_lookup(monkeypatch: pytest.MonkeyPatch,
                                                                  kernels: bool) -> None:
    from serpeval.core import hash_index

    monkeypatch.setattr(hash_index, "fingerprint", lambda values: np.zeros(len(values), np.uint64))  # all collide
    if not kernels:
        monkeypatch.setattr(native, "available", lambda: False)
    table = StringTable(pa.array(["a", "b", "c"]))
    assert table.positions(pa.array(["c", "a", "b", "z", "b"])).tolist() == [2, 0, 1, -1, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 30), max_size=12), st.integers(0, 2**32))
def test_first_repeat_finds_a_repeat_within_a_segment_only(lengths: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    keys = rng.integers(1, 50, int(offsets[-1])).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    expected = -1
    for s in range(len(lengths)):
        seen: set[int] = set()
        for i in range(int(offsets[s]), int(offsets[s + 1])):
            if int(keys[i]) in seen:
                expected = i
                break
            seen.add(int(keys[i]))
        if expected >= 0:
            break
    assert native.first_repeat(keys, offsets) == expected


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"a", b"\x0b", b"\x0c",
                                                            b"\xef\xbb\xbf", b"\xef", b"\x00", b"1"]),
                                          max_size=40).map(b"".join))
def test_single_space_test_equals_numpy(data: bytes) -> None:
    raw = np.frombuffer(data, dtype=np.uint8)
    assert native.single_spaced(raw) == trec._slice_single_spaced(data, raw, 0)
    assert trec._single_spaced(data) == without_kernels(trec._single_spaced, data)


def _collection(rng: np.random.Generator, *, unjudged_queries: bool, shuffle: bool) -> tuple[Qrels, Run]:
    queries = [f"q{i}" for i in range(40)] + (["extra-ü", "zz"] if unjudged_queries else [])
    docs = [f"d{j}" for j in range(30)] + ["é" * 9, "x" * 17, ""[:0] + "long" * 5]
    q_rows, d_rows, s_rows = [], [], []
    for q in queries:
        picked = rng.choice(len(docs), size=int(rng.integers(1, 20)), replace=False)
        for j in picked:
            q_rows.append(q)
            d_rows.append(docs[j])
            s_rows.append(float(rng.integers(0, 5)))  # many ties
    order = rng.permutation(len(q_rows)) if shuffle else np.arange(len(q_rows))
    run = Run([q_rows[i] for i in order], [d_rows[i] for i in order], np.array(s_rows)[order], name="r")
    qq, qd, qg = [], [], []
    for q in queries[:40]:
        for j in rng.choice(len(docs), size=int(rng.integers(1, 12)), replace=False):
            qq.append(q)
            qd.append(docs[j])
            qg.append(int(rng.integers(-1, 4)))
    return Qrels(qq, qd, np.array(qg)), run


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", [{}, {"depth": 5}, {"judged_only": True}, {"missing": "zero"}],
                         ids=["default", "depth", "judged-only", "zero"])
def test_evaluate_equals_numpy_path(seed: int, options: dict) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = _collection(rng, unjudged_queries=seed % 2 == 0, shuffle=seed % 3 != 0)
    measures = ["AP", "nDCG@10", "P@5", "RR", "R@20", "Bpref", "Judged@10"]
    ours = evaluate(qrels, run, measures, **options)
    qrels2, run2 = _collection(np.random.default_rng(seed), unjudged_queries=seed % 2 == 0, shuffle=seed % 3 != 0)
    theirs = without_kernels(evaluate, qrels2, run2, measures, **options)
    assert ours.to_dicts(per_query=True) == theirs.to_dicts(per_query=True)
    assert len(ours.to_dicts(per_query=True)) == 40  # every judged query, one row each


def test_duplicate_doc_is_found_by_both_paths() -> None:
    qrels = Qrels(["q1", "q2"], ["a", "b"], np.array([1, 1]))
    run = Run(["q1"] * 12 + ["q2", "q2"], [f"d{i}" for i in range(11)] + ["d3", "b", "c"],
                          np.arange(14, dtype=float), name="r")
    with pytest.raises(DuplicateError, match="d3"):
        evaluate(qrels, run, ["AP"])
    with pytest.raises(DuplicateError, match="d3"):
        without_kernels(evaluate, qrels, run, ["AP"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 70), max_size=30), st.integers(0, 2**32))
def test_prefix_sums_equal_numpy(lengths: list[int], seed: int) -> None:
    from serpeval.measures._segments import prefix_sums

    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.standard_normal(int(offsets[-1])) * 10.0 ** rng.integers(-8, 8, int(offsets[-1]))
    ours = prefix_sums(values, offsets)
    assert ours.tobytes() == without_kernels(prefix_sums, values, offsets).tobytes()  # bit for bit
    for s in range(len(lengths)):  # and the C loop's order: left to right
        total = 0.0
        for i in range(int(offsets[s]), int(offsets[s + 1])):
            total += float(values[i])
            assert ours[i] == total


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 12), max_size=30), st.integers(0, 2**32))
def test_picked_docs_equal_numpy(lengths: list[int], seed: int) -> None:
    from types import SimpleNamespace

    from serpeval.measures._segments import Picked

    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    r = SimpleNamespace(offsets=offsets, n_ret=np.diff(offsets))
    mask = rng.random(int(offsets[-1])) < 0.4
    ours, theirs = Picked.of(r, mask), without_kernels(Picked.of, r, mask)
    for field in ("index", "segment", "position", "offsets"):
        assert getattr(ours, field).tolist() == getattr(theirs, field).tolist(), field
        assert getattr(ours, field).dtype == np.int64


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q10", "é"]), ids), min_size=1, max_size=40),
       st.lists(st.integers(0, 40), max_size=3))
def test_qrels_duplicate_check_equals_numpy(pairs: list[tuple[str, str]], cuts: list[int]) -> None:
    query_ids = chunked([q for q, _ in pairs], cuts)
    doc_ids = chunked([d for _, d in pairs], cuts)
    grades = np.zeros(len(pairs), dtype=np.int64)
    ours = Qrels(query_ids, doc_ids, grades).find_duplicate()
    theirs = without_kernels(lambda: Qrels(query_ids, doc_ids, grades).find_duplicate())
    assert ours == theirs
    seen: dict[tuple[str, str], int] = {}
    expected = (-1, -1)
    for row, pair in enumerate(pairs):  # the duplicate whose second line comes first
        if pair in seen:
            expected = (seen[pair], row)
            break
        seen[pair] = row
    assert ours == expected


def test_qrels_duplicate_check_with_colliding_fingerprints(monkeypatch: pytest.MonkeyPatch) -> None:
    from serpeval.core import data

    monkeypatch.setattr(data, "fingerprint", lambda values: np.zeros(len(values), np.uint64))  # all collide
    assert Qrels(["q", "q", "q"], ["a", "b", "c"], np.zeros(3, np.int64)).find_duplicate() == (-1, -1)
    assert Qrels(["q", "q", "q", "q"], ["a", "b", "c", "b"], np.zeros(4, np.int64)).find_duplicate() == (1, 3)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.integers(0, 2**32))
def test_ideal_grades_equal_numpy(lengths: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(sum(lengths))
    codes = np.repeat(np.arange(len(lengths)), lengths)
    rng.shuffle(codes)
    qrels_args = ([f"q{c}" for c in codes], [f"d{i}" for i in range(n)], rng.integers(-2, 2**40, n))
    if n == 0:
        return
    ours = index_qrels(Qrels(*qrels_args))
    theirs = without_kernels(index_qrels, Qrels(*qrels_args))
    assert ours.ideal_grades.tolist() == theirs.ideal_grades.tolist()
    assert ours.ideal_offsets.tolist() == theirs.ideal_offsets.tolist()
    assert ours.row_query.tolist() == theirs.row_query.tolist()
    assert ours.query_ids.equals(theirs.query_ids)


@pytest.mark.parametrize("kernels", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("depth", [None, 3, 5])
def test_duplicates_are_checked_after_the_depth_cut(kernels: bool, depth: int | None) -> None:
    """trec_eval checks duplicates among the docs it keeps: one above the cut is an error,
    one only below it is not (files in rank order, so nothing moves when sorted)."""
    qrels = Qrels(["q1", "q2"], ["a", "x"], np.array([1, 1]))
    docs = ["a", "b", "c", "b", "d", "e"]  # 'b' at ranks 2 and 4
    run = Run(["q1"] * 6 + ["q2"], [*docs, "x"], np.array([6.0, 5, 4, 3, 2, 1, 1]), name="r")
    evaluate_ = evaluate if kernels else (lambda *a, **k: without_kernels(evaluate, *a, **k))
    if depth == 3:
        assert evaluate_(qrels, run, ["AP"], depth=depth).means("r")["AP"] == 1.0
    else:
        with pytest.raises(DuplicateError, match="'b'"):
            evaluate_(qrels, run, ["AP"], depth=depth)


@pytest.mark.parametrize("kernels", [True, False], ids=["compiled", "numpy"])
def test_a_duplicate_in_a_later_query_is_found_after_the_depth_cut(kernels: bool) -> None:
    """The cut shortens earlier queries, so later queries' ranks no longer sit at their file
    rows: the check must read the ranked rows, not the file's."""
    qrels = Qrels(["q1", "q2"], ["a", "y"], np.array([1, 1]))
    run = Run(["q1"] * 6 + ["q2"] * 3, ["a", "b", "c", "d", "e", "f", "y", "z", "y"],
              np.array([6.0, 5, 4, 3, 2, 1, 3, 2, 1]), name="r")
    evaluate_ = evaluate if kernels else (lambda *a, **k: without_kernels(evaluate, *a, **k))
    with pytest.raises(DuplicateError, match="'y'"):
        evaluate_(qrels, run, ["AP"], depth=3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=30))
def test_positions_in_segments_equal_numpy(lengths: list[int]) -> None:
    from serpeval.core.segments import positions_in_segments

    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ours = positions_in_segments(offsets)
    assert ours.tolist() == without_kernels(positions_in_segments, offsets).tolist()
    assert ours.tolist() == [j for n in lengths for j in range(n)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=25), st.integers(0, 2**32))
def test_presorted_blocks_moved_into_code_order_equal_numpy(lengths: list[int], seed: int) -> None:
    from serpeval.core.order import sort_order

    rng = np.random.default_rng(seed)
    query_order = rng.permutation(len(lengths))  # whole queries in a shuffled order
    codes = np.repeat(query_order, [lengths[q] for q in query_order]).astype(np.int32)
    scores = np.concatenate([np.sort(rng.integers(0, 4, lengths[q]).astype(float))[::-1] for q in query_order])
    docs = pa.chunked_array([pa.array([f"d{i}" for i in range(len(codes))])])
    ours = sort_order(codes, scores, docs)
    assert ours.tolist() == without_kernels(sort_order, codes, scores, docs).tolist()
    assert sorted(ours.tolist()) == list(range(len(codes)))


@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
@pytest.mark.parametrize("judged", [5, 40], ids=["few-judgments", "many-judgments"])
def test_matching_is_exact_whatever_the_fingerprints(monkeypatch: pytest.MonkeyPatch, shuffle: bool,
                                                     judged: int) -> None:
    """Every doc is matched on its bytes: with every fingerprint equal (all collide) the
    grades are the same as with real ones, through the hash table (long blocks), the
    whole-group compare (few judgments) and the halving search (rows not grouped)."""
    from serpeval import ranking
    from serpeval.core import data

    rng = np.random.default_rng(judged)
    docs = [f"d{i}" for i in range(60)] + ["é" * 5, "x" * 20, ""]
    q_rows = [q for q in ("q1", "q2", "q3") for _ in range(50)]
    d_rows = [d for _ in range(3) for d in rng.choice(docs, 50, replace=False)]
    order = rng.permutation(len(q_rows)) if shuffle else np.arange(len(q_rows))
    run_args = ([q_rows[i] for i in order], [d_rows[i] for i in order], rng.random(len(q_rows))[order])
    judgments = [(q, d) for q in ("q1", "q2", "q3") for d in rng.choice(docs, judged, replace=False)]
    qrels_args = ([q for q, _ in judgments], [d for _, d in judgments], rng.integers(-1, 4, len(judgments)))
    measures = ["AP", "nDCG@10", "P@5", "Judged@50", "NumRelRet"]
    real = evaluate(Qrels(*qrels_args), Run(*run_args, name="r"), measures).to_dicts(per_query=True)
    constant = lambda values, order=None: np.full(len(values if order is None else order), 12345,  # noqa: E731
                                                  np.uint64)
    monkeypatch.setattr(ranking, "fingerprint", constant)
    monkeypatch.setattr(data, "fingerprint", constant)
    collided = evaluate(Qrels(*qrels_args), Run(*run_args, name="r"), measures).to_dicts(per_query=True)
    assert collided == real


def test_grades_may_be_written_over_the_fingerprints() -> None:
    """rank() has the matching kernel write each row's grade over its fingerprint: the same
    grades as into a new array, over a run of several string chunks."""
    from serpeval.core.hash_index import grades_in_groups
    from serpeval.core.id_codes import codes_in

    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(40)] + ["é" * 3, ""]
    judged = [d for _ in range(2) for d in rng.choice(docs, 20, replace=False)]
    qrels = Qrels(["q1"] * 20 + ["q2"] * 20, judged, rng.integers(-1, 4, 40))
    run_docs = [d for _ in range(3) for d in rng.choice(docs, 30, replace=False)]
    doc_ids = pa.chunked_array([pa.array(run_docs[i: i + 25]) for i in range(0, len(run_docs), 25)])
    index = index_qrels(qrels)
    codes, _ = codes_in(pa.chunked_array([pa.array(["q1"] * 30 + ["q2"] * 30 + ["q9"] * 30)]), index.query_table)
    prints = fingerprint(doc_ids)
    separate = grades_in_groups(index.groups, codes, prints, doc_ids, index.grades, -7, -9)
    in_place = grades_in_groups(index.groups, codes, prints, doc_ids, index.grades, -7, -9,
                                out=prints.view(np.int64))
    assert np.shares_memory(in_place, prints)
    assert in_place.tolist() == separate.tolist()
    assert (separate[60:] == -7).all()  # q9 is not judged
    assert (separate[:60] != -7).sum() >= 10
    # the rows in any order (read through it, across the chunks), written over their prints
    prints = fingerprint(doc_ids)  # (the grades were written over the first ones)
    for kernels in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(native, "available", lambda kernels=kernels: kernels)
            for order in (rng.permutation(90), np.arange(89, -1, -1), rng.permutation(90)[:37]):
                ranked = fingerprint(doc_ids, order)
                assert ranked.tolist() == prints[order].tolist()
                if kernels:
                    got = grades_in_groups(index.groups, codes[order], ranked, doc_ids, index.grades, -7, -9,
                                           out=ranked.view(np.int64), order=order)
                    assert got.tolist() == separate[order].tolist()
    one_chunk = pa.chunked_array([doc_ids.combine_chunks()])
    order = rng.permutation(90)
    ranked = fingerprint(one_chunk, order)
    got = grades_in_groups(index.groups, codes[order], ranked, one_chunk, index.grades, -7, -9,
                           out=ranked.view(np.int64), order=order)
    assert np.shares_memory(got, ranked)
    assert got.tolist() == separate[order].tolist()
