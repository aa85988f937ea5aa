"""The vectorized building blocks: factorize, fingerprint, the hash table, segments."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from serpeval.core.columns import take
from serpeval.core.fingerprints import fingerprint
from serpeval.core.hash_index import KeyTable, StringTable
from serpeval.core.id_codes import codes_in, factorize
from serpeval.core.segments import take_segments
from serpeval.core.string_compare import equal_at


@given(st.lists(st.text(max_size=20), min_size=1, max_size=60))
def test_fingerprint_equal_strings_equal_prints(values: list[str]) -> None:
    prints = fingerprint(pa.chunked_array([pa.array(values, pa.string())]))
    by_value: dict[str, int] = {}
    for v, p in zip(values, prints.tolist(), strict=True):
        assert by_value.setdefault(v, p) == p
    # distinct strings get distinct prints (a 64-bit collision here would be a bug, not luck)
    assert len(set(prints.tolist())) == len(set(values))


def test_fingerprint_sees_every_byte_and_the_length() -> None:
    values = ["a" * 24, "a" * 23 + "b", "b" + "a" * 23, "a" * 12 + "b" + "a" * 11, "", "\x00", "a" * 25]
    chunks = pa.chunked_array([pa.array(values[:3]), pa.array(values[3:])])
    assert len(set(fingerprint(chunks).tolist())) == len(values)


# Ids as real collections mix them: short and long, ASCII and multi-byte UTF-8, NULs.
_ids = st.one_of(
    st.text(max_size=200),
    st.text(alphabet="0123456789", max_size=12),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.integers(0, 200).map(lambda n: "d" * n),
)


def _alone(value: str) -> int:
    return int(fingerprint(pa.chunked_array([pa.array([value], pa.string())]))[0])


@given(st.lists(_ids, min_size=1, max_size=40), st.data())
def test_fingerprint_depends_on_the_string_alone(values: list[str], data) -> None:
    """A string's fingerprint is the same alone and inside any array and any chunking.

    The defect this guards: ended strings kept being mixed for every further word of the
    longest string in their chunk, so ``"a"`` next to a 30-byte id hashed differently
    from ``"a"`` next to short ids, and qrels and runs never matched.
    """
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=4)))
    bounds = [0, *cuts, len(values)]
    chunks = [pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(bounds)]
    # An offset slice too: Arrow arrays that start inside their buffers.
    sliced = pa.array(["padding", *values], pa.string()).slice(1)
    expected = [_alone(v) for v in values]
    assert fingerprint(pa.chunked_array(chunks, pa.string())).tolist() == expected
    assert fingerprint(pa.chunked_array([sliced])).tolist() == expected
    assert fingerprint(pa.chunked_array([pa.array(values, pa.large_string())])).tolist() == expected


def test_fingerprint_next_to_a_long_id() -> None:
    """The reproduction from the issue: short ids beside a long one keep their prints."""
    short = ["a", "b", "doc1", "12345678", "123456789"]
    with_long = fingerprint(pa.chunked_array([pa.array([*short, "this_is_a_very_long_document_id"])]))
    assert with_long[: len(short)].tolist() == [_alone(v) for v in short]


def test_fingerprint_long_id_among_short_ones() -> None:
    """A 4 MiB id among 2,000 short ones: every print equals the print of the id alone."""
    values = ["x" * (4 << 20), *(f"d{i}" for i in range(2000))]
    prints = fingerprint(pa.chunked_array([pa.array(values)]))
    assert prints[1:].tolist() == fingerprint(pa.chunked_array([pa.array(values[1:])])).tolist()
    assert int(prints[0]) == _alone(values[0])


def test_factorize_grouped_and_shuffled() -> None:
    grouped = pa.chunked_array([pa.array(["b", "b", "a"]), pa.array(["a", "c"])])
    codes, names = factorize(grouped)
    assert names == ["b", "a", "c"]
    assert codes.tolist() == [0, 0, 1, 1, 2]
    shuffled = pa.chunked_array([pa.array([str(i % 7) for i in range(5000)])])
    codes, names = factorize(shuffled)
    assert [names[c] for c in codes[:9].tolist()] == [str(i % 7) for i in range(9)]


def test_key_table_finds_every_key_and_nothing_else() -> None:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**63, 20_000, dtype=np.uint64) * np.uint64(2)
    table = KeyTable(np.concatenate([keys, keys[:5]]))  # a repeated key keeps its first row
    probe = np.concatenate([keys, rng.integers(0, 2**63, 5_000, dtype=np.uint64) | np.uint64(1) << np.uint64(62)])
    rows = table.lookup(probe)
    assert np.array_equal(rows[:20_000], np.arange(20_000))
    assert (rows[20_000:] == -1).all()
    assert KeyTable(np.zeros(0, np.uint64)).lookup(keys[:3]).tolist() == [-1, -1, -1]


def test_take_segments() -> None:
    offsets = np.array([0, 2, 2, 5])
    new_offsets, index = take_segments(offsets, np.array([2, 0]))
    assert new_offsets.tolist() == [0, 3, 5]
    assert index.tolist() == [2, 3, 4, 0, 1]


@given(
    st.lists(st.lists(st.text(max_size=5), max_size=6), min_size=1, max_size=5),
    st.data(),
)
def test_take_gathers_across_chunks_in_the_asked_order(chunks: list[list[str]], data) -> None:
    values = pa.chunked_array([pa.array(c, pa.string()) for c in chunks], type=pa.string())
    flat = [v for c in chunks for v in c]
    indices = data.draw(st.lists(st.integers(0, len(flat) - 1), max_size=12) if flat else st.just([]))
    got = take(values, np.array(indices, dtype=np.int64))
    assert got.to_pylist() == [flat[i] for i in indices]
    assert got.num_chunks == 1


def _chunked(values: list[str], cuts: list[int]) -> pa.ChunkedArray:
    bounds = [0, *sorted(cuts), len(values)]
    return pa.chunked_array([pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(bounds)],
                            pa.string())


@given(st.lists(_ids, min_size=1, max_size=30), st.lists(_ids, min_size=1, max_size=30), st.data())
def test_equal_at_is_string_equality(left: list[str], right: list[str], data) -> None:
    """Byte-for-byte comparison at pairs of rows, across chunks and offset slices, equals
    Python's ``==`` (ids that share a prefix, differ only in length, or hold NULs included)."""
    a = _chunked(left, data.draw(st.lists(st.integers(0, len(left)), max_size=3)))
    b = pa.chunked_array([pa.array(["pad", *right], pa.string()).slice(1)])
    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(left) - 1), st.integers(0, len(right) - 1)),
                               max_size=40))
    pairs += [(i, j) for i in range(len(left)) for j in range(len(right)) if left[i] == right[j]][:20]
    ia = np.array([i for i, _ in pairs], dtype=np.int64)
    ib = np.array([j for _, j in pairs], dtype=np.int64)
    assert equal_at(a, ia, b, ib).tolist() == [left[i] == right[j] for i, j in pairs]


