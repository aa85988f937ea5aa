"""serpeval's own TREC reader (``core/_trec_reader.c``) against the careful reader and Python.

The careful reader (split each line on whitespace, ``float()`` and ``int()``) is the
reference: for any bytes, the compiled reader gives the same rows, or refuses the file and
the careful reader then reads it or names the bad line. Scores must be bit-identical to
``float()``; ids are taken only when Python's strict UTF-8 decoding takes them; a file read
slice by slice, into several chunks or into buffers that grow gives what one pass gives.
"""

from __future__ import annotations

import locale
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from serpeval.core import native
from serpeval.core.errors import ParseError
from serpeval.io import trec as trec_module
from serpeval.io.trec import _careful_qrels, _careful_run, read_trec_run

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not built")


def native_read(data: bytes, run: bool = True, comments: bool = True, pieces: list[int] | None = None,
                size_hint: int | None = None, chunk_limit: int = 2**31 - 1):
    """Feed ``data`` to :class:`native.TrecColumns` in pieces cut at ``pieces`` (a cut line
    is carried to the next piece, as ``io.trec`` does); None when a line is refused."""
    columns = native.TrecColumns(run, comments, len(data) if size_hint is None else size_hint, chunk_limit)
    kept = b""
    cuts = [*sorted(set(pieces or [])), len(data)]
    start = 0
    for cut in cuts:
        piece = kept + data[start:cut]
        start = cut
        final = cut == len(data)
        used = columns.feed(np.frombuffer(piece, dtype=np.uint8), final=final)
        if used is None:
            return None
        kept = piece[used:]
    assert kept == b""
    q, d, numbers, skipped = columns.finish()
    return q.to_pylist(), d.to_pylist(), numbers, skipped, q.num_chunks


def careful_read(data: bytes, run: bool = True, comments: bool = True):
    try:
        if run:
            q, d, numbers, _ = _careful_run(data, "<bytes>", comments)
        else:
            q, d, numbers, _ = _careful_qrels(data, "<bytes>")
    except ParseError:
        return None
    if run and any(x != x for x in numbers):
        return None  # NaN: refused by the score rule
    return q, d, numbers, len(data.splitlines()) - len(numbers)


def same(got, want, run: bool = True) -> None:
    q, d, numbers, skipped, _chunks = got
    assert (q, d, skipped) == (want[0], want[1], want[3])
    dtype = np.float64 if run else np.int64
    assert numbers.dtype == dtype
    expected = np.array(want[2], dtype=dtype)
    # bit for bit (-0.0 and 0.0 differ)
    assert np.array_equal(numbers.view(np.int64), expected.view(np.int64))


# ---------------------------------------------------------------------------- scores, bit for bit

_digits = st.text(alphabet="0123456789", min_size=0, max_size=25)


@st.composite
def decimal_spellings(draw) -> str:
    sign = draw(st.sampled_from(["", "", "-", "+"]))
    whole, fraction = draw(_digits), draw(_digits)
    point = draw(st.booleans())
    if not whole and not fraction:
        whole = "0"
    text = sign + whole + ("." + fraction if point or not whole else "")
    if draw(st.booleans()):
        text += draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "-", "+"])) + str(
            draw(st.integers(0, 420)))
    return text


@settings(max_examples=600)
@given(st.one_of(decimal_spellings(), st.floats(allow_nan=False).map(repr),
                 st.floats(allow_nan=False, width=32).map(lambda x: f"{x:.9g}"),
                 st.integers(-(10**30), 10**30).map(str)))
@example("9007199254740993")  # 2^53 + 1: the fast path must not round it
@example("0.1")
@example("1e22")
@example("1e23")
@example("123456789012345678901234567890e-30")
@example("2.2250738585072011e-308")  # a subnormal neighbour
@example("-0")
@example("Infinity")
@example("-inF")
@example("1e400")
def test_scores_are_bit_identical_to_python_float(text: str) -> None:
    data = f"q Q0 d 1 {text} t\n".encode()
    got = native_read(data)
    assert got is not None, text
    assert np.array_equal(got[2].view(np.int64), np.array([float(text)]).view(np.int64)), text


