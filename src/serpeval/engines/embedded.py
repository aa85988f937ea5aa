"""The embedded engine: a BM25 index over a JSONL corpus, no server (the default engine).

Tokenisation and the BM25 term weights come from `bm25s <https://github.com/xhluca/bm25s>`_
(its ``Tokenizer`` with a PyStemmer Snowball stemmer and its English stop words; its
``BM25`` for the weights of each variant). The corpus is tokenised **once**, in
:meth:`EmbeddedIndex.build`; :meth:`EmbeddedIndex.engine` builds the term-weight matrix of one
parameter setting from the stored token ids (a sweep over k1 x b never re-tokenises), and
scoring is one sparse matrix product for a whole batch of queries.

Score of document ``d`` for query ``q`` (one term per query token occurrence, so a repeated
query word counts twice, as in Lucene's BooleanQuery)::

    score(d, q) = sum_{t in q} idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` for ``method="lucene"`` (the default:
Lucene's ``BM25Similarity`` since 8.0, which dropped the constant ``(k1 + 1)`` factor of the
numerator (LUCENE-8563), so Elasticsearch's and OpenSearch's BM25; their defaults k1 = 1.2,
b = 0.75 are the defaults here too). Hand check, 5 documents of average length 5.4, a term
in 2 of them, once in a 9-token document: idf = ln(1 + 3.5/2.5) = 0.8755,
tf part = 1 / (1 + 1.2 (0.25 + 0.75 * 9/5.4)) = 1/2.8, score 0.3127. The other
variants (``robertson``, ``atire``, ``bm25l``, ``bm25+`` with ``delta``) are bm25s's, after
Kamphuis et al., *Which BM25 Do You Mean?* (ECIR 2020).

Edge cases:

- **Which documents are retrieved**: those that contain at least one query term (after
  stemming and stop words). A query none of whose words is in the corpus retrieves nothing;
  a query with fewer matching documents than ``k`` retrieves fewer (the caller counts them).
  For ``bm25l``/``bm25+`` the non-occurrence part of the score (a constant per query) is
  included, as bm25s computes it, but still only matching documents are returned.
- **Ties** are broken by doc id **descending in byte order**, serpeval's (and trec_eval's)
  rule, so a run written with these scores evaluates identically whoever re-sorts it. Scores
  are bm25s's float32 values widened to float64, exactly.
- **Empty documents** are indexed with length 0 and never retrieved; they count in N.
- A duplicate doc id, a line without an id, or a non-JSON line is an error naming ``path:line``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from serpeval.core import strict_json
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, MissingExtraError, OptionError, ParseError
from serpeval.engines.base import Hit

__all__ = [
    "BM25_DEFAULTS",
    "BM25_METHODS",
    "BM25Engine",
    "EmbeddedIndex",
    "Ranking",
    "parse_params",
]

#: The variants bm25s implements (``method=``).
BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
#: Lucene's / Elasticsearch's defaults (``similarity.BM25``), and bm25s's default delta.
BM25_DEFAULTS: Mapping[str, Any] = MappingProxyType({"k1": 1.2, "b": 0.75, "method": "lucene", "delta": 0.5})

#: Id fields tried in order when ``id_field`` is not given.
ID_FIELDS = ("docid", "doc_id", "docno", "_id", "id")
#: Text fields indexed by default, those present, in this order; else every other string field.
TEXT_FIELDS = ("title", "text", "body", "contents", "content", "abstract")

#: Dense score rows per batch are bounded to this many cells (query x document).
_CELLS = 4_000_000


def _bm25s() -> Any:
    try:
        import bm25s
        import Stemmer  # noqa: F401  (PyStemmer: the tokenizer's stemmer)
    except ImportError as exc:  # pragma: no cover - both are dependencies
        raise MissingExtraError(
            f"the embedded engine needs bm25s and PyStemmer ({exc}); pip install bm25s PyStemmer."
        ) from None
    return bm25s


@dataclass(frozen=True)
class Ranking:
    """Ranked results of a batch of queries as flat arrays (what a run is built from).

    Attributes:
        offsets: ``int64[n_queries + 1]``; query ``i``'s hits are ``offsets[i]:offsets[i+1]``.
        doc_index: ``int64[n_hits]``, positions in the index's ``doc_ids``.
        scores: ``float64[n_hits]``, best first within each query.
        doc_ids: the index's doc ids (shared, not copied).
    """

    offsets: NDArray[np.int64]
    doc_index: NDArray[np.int64]
    scores: NDArray[np.float64]
    doc_ids: Sequence[str]

    def counts(self) -> NDArray[np.int64]:
        """Hits per query."""
        return np.diff(self.offsets)

    def hits(self) -> list[list[Hit]]:
        """The hits of each query as :class:`Hit` lists."""
        ids = self.doc_ids
        flat = [Hit(ids[i], s) for i, s in zip(self.doc_index.tolist(), self.scores.tolist(), strict=True)]
        bounds = self.offsets.tolist()
        return [flat[a:b] for a, b in itertools.pairwise(bounds)]


@dataclass
class EmbeddedIndex:
    """A tokenised corpus; :meth:`engine` gives a BM25 engine for one parameter setting.

    Build with :meth:`build`. Attributes: ``doc_ids`` (corpus order), ``fields`` (the text
    fields indexed), ``id_field``, ``source`` (the path or ``<memory>``), ``fingerprint`` (a
    digest of the ids, the indexed text and the tokeniser settings), ``empty_documents``
    (documents with no indexed token).
    """

    doc_ids: list[str]
    fields: tuple[str, ...]
    id_field: str
    source: str
    fingerprint: str
    empty_documents: int
    stemmer: str | None
    stopwords: str | None
    _tokenizer: Any = field(repr=False)
    _token_ids: list[list[int]] = field(repr=False)
    _vocab: dict[str, int] = field(repr=False)
    _presence: Any = field(repr=False)  # scipy csc (n_docs x vocab), 1 where the term occurs
    _tie_order: NDArray[np.int64] = field(repr=False)
    _counts: Any = field(repr=False)  # scipy csc (n_docs x vocab) term frequencies, float32
    _lengths: NDArray[np.int64] = field(repr=False)  # tokens per document
    doc_id_array: NDArray[np.object_] = field(repr=False)
    _models: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        corpus: str | Path | Iterable[Mapping[str, Any]],
        *,
        fields: Sequence[str] | None = None,
        id_field: str | None = None,
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> EmbeddedIndex:
        """Tokenise a corpus once.

        Args:
            corpus: a JSONL file (optionally gzipped; one object per document) or an iterable
                of mappings.
            fields: the text fields to index, concatenated in this order; default: those of
                ``title, text, body, contents, content, abstract`` that some document has,
                else every field holding text but the id.
            id_field: the doc id field; default the first of ``docid, doc_id, docno, _id, id``
                present in the first document.
            stemmer: a Snowball language for PyStemmer, or None for no stemming.
            stopwords: bm25s's stop-word list name (``"en"``), or None.

        Raises:
            ParseError: a line is not a JSON object, or a document lacks the id field.
            DuplicateError: a doc id appears twice.
            EmptyInputError: no document.
        """
        records, source = _records(corpus)
        if not records:
            raise EmptyInputError(f"{source}: the corpus holds no document; expected one JSON object per line.")
        first_where, first = records[0]
        id_field = id_field or next((f for f in ID_FIELDS if f in first), None)
        if id_field is None:
            raise ParseError(
                f"{first_where}: no doc id field; expected one of {', '.join(ID_FIELDS)}, found "
                f"{', '.join(sorted(first)) or 'no field'}. Name it with id_field= (--id-field)."
            )
        if fields is None:
            # the text fields any document has (a first document without a title must not drop
            # every title), in the order of TEXT_FIELDS, else every string field but the id
            keys: dict[str, None] = {}  # every field with a value (a wrong type is refused below)
            strings: dict[str, None] = {}  # those with a string value
            for _, record in records:
                keys.update(dict.fromkeys(k for k, v in record.items() if v is not None))
                strings.update(dict.fromkeys(k for k, v in record.items() if isinstance(v, str)))
            chosen = tuple(f for f in TEXT_FIELDS if f in keys)
            fields = chosen or tuple(k for k in strings if k != id_field)
            if not fields:
                raise ParseError(f"{source}: no text field to index besides {id_field!r}; name one with fields=.")
        fields = tuple(fields)
        if not fields:  # nothing would be indexed: every query would retrieve nothing
            raise OptionError(f"{source}: fields= (--fields) names no field to index; name one or more, or leave it "
                              "out for the defaults.")
        ids: list[str] = []
        texts: list[str] = []
        seen: dict[str, str] = {}
        found: set[str] = set()  # the fields named that some document has
        for where, record in records:
            doc = record.get(id_field)
            if isinstance(doc, int) and not isinstance(doc, bool):
                doc = str(doc)
            if not isinstance(doc, str) or not doc.strip():
                raise ParseError(f"{where}: the doc id field {id_field!r} is missing or not a non-empty string "
                                 f"(found {doc!r}).")
            if doc in seen:
                raise DuplicateError(f"{where}: doc id {doc!r} appears twice (first at {seen[doc]}); doc ids must "
                                     "be unique in a corpus.", doc=doc)
            seen[doc] = where
            parts = []
            for name in fields:
                value = record.get(name)
                if value is None:
                    continue
                if not isinstance(value, str):
                    raise ParseError(f"{where}: field {name!r} is {type(value).__name__}, expected a string.")
                found.add(name)
                parts.append(value)
            ids.append(doc)
            texts.append(" ".join(parts))
        absent = [name for name in fields if name not in found]
        if absent:  # a typo would index less than asked, or nothing, without a word
            present = sorted({key for _, record in records for key in record} - {id_field})
            raise OptionError(
                f"{source}: no document has a value in the field(s) {', '.join(map(repr, absent))} named to index; the "
                f"documents' fields are {', '.join(map(repr, present)) or 'none besides the id'}. Check the names "
                "(fields=, --fields).")
        return cls._from_texts(ids, texts, fields, id_field, source, stemmer, stopwords)

    @classmethod
    def _from_texts(cls, ids: list[str], texts: list[str], fields: tuple[str, ...], id_field: str, source: str,
                    stemmer: str | None, stopwords: str | None) -> EmbeddedIndex:
        _bm25s()
        import scipy.sparse as sp
        from bm25s.tokenization import Tokenizer

        tokenizer = Tokenizer(stemmer=_stemmer(stemmer), stopwords=stopwords or [], lower=True)
        token_ids = tokenizer.tokenize(texts, show_progress=False, return_as="ids")
        vocab = dict(tokenizer.get_vocab_dict())
        empty = vocab.get("")
        # bm25s gives an empty document the empty token; index it as a document of length 0.
        token_ids = [[t for t in doc if t != empty] if empty is not None and empty in doc else doc
                     for doc in token_ids]
        if "" not in vocab:
            vocab[""] = max(vocab.values(), default=-1) + 1
        lengths = np.fromiter((len(d) for d in token_ids), dtype=np.int64, count=len(token_ids))
        rows = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
        cols = np.fromiter((t for d in token_ids for t in d), dtype=np.int64, count=int(lengths.sum()))
        counts = sp.csc_matrix((np.ones(len(cols), np.float32), (rows, cols)), shape=(len(ids), len(vocab)))
        counts.sum_duplicates()  # term frequencies, in CSC order: the layout every setting's weights reuse
        presence = counts.copy()
        presence.data[:] = 1.0
        tie_order = _descending_byte_order(ids)
        digest = hashlib.sha256()
        digest.update(strict_json.compact({"fields": fields, "stemmer": stemmer, "stopwords": stopwords,
                                           "tokenizer": "bm25s"}, sort_keys=True).encode())
        for doc, text in zip(ids, texts, strict=True):
            digest.update(doc.encode("utf-8", "surrogatepass") + b"\x00" + text.encode("utf-8", "surrogatepass")
                          + b"\x01")
        return cls(
            doc_ids=ids, fields=fields, id_field=id_field, source=source, fingerprint=digest.hexdigest()[:16],
            empty_documents=int((lengths == 0).sum()), stemmer=stemmer, stopwords=stopwords, _tokenizer=tokenizer,
            _token_ids=token_ids, _vocab=vocab, _presence=presence, _tie_order=tie_order, _counts=counts,
            _lengths=lengths,
            doc_id_array=np.asarray(ids, dtype=object),
        )

    def __len__(self) -> int:
        return len(self.doc_ids)

    def run_columns(self, ranking: Ranking, query_ids: Sequence[str]) -> tuple[Any, Any, NDArray[np.float64]]:
        """Arrow ``query_id`` and ``doc_id`` columns and the scores of a :class:`Ranking` (no
        Python object per row: ids are taken from Arrow arrays by position)."""
        import pyarrow as pa

        arrow_ids = self._models.get(("arrow ids",))
        if arrow_ids is None:
            arrow_ids = self._models[("arrow ids",)] = pa.array(self.doc_ids, pa.string())
        rows = np.repeat(np.arange(len(query_ids), dtype=np.int64), ranking.counts())
        queries = pa.array(list(query_ids), pa.string())
        return queries.take(pa.array(rows)), arrow_ids.take(pa.array(ranking.doc_index)), ranking.scores

    # ------------------------------------------------------------------ engines

    def engine(self, k1: float | None = None, b: float | None = None, method: str | None = None,
               delta: float | None = None) -> BM25Engine:
        """A BM25 engine over this index (defaults :data:`BM25_DEFAULTS`).

        The term-weight matrix of each setting is built once and kept (an engine is cheap to
        ask for again); the tokens are never recomputed.

        Raises:
            OptionError: k1 < 0, b outside [0, 1], delta < 0, a non-finite value, an unknown
                method (with the valid ones), or k1 = 0 with ``bm25+`` (``bm25l``: and delta = 0).
        """
        params = parse_params({"k1": k1, "b": b, "method": method, "delta": delta})
        key = (params["method"], params["k1"], params["b"], params["delta"] if _uses_delta(params) else None)
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._weights(params)
                self._models[key] = model
        return BM25Engine(self, model, params)

    def forget(self) -> None:
        """Drop the cached weight matrices (a long sweep keeps memory flat with this)."""
        with self._lock:
            for key in [key for key in self._models if key != ("arrow ids",)]:
                del self._models[key]

    def _weights(self, params: Mapping[str, Any]) -> tuple[Any, NDArray[np.float32] | None]:
        """One setting's ``n_docs x vocab`` weight matrix, with bm25s's own scoring functions
        (``bm25s.scoring``: the idf and term-frequency parts of each variant) applied to every
        stored (document, term, tf) at once, in the operation order and dtypes of bm25s's
        ``BM25.index`` (float32 tf and idf, float64 arithmetic, float32 weights), so the weights
        are bm25s's bit for bit (tests/engines/test_embedded.py), without its loop per document.
        For ``bm25l``/``bm25+`` the non-occurrence part is subtracted from the stored weights and
        returned per term, as bm25s does."""
        _bm25s()
        import scipy.sparse as sp
        from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

        method, k1, b, delta = params["method"], params["k1"], params["b"], params["delta"]
        counts = self._counts
        n_docs, n_vocab = counts.shape
        avgdl = np.asarray(self._lengths).mean() if n_docs else np.float64(0.0)
        df = np.diff(counts.indptr)
        idf_of = _select_idf_scorer(method)
        tfc_of = _select_tfc_scorer(method)
        idf = np.zeros(n_vocab, dtype=np.float32)
        nonoccurrence = np.zeros(n_vocab, dtype=np.float32) if method in ("bm25l", "bm25+") else None
        for value in np.unique(df[df > 0]).tolist():
            where = df == value
            idf[where] = idf_of(value, N=n_docs)
            if nonoccurrence is not None:
                nonoccurrence[where] = idf_of(value, N=n_docs) * tfc_of(tf_array=0, l_d=avgdl, l_avg=avgdl, k1=k1,
                                                                         b=b, delta=delta)
        terms = np.repeat(np.arange(n_vocab), df)
        lengths = self._lengths[counts.indices].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tfc = tfc_of(tf_array=counts.data, l_d=lengths, l_avg=avgdl, k1=k1, b=b, delta=delta)
            weights = idf[terms] * tfc
        if nonoccurrence is not None:
            weights = weights - nonoccurrence[terms]
        matrix = sp.csc_matrix((np.asarray(weights, dtype=np.float32), counts.indices, counts.indptr),
                               shape=counts.shape)
        return matrix, nonoccurrence

    def query_terms(self, query: str) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """One query's known term ids, ascending, and their float32 counts (the column
        :meth:`query_matrix` builds for it)."""
        # the stream tokenize() collects (through a disabled tqdm bar, 2/3 of its time for one query)
        tokens = next(self._tokenizer.streaming_tokenize([query], update_vocab=False))
        ids = np.asarray(tokens, dtype=np.int64)
        ids = ids[ids != self._vocab[""]]
        terms, counts = np.unique(ids, return_counts=True)
        return terms, counts.astype(np.float32)

    @property
    def tie_position(self) -> NDArray[np.int64]:
        """Each document's place in the tie order (doc id descending): ``tie_position[tie_order] = arange``."""
        position = self.__dict__.get("_tie_position")
        if position is None:
            position = np.empty(len(self._tie_order), np.int64)
            position[self._tie_order] = np.arange(len(self._tie_order))
            self.__dict__["_tie_position"] = position
        return position

    def query_matrix(self, queries: Sequence[str]) -> Any:
        """``vocab x n_queries`` float32 counts of each query's tokens (unknown words dropped)."""
        import scipy.sparse as sp

        tokens = self._tokenizer.tokenize(list(queries), update_vocab=False, show_progress=False, return_as="ids")
        empty = self._vocab[""]
        lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
        cols = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)
        rows = np.fromiter((t for q in tokens for t in q), dtype=np.int64, count=int(lengths.sum()))
        keep = rows != empty
        matrix = sp.csc_matrix((np.ones(int(keep.sum()), np.float32), (rows[keep], cols[keep])),
                               shape=(len(self._vocab), len(tokens)))
        matrix.sum_duplicates()
        return matrix


