"""Qrels inferred from clicks: fit a click model on a search log, cut each (query, document)'s
estimated relevance into grades.

:func:`clicks_to_qrels` fits a click model with the EM code of :mod:`serpeval.online.clicks`
(:func:`~serpeval.online.clicks.fit_dbn`, :func:`~serpeval.online.clicks.fit_pbm`,
:func:`~serpeval.online.clicks.fit_dcm`) and takes as each item's **estimated relevance**

=======  ======================================================================================
model    relevance of a (query, document)
=======  ======================================================================================
``dcm``  ``attractiveness``: P(click | examined) under the cascade with several clicks; DCM has
         no per-document satisfaction (its continuation is per rank). The default.
``pbm``  ``attractiveness``: P(click | examined), position bias removed by the examination
         probabilities of the ranks
``dbn``  ``attractiveness x satisfaction``: P(a user who examines it clicks and is satisfied),
         the relevance of Chapelle & Zhang (2009, section 5); an item never clicked has the
         pooled mean satisfaction
=======  ======================================================================================

**Fit.** Every parameter gets the *pooled* prior (``prior="pooled"`` of the fits): its mean is
the parameter's mean over the whole log and it weighs as two observations, so a pair without
evidence gets a typical value, never one above the pairs with evidence (a Beta(1, 1) prior put
every never-clicked pair at satisfaction 1/2, above most clicked ones, and inverted DBN's labels
on the Yandex sample). EM runs until an iteration changes the log-likelihood by less than
``tol`` per impression (default 1e-6; ``iterations`` at most, default 1,000; the notes say
whether it converged).

**Which model.** On the real Yandex WSCD 2012 sample (pairs with >= 10 impressions), Spearman's
rho between the estimate and the raw click-through rate is 0.98 (DCM), 0.92 (PBM) and 0.33
(DBN): a click log gives clicked ranks, not the order of the clicks, so DBN's "last click" is
the lowest-ranked one, and pairs clicked often but not last get satisfaction near 0 (3 of the 30
highest-CTR pairs land in grade 0). DCM is the default; DBN suits logs where the lowest click
is the last one.

**Grades** come from thresholds on that estimate, one global set for all queries: an item gets
grade ``grades[j]`` when its estimate is at least ``thresholds[j - 1]`` (and below
``thresholds[j]``); tied estimates always get the same grade.

- ``quantile`` (default): ``thresholds[j - 1]`` is the ``shares[j - 1]`` quantile of the
  labelled items' estimates, ``shares`` the cumulative grade shares (``quantiles=``, default
  equal shares ``j / len(grades)``);
- ``calibrate=QRELS``: thresholds that maximise the agreement (quadratic-weighted Cohen's kappa
  by default, ``objective=``) between the inferred grades and the given judgments on the items
  both have. Search: start from the cuts that reproduce the judgments' grade shares, then
  coordinate ascent (each threshold in turn moved to its best position between its neighbours,
  every candidate position scored at once from cumulative label counts) until no move helps:
  a local optimum. The kappa reached is in-sample (optimistic); hold judgments out to measure it.

**Counts** (never silently dropped): every item's impressions and clicks are kept
(:meth:`ClickQrels.item_dicts`); items seen in fewer than ``min_impressions`` impressions
(default :data:`MIN_IMPRESSIONS` = 10: below that a click rate's standard error can exceed
1 / (2 sqrt 10) = 0.16, wider than the gap between grades) get no grade and are counted (items
and the impressions behind them); calibration judgments that are not in the log, or below
``min_impressions``, or negative, are counted. A log without a single click is refused: it
holds no evidence of relevance.

:func:`simulated_clicks` generates a log whose true grades are known (per-impression noisy
rankings so that documents are seen at many ranks, a click model of
:func:`serpeval.online.clicks.click_model` on the shown grades, users who differ in click
propensity): the test bed for how well grades are recovered.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_count
from serpeval.core.errors import InputError, OptionError, ParseError
from serpeval.core.tabular import Tabular
from serpeval.judgments.click_defaults import DEFAULT_MODEL, ITERATIONS, MIN_IMPRESSIONS, MODELS, TOL
from serpeval.stats.agreement import cohen_kappa

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.core.data import Qrels
    from serpeval.online.clicks import ClickLog, FitReport

__all__ = ["DEFAULT_MODEL", "ITERATIONS", "MIN_IMPRESSIONS", "MODELS", "TOL", "ClickQrels", "click_log_records",
           "clicks_to_qrels", "read_click_log", "simulated_clicks"]

OBJECTIVES = ("kappa", "linear", "quadratic")
_SEP = "\x1f"


# ------------------------------------------------------------------ reading logs

def read_click_log(path: str | Path | Sequence[str | Path]) -> ClickLog:
    """A click log from JSON lines (``.gz`` allowed) or Parquet, one impression per row with
    ``query``, ``docs`` (the shown document ids in rank order) and ``clicked_ranks`` (1-based);
    see :class:`serpeval.online.clicks.ClickLog`. Several files are one log (each is checked on
    its own first, so that an error names its file and line)."""
    import pyarrow as pa

    from serpeval.online.clicks import ClickLog

    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        raise InputError("no click log given; pass one or more files.")
    tables = [_log_table(p) for p in paths]
    logs = [ClickLog.from_table(t, source=str(p)) for t, p in zip(tables, paths, strict=True)]
    if len(logs) == 1:
        return logs[0]
    columns = ["query", "docs", "clicked_ranks"]
    if all("clicks" in t.column_names for t in tables):
        columns.append("clicks")
    combined = pa.concat_tables([t.select(columns) for t in tables], promote_options="permissive")
    return ClickLog.from_table(combined, source=" + ".join(str(p) for p in paths))


def _log_table(path: str | Path) -> Any:
    """The Arrow table of one click-log file, its columns checked."""
    import pyarrow as pa

    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: a folder; clicks-to-qrels reads click-log files (JSON lines or Parquet) "
                         'with "query", "docs" and "clicked_ranks" per impression.')
    if not p.is_file():
        raise InputError(f"{path}: no such click log file.")
    if p.suffix != ".parquet":
        from serpeval.online.clicks.logs import check_json_depth

        check_json_depth(p)  # before Arrow's JSON reader, which crashes on very deep lines
    try:
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(p)
        else:
            import pyarrow.json as pj

            table = pj.read_json(pa.input_stream(str(p), compression="gzip" if p.suffix == ".gz" else None))
    except (pa.ArrowInvalid, OSError, ValueError) as exc:
        where = _first_bad_line(p) if p.suffix != ".parquet" else None
        what = f"{path}:{where[0]}: {where[1]}" if where else \
            f"{path}: not a JSON-lines or Parquet click log ({' '.join(str(exc).split())})"
        raise ParseError(f"{what}. Expected one impression per line: "
                         '{"query": ..., "docs": [...], "clicked_ranks": [...]}.') from exc
    missing = {"query", "docs", "clicked_ranks"} - set(table.column_names)
    if missing:
        hint = (" A generate-logs log records the clicked positions but not the documents shown, so no "
                "(query, document) relevance can be estimated from it." if "n_shown" in table.column_names else "")
        raise ParseError(f"{path}: missing column(s) {', '.join(sorted(missing))}; a click log needs "
                         '"query", "docs" (shown document ids in rank order) and "clicked_ranks" (1-based).'
                         + hint)
    return table


def _first_bad_line(path: Path) -> tuple[int, str] | None:
    """``(line, what is wrong)`` of the first line of a JSON-lines click log that is not valid
    JSON or whose fields have another type than the lines before (what Arrow's reader refuses,
    naming only a 0-based row); None when every line reads (the error was elsewhere). Only
    called after Arrow's reader failed."""
    import gzip

    kinds: dict[str, str] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    return number, f"not valid JSON ({exc.msg}, column {exc.colno})"
                if not isinstance(record, dict):
                    return number, f"expected a JSON object, found {type(record).__name__}"
                for key in ("query", "docs", "clicked_ranks"):
                    value = record.get(key)
                    kind = "list" if isinstance(value, list) else "null" if value is None else \
                        "number" if isinstance(value, (int, float)) else type(value).__name__
                    odd = [v for v in value if type(v) is not int] if isinstance(value, list) else []
                    if key == "clicked_ranks" and odd:
                        return number, f'"clicked_ranks" must hold 1-based integer ranks; found {odd[0]!r}'
                    if kind == "null":
                        continue
                    if kinds.setdefault(key, kind) != kind:
                        return number, f'"{key}" is a {kind} here but a {kinds[key]} on earlier lines'
    except (OSError, UnicodeDecodeError, EOFError):
        return None  # Arrow's own message says what is wrong
    return None