@pytest.mark.parametrize("text", ["nan", "-NaN", "1_0", "0x10", "1e", "e5", ".", "+", "1.2.3", "inf1", "infinit",
                                  "1e+", "--1", "١", "1" * 70])
def test_scores_it_does_not_take_go_to_the_careful_reader(text: str) -> None:
    data = f"q Q0 d 1 {text} t\n".encode()
    assert native_read(data) is None
    if text == "1" * 70:  # long, but a number: the careful reader takes it
        assert read_trec_run(data).scores.tolist() == [float(text)]


# ---------------------------------------------------------------------------- ids: UTF-8 as Python decodes it

@settings(max_examples=500)
@given(st.binary(min_size=1, max_size=8).filter(lambda b: not any(c in b" \t\n\r\x0b\x0c" for c in b)
                                                and not b.startswith((b"#", b"\xef\xbb\xbf"))))
@example(b"\xed\xa0\x80")  # a surrogate
@example(b"\xc0\x80")  # overlong
@example(b"\xf4\x90\x80\x80")  # beyond U+10FFFF
@example(b"\xf0\x9f\x98\x80")  # an emoji
@example(b"\xe2\x82")  # cut short
@example(b"\xe0\x80\x80")  # overlong, three bytes
@example(b"\xe0\xa0\x80")  # the first three-byte character
@example(b"\xf0\x80\x80\x80")  # overlong, four bytes
def test_ids_are_taken_exactly_when_they_decode_as_utf8(raw: bytes) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    for data in (raw + b" Q0 d 1 1.0 t\n", b"q Q0 " + raw + b" 1 1.0 t\n"):
        got = native_read(data)
        if text is None:
            assert got is None
        else:
            assert got is not None
            assert text in (got[0][0], got[1][0])


# ---------------------------------------------------------------------------- whole files, every way of feeding them

_FIELD = st.one_of(
    st.sampled_from(["q1", "q2", "d1", "ü", "#x", "07", "2.5", "-1", "+3", "1e-3", "inf", "nan", "Q0", "x\ufeff"]),
    # ids as users have them: any length up to URLs, any script, NULs and control bytes
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60),
)
_SEP = st.sampled_from([" ", " ", " ", "  ", "\t", "\x0b", "\x0c", " \t"])
_END = st.sampled_from(["\n", "\n", "\r\n", "\r", " \n", "\n\n", "\t\r\n"])


@st.composite
def trec_files(draw, run: bool) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        width = draw(st.sampled_from([6, 6, 6, 7, 5] if run else [4, 4, 4, 3, 5]))
        fields = [draw(_FIELD) for _ in range(width)]
        prefix = draw(st.sampled_from(["", "", "", "\ufeff", " ", "# ", "\ufeff\ufeff"]))
        lines.append(prefix + draw(_SEP).join(fields) + draw(_END))
    if lines and draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\r\n")
    return "".join(lines).encode()


@settings(max_examples=300)
@given(st.booleans().flatmap(lambda run: st.tuples(st.just(run), trec_files(run))), st.booleans(),
       st.lists(st.integers(0, 400), max_size=6), st.integers(0, 64), st.sampled_from([3, 5, 2**31 - 1]))
def test_any_file_reads_as_the_careful_reader_reads_it(case, comments: bool, cuts: list[int], size_hint: int,
                                                        chunk_limit: int) -> None:
    run, data = case
    comments = comments or not run  # qrels always allow comment lines
    want = careful_read(data, run, comments)
    whole = native_read(data, run, comments)
    if want is None:
        assert whole is None, data
        return
    assert whole is not None, data
    same(whole, want, run)
    cuts = [c for c in cuts if c <= len(data)]
    pieces = native_read(data, run, comments, pieces=cuts, size_hint=size_hint, chunk_limit=chunk_limit)
    if pieces is None:  # only an id longer than a tiny chunk limit is refused
        assert chunk_limit < 2**31 - 1
        return
    same(pieces, want, run)


