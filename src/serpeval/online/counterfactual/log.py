"""A randomised log, ready for counterfactual estimation: :class:`CounterfactualLog`.

Every impression belongs to a *context*: a query together with the rankings the logging
design randomised over (probabilistic interleaving: the interleaved rankings, A first; an
A/B split: the arms' rankings). Within a context documents have small local codes (the union
of the logging rankings, in first-seen order); a candidate's documents outside that union
get further codes with logging probability 0. The exact logging probabilities are
recomputed from the context and ``tau`` (or the arm shares); a logged ``propensity`` column
is checked against them.

Log fields (docs/explanation/counterfactual-logs.md): ``experiment``, ``user_id``,
``query_id``, ``shown`` (list of doc ids, top first), ``clicks`` (1-based positions),
``logging_design`` (``probabilistic`` or ``ab``), ``logging_rankings`` (list of lists of doc
ids), ``tau`` (probabilistic; default 3), ``arm_shares`` (ab), and optionally ``propensity``
(checked against the recomputed list probability where a row gives it; ``prefix_propensities``
and ``position_propensities`` are not read: every probability is recomputed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import EmptyInputError, InputError

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

__all__ = ["DESIGNS", "CounterfactualLog", "read_log"]

#: Logging designs with known, non-degenerate propensities.
DESIGNS = ("probabilistic", "ab")
_SEP = "\x1f"
_RSEP = "\x1e"
#: Relative tolerance when a logged propensity is checked against the recomputed one.
PROPENSITY_RTOL = 1e-6


@dataclass(frozen=True, eq=False)
class CounterfactualLog:
    """Impressions of one randomised experiment (impression-major arrays).

    Attributes:
        design: ``probabilistic`` or ``ab``.
        contexts: per context, its query id.
        context_docs: per context, the doc ids of its local codes.
        context_rankings: per context, the logging rankings as local codes (best first).
        context: ``int64[n]`` context of each impression.
        unit: ``int64[n]`` randomisation unit (user) code: the clusters of every CI.
        shown: ``int64[n, k]`` local codes shown (-1: empty slot).
        clicks: ``bool[n, k]``.
        tau: probabilistic interleaving's softmax steepness.
        shares: ab: the arms' traffic shares (in the order of the rankings).
        experiment: the experiment's name, when the log names it.
        source: where the log came from.
        skipped: rows left out, by reason (never silently).
        logged_propensity: the ``propensity`` column when the log has one (checked against
            the recomputed list probability, :meth:`LoggingModel.check_logged`; NaN where a
            row leaves it empty: not checked there).
        row_numbers: each impression's 1-based row in the log as read (messages name it).
    """

    design: str
    contexts: list[str]
    context_docs: list[list[str]]
    context_rankings: list[list[list[int]]]
    context: NDArray[np.int64]
    unit: NDArray[np.int64]
    shown: NDArray[np.int64]
    clicks: NDArray[np.bool_]
    tau: float = 3.0
    shares: tuple[float, ...] | None = None
    experiment: str | None = None
    source: str = "<arrays>"
    skipped: dict[str, int] = field(default_factory=dict)
    logged_propensity: NDArray[np.float64] | None = field(default=None, repr=False)
    row_numbers: NDArray[np.int64] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.context)

    @property
    def k(self) -> int:
        return int(self.shown.shape[1])

    @property
    def n_units(self) -> int:
        return int(self.unit.max(initial=-1)) + 1

    # ------------------------------------------------------------------ building
    @classmethod
    def from_arrays(cls, design: str, queries: list[str], docs: list[list[str]],
                    rankings: list[list[list[int]]], context: Any, unit: Any, shown: Any, clicks: Any,
                    **kwargs: Any) -> CounterfactualLog:
        """From arrays (simulations): contexts = queries, codes local to each query."""
        if design not in DESIGNS:
            raise InputError(f"logging design {design!r} has no usable propensities; expected one of "
                             f"{', '.join(DESIGNS)}.")
        shown_arr = np.asarray(shown, dtype=np.int64)
        clicks_arr = np.asarray(clicks, dtype=bool)
        if shown_arr.ndim != 2 or clicks_arr.shape != shown_arr.shape:
            raise InputError(f"shown and clicks must be [impressions, k] arrays of one shape; got "
                             f"{shown_arr.shape} and {clicks_arr.shape}.")
        if (clicks_arr & (shown_arr < 0)).any():
            raise InputError("a click on an empty slot (shown code -1).")
        _, unit_codes = np.unique(np.asarray(unit), return_inverse=True)
        return cls(design, list(queries), docs, rankings, np.asarray(context, dtype=np.int64),
                   unit_codes.astype(np.int64), shown_arr, clicks_arr, **kwargs)


def _strings(column: Any) -> Any:
    import pyarrow as pa

    return column.combine_chunks().cast(pa.string()) if hasattr(column, "combine_chunks") else column


def _join_lists(lists: pa.Array, sep: str) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join(lists.cast(pa.list_(pa.string())), sep)


def read_log(log: Any, *, experiment: str | None = None, source: str | None = None) -> CounterfactualLog:
    """Read a log (a Parquet/JSON-lines path, an Arrow table, a DataFrame, or a
    :class:`CounterfactualLog`) into a :class:`CounterfactualLog`.

    One clear :class:`InputError`, naming the log's row where there is one, for: a log without
    logging propensities (deterministic logging), a design other than probabilistic
    interleaving or an A/B split, a log mixing experiments (pick one with ``experiment``), a
    missing user_id, query_id, logging_design or logging_rankings, rows with different numbers
    of logging rankings, a ranking or shown list holding a document twice (or, under
    probabilistic interleaving, an empty ranking), a bad ``tau`` or ``arm_shares`` (one
    positive share per arm, summing to 1), a logged propensity that disagrees with the
    recomputed one (checked by :meth:`LoggingModel.check_logged`), a shown document outside
    the logging rankings, no impressions.

    Left out and counted in ``skipped``: rows of other experiments, impressions that show no
    document, clicks at a missing or fractional position or outside the shown list, repeated
    clicks on one position (a position is clicked or not).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(log, CounterfactualLog):
        return log
    table, name = _as_table(log, source)
    columns = set(table.column_names)
    if "logging_design" not in columns or "logging_rankings" not in columns:
        raise InputError(
            f"{name}: no logging propensities (columns logging_design and logging_rankings are "
            "missing): the log looks like deterministic logging, where a new ranker's lists were "
            "never randomly shown, so no counterfactual estimate is possible. Log a probabilistic "
            "interleaving or an A/B split with the fields of docs/explanation/counterfactual-logs.md.")
    needed = [c for c in ("user_id", "query_id", "shown", "clicks") if c not in columns]
    if needed:
        raise InputError(f"{name}: missing column(s) {', '.join(needed)}; a counterfactual log needs "
                         "user_id, query_id, shown, clicks, logging_design and logging_rankings.")
    skipped: dict[str, int] = {}
    # 1-based row numbers of the log as read (before any filter), for every message
    number = np.arange(1, table.num_rows + 1, dtype=np.int64)
    if "experiment" in columns:
        exps = pc.unique(_strings(table.column("experiment"))).to_pylist()
        if experiment is None and len(exps) > 1:
            raise InputError(
                f"{name}: the log mixes {len(exps)} experiments ({', '.join(map(str, sorted(exps, key=str)[:5]))}"
                f"{', ...' if len(exps) > 5 else ''}); their impressions were logged under different "
                "designs, so estimate from one: pass experiment= (--experiment NAME).")
        if experiment is not None:
            if experiment not in exps:
                raise InputError(f"{name}: no experiment {experiment!r}; the log holds "
                                 f"{', '.join(map(str, exps))}.")
            keep = pc.fill_null(pc.equal(_strings(table.column("experiment")), experiment), False)
            mask = np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)
            skipped["other experiments"] = int((~mask).sum())
            table, number = table.filter(pa.array(mask)), number[mask]
        elif exps:
            experiment = str(exps[0])
    elif experiment is not None:
        raise InputError(f"{name}: no experiment column, so no experiment {experiment!r} to choose; the whole "
                         "log is one experiment: leave out experiment= (--experiment).")
    if table.num_rows == 0:
        raise EmptyInputError(f"{name}: no impressions.")
    for column in ("user_id", "query_id", "logging_design", "logging_rankings"):
        _no_nulls(table.column(column), column, name, number)
    designs = pc.unique(_strings(table.column("logging_design"))).to_pylist()
    if len(designs) != 1 or designs[0] not in DESIGNS:
        raise InputError(
            f"{name}: logging_design holds {designs!r}; counterfactual estimates need one design with "
            f"exact propensities, {' or '.join(DESIGNS)} (team-draft and balanced interleaving give "
            "some lists probability 0 under a new pair).")
    design = str(designs[0])
    # an impression that shows nothing (a null or empty shown list) has no list to reweight
    shown_len = _lengths(table.column("shown").combine_chunks())
    if (shown_len == 0).any():
        has = shown_len > 0
        skipped["impressions that show no document"] = int((~has).sum())
        table, number = table.filter(pa.array(has)), number[has]
        if table.num_rows == 0:
            raise InputError(f"{name}: no impression shows a document (column shown is empty).")
    n = table.num_rows
    query = _strings(table.column("query_id"))
    rankings = table.column("logging_rankings").combine_chunks()
    _no_null_ids(rankings, table.column("shown").combine_chunks(), name, number)
    inner = _join_lists(rankings.flatten(), _SEP)
    outer = pa.ListArray.from_arrays(rankings.offsets, inner)
    key = pc.binary_join_element_wise(query, _join_lists(outer, _RSEP), "\x1d")
    encoded = pc.dictionary_encode(key)
    context = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    first = np.unique(context, return_index=True)[1]
    queries = query.take(pa.array(first)).to_pylist()
    _check_rankings(rankings.take(pa.array(first)), design, name, number[first])  # once per context
    ctx_docs, ctx_rankings, ctx_keys, ctx_codes = _context_tables(rankings.take(pa.array(first)))
    # shown documents as local codes
    shown_col = table.column("shown").combine_chunks()
    lengths = _lengths(shown_col)
    k = int(lengths.max(initial=0))
    row = np.repeat(np.arange(n), lengths)
    slot = np.arange(len(row)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    cell_keys = pc.binary_join_element_wise(pa.array(context[row].astype(str)),
                                            shown_col.flatten().cast(pa.string()), _SEP)
    where = pc.index_in(cell_keys, value_set=ctx_keys)
    if where.null_count:
        cell = int(np.flatnonzero(where.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{name}: row {number[row[cell]]}: shown document {shown_col.flatten()[cell].as_py()!r} at position "
            f"{slot[cell] + 1} is in none of the row's logging_rankings; the propensities need the "
            "rankings that produced the list.")
    shown = np.full((n, k), -1, dtype=np.int64)
    shown[row, slot] = ctx_codes[where.to_numpy(zero_copy_only=False).astype(np.int64)]
    _check_distinct(shown, name, number)
    clicks, click_skips = _clicks(table.column("clicks").combine_chunks(), lengths, n, k, name)
    skipped.update(click_skips)
    unit = pc.dictionary_encode(_strings(table.column("user_id"))).indices.to_numpy(zero_copy_only=False)
    tau = 3.0
    shares: tuple[float, ...] | None = None
    if design == "probabilistic" and "tau" in columns:
        taus = pc.unique(table.column("tau")).to_pylist()
        if len(taus) != 1 or taus[0] is None:
            raise InputError(f"{name}: tau holds {taus!r}; one softmax steepness per experiment.")
        tau = float(taus[0])
        if not (np.isfinite(tau) and tau > 0):
            raise InputError(f"{name}: tau is {tau!r}; the softmax steepness of probabilistic interleaving "
                             "is a positive number (3 by default).")
    if design == "ab":
        shares = _shares(table, columns, len(ctx_rankings[0]), name)
    logged = None
    if "propensity" in columns:
        logged = np.asarray(pc.fill_null(table.column("propensity").cast(pa.float64()), float("nan"))
                            .to_numpy(zero_copy_only=False), dtype=np.float64)
    return CounterfactualLog(design, [str(q) for q in queries], ctx_docs, ctx_rankings, context,
                             unit.astype(np.int64), shown, clicks, tau, shares, experiment, name, skipped, logged,
                             number)


def _no_nulls(column: Any, label: str, name: str, number: NDArray[np.int64]) -> None:
    """Refuse a missing value in a required column, naming its first row."""
    if column.null_count:
        i = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{name}: row {number[i]}: {label} is missing; every impression needs user_id, "
                         "query_id, logging_design and logging_rankings (fill it, or drop the row).")


def _no_null_ids(rankings: pa.Array, shown: pa.Array, name: str, number: NDArray[np.int64]) -> None:
    """Refuse a missing ranking in logging_rankings and a missing document id in a shown list or
    a logging ranking, naming the row."""
    inner = rankings.flatten()
    if inner.null_count:
        i = int(np.flatnonzero(inner.is_null().to_numpy(zero_copy_only=False))[0])
        outer = _lengths(rankings)
        row = np.repeat(np.arange(len(rankings)), outer)[i]
        start = int(np.cumsum(outer)[row] - outer[row])
        raise InputError(f"{name}: row {number[row]}: logging ranking {i - start + 1} is missing; "
                         "logging_rankings holds every ranking the design randomised over.")
    for label, docs, row_of in (
            ("shown", shown.flatten(), np.repeat(np.arange(len(shown)), _lengths(shown))),
            ("logging_rankings", inner.flatten(),
             np.repeat(np.repeat(np.arange(len(rankings)), _lengths(rankings)), _lengths(inner)))):
        if docs.null_count:
            i = int(np.flatnonzero(docs.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"{name}: row {number[row_of[i]]}: {label} holds a missing document id; every "
                             "document shown or ranked needs its id.")


def _check_rankings(rankings: pa.Array, design: str, name: str, number: NDArray[np.int64]) -> None:
    """One number of logging rankings per experiment, none listing a document twice, and (under
    probabilistic interleaving) none empty, as the serving-time interleaving requires: vectorized
    over the rankings of each context (its first row; ``number``: those rows' numbers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    outer = _lengths(rankings)
    if outer[0] == 0:
        raise InputError(f"{name}: row {number[0]}: logging_rankings is empty; it holds the rankings the design "
                         "randomised over (control/A first).")
    differ = np.flatnonzero(outer != outer[0])
    if len(differ):
        i = int(differ[0])
        raise InputError(f"{name}: row {number[i]} has {outer[i]} logging rankings where row {number[0]} has "
                         f"{outer[0]}; one experiment randomises over one set of rankers (estimate each set "
                         "as its own experiment).")
    inner = rankings.flatten()
    inner_len = _lengths(inner)
    ranking_row = np.repeat(np.arange(len(rankings)), outer)
    if design == "probabilistic" and (inner_len == 0).any():
        r = int(np.flatnonzero(inner_len == 0)[0])
        raise InputError(f"{name}: row {number[ranking_row[r]]}: logging ranking {r % max(int(outer[0]), 1) + 1} "
                         "is empty; every interleaved ranker must return at least one document.")
    docs = inner.flatten().cast(pa.string())
    which = np.repeat(np.arange(len(inner)), inner_len)
    codes = pc.dictionary_encode(docs).indices.to_numpy(zero_copy_only=False).astype(np.int64)
    pairs = which * (int(codes.max(initial=0)) + 1) + codes
    order = np.argsort(pairs, kind="stable")
    repeat = np.flatnonzero(pairs[order][1:] == pairs[order][:-1])
    if len(repeat):
        e = int(order[repeat + 1].min())  # the first repeated element in the log's order
        r = int(which[e])
        raise InputError(f"{name}: row {number[ranking_row[r]]}: logging ranking {r % int(outer[0]) + 1} lists "
                         f"document {docs[e].as_py()!r} twice; a ranking lists each document once.")


def _check_distinct(shown: NDArray[np.int64], name: str, number: NDArray[np.int64]) -> None:
    """Refuse a shown list that holds a document twice (no design can show it)."""
    if shown.shape[1] < 2:
        return
    ordered = np.sort(shown, axis=1)
    twice = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    if twice.any():
        i = int(np.flatnonzero(twice.any(axis=1))[0])
        raise InputError(f"{name}: row {number[i]}: the shown list holds a document twice; a list shows each "
                         "document once.")


def _clicks(clicked: pa.Array, lengths: NDArray[np.int64], n: int, k: int, name: str
            ) -> tuple[NDArray[np.bool_], dict[str, int]]:
    """``bool[n, k]`` clicks from 1-based positions; what is left out, by reason: missing or
    non-integer positions, positions outside the shown list, repeated clicks on one position
    (a position is clicked or not: counted once)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    skipped: dict[str, int] = {}
    c_len = _lengths(clicked)
    c_row = np.repeat(np.arange(n), c_len)
    flat = clicked.flatten()
    if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type) or pa.types.is_null(flat.type)):
        raise InputError(f"{name}: clicks must be lists of 1-based positions (integers); found "
                         f"{clicked.type}.")
    values = np.asarray(pc.fill_null(flat.cast(pa.float64()), float("nan")).to_numpy(zero_copy_only=False),
                        dtype=np.float64)
    whole = np.isfinite(values) & (values == np.round(values))
    if (~whole).any():
        skipped["clicks without an integer position"] = int((~whole).sum())
    pos = np.where(whole, values, 0).astype(np.int64)
    outside = whole & ((pos < 1) | (pos > lengths[c_row]))
    if outside.any():
        skipped["clicks outside the shown positions"] = int(outside.sum())
    ok = whole & ~outside
    clicks = np.zeros((n, k), dtype=bool)
    cell = c_row[ok] * max(k, 1) + pos[ok] - 1
    unique = np.unique(cell)
    if len(unique) < len(cell):
        skipped["repeated clicks on a position (counted once)"] = int(len(cell) - len(unique))
    clicks.flat[unique] = True
    return clicks, skipped