def click_log_records(log: ClickLog) -> list[dict[str, Any]]:
    """The impressions of ``log`` as dicts in the JSON-lines format (``query``, ``docs``,
    ``clicked_ranks``): what :func:`read_click_log` reads back (to save a simulated log)."""
    _, docs = _split_keys(log)
    out = []
    for row in range(len(log)):
        codes = log.items[row]
        shown = codes >= 0
        out.append({"query": log.queries[int(log.query[row])], "docs": docs[codes[shown]].tolist(),
                    "clicked_ranks": (np.flatnonzero(log.clicks[row] & shown) + 1).tolist()})
    return out


# ------------------------------------------------------------------ the result

@dataclass(frozen=True, eq=False)
class ClickQrels(Tabular):
    """Qrels inferred from a click log, with the evidence behind each label.

    Attributes:
        qrels: the labelled items as :class:`~serpeval.core.data.Qrels` (those with at least
            ``min_impressions`` impressions).
        query_ids, doc_ids: every item of the log (object arrays).
        estimate: each item's estimated relevance (see :data:`MODELS`).
        attractiveness, satisfaction: the fitted per-item parameters (satisfaction: DBN only).
        impressions, clicks: per item, impressions that showed it and clicks on it.
        labels: each item's grade, ``-1`` below ``min_impressions``.
        grades: the grades, lowest first; ``thresholds``: ``len(grades) - 1`` cut points.
        method: ``quantile`` or ``calibrated``; ``shares``: the quantile shares used (quantile).
        model, fit: the click model and how its EM fit went.
        min_impressions: the labelling floor.
        calibration: for ``calibrated``: the objective, its value and the counts of the
            calibration judgments used and set aside.
        source: the log's path.
    """

    qrels: Qrels
    query_ids: NDArray[np.object_]
    doc_ids: NDArray[np.object_]
    estimate: NDArray[np.float64]
    attractiveness: NDArray[np.float64]
    satisfaction: NDArray[np.float64] | None
    impressions: NDArray[np.int64]
    clicks: NDArray[np.int64]
    labels: NDArray[np.int64]
    grades: tuple[int, ...]
    thresholds: tuple[float, ...]
    method: str
    shares: tuple[float, ...] | None
    model: str
    fit: FitReport
    min_impressions: int
    source: str
    calibration: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def unlabelled(self) -> int:
        """Items seen in fewer than ``min_impressions`` impressions (no grade)."""
        return int(np.count_nonzero(self.labels < 0))

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per grade (and one for the unlabelled items): how many items, their share,
        the range of their estimates, the threshold that starts the grade, median impressions."""
        rows = []
        labelled = self.labels >= 0
        total = max(int(labelled.sum()), 1)
        for j, grade in enumerate(self.grades):
            mine = self.labels == grade
            est = self.estimate[mine]
            rows.append({"grade": str(grade), "documents": int(mine.sum()), "share": float(mine.sum() / total),
                         "from": None if j == 0 else self.thresholds[j - 1],
                         "lowest": float(est.min()) if len(est) else None,
                         "highest": float(est.max()) if len(est) else None,
                         "impressions (median)": _median(self.impressions[mine])})
        if self.unlabelled:
            below = ~labelled
            rows.append({"grade": f"none (< {self.min_impressions} impr.)", "documents": self.unlabelled,
                         "share": None, "from": None, "lowest": float(self.estimate[below].min()),
                         "highest": float(self.estimate[below].max()),
                         "impressions (median)": _median(self.impressions[below])})
        return rows

    def item_dicts(self) -> list[dict[str, Any]]:
        """Every (query, document) of the log: estimate, parameters, impressions, clicks and grade
        (``None`` below ``min_impressions``): the evidence behind each label."""
        out = []
        sat = self.satisfaction
        for i in range(len(self.estimate)):
            row: dict[str, Any] = {"query_id": self.query_ids[i], "doc_id": self.doc_ids[i],
                                   "relevance": int(self.labels[i]) if self.labels[i] >= 0 else None,
                                   "estimate": float(self.estimate[i]),
                                   "attractiveness": float(self.attractiveness[i])}
            if sat is not None:
                row["satisfaction"] = float(sat[i])
            row["impressions"] = int(self.impressions[i])
            row["clicks"] = int(self.clicks[i])
            out.append(row)
        return out

    def notes(self) -> list[str]:
        fit = self.fit
        state = (f"converged: log-likelihood change < {fit.tol:g} per impression" if fit.converged else
                 f"NOT converged within {fit.iterations} iterations (tolerance {fit.tol:g} per impression); "
                 "raise iterations (--iterations)")
        notes = [f"{self.model} fitted on {fit.impressions:,} impressions of {self.source} "
                 f"({fit.iterations} EM iterations, {state}; {fit.prior} prior); "
                 f"relevance = {MODELS[self.model]}",
                 f"{len(self.estimate):,} (query, document) pairs; {self.unlabelled:,} seen in fewer than "
                 f"{self.min_impressions} impressions get no grade "
                 f"({int(self.impressions[self.labels < 0].sum()):,} impressions behind them)"]
        cuts = ", ".join(f"{t:.4g}" for t in self.thresholds)
        if self.method == "quantile" and self.shares is not None:
            shares = ", ".join(f"{s:g}" for s in self.shares)
            notes.append(f"thresholds {cuts}: quantiles {shares} of the labelled pairs' estimates")
        elif self.calibration is not None:
            c = self.calibration
            notes.append(f"thresholds {cuts}: calibrated to {c['qrels']} (max {c['objective']} kappa = "
                         f"{c['value']:.4f} on {c['documents']:,} pairs, in-sample); calibration judgments "
                         f"not in the log: {c['not_in_log']:,}, below the impressions floor: "
                         f"{c['below_floor']:,}, negative grades: {c['negative']:,}")
        skipped = {k: v for k, v in self.counts.items() if k in ("clicks_not_shown", "repeat_clicks") and v}
        if skipped:
            words = {"clicks_not_shown": "on a document not shown", "repeat_clicks": "repeated clicks"}
            notes.append("raw click events the model does not use: "
                         + ", ".join(f"{words[k]} {v:,}" for k, v in skipped.items()))
        return notes

    def to_json_dict(self) -> dict[str, Any]:
        return {"model": self.model, "relevance": MODELS[self.model], "grades": list(self.grades),
                "thresholds": list(self.thresholds), "method": self.method,
                "shares": None if self.shares is None else list(self.shares),
                "min_impressions": self.min_impressions, "pairs": len(self.estimate),
                "unlabelled": self.unlabelled, "fit": self.fit.to_dict(), "calibration": self.calibration,
                "log_counts": dict(self.counts), "rows": self.to_dicts(), "notes": self.notes()}


def _median(counts: NDArray[np.int64]) -> float | int | None:
    """The median count: an integer when it is one, None for no items."""
    if len(counts) == 0:
        return None
    value = float(np.median(counts))
    return int(value) if value.is_integer() else value


# ------------------------------------------------------------------ inference

def _fit(log: ClickLog, model: str, iterations: int, tol: float) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None, FitReport]:
    from serpeval.online.clicks import fit_dbn, fit_dcm, fit_pbm

    n = log.n_items
    if model == "dbn":
        dbn, report = fit_dbn(log, iterations=iterations, tol=tol, prior="pooled")
        a, s = dbn.attractiveness[:n], dbn.satisfaction[:n]
        return a * s, a, s, report
    fitted, report = (fit_pbm if model == "pbm" else fit_dcm)(log, iterations=iterations, tol=tol, prior="pooled")
    a = fitted.attractiveness[:n]
    return a.copy(), a, None, report


def _grades(values: Sequence[int] | str) -> tuple[int, ...]:
    if isinstance(values, str):
        try:
            values = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise OptionError(f"grades must be comma-separated integers such as 0,1,2,3; got {values!r}.") from None
    out = tuple(int(v) for v in values)
    if len(out) < 2 or list(out) != sorted(set(out)) or min(out) < 0:
        raise OptionError(f"grades must be two or more distinct non-negative integers in increasing order "
                          f"(e.g. 0,1,2,3); got {','.join(map(str, out))}.")
    return out


def _shares(quantiles: Sequence[float] | None, m: int) -> tuple[float, ...]:
    if quantiles is None:
        return tuple(j / m for j in range(1, m))
    out = tuple(float(q) for q in quantiles)
    if len(out) != m - 1 or any(not 0 < q < 1 for q in out) or list(out) != sorted(out):
        raise OptionError(f"quantiles must be {m - 1} increasing shares in (0, 1), one per grade boundary "
                          f"of {m} grades (e.g. 0.5,0.8,0.95 for 4 grades); got {list(out)!r}.")
    return out


def _quantile_thresholds(values: NDArray[np.float64], shares: Sequence[float]) -> tuple[float, ...]:
    """The ``shares`` quantiles of ``values`` as thresholds (:func:`_apply`: an item at or above
    one goes up a grade), never inside a block of tied values: a quantile that falls on a value
    several items share would lift the whole block past the threshold (and past every other
    threshold on it), so that never-clicked pairs with one shared estimate filled the top grade
    and left grade 0 empty. Such a threshold moves to the block's lower edge (the block goes
    up) or above its upper edge (the block stays; ``inf`` past the largest value), whichever
    leaves the count below nearer the quantile's, and never to the lower edge of the lowest
    block: the lowest estimates stay in the lowest grade. Elsewhere the quantile is
    ``numpy.quantile``'s, as before; the thresholds stay in increasing order."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    n = len(v)
    out = []
    for share, q in zip(shares, np.quantile(v, np.asarray(shares)), strict=True):
        start, end = np.searchsorted(v, q, side="left"), np.searchsorted(v, q, side="right")
        if end - start <= 1:  # not a tied value: numpy's quantile
            out.append(float(q))
            continue
        target = share * (n - 1)   # numpy's position of the quantile among the sorted values
        up = start > 0 and abs(start - target) <= abs(end - target)
        out.append(float(v[start]) if up else float(v[end]) if end < n else math.inf)
    return tuple(float(t) for t in np.maximum.accumulate(out))  # a moved threshold may pass the next