def test_a_byte_order_mark_cut_by_a_piece_is_still_dropped() -> None:
    data = b"".join(b"\xef\xbb\xbfq%d Q0 d 1 1 t\r\n" % i for i in range(4)) + b"\xef\xbb\xbf\xef\xbb\xbfq Q0 d 1 1 t"
    want = careful_read(data)
    for cut in range(len(data) + 1):
        for second in (cut + 1, cut + 2):
            same(native_read(data, pieces=[cut, min(second, len(data))]), want)


@pytest.mark.parametrize(("grade", "taken"), [(b"9007199254740991", True), (b"-9007199254740991", True),
                                              (b"9007199254740992", False), (b"-9007199254740992", False),
                                              (b"00000000000000000000009", True), (b"+", False), (b"-", False)])
def test_grades_within_the_limit_are_taken(grade: bytes, taken: bool) -> None:
    got = native_read(b"q 0 d " + grade + b"\n", run=False)
    assert (got is not None) == taken
    if taken:
        assert got[2].tolist() == [int(grade)]


def test_a_chunk_limit_splits_the_ids_into_chunks_with_the_same_rows() -> None:
    data = b"".join(b"q%d Q0 doc%d 1 %d.5 t\n" % (i % 7, i, i) for i in range(1000))
    one = native_read(data)
    many = native_read(data, chunk_limit=100, size_hint=10, pieces=list(range(0, len(data), 997)))
    assert one[4] == 1
    assert many[4] > 10
    assert one[:2] == many[:2]
    assert np.array_equal(one[2], many[2])


def test_a_file_is_read_slice_by_slice_with_lines_cut_anywhere(tmp_path: Path, monkeypatch) -> None:
    rows = [(f"q{i % 13}", f"d{'é' * (i % 5)}{i}", f"{i / 7!r}") for i in range(3000)]
    text = "".join(f"{q}\tQ0 {d} 1 {s} tag\r\n" for q, d, s in rows)
    text += "\ufeff# end\n" + "q0 Q0 long" + "x" * 300 + " 1 2 t"
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    monkeypatch.setattr(trec_module, "_SLICE", 61)  # smaller than the last line
    run = read_trec_run(path)
    assert run.query_ids.to_pylist() == [q for q, _, _ in rows] + ["q0"]
    assert run.doc_ids.to_pylist() == [d for _, d, _ in rows] + ["long" + "x" * 300]
    assert run.scores.tolist() == [float(s) for _, _, s in rows] + [2.0]
    assert run.skipped_lines == 1


def test_another_decimal_point_leaves_scores_to_the_careful_reader(monkeypatch) -> None:
    monkeypatch.setattr(locale, "localeconv", lambda: {"decimal_point": ","})
    src = trec_module.Source(b"q Q0 d 1 1.5 t\n")
    assert trec_module._native_rows(src, run=True, comments=True) is None
    assert read_trec_run(b"q Q0 d 1 1.5 t\n").scores.tolist() == [1.5]


def test_buffers_on_pages_of_their_own_read_the_same(tmp_path: Path, monkeypatch) -> None:
    """The reader's large buffers live in mappings of their own (``_OWN_PAGES`` and up); with
    that size made tiny, every buffer grows into, and is cut within, a mapping."""
    rows = [(f"q{i // 40}", f"doc-{'ü' * (i % 3)}{i}", f"{(i * 7919) % 1000 / 8!r}") for i in range(5000)]
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows), encoding="utf-8")
    monkeypatch.setattr(native, "_OWN_PAGES", 256)
    monkeypatch.setattr(native, "_PROBE", 1024)  # grow early, and more than once
    monkeypatch.setattr(trec_module, "_SLICE", 4096)
    grown = []
    original = native._regrow
    monkeypatch.setattr(native, "_regrow", lambda array, size: grown.append(original(array, size)) or grown[-1])
    run = read_trec_run(path)
    assert any(array.base is not None for array in grown)  # mappings, not malloc's
    assert run.query_ids.to_pylist() == [q for q, _, _ in rows]
    assert run.doc_ids.to_pylist() == [d for _, d, _ in rows]
    assert run.scores.tolist() == [float(s) for _, _, s in rows]