def test_equal_at_words_past_the_first() -> None:
    """Strings equal in their first 8 or 16 bytes and in length, different later."""
    left = ["msmarco_doc_00_1", "msmarco_doc_00_12345", "abcdefgh", "abcdefghij", ""]
    right = ["msmarco_doc_00_2", "msmarco_doc_00_12346", "abcdefgh", "abcdefghij", ""]
    got = equal_at(pa.chunked_array([pa.array(left)]), np.arange(5), pa.chunked_array([pa.array(right)]),
                   np.arange(5))
    assert got.tolist() == [False, False, True, True, True]


@given(st.lists(st.lists(_ids, max_size=8), min_size=1, max_size=4))
def test_codes_in_sorted_codes_follow_byte_order(chunks: list[list[str]]) -> None:
    values = pa.chunked_array([pa.array(c, pa.string()) for c in chunks], pa.string())
    flat = [v for c in chunks for v in c]
    codes, uniques = codes_in(values)
    distinct = sorted(set(flat), key=lambda v: v.encode())
    assert uniques.to_pylist() == distinct
    assert [distinct[c] for c in codes.tolist()] == flat


def test_codes_in_a_universe_and_string_table_collisions(monkeypatch) -> None:
    """Positions in a universe are exact even when every fingerprint collides: with a
    fingerprint that only sees the length, each probe's candidate is usually another string
    and the exact fallback must find the right one (or none)."""
    universe = pa.array(["a", "b", "cc", "dd", "long-query-id-1", "long-query-id-2"])
    values = pa.chunked_array([pa.array(["dd", "dd", "x", "b", "long-query-id-2", "zz", "a", "x"])])
    expected = [3, 3, -1, 1, 5, -1, 0, -1]
    codes, names = codes_in(values, StringTable(universe))
    assert codes.tolist() == expected
    assert names.to_pylist() == ["a", "b", "dd", "long-query-id-2", "x", "zz"]  # found, then absent
    from serpeval.core import hash_index

    def length_only(values: pa.ChunkedArray) -> np.ndarray:
        return np.array([len(v.encode()) * 0x9E3779B97F4A7C15 % 2**64 for v in values.to_pylist()],
                        dtype=np.uint64)

    monkeypatch.setattr(hash_index, "fingerprint", length_only)
    assert codes_in(values, StringTable(universe))[0].tolist() == expected


def test_key_table_probes_past_full_clusters() -> None:
    """Keys that all share one home slot form one cluster: each is found by probing along
    it, a missing key with the same home stops at the cluster's end."""
    home = np.uint64(7) << np.uint64(59)
    keys = home | (np.arange(1, 40, dtype=np.uint64) << np.uint64(1))
    table = KeyTable(keys)
    assert table.lookup(keys).tolist() == list(range(39))
    assert table.lookup(np.array([home | np.uint64(1000)], dtype=np.uint64)).tolist() == [-1]