def _apply(estimate: NDArray[np.float64], thresholds: Sequence[float], grades: tuple[int, ...]) -> NDArray[np.int64]:
    """Grade of each estimate: ``grades[number of thresholds <= estimate]``."""
    index = np.searchsorted(np.asarray(thresholds, dtype=np.float64), estimate, side="right")
    return np.asarray(grades, dtype=np.int64)[index]


def clicks_to_qrels(
    log: ClickLog | str | Path | Sequence[str | Path],
    *,
    model: str = DEFAULT_MODEL,
    grades: Sequence[int] | str = (0, 1, 2, 3),
    min_impressions: int = MIN_IMPRESSIONS,
    quantiles: Sequence[float] | None = None,
    calibrate: Any = None,
    objective: str = "quadratic",
    iterations: int = ITERATIONS,
    tol: float = TOL,
) -> ClickQrels:
    """Fit ``model`` on ``log`` and turn each (query, document)'s relevance into a grade.

    Args:
        log: a :class:`~serpeval.online.clicks.ClickLog`, or one or more paths (:func:`read_click_log`).
        model: ``dcm`` (default), ``pbm`` or ``dbn`` (see :data:`MODELS` for the relevance taken).
        grades: the grades to assign, lowest first (``"0,1,2,3"`` also accepted).
        min_impressions: items seen in fewer impressions get no grade (counted; default 10).
        quantiles: cumulative grade shares for the quantile thresholds (default equal shares).
        calibrate: judgments (path, Qrels, dict...) to calibrate the thresholds to instead.
        objective: what calibration maximises: Cohen's kappa with ``quadratic`` (default),
            ``linear`` or no (``kappa``) weights.
        iterations: EM iterations at most (default 1,000).
        tol: EM stops when an iteration changes the log-likelihood by less than this per
            impression (default 1e-6).

    Raises:
        OptionError: an unknown model, bad grades / quantiles / objective, both quantiles and
            calibrate.
        InputError: no item reaches ``min_impressions``; fewer than 2 calibration judgments
            match labelled items of the log; the log has no click at all.
    """
    from serpeval.online.clicks import ClickLog

    key = str(model).lower()
    if key not in MODELS:
        raise OptionError(f"unknown click model {model!r} for clicks-to-qrels; choose one of {', '.join(MODELS)}.")
    levels = _grades(grades)
    floor = check_count(min_impressions, "min_impressions")
    if objective not in OBJECTIVES:
        raise OptionError(f"objective must be one of {', '.join(OBJECTIVES)}; got {objective!r}.")
    if quantiles is not None and calibrate is not None:
        raise OptionError("quantiles and calibrate exclude each other: the thresholds come from one or the other.")
    shares = None if calibrate is not None else _shares(quantiles, len(levels))
    if not tol > 0:
        raise OptionError(f"tol must be a positive number; got {tol!r}.")
    clicklog = log if isinstance(log, ClickLog) else read_click_log(log)
    if not clicklog.clicks.any():
        raise InputError(f"{clicklog.source}: no clicks in {len(clicklog):,} impressions; relevance is inferred "
                         "from clicks, so there is nothing to label. Check that clicked_ranks is filled in.")
    estimate, attractiveness, satisfaction, report = _fit(clicklog, key, check_count(iterations, "iterations"), tol)
    n = clicklog.n_items
    shown = clicklog.items >= 0
    impressions = np.bincount(clicklog.items[shown], minlength=n)[:n].astype(np.int64)
    clicks = np.bincount(clicklog.items[clicklog.clicks & shown], minlength=n)[:n].astype(np.int64)
    labelled = impressions >= floor
    if not labelled.any():
        raise InputError(f"{clicklog.source}: no (query, document) pair is seen in {floor} impressions or more "
                         f"(the most: {int(impressions.max())}); lower --min-impressions.")
    query_ids, doc_ids = _split_keys(clicklog)
    calibration = None
    if shares is not None:
        thresholds = _quantile_thresholds(estimate[labelled], shares)
        method = "quantile"
    else:
        thresholds, calibration = _calibrate(calibrate, clicklog.item_keys, estimate, labelled, levels, objective)
        method = "calibrated"
    labels = np.where(labelled, _apply(estimate, thresholds, levels), -1)
    qrels = _qrels(query_ids[labelled], doc_ids[labelled], labels[labelled], clicklog.source)
    return ClickQrels(qrels, query_ids, doc_ids, estimate, attractiveness, satisfaction, impressions, clicks,
                      labels, levels, thresholds, method, shares, key, report, floor, clicklog.source,
                      calibration, dict(clicklog.counts))