def _shares(table: pa.Table, columns: set[str], n_arms: int, name: str) -> tuple[float, ...]:
    """The A/B arms' traffic shares: one per arm, positive, summing to 1, one set per experiment."""
    import pyarrow.compute as pc

    if "arm_shares" not in columns:
        raise InputError(f"{name}: an A/B log needs arm_shares (the traffic share of each arm, in "
                         "the order of logging_rankings) to give exact propensities.")
    distinct = pc.unique(_join_lists(table.column("arm_shares").combine_chunks(), ",")).to_pylist()
    if None in distinct:
        raise InputError(f"{name}: arm_shares is missing (or holds a missing share) in some rows; an A/B log "
                         "gives every arm's traffic share on every row.")
    if len(distinct) != 1:
        raise InputError(f"{name}: arm_shares change within the experiment ({distinct[:3]!r}).")
    shares = tuple(float(x) for x in str(distinct[0]).split(","))
    p = np.asarray(shares)
    if len(shares) != n_arms or not (np.all(np.isfinite(p) & (p > 0)) and abs(float(p.sum()) - 1.0) < 1e-9):
        raise InputError(f"{name}: arm_shares is {list(shares)!r}; an A/B log needs one positive share per arm "
                         f"({n_arms}, in the order of logging_rankings) summing to 1, the exact traffic split.")
    return shares