def _top_k(scores: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Column indices of each row's ``k`` largest values, by value descending and, among equal
    values, by column ascending (the columns are in tie order): a stable sort's first ``k``,
    found with a partition (O(n) per row) and a sort of ``k`` values."""
    n = scores.shape[1]
    if k >= n:
        return np.argsort(-scores, axis=1, kind="stable")
    threshold = -np.partition(-scores, k - 1, axis=1)[:, k - 1]          # the k-th largest value per row
    above = scores > threshold[:, None]
    tied = scores == threshold[:, None]
    wanted = k - above.sum(axis=1)                                        # how many tied values to take
    take = above | (tied & (np.cumsum(tied, axis=1) <= wanted[:, None]))   # the first tied columns
    columns = np.nonzero(take)[1].reshape(len(scores), k)                 # ascending columns per row
    values = np.take_along_axis(scores, columns, axis=1)
    return np.take_along_axis(columns, np.argsort(-values, axis=1, kind="stable"), axis=1)


def _uses_delta(params: Mapping[str, Any]) -> bool:
    return params["method"] in ("bm25l", "bm25+")


def _stemmer(language: str | None) -> Any:
    if language is None:
        return None
    import Stemmer

    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        raise OptionError(f"stemmer {language!r} is not a Snowball language; choose one of "
                          f"{', '.join(Stemmer.algorithms())} or None.") from None


def parse_params(given: Mapping[str, Any]) -> dict[str, Any]:
    """Check BM25 parameters (strings from the command line too) and fill the defaults.

    Raises:
        OptionError: an unknown name (with the known ones), a value that is not a number,
            k1 < 0, b outside [0, 1], delta < 0, a non-finite value, an unknown method; k1 = 0
            with ``bm25+`` (or with ``bm25l`` and delta = 0), whose non-occurrence part is 0/0.
    """
    import difflib

    out = dict(BM25_DEFAULTS)
    for name, value in given.items():
        if name not in BM25_DEFAULTS:
            close = difflib.get_close_matches(name, list(BM25_DEFAULTS), n=1, cutoff=0.5)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise OptionError(f"unknown parameter {name!r} of the embedded BM25 engine; it takes "
                              f"{', '.join(BM25_DEFAULTS)}.{hint}")
        if value is None:
            continue
        if name == "method":
            method = str(value).lower()
            if method not in BM25_METHODS:
                raise OptionError(f"method={value!r} is not a BM25 variant of the embedded engine; choose one of "
                                  f"{', '.join(BM25_METHODS)}.")
            out[name] = method
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise OptionError(f"{name}={value!r} is not a number.") from None
        if not math.isfinite(number) or number < 0 or (name == "b" and number > 1):
            bound = "between 0 and 1" if name == "b" else "a finite number >= 0"
            raise OptionError(f"{name}={value!r} is out of range; expected {bound}.")
        out[name] = number
    if out["k1"] == 0 and (out["method"] == "bm25+" or (out["method"] == "bm25l" and out["delta"] == 0)):
        # bm25s's term-frequency part for a term absent from a document is then 0/0: NaN scores,
        # which ranked documents without any query term first, at score -inf
        raise OptionError(f"k1=0 with method={out['method']}{' and delta=0' if out['method'] == 'bm25l' else ''} "
                          "cannot be computed: the term-frequency part of a term absent from a document is 0/0; "
                          "use k1 > 0 (e.g. k1=0.01)" + (" or delta > 0." if out["method"] == "bm25l" else "."))
    return out


class BM25Engine:
    """BM25 over an :class:`EmbeddedIndex` with fixed parameters (an :class:`~serpeval.engines.base.Engine`).

    Immutable and thread-safe: ``serve`` may share one between requests.
    """

    name = "bm25"

    def __init__(self, index: EmbeddedIndex, model: tuple[Any, NDArray[np.float32] | None],
                 params: Mapping[str, Any]) -> None:
        self.index = index
        self._weights, self._nonoccurrence = model
        shown = {k: v for k, v in params.items() if k != "delta" or _uses_delta(params)}
        self.params: Mapping[str, Any] = MappingProxyType(shown)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"BM25Engine({shown}; {len(self.index)} documents from {self.index.source!r})"

    def config_hash(self) -> str:
        """Digest of the engine kind, its parameters and the index (ids, text, tokeniser)."""
        text = strict_json.compact({"engine": "embedded-bm25", "params": dict(self.params),
                                   "index": self.index.fingerprint}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def search(self, query: str, k: int) -> list[Hit]:
        """The top ``k`` hits of one query: the same hits and scores as ``rank([query], k)``,
        bit for bit, computed without the sparse-matrix machinery (what ``serve`` calls per
        request; a third of the CPU time on Cranfield).

        The batch path multiplies the weights by the query's term counts in float32, term by
        term in ascending term id, and scipy accumulates each document's score in float32;
        this path does the same additions in the same order, so the float32 scores are equal
        and so is the order (score descending, then the index's tie order).
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise OptionError(f"k={k!r}: the number of hits per query must be an integer >= 1.")
        index = self.index
        terms, counts = index.query_terms(query)
        if len(terms) == 0:
            return []
        weights = self._weights
        scores = np.zeros(len(index), np.float32)
        holds_a_term = np.zeros(len(index), bool)
        bounds = zip(weights.indptr[terms].tolist(), weights.indptr[terms + 1].tolist(), counts, strict=True)
        for term_start, term_end, count in bounds:
            rows = weights.indices[term_start:term_end]
            scores[rows] += count * weights.data[term_start:term_end]
            holds_a_term[rows] = True
        if self._nonoccurrence is not None:
            shift = np.float32(0.0)
            for term, count in zip(terms.tolist(), counts, strict=True):
                shift += count * self._nonoccurrence[term]
            scores += shift
        matched = np.flatnonzero(holds_a_term)
        values = scores[matched].astype(np.float64)
        k = min(int(k), len(matched))
        if len(matched) > 4 * k:  # keep what can be in the top k (every value tied with the k-th too)
            kth = -np.partition(-values, k - 1)[k - 1]
            keep = values >= kth
            matched, values = matched[keep], values[keep]
        top = np.lexsort((index.tie_position[matched], -values))[:k]
        docs = matched[top]
        ids = index.doc_ids
        return [Hit(ids[d], s) for d, s in zip(docs.tolist(), scores[docs].astype(np.float64).tolist(), strict=True)]

    def search_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return self.rank(queries, k).hits()

    def rank(self, queries: Sequence[str], k: int) -> Ranking:
        """The top ``k`` of every query as flat arrays, in one vectorized pass per batch.

        Raises:
            OptionError: k < 1.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise OptionError(f"k={k!r}: the number of hits per query must be an integer >= 1.")
        index = self.index
        n_docs = len(index)
        k = min(int(k), n_docs)
        qmatrix = index.query_matrix(queries)
        tie = index._tie_order
        step = max(1, _CELLS // max(n_docs, 1))
        counts_all: list[NDArray[np.int64]] = []
        docs_all: list[NDArray[np.int64]] = []
        scores_all: list[NDArray[np.float64]] = []
        for start in range(0, len(queries), step):
            block = qmatrix[:, start:start + step]
            scores = np.asarray((self._weights @ block).T.todense(), dtype=np.float32)
            if self._nonoccurrence is not None:
                scores += np.asarray(block.T @ self._nonoccurrence, dtype=np.float32)[:, None]
            matched = np.asarray((index._presence @ block).T.todense()) > 0
            ordered: NDArray[np.float64] = scores[:, tie].astype(np.float64)  # columns in tie order (doc id desc)
            matched = matched[:, tie]
            ordered[~matched] = -np.inf
            order = _top_k(ordered, k)
            count = np.minimum(matched.sum(axis=1), k)
            keep = np.arange(k)[None, :] < count[:, None]
            rows = np.broadcast_to(np.arange(len(order))[:, None], order.shape)[keep]
            docs_all.append(tie[order[keep]])
            scores_all.append(ordered[rows, order[keep]])
            counts_all.append(count.astype(np.int64))
        counts = np.concatenate(counts_all) if counts_all else np.zeros(0, np.int64)
        offsets = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Ranking(
            offsets=offsets,
            doc_index=np.concatenate(docs_all) if docs_all else np.zeros(0, np.int64),
            scores=np.concatenate(scores_all) if scores_all else np.zeros(0, np.float64),
            doc_ids=index.doc_ids,
        )


def _descending_byte_order(ids: Sequence[str]) -> NDArray[np.int64]:
    """Positions of ``ids`` sorted by their UTF-8 bytes, descending (unsigned byte by byte, a
    prefix before what extends it: trec_eval's and Arrow's binary order), with Arrow's sort.

    The binary array is built from its buffers: ``pa.array`` on a list and ``np.asarray`` of an
    Arrow array import pandas (0.1-0.4 s, more than indexing a small corpus, at every start of
    ``serpeval serve``), which the embedded engine never needs. Lone surrogates are encoded
    with ``surrogatepass``, as the fingerprint does (``pa.array`` refused them). ``ids`` is not
    empty (a corpus without documents is refused before)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = [doc.encode("utf-8", "surrogatepass") for doc in ids]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, count=len(encoded)), out=offsets[1:])
    binary = pa.Array.from_buffers(pa.large_binary(), len(encoded),
                                   [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])
    order = pc.array_sort_indices(binary, order="descending")
    return np.frombuffer(order.buffers()[1], np.uint64, len(order), order.offset * 8).astype(np.int64)