def _split_keys(log: ClickLog) -> tuple[NDArray[np.object_], NDArray[np.object_]]:
    import pyarrow.compute as pc

    parts = pc.split_pattern(log.item_keys, _SEP, max_splits=1)
    query = np.array(pc.list_element(parts, 0).to_pylist(), dtype=object)
    doc = np.array(pc.list_element(parts, 1).to_pylist(), dtype=object)
    return query, doc


def _qrels(query_ids: NDArray[np.object_], doc_ids: NDArray[np.object_], grades: NDArray[np.int64],
           source: str) -> Qrels:
    import pyarrow as pa

    from serpeval.core.data import Qrels

    return Qrels(pa.chunked_array([pa.array(query_ids.tolist(), pa.string())]),
                 pa.chunked_array([pa.array(doc_ids.tolist(), pa.string())]), grades,
                 source=f"{source} (clicks-to-qrels)")


# ------------------------------------------------------------------ calibration

def _calibrate(calibrate: Any, log_keys: Any,
               estimate: NDArray[np.float64], labelled: NDArray[np.bool_], levels: tuple[int, ...],
               objective: str) -> tuple[tuple[float, ...], dict[str, Any]]:
    """Thresholds maximising kappa between inferred grades and ``calibrate`` (module docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.io import as_qrels

    judged = as_qrels(calibrate).as_grades("int")  # grade categories: a fractional grade is refused
    keep = judged.relevance >= 0
    mask = pa.array(keep)
    keys = pc.binary_join_element_wise(judged.query_ids.filter(mask), judged.doc_ids.filter(mask), _SEP)
    found = pc.fill_null(pc.index_in(keys, value_set=log_keys), -1).to_numpy(zero_copy_only=False)
    in_log = found >= 0
    position = np.maximum(found, 0).astype(np.int64)
    usable = in_log & labelled[position]
    truth = judged.relevance[keep][usable]
    values = estimate[position[usable]]
    counts = {"qrels": judged.source, "not_in_log": int((~in_log).sum()),
              "below_floor": int((in_log & ~labelled[position]).sum()), "negative": int((~keep).sum()),
              "documents": int(usable.sum()), "objective": {"kappa": "unweighted"}.get(objective, objective)}
    if usable.sum() < 2:
        raise InputError(f"{judged.source}: {int(usable.sum())} of its judgments match (query, document) pairs "
                         f"of the log with enough impressions ({counts['not_in_log']} are not in the log, "
                         f"{counts['below_floor']} below --min-impressions); calibration needs at least 2. "
                         "Check that the qrels and the log use the same query and document ids.")
    thresholds, value = _best_thresholds(values, truth, levels, {"kappa": "none"}.get(objective, objective))
    counts["value"] = value
    return thresholds, counts


def _best_thresholds(values: NDArray[np.float64], truth: NDArray[np.int64], levels: tuple[int, ...],
                     weights: str) -> tuple[tuple[float, ...], float]:
    """Coordinate ascent over the cut positions of the sorted estimates (module docstring)."""
    order = np.argsort(values, kind="stable")
    v, t = values[order], truth[order]
    n, m = len(v), len(levels)
    lowest = min(int(t.min()), levels[0])
    span = max(int(t.max()), levels[-1]) - lowest + 1
    onehot = np.zeros((n, span))
    onehot[np.arange(n), t - lowest] = 1.0
    cum = np.vstack([np.zeros(span), np.cumsum(onehot, axis=0)])       # [n + 1, span]
    # A cut may sit only between different estimates (ties get one grade).
    candidates = np.flatnonzero(np.concatenate([[True], v[1:] != v[:-1], [True]]))
    rows = np.asarray(levels) - lowest                                  # inferred grade -> category

    def confusions(cuts: NDArray[np.int64]) -> NDArray[np.float64]:
        """``cuts[P, m + 1]`` (0 .. n) -> confusion matrices ``[P, span, span]``."""
        blocks = cum[cuts[:, 1:]] - cum[cuts[:, :-1]]                     # [P, m, span]
        out = np.zeros((len(cuts), span, span))
        out[:, rows, :] = blocks
        return out

    shares = np.array([np.count_nonzero(t < g) for g in levels[1:]])
    cuts = np.array([0, *candidates[np.clip(np.searchsorted(candidates, shares), 0, len(candidates) - 1)], n])
    cuts[1:-1] = np.maximum.accumulate(cuts[1:-1])
    best = float(cohen_kappa(confusions(cuts[None]), weights)[0])
    for _ in range(100):
        moved = False
        for j in range(1, m):
            lo, hi = cuts[j - 1], cuts[j + 1]
            options = candidates[(candidates >= lo) & (candidates <= hi)]
            trial = np.repeat(cuts[None], len(options), axis=0)
            trial[:, j] = options
            scores = np.nan_to_num(cohen_kappa(confusions(trial), weights), nan=-np.inf)
            k = int(np.argmax(scores))
            if scores[k] > best + 1e-12:
                best, cuts, moved = float(scores[k]), trial[k], True
        if not moved:
            break
    thresholds = []
    for c in cuts[1:-1]:
        if c == 0:
            thresholds.append(0.0)
        elif c == n:
            thresholds.append(1.0)
        else:
            thresholds.append(float((v[c - 1] + v[c]) / 2.0))
    return tuple(thresholds), best


# ------------------------------------------------------------------ simulated logs with known grades

def simulated_clicks(
    n_queries: int = 100,
    impressions: int = 50_000,
    *,
    docs_per_query: int = 20,
    k: int = 10,
    levels: int = 4,
    click_model: str = "dbn",
    ranking_noise: float = 1.5,
    user_sd: float = 0.5,
    rng: RngLike = 0,
) -> tuple[ClickLog, Qrels]:
    """A click log whose true grades are known, and those grades as qrels.

    Each query has ``docs_per_query`` documents with grades ``0 .. levels - 1`` drawn with
    ``P(g) ~ 2^-g``; queries have Zipf popularity (``P(q) ~ 1/(q + 1)``, so rare queries have few
    impressions). Every impression ranks its query's documents by ``grade + N(0, ranking_noise)``
    drawn afresh (documents are seen at many ranks, as in a real log where rankings change) and
    shows the top ``k``; clicks come from the preset ``click_model`` (:func:`serpeval.online.clicks.
    click_model`) on the shown grades, each impression's attractiveness shifted by ``N(0,
    user_sd)`` on the logit scale (users differ). Ids mix shapes (``q7``, ``query-0012``;
    ``d3-7``, ``clueweb12-0000000012``).
    """
    import pyarrow as pa

    from serpeval.online.clicks import ClickLog
    from serpeval.online.clicks import click_model as preset

    check_count(n_queries, "n_queries")
    check_count(impressions, "impressions")
    check_count(k, "k")
    if docs_per_query < k:
        raise OptionError(f"docs_per_query ({docs_per_query}) must be at least k ({k}).")
    gen = as_generator(rng)
    p_grade = 0.5 ** np.arange(levels)
    grades = gen.choice(levels, size=(n_queries, docs_per_query), p=p_grade / p_grade.sum())
    popularity = 1.0 / np.arange(1, n_queries + 1)
    query = gen.choice(n_queries, size=impressions, p=popularity / popularity.sum())
    noisy = grades[query] + gen.normal(0.0, ranking_noise, (impressions, docs_per_query))
    shown = np.argsort(-noisy, axis=1, kind="stable")[:, :k]
    shown_grades = np.take_along_axis(grades[query], shown, axis=1)
    clicks = preset(click_model, levels=levels).sample(shown_grades, gen,
                                                       shift=gen.normal(0.0, user_sd, impressions))
    qnames = np.array([f"q{q}" if q % 2 else f"query-{q:04d}" for q in range(n_queries)], dtype=object)
    dnames = np.array([[f"d{q}-{d}" if d % 3 else f"clueweb12-{q * docs_per_query + d:010d}"
                        for d in range(docs_per_query)] for q in range(n_queries)], dtype=object)
    rows, cols = np.nonzero(clicks)
    per_row = np.bincount(rows, minlength=impressions)
    offsets = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int32)
    doc_offsets = np.arange(0, impressions * k + 1, k, dtype=np.int32)
    table = pa.table({
        "query": pa.array(qnames[query].tolist(), pa.string()),
        "docs": pa.ListArray.from_arrays(pa.array(doc_offsets),
                                         pa.array(dnames[query[:, None], shown].ravel().tolist(), pa.string())),
        "clicked_ranks": pa.ListArray.from_arrays(pa.array(offsets), pa.array((cols + 1).astype(np.int64))),
    })
    log = ClickLog.from_table(table, source=f"<simulated {click_model} log>")
    q_all = np.repeat(qnames, docs_per_query)
    truth = _qrels(q_all, dnames.ravel(), grades.ravel().astype(np.int64), "<simulated truth>")
    return log, truth