def _lengths(lists: pa.Array) -> NDArray[np.int64]:
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _context_tables(rankings: pa.Array) -> tuple[list[list[str]], list[list[list[int]]], pa.Array,
                                                 NDArray[np.int64]]:
    """The per-context document tables, in one pass over all contexts' rankings (no loop per context).

    ``rankings``: one ``list<list<doc>>`` per context. Returns, per context, its documents (the
    union of its rankings in first-seen order: local code = index), its rankings as local
    codes, and over all contexts the keys ``"{context}\x1f{doc}"`` with each key's local code.
    A doc's local code is its first occurrence's rank among the context's distinct documents:
    ``dictionary_encode`` numbers distinct keys in first-seen order, and the flattened
    elements are context-major, so a context's keys are consecutive codes from its first.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n_ctx = len(rankings)
    outer_len = _lengths(rankings)
    inner = rankings.flatten()
    inner_len = _lengths(inner)
    docs = inner.flatten().cast(pa.string())
    elem_ctx = np.repeat(np.repeat(np.arange(n_ctx, dtype=np.int64), outer_len), inner_len)
    encoded = pc.dictionary_encode(pc.binary_join_element_wise(pa.array(elem_ctx.astype(str)), docs, _SEP))
    key = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    distinct, first = np.unique(key, return_index=True)
    key_ctx = elem_ctx[first]  # the context of each distinct key (codes 0..n_keys-1 in order)
    per_ctx = np.bincount(key_ctx, minlength=n_ctx)
    starts = np.cumsum(per_ctx) - per_ctx
    local = distinct - starts[key_ctx]

    def offsets(lengths: NDArray[np.int64]) -> pa.Array:
        return pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))

    ctx_docs = pa.ListArray.from_arrays(offsets(per_ctx), docs.take(pa.array(first))).to_pylist()
    coded = pa.ListArray.from_arrays(offsets(inner_len), pa.array(local[key], pa.int64()))
    ctx_rankings = pa.ListArray.from_arrays(offsets(outer_len), coded).to_pylist()
    return ctx_docs, ctx_rankings, encoded.dictionary.cast(pa.string()), local.astype(np.int64)


def _as_table(log: Any, source: str | None) -> tuple[pa.Table, str]:
    import pyarrow as pa

    if isinstance(log, pa.Table):
        return log, source or "<table>"
    if hasattr(log, "to_arrow") and not isinstance(log, (str, bytes)):
        return log.to_arrow(), source or "<table>"
    if type(log).__module__.startswith("pandas"):
        return pa.Table.from_pandas(log, preserve_index=False), source or "<DataFrame>"
    from pathlib import Path

    path = Path(log)
    if not path.exists():
        raise InputError(f"{path}: no such log file.")
    if path.is_dir():
        raise InputError(f"{path}: a directory; expected a log file (Parquet or JSON lines), such as "
                         f"{path / 'impressions.parquet'}.")
    if path.suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path), str(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"{path}: not a readable Parquet log ({exc}).") from exc
    import pyarrow.json as pj

    try:
        return pj.read_json(path), str(path)
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: not a Parquet or JSON-lines log ({exc}).") from exc
