"""How a terminal table fits its width: boxed, else compact (no frame), else the record layout;
a header may break at its pieces, a number never."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from serpeval.report.comparison import text_table
from serpeval.report.table import (
    FRAMES,
    column_widths,
    fitted_widths,
    header_pieces,
    render,
    table_of,
    table_text,
    wrap_header,
)

#: The demo's first table: two runs, a long measure name among short ones.
ROWS = [
    {"run": "baseline", "queries": 200, "nDCG@10": 0.3972, "nDCG(gain=exp)@10": 0.3702, "AP": 0.3269,
     "P@10": 0.459, "R@50": 0.6986, "RR": 0.6914, "Judged@10": 0.606},
    {"run": "candidate", "queries": 200, "nDCG@10": 0.4765, "nDCG(gain=exp)@10": 0.462, "AP": 0.3803,
     "P@10": 0.515, "R@50": 0.7439, "RR": 0.7416, "Judged@10": 0.605},
]
NUMBERS = {"0.3972", "0.3702", "0.3269", "0.4590", "0.6986", "0.6914", "0.6060",
           "0.4765", "0.4620", "0.3803", "0.5150", "0.7439", "0.7416", "0.6050"}


def test_header_pieces_break_measure_names_but_not_words_or_numbers() -> None:
    assert header_pieces("nDCG(gain=exp)@10") == ["nDCG(", "gain=exp)", "@10"]
    assert header_pieces("p (Holm)") == ["p", "(Holm)"]  # an opening parenthesis starts its piece
    assert header_pieces("alpha-nDCG(alpha=0.5,judged_only)@20") == [
        "alpha-nDCG(", "alpha=0.5,", "judged_only)", "@20"]
    assert header_pieces("@10") == ["@10"]  # nothing before the @: no break
    assert header_pieces("queries") == ["queries"]


@pytest.mark.parametrize(("width", "expected"), [
    (17, "nDCG(gain=exp)@10"),
    (14, "nDCG(gain=exp)\n@10"),
    (12, "nDCG(\ngain=exp)@10"),
    (9, "nDCG(\ngain=exp)\n@10"),
    (3, "nDCG(\ngain=exp)\n@10"),  # pieces longer than the width keep a line each
])
def test_wrap_header_takes_as_few_lines_as_its_pieces_allow(width: int, expected: str) -> None:
    assert wrap_header("nDCG(gain=exp)@10", width) == expected


def test_wrap_header_keeps_the_space_between_words() -> None:
    assert wrap_header("p (Holm)", 8) == "p (Holm)"
    assert wrap_header("p (Holm)", 6) == "p\n(Holm)"


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("n_columns", [1, 2, 5, 9])
def test_each_frame_costs_what_rich_prints(compact: bool, n_columns: int) -> None:
    """FRAMES' arithmetic is rich's: at the natural widths the widest line is cells plus frame."""
    cols = list(ROWS[0])[:n_columns]
    cells = [[f"{r[c]:.4f}" if isinstance(r[c], float) else str(r[c]) for c in cols] for r in ROWS]
    widths = column_widths(cols, cells, 200, compact=compact)
    assert widths is not None
    right = [i > 0 for i in range(n_columns)]
    printed = table_text(table_of(cols, cells, right, widths=widths, compact=compact), width=200)
    assert max(cell_len(line) for line in printed.splitlines()) == sum(widths) + dict(FRAMES)[compact](n_columns)


@pytest.mark.parametrize(("width", "layout"), [(120, "boxed"), (100, "boxed"), (89, "boxed"), (88, "compact"),
                                               (77, "compact"), (76, "records")])
def test_the_roomiest_layout_that_fits_is_chosen(width: int, layout: str) -> None:
    """Hand-worked for ROWS: natural widths 9+7+7+17+6+6+6+6+9 = 73, so boxed (3 a column plus
    1) needs 73 + 28 = 101 as it is; at the narrowest (nDCG@10 to its cells' 6, nDCG(gain=exp)@10
    to its piece gain=exp) of 9, Judged@10 to 6) 61, so boxed fits from 89 and compact (2 between
    columns) from 61 + 16 = 77."""
    text = render(ROWS, width=width)
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= width
    first = lines[0]
    if layout == "boxed":
        assert first.startswith("┏")
    elif layout == "compact":
        assert not any(ch in text for ch in "┏│┃")
        assert any(set(line) == {"─"} for line in lines)
        assert "baseline" in text
        assert lines[-1].startswith("candidate")
    else:
        assert lines[0].startswith("run")
        assert lines[0].split() == ["run", "baseline"]
    found = {token for line in lines for token in line.split()}
    assert found >= NUMBERS, sorted(NUMBERS - found)  # every number whole, none split


def test_fitted_widths_names_the_frame() -> None:
    cols = list(ROWS[0])
    grid = [[f"{r[c]:.4f}" if isinstance(r[c], float) else str(r[c]) for c in cols] for r in ROWS]
    boxed = fitted_widths(cols, grid, 100)
    compact = fitted_widths(cols, grid, 80)
    assert boxed is not None
    assert boxed[1] is False
    assert sum(boxed[0]) + 3 * len(cols) + 1 <= 100
    assert compact is not None
    assert compact[1] is True
    assert sum(compact[0]) + 2 * (len(cols) - 1) <= 80
    assert fitted_widths(cols, grid, 77) is not None
    assert fitted_widths(cols, grid, 76) is None


def test_comparison_table_goes_compact_before_records() -> None:
    rows = [{"measure": "nDCG(gain=exp)@10", "system": "candidate", "mean": "0.4620", "Δ": "+0.0917",
             "95% CI": "[+0.0605, +0.1229]", "p": "0.0001", "p (Holm)": "0.0001", "d_z": "+0.41",
             "W/T/L": "127/0/73", "sig": "▲"}]
    cols = list(rows[0])
    wide = text_table(rows, cols, width=200)
    assert wide.splitlines()[0].startswith("┏")
    narrow = text_table(rows, cols, width=100)  # boxed needs 77 + 31 = 108 at the narrowest
    assert not any(ch in narrow for ch in "┏│┃")
    assert max(cell_len(line) for line in narrow.splitlines()) <= 100
    assert "[+0.0605," in narrow.split()
    assert "+0.1229]" in narrow.split()
    records = text_table(rows, cols, width=80)  # compact needs 77 + 18 = 95
    assert records.splitlines()[0].split() == ["measure", "nDCG(gain=exp)@10"]