def _records(corpus: str | Path | Iterable[Mapping[str, Any]]) -> tuple[list[tuple[str, Mapping[str, Any]]], str]:
    """``[(where, record)]`` from a JSONL file or an iterable of mappings."""
    if isinstance(corpus, str | Path):
        from serpeval.io.inputs import read_input
        from serpeval.io.jsonl import JsonObjects
        from serpeval.io.reading import text_lines

        raw, label = read_input(corpus, what="corpus")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            at = raw.count(b"\n", 0, exc.start) + 1
            raise InputError(f"{label}:{at}: cannot read the corpus as UTF-8 text ({exc}).") from None
        parse = JsonObjects()
        out: list[tuple[str, Mapping[str, Any]]] = []
        # lines end at LF, CRLF or CR only: a document's text may hold U+2028 or a form feed raw
        for number, line in enumerate(text_lines(text), 1):
            stripped = line.strip()
            if stripped:
                where = f"{label}:{number}"
                out.append((where, parse(stripped, where, "a doc id and text fields")))
        return out, label
    out2: list[tuple[str, Mapping[str, Any]]] = []
    for i, record in enumerate(corpus):
        if not isinstance(record, Mapping):
            raise ParseError(f"<corpus>: item {i + 1} is {type(record).__name__}, expected a mapping of fields.")
        out2.append((f"<corpus>: item {i + 1}", record))
    return out2, "<corpus>"
