"""Test collections whose ids, scores and grades come in the shapes real users have.

A doc-id hash that depended on the longest id of its Arrow chunk passed 1,100 tests because
every generated id had the same length. Here one collection mixes ids of 1 to 130 bytes,
ids that are prefixes of each other or share their first 8 or 16 bytes, numeric strings
with leading zeros, multi-byte UTF-8, and strings that other tools read as numbers or
nulls; scores tie, collapse to one 32-bit float, or are written as ``1e-3``, ``+2``, ``.5``;
grades run from -2 to 4, some written ``02`` or ``+1``. A :class:`Scenario` says which
shapes go where (long ids only in the run, only in the qrels, only in one chunk of a
multi-block file); :func:`make_collection` draws the rows, with a seeded generator.

The rows kept here are the logical content; :mod:`tests.differential.layouts` writes them
in many file layouts, and pytrec_eval gets dicts built from the same rows.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

ASCII = string.ascii_letters + string.digits + "-_.:/"
# Multi-byte UTF-8 of every width, a combining accent (NFC and NFD spellings stay different
# ids), a no-break space and U+2028 (not line breaks for bytes), and U+FEFF inside an id.
UNICODE = ["é", "ü", "ß", "Ω", "€", "日", "本", "語", "🙂", "𝔸", "e\u0301", "\u00a0", "\u2028", "x\ufeff"]
NULLISH = ["nan", "NaN", "NULL", "null", "N/A", "NA", "-nan", "inf", "-inf", "1e5", "-0", "None",
           "true", "0x10", "#N/A", "1_0", "+1"]


# ----------------------------------------------------------------------------- ids


def _ascii(rng: np.random.Generator, length: int) -> str:
    return "".join(rng.choice(list(ASCII), size=length).tolist())


def _short(rng: np.random.Generator) -> str:
    return _ascii(rng, int(rng.integers(1, 5)))


def _mixed(rng: np.random.Generator) -> str:
    return _ascii(rng, int(rng.integers(1, 73)))


def _long(rng: np.random.Generator) -> str:
    return _ascii(rng, int(rng.integers(33, 131)))


def _word_edges(rng: np.random.Generator) -> str:
    """Lengths just below, at and above the 8-byte words a hash reads."""
    return _ascii(rng, int(rng.choice([7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65])))


_BASE = "clueweb12-0000tw-05-12114-msmarco_passage_000"


def _prefix(rng: np.random.Generator) -> str:
    """Prefixes of one long id, sometimes with one more byte: ``c``, ``clue``, ``clueweb12-0``."""
    cut = int(rng.integers(1, len(_BASE) + 1))
    return _BASE[:cut] + (str(int(rng.integers(0, 10))) if rng.random() < 0.3 else "")


def _shared(width: int) -> Callable[[np.random.Generator], str]:
    """Ids that share their first ``width`` bytes and differ only after them."""
    head = "ABCDEFGHIJKLMNOP"[:width]

    def draw(rng: np.random.Generator) -> str:
        return head + _ascii(rng, int(rng.integers(1, 12)))

    return draw


def _numeric(rng: np.random.Generator) -> str:
    """Digit strings, often with leading zeros: ``7``, ``07``, ``007`` are different ids."""
    return "0" * int(rng.choice([0, 0, 1, 2, 5])) + str(int(rng.integers(0, 2000)))


def _utf8(rng: np.random.Generator) -> str:
    parts = rng.choice(UNICODE + list("abc123"), size=int(rng.integers(1, 12))).tolist()
    return "".join(parts)


def _nullish(rng: np.random.Generator) -> str:
    word = str(rng.choice(NULLISH))
    return word if rng.random() < 0.5 else word + _ascii(rng, int(rng.integers(1, 4)))


def _case(rng: np.random.Generator) -> str:
    """Ids that differ only in case: ``D1``, ``d1``."""
    return str(rng.choice(["d", "D"])) + str(int(rng.integers(0, 30)))


SHAPES: dict[str, Callable[[np.random.Generator], str]] = {
    "short": _short,
    "mixed": _mixed,
    "long": _long,
    "word_edges": _word_edges,
    "prefix": _prefix,
    "shared8": _shared(8),
    "shared16": _shared(16),
    "numeric": _numeric,
    "utf8": _utf8,
    "nullish": _nullish,
    "case": _case,
}
EVERY_SHAPE = tuple(SHAPES)


def draw_ids(rng: np.random.Generator, shapes: Sequence[str], n: int, taken: set[str],
             *, query: bool = False) -> list[str]:
    """``n`` new distinct ids, each of a shape drawn from ``shapes``, none in ``taken``.

    Query ids never start with ``#`` (that line would be a comment).
    """
    out: list[str] = []
    tries = 0
    while len(out) < n:
        tries += 1
        value = SHAPES[str(rng.choice(list(shapes)))](rng)
        if tries > 50 * n + 100:  # a small shape ran out of fresh values: make one unique
            value = f"{value}~{len(taken)}"
        if value in taken or (query and value.startswith("#")):
            continue
        taken.add(value)
        out.append(value)
    return out


# ----------------------------------------------------------------------------- values


def score_text(rng: np.random.Generator, style: str) -> str:
    """A score as a file would hold it; ``float(text)`` is the logical score.

    ``ties``: small integers. ``quantised``: 0.0 to 1.0 in steps of 0.1, written with one or
    two decimals (issue 29: tie groups of dozens of docs). ``float32``: values equal as 32-bit floats but not as 64-bit
    ones (pytrec_eval and trec_eval 9.0.8 then break the tie by doc id). ``mixed``: all of
    these, and every spelling a reader must take.
    """
    if style == "ties":
        return str(int(rng.integers(0, 6)))
    if style == "quantised":  # a dense retriever's scores kept to 1 decimal: groups of many equal scores
        value = round(float(rng.beta(5.0, 2.0)), 1)
        return str(rng.choice([f"{value:.2f}", f"{value:.1f}", repr(value)]))  # 0.80, 0.8: one score
    if style == "float32":
        base = float(np.float32(rng.choice([1.0, 0.5, 12.25, -3.0, 7.125])))
        return repr(base + float(rng.integers(0, 4)) * base * 1e-9)
    kind = int(rng.integers(0, 10))
    value = float(rng.normal(0.0, 10.0))
    if kind == 0:
        return str(int(rng.integers(-3, 8)))
    if kind == 1:
        return f"{value:.4f}"
    if kind == 2:
        return f"{value:.3e}"
    if kind == 3:
        return f"+{abs(value):.2f}"
    if kind == 4:
        return f"{value:.2f}".replace("0.", ".", 1) if abs(value) < 1 else f"{value:.1f}"
    if kind == 5:
        return score_text(rng, "float32")
    if kind == 6:
        return str(rng.choice(["1e-3", "1E+2", "-0", "0.0", "5.", "-.25", "1e-320", "inf", "-inf"]))
    return repr(value)


def grade_text(rng: np.random.Generator, relevant: float) -> str:
    """A grade from -2 to 4 (mostly 0 and 1), sometimes spelled ``02`` or ``+1``."""
    if rng.random() < relevant:
        grade = int(rng.choice([1, 1, 1, 2, 2, 3, 4]))
    else:
        grade = int(rng.choice([0, 0, 0, 0, 0, -1, -2]))
    if rng.random() < 0.05:
        return f"+{grade}" if grade >= 0 else f"-0{-grade}"
    if rng.random() < 0.05:
        return f"0{grade}" if grade >= 0 else str(grade)
    return str(grade)


# ----------------------------------------------------------------------------- collections


@dataclass(frozen=True)
class Scenario:
    """Which id shapes go where, and how big.

    Attributes:
        name: shown in test ids and failure messages.
        queries: shapes of query ids.
        judged: shapes of docs that are judged (and may be retrieved).
        run_only: shapes of docs only the run has (unjudged, retrieved).
        qrels_only: shapes of docs only the qrels have (judged, never retrieved).
        n_queries: how many judged queries.
        max_docs: most judged docs per query (the run gets about as many again).
        scores: ``mixed``, ``ties``, ``quantised`` or ``float32`` (see :func:`score_text`).
        deep: a query with this many retrieved docs (cutoffs 500 and 1000 bite).
        blocks: pad the file(s) named (``run``, ``qrels``) to span several Arrow blocks,
            with the long ids only in the first (run) or last (qrels) block.
        unjudged_queries: run queries without judgments (ignored by trec_eval; serpeval
            then hashes only the judged rows, in one piece); None draws 0 or 3.
        filler: with ``blocks``, make a few rows megabytes long (cheap); False relies on
            the number of rows alone (the scenario must then be big enough).
    """

    name: str
    queries: tuple[str, ...] = EVERY_SHAPE
    judged: tuple[str, ...] = EVERY_SHAPE
    run_only: tuple[str, ...] = EVERY_SHAPE
    qrels_only: tuple[str, ...] = EVERY_SHAPE
    n_queries: int = 12
    max_docs: int = 25
    scores: str = "mixed"
    deep: int = 0
    blocks: tuple[str, ...] = ()
    unjudged_queries: int | None = None
    filler: bool = True


@dataclass
class Collection:
    """Qrels and run rows in file order: ``(qid, doc, text)``; text is the grade or score.

    ``filler`` maps a row index to the text of its ignored column (a run's tag, a qrels
    line's iter), which is how a few rows are made megabytes long to push the others into
    further Arrow blocks.
    """

    name: str
    qrels: list[tuple[str, str, str]]
    run: list[tuple[str, str, str]]
    qrels_filler: dict[int, str] = field(default_factory=dict)
    run_filler: dict[int, str] = field(default_factory=dict)

    def qrels_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, g in self.qrels:
            out.setdefault(q, {})[d] = int(g)
        return out

    def run_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in self.run:
            out.setdefault(q, {})[d] = float(s)
        return out

    @property
    def evaluated_queries(self) -> set[str]:
        """Queries both judged and retrieved: the ones trec_eval reports."""
        return {q for q, _, _ in self.qrels} & {q for q, _, _ in self.run}


def make_collection(scenario: Scenario, rng: np.random.Generator, scale: int = 1) -> Collection:
    """Draw a collection for ``scenario``; ``scale`` multiplies the number of queries.

    Per judged query: judged docs (a few relevant, grades -2..4), some of them retrieved,
    plus unjudged retrieved docs and judged docs never retrieved. Some judged queries get no
    run lines (trec_eval skips them), some run queries no judgments (ignored), some queries
    no relevant doc. Doc ids repeat across queries, as in real collections.
    """
    taken_q: set[str] = set()
    n_queries = scenario.n_queries * scale
    n_unjudged = scenario.unjudged_queries
    if n_unjudged is None:
        n_unjudged = 3 * int(rng.integers(0, 2))
    qids = draw_ids(rng, scenario.queries, n_queries + n_unjudged, taken_q, query=True)
    judged_q, unjudged_q = qids[:n_queries], qids[n_queries:]
    taken_d: set[str] = set()
    pool = draw_ids(rng, scenario.judged, 4 * scenario.max_docs, taken_d)
    run_pool = draw_ids(rng, scenario.run_only, 2 * scenario.max_docs, taken_d)
    qrels_pool = draw_ids(rng, scenario.qrels_only, scenario.max_docs, taken_d)
    qrels: list[tuple[str, str, str]] = []
    run: list[tuple[str, str, str]] = []
    for i, q in enumerate(judged_q):
        relevant = 0.0 if i % 7 == 3 else float(rng.uniform(0.1, 0.6))
        n = int(rng.integers(1, scenario.max_docs + 1))
        judged = _sample(rng, pool, n)
        never = _sample(rng, qrels_pool, int(rng.integers(0, 4)))
        grades = [grade_text(rng, relevant) for _ in judged + never]
        if all(int(g) < 0 for g in grades):
            # No query has only negative grades: pytrec_eval 0.5.11 corrupts memory there
            # (a segmentation fault next to other measures, or gm_bpref 0.0 instead of
            # log(1e-5)). serpeval's own tests cover such queries.
            grades[0] = "0"
        qrels += [(q, d, g) for d, g in zip(judged + never, grades, strict=True)]
        if i % 9 == 5:
            continue  # judged, not retrieved
        retrieved = _sample(rng, judged, int(rng.integers(0, n + 1)))
        retrieved += _sample(rng, run_pool, int(rng.integers(1 if not retrieved else 0, scenario.max_docs + 1)))
        if scenario.deep and i == 0:
            retrieved += draw_ids(rng, scenario.run_only, scenario.deep, taken_d)
        run += [(q, d, score_text(rng, scenario.scores)) for d in retrieved]
    for q in unjudged_q:
        run += [(q, d, score_text(rng, scenario.scores)) for d in _sample(rng, pool, 3)]
    coll = Collection(scenario.name, qrels, run)
    for kind in scenario.blocks:
        _spread_over_blocks(coll, kind, scenario.filler)
    return coll


def _sample(rng: np.random.Generator, values: list[str], n: int) -> list[str]:
    n = min(n, len(values))
    return [values[i] for i in rng.choice(len(values), size=n, replace=False).tolist()]


FILLER_BYTES = 5 << 20  # below Arrow's 16 MiB block: a row must fit in one block
_FILLER = "x" * FILLER_BYTES


def _spread_over_blocks(coll: Collection, kind: str, filler: bool) -> None:
    """Make the ``kind`` file span several Arrow blocks with its long ids in one of them.

    Rows whose doc id is over 16 bytes go first in the run and last in the qrels; between
    them and the other rows, rows made 5 MiB long (a long tag, a long iter column: both
    ignored) fill two and a half blocks. So one block holds every long id and at least one
    other block holds none, while short ids sit in every block. Without ``filler`` only
    the order is set, and the rows themselves must fill the blocks.
    """
    from serpeval.io.trec import _BLOCK_SIZE

    rows = coll.run if kind == "run" else coll.qrels
    long = [r for r in rows if len(r[1].encode()) > 16]
    short = [r for r in rows if len(r[1].encode()) <= 16]
    n_fillers = -(-(2 * _BLOCK_SIZE + _BLOCK_SIZE // 2) // FILLER_BYTES) if filler else 0
    if not long or len(short) < n_fillers + 2:
        raise ValueError(f"{coll.name}: needs long ids and {n_fillers + 2} rows with short ones")
    if kind == "run":  # long rows, then fillers on the first short rows
        ordered, fillers = long + short, range(len(long), len(long) + n_fillers)
    else:  # short rows ending with the fillers, then long rows
        ordered, fillers = short + long, range(len(short) - n_fillers, len(short))
    padded = dict.fromkeys(fillers, _FILLER)
    if kind == "run":
        coll.run, coll.run_filler = ordered, padded
    else:
        coll.qrels, coll.qrels_filler = ordered, padded


# ----------------------------------------------------------------------------- scenarios

SCENARIOS = [
    Scenario("every_shape"),
    Scenario("long_ids_only_in_run", judged=("short", "numeric", "case"), run_only=("long", "mixed"),
             qrels_only=("short", "numeric")),
    Scenario("long_ids_only_in_qrels", judged=("short", "numeric"), run_only=("short", "case"),
             qrels_only=("long", "word_edges")),
    Scenario("prefixes_and_word_edges", queries=("prefix", "shared8", "numeric"),
             judged=("prefix", "shared8", "shared16", "word_edges"), run_only=("prefix", "shared16"),
             qrels_only=("shared8", "word_edges")),
    Scenario("leading_zeros", queries=("numeric",), judged=("numeric",), run_only=("numeric", "short"),
             qrels_only=("numeric",)),
    Scenario("unicode", queries=("utf8", "short"), judged=("utf8",), run_only=("utf8", "long"),
             qrels_only=("utf8",)),
    Scenario("nullish_and_case", queries=("nullish", "case", "numeric"), judged=("nullish", "case"),
             run_only=("nullish", "mixed"), qrels_only=("case",)),
    Scenario("ties_over_mixed_lengths", judged=("short", "mixed", "prefix", "shared16"), scores="ties"),
    Scenario("float32_ties", judged=("word_edges", "utf8", "shared8"), scores="float32"),
    Scenario("quantised_scores", judged=("short", "numeric", "utf8", "mixed"), scores="quantised", deep=300),
    Scenario("deep_ranking", n_queries=4, deep=1200),
    # Long judged ids in both files, but in one block of the file spread over blocks: a hash
    # that depended on a block's longest id would match in that block and fail in the others.
    Scenario("run_over_blocks", n_queries=10, queries=("short", "numeric"), judged=("short", "case", "long"),
             run_only=("short",), qrels_only=("short",), blocks=("run",), unjudged_queries=0),
    Scenario("qrels_over_blocks", n_queries=10, queries=("short", "numeric"), judged=("short", "long"),
             run_only=("short",), qrels_only=("short",), blocks=("qrels",), unjudged_queries=0),
    Scenario("both_over_blocks", n_queries=10, judged=("short", "long", "utf8"), blocks=("run", "qrels"),
             unjudged_queries=0),
]

# --big only: files over several blocks by their number of rows (about 1.5 million run lines).
BIG_SCENARIOS = [
    Scenario("run_over_blocks_by_rows", n_queries=3000, max_docs=600, queries=("short", "numeric"),
             judged=("short", "case", "long"), run_only=("short",), qrels_only=("short",),
             blocks=("run",), unjudged_queries=0, filler=False),
]
