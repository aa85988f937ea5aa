"""Where did it get better? Per-group (segment) breakdowns of a comparison, with honest statistics.

A change that helps head queries and hurts tail queries can average to "no difference";
the breakdown shows it. Reading ten group-wise tests at 0.05 finds one false "win" on
average, so the breakdown also carries what makes it safe:

- **per group**: the queries ``n_g``, each system's aggregate, the delta to the baseline,
  its interval (t distribution) and the p-value of the comparison's paired test run on
  the group's queries only;
- **correction across groups**: within each (measure, comparison), the group p-values are
  adjusted together (Holm by default: family-wise error; ``bh``: false discovery rate).
  Groups with fewer than 2 queries get no test (NaN) and are not in the family;
- **too small**: a group with fewer than ``min_queries`` (default 10) queries is flagged: the
  t-test's interval leans on a near-normal mean, and the exact tests cannot reach small
  p-values (a sign-flip test on ``n`` queries cannot go below ``2 / 2^n``);
- **interaction** (does the effect differ between groups?): the one-way ANOVA F of the
  per-query deltas across groups, with a permutation p-value (the deltas are shuffled
  over queries, the memberships stay). With disjoint groups F is scipy's ``f_oneway`` and
  the parametric p-value is reported too (the statistic is
  :func:`serpeval.stats.interaction.interaction_test`, registered in ``GROUP_TESTS``).

**Multi-membership** (a query in several groups): the query counts in every group it is
in (its per-group tests and means). In the interaction test each membership is one
observation for F, and the permutation moves whole queries (a query's delta goes to all
of its memberships together), so the null distribution respects the overlap; the
parametric ANOVA p-value assumes independent observations and is reported only when the
groups are disjoint (NaN otherwise).

Groups come from a file (:func:`serpeval.io.groups.read_groups`), a mapping
``{query: group or [groups]}``, or a built-in grouping (:data:`BUILTINS`):

- ``builtin:relevant`` - quartiles of the number of relevant documents (grade >= 1) per query;
- ``builtin:difficulty`` - tertiles of the baseline's score on the first measure. Flagged:
  groups chosen by the baseline's own score regress to the mean (the "hard" group's
  baseline is poor partly by noise, so any candidate looks better there);
- ``builtin:length`` - tertiles of the number of words of the query text (needs topics).

Quantile bins are made on distinct values (ties stay together), so bins can be unequal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_count
from serpeval.core.errors import OptionError
from serpeval.core.tabular import Tabular
from serpeval.stats import paired_t
from serpeval.stats.interaction import interaction_test

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.comparison.results import Comparison
    from serpeval.evaluation.results import Results

__all__ = [
    "BUILTINS",
    "GroupMeans",
    "Groups",
    "Interaction",
    "SegmentBreakdown",
    "SegmentRow",
    "group_means",
    "group_tests",
    "interaction_test",
    "resolve_groups",
    "segment_breakdown",
    "with_segments",
]

#: Built-in groupings (``groups="builtin:relevant"``, ``--groups builtin:relevant``).
BUILTINS = ("builtin:relevant", "builtin:difficulty", "builtin:length")
#: Default smallest group a per-group test is trusted on.
MIN_QUERIES = 10
RTM_NOTE = ("groups chosen by the baseline's own score regress to the mean: the 'hard' group's "
            "baseline is poor partly by chance, so a candidate tends to look better there and worse "
            "on 'easy' queries even with no real effect")


@dataclass(frozen=True)
class Groups:
    """Query memberships: ``query_ids[i]`` is in group ``labels[i]``.

    Attributes:
        name: where the groups came from (a file, ``builtin:relevant``...).
        query_ids, labels: one entry per membership.
        order: the groups in display order.
        note: a caveat to print with the breakdown (regression to the mean...).
        empty: entries read with no group (null or empty values).
    """

    name: str
    query_ids: tuple[str, ...]
    labels: tuple[str, ...]
    order: tuple[str, ...]
    note: str = ""
    empty: int = 0

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], name: str = "groups") -> Groups:
        """From ``{query: group}`` or ``{query: [group, ...]}``; a None or empty group puts the
        query in no group and is counted in :attr:`empty` (as a groups file's empty values are)."""
        qids: list[str] = []
        labels: list[str] = []
        empty = 0
        for qid, value in mapping.items():
            values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
            kept = [str(v) for v in values if v is not None and str(v) != ""]
            empty += not kept
            qids += [str(qid)] * len(kept)
            labels += kept
        return cls(name, tuple(qids), tuple(labels), tuple(dict.fromkeys(labels)), empty=empty)

    def membership(self, query_ids: NDArray[Any]) -> tuple[NDArray[np.bool_], dict[str, Any]]:
        """``bool[n_queries, n_groups]`` over ``query_ids`` (in :attr:`order`) and the counts of
        what did not match: ``unknown`` (queries in the groups but not evaluated),
        ``ungrouped`` (evaluated queries in no group), ``multi`` (in several groups)."""
        qids = np.asarray(query_ids).astype(str)
        matrix = np.zeros((len(qids), len(self.order)), dtype=bool)
        members = np.asarray(self.query_ids, dtype=str)
        # Vectorized lookups: each membership's row among query_ids and its group's column.
        sorter = np.argsort(qids, kind="stable")
        at = np.minimum(np.searchsorted(qids, members, sorter=sorter), max(len(qids) - 1, 0))
        found = qids[sorter[at]] == members if len(qids) else np.zeros(len(members), dtype=bool)
        order = np.asarray(self.order, dtype=str)
        by_name = np.argsort(order, kind="stable")
        cols = by_name[np.searchsorted(order, np.asarray(self.labels, dtype=str), sorter=by_name)]
        matrix[sorter[at[found]], cols[found]] = True
        unknown = np.unique(members[~found]).tolist()
        per_query = matrix.sum(axis=1)
        ungrouped = qids[per_query == 0].tolist()
        return matrix, {"unknown": unknown, "ungrouped": ungrouped, "multi": int((per_query > 1).sum())}


def _quantile_groups(name: str, query_ids: NDArray[Any], values: NDArray[np.float64], bins: int,
                     unit: str, note: str = "", names: tuple[str, ...] = ()) -> Groups:
    """Quantile bins of ``values`` on the distinct values (ties in one bin), labelled by range."""
    values = np.asarray(values, dtype=np.float64)
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1], method="lower"))
    edges = edges[edges < values.max()] if len(values) else edges  # an edge at the top: an empty last bin
    index = np.searchsorted(edges, values, side="left")   # a value equal to an edge: the lower bin
    order = []
    label_of = {}
    for k in np.unique(index):
        members = values[index == k]
        lo, hi = members.min(), members.max()
        span = _number(lo) if lo == hi else f"{_number(lo)}-{_number(hi)}"
        prefix = f"{names[k]}: " if len(names) == len(edges) + 1 else ""
        label_of[int(k)] = f"{prefix}{span} {unit}".rstrip()
        order.append(label_of[int(k)])
    labels = tuple(label_of[int(k)] for k in index)
    return Groups(name, tuple(np.asarray(query_ids).astype(str).tolist()), labels, tuple(order), note)


def _number(x: float) -> str:
    """An integer as it is, another value with 3 significant digits (a bin edge)."""
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def _higher_is_better(measure: str) -> bool:
    """Whether a higher value of ``measure`` is better (True when no measure is named)."""
    if not measure:
        return True
    from serpeval.measures import parse_measure

    return bool(parse_measure(measure).spec.higher_is_better)


def _relevant_counts(qrels: Any, query_ids: NDArray[Any]) -> NDArray[np.float64]:
    """Relevant documents (grade >= 1) per query in ``query_ids``."""
    from serpeval.io import as_qrels

    q = as_qrels(qrels)
    qids = np.asarray(q.query_ids.to_numpy(zero_copy_only=False)).astype(str)
    names, codes = np.unique(qids, return_inverse=True)
    counts = np.bincount(codes, weights=(q.relevance >= 1).astype(np.float64), minlength=len(names))
    where = np.searchsorted(names, np.asarray(query_ids).astype(str))
    where = np.minimum(where, len(names) - 1)
    found = names[where] == np.asarray(query_ids).astype(str)
    return np.where(found, counts[where], 0.0)


def resolve_groups(spec: Any, *, query_ids: NDArray[Any], qrels: Any = None,
                   baseline_values: NDArray[np.float64] | None = None, baseline_name: str = "",
                   measure: str = "", topics: Mapping[str, str] | None = None,
                   column: str | None = None, bins: int | None = None) -> Groups:
    """A :class:`Groups` from a path, a mapping, a :class:`Groups` or a built-in name.

    Built-ins need: ``builtin:relevant`` the qrels; ``builtin:difficulty`` the baseline's
    per-query values (on ``query_ids``); ``builtin:length`` the topics ``{query: text}``.

    Raises:
        OptionError: an unknown built-in, or one whose input is missing; ``column`` with
            anything but a groups file (a built-in, a mapping, a :class:`Groups` has no columns).
    """
    if column is not None and (isinstance(spec, (Groups, Mapping)) or str(spec).startswith("builtin:")):
        what = str(spec) if isinstance(spec, str) else type(spec).__name__
        raise OptionError(f"--group-column (column={column!r}) names a column of a JSONL or Parquet groups "
                          f"file; {what} has no columns. Drop it, or give a groups file.")
    if isinstance(spec, Groups):
        return spec
    if isinstance(spec, Mapping):
        return Groups.from_mapping(spec)
    text = str(spec)
    if text.startswith("builtin:"):
        if text == "builtin:relevant":
            if qrels is None:
                raise OptionError("groups='builtin:relevant' needs the qrels.")
            return _quantile_groups(text, query_ids, _relevant_counts(qrels, query_ids), bins or 4,
                                    "relevant")
        if text == "builtin:difficulty":
            if baseline_values is None:
                raise OptionError("groups='builtin:difficulty' needs the baseline's per-query scores.")
            names = ("hard", "medium", "easy") if _higher_is_better(measure) else ("easy", "medium", "hard")
            return _quantile_groups(text, query_ids, baseline_values, bins or 3,
                                    f"{baseline_name} {measure}".strip(), note=RTM_NOTE,
                                    names=names if (bins or 3) == 3 else ())
        if text == "builtin:length":
            if not topics:
                raise OptionError("groups='builtin:length' needs the query texts (topics=, --topics FILE).")
            qids = np.asarray(query_ids).astype(str)
            known = np.array([q in topics for q in qids.tolist()], dtype=bool)
            words = np.array([len(topics[q].split()) for q in qids[known].tolist()], dtype=np.float64)
            return _quantile_groups(text, qids[known], words, bins or 3, "words")
        raise OptionError(f"unknown built-in grouping {text!r}; choose one of: {', '.join(BUILTINS)} "
                          "(or give a groups file).")
    from serpeval.io.groups import read_groups

    pairs = read_groups(text, column)
    return Groups(pairs.source, pairs.query_ids, pairs.groups, tuple(dict.fromkeys(pairs.groups)),
                  empty=pairs.empty)


# ----------------------------------------------------------------------------- interaction
@dataclass(frozen=True)
class Interaction:
    """Does the effect differ between groups? (treatment x group interaction)

    Attributes:
        measure, system, baseline: the comparison.
        groups: groups with at least one query; memberships: their total size.
        statistic: one-way ANOVA F of the per-query deltas across groups (memberships).
        p_value: permutation p-value (deltas shuffled over queries, memberships kept):
            ``(1 + #{F* >= F}) / (1 + permutations)``.
        p_anova: the F distribution's p-value (scipy ``f_oneway``); NaN when a query is in
            several groups (the observations are not independent).
        permutations: shuffles used.
    """

    measure: str
    system: str
    baseline: str
    groups: int
    memberships: int
    statistic: float
    p_value: float
    p_anova: float
    permutations: int

    def to_dict(self) -> dict[str, Any]:
        """All fields."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


# ----------------------------------------------------------------------------- breakdown
def group_tests(x: Any, y: Any, membership: Any, *, test: str = "t", confidence: float = 0.95,
                correction: str = "holm", n_resamples: int = 10_000, rng: RngLike = None
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], str]:
    """The paired test of ``x - y`` in every group, corrected across the groups.

    Args:
        x, y: per-query scores ``[..., n_queries]`` (leading axes: independent families).
        membership: ``bool[n_queries, n_groups]``.

    Returns:
        ``(p, p_corrected, ci_low, ci_high, method)``, arrays ``[..., n_groups]``; NaN for
        groups with fewer than 2 queries (not in the correction's family). The interval is
        the t interval of the group's mean of ``x - y``.
    """
    from serpeval.comparison.paired import p_value_method, paired_test
    from serpeval.stats.multiplicity import adjust, canonical_correction

    correction = canonical_correction(correction)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    matrix = np.asarray(membership, dtype=bool)
    generator = as_generator(rng)
    shape = (*x.shape[:-1], matrix.shape[1])
    p = np.full(shape, np.nan)
    low, high = np.full(shape, np.nan), np.full(shape, np.nan)
    sizes = matrix.sum(axis=0)
    method = ""
    for k in range(matrix.shape[1]):
        members = matrix[:, k]
        if sizes[k] < 2:
            continue
        xs, ys = x[..., members], y[..., members]
        result = paired_test(test, xs, ys, confidence=confidence, n_resamples=n_resamples, ci="bca",
                             rng=generator)
        # the df differs per group; the intervals are t intervals whatever the test
        method = p_value_method(result.method.split(", df =")[0])
        p[..., k] = np.asarray(result.p_value)
        interval = result if result.test == "t" else paired_t(xs, ys, confidence=confidence)
        low[..., k] = np.asarray(interval.ci_low)
        high[..., k] = np.asarray(interval.ci_high)
    corrected = np.full(shape, np.nan)
    tested = sizes >= 2
    if tested.any():
        corrected[..., tested] = adjust(np.clip(p[..., tested], 0.0, 1.0), correction)
    return p, corrected, low, high, method



@dataclass(frozen=True)
class SegmentRow:
    """One group of one comparison (``system`` against ``baseline`` on ``measure``).

    ``delta = mean - baseline_mean``; ``ci_low``/``ci_high`` its t interval; ``p_value`` the
    comparison's paired test on the group's queries; ``p_value_corrected`` adjusted across
    the groups; ``too_small``: fewer than ``min_queries`` queries (NaN p below 2).
    """

    measure: str
    system: str
    baseline: str
    group: str
    queries: int
    mean: float
    baseline_mean: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    p_value_corrected: float
    significant: bool
    improved: bool
    too_small: bool

    def to_dict(self) -> dict[str, Any]:
        """All fields."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class SegmentBreakdown(Tabular):
    """What :func:`segment_breakdown` returns; renderers derive from :meth:`to_dicts`.

    Attributes:
        grouping: where the groups came from; note: a caveat (regression to the mean).
        rows: one :class:`SegmentRow` per (measure, comparison, group).
        interactions: one :class:`Interaction` per (measure, comparison).
        test, method: the paired test and how its p-values were obtained.
        correction: across groups, within each (measure, comparison).
        alpha, confidence, min_queries: the settings.
        unknown: queries in the groups but not compared; ungrouped: compared queries in no
            group; multi: compared queries in several groups; empty: group entries without
            a group value.
    """

    grouping: str
    note: str
    rows: tuple[SegmentRow, ...]
    interactions: tuple[Interaction, ...]
    test: str
    method: str
    correction: str
    alpha: float
    confidence: float
    min_queries: int
    unknown: tuple[str, ...]
    ungrouped: tuple[str, ...]
    multi: int
    empty: int = 0

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups, in order."""
        return tuple(dict.fromkeys(r.group for r in self.rows))

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict per (measure, comparison, group)."""
        return [r.to_dict() for r in self.rows]

    def interaction_rows(self) -> list[dict[str, Any]]:
        """One dict per (measure, comparison)."""
        return [i.to_dict() for i in self.interactions]

    def notes(self) -> list[str]:
        """The method, the correction, and every count a reader must know."""
        from serpeval.comparison.results import CORRECTION_NAMES

        # The family is the groups with a test: one of fewer than 2 queries has none (group_tests).
        tested = len({r.group for r in self.rows if r.queries >= 2})
        family = (f"{len(self.groups)} groups" if tested == len(self.groups) else
                  f"{tested} groups with a test (of {len(self.groups)}; a group of fewer than 2 queries "
                  "has none)")
        notes = [f"groups: {self.grouping}; per-group p-values: {self.method}; "
                 f"{CORRECTION_NAMES.get(self.correction, self.correction)} correction across the "
                 f"{family} within each measure and comparison; significant: "
                 f"corrected p <= {self.alpha:g}; {self.confidence:.0%} t intervals (not adjusted)"]
        if self.note:
            notes.append(f"caution: {self.note}")
        small = sorted({(r.group, r.queries) for r in self.rows if r.too_small})
        if small:
            shown = ", ".join(f"{g} ({n})" for g, n in small)
            notes.append(f"WARNING: {len(small)} group(s) have fewer than {self.min_queries} queries, "
                         f"too few for a trustworthy test (minimum {self.min_queries}; below 2 no test): "
                         f"{shown}")
        if self.unknown:
            notes.append(f"{len(self.unknown)} queries in the groups were not compared (not in the "
                         f"runs/qrels): {_some(self.unknown)}")
        if self.ungrouped:
            notes.append(f"{len(self.ungrouped)} compared queries are in no group: {_some(self.ungrouped)}")
        if self.multi:
            notes.append(f"{self.multi} queries are in several groups: they count in each; the "
                         "interaction test permutes whole queries and reports no parametric p-value")
        if self.empty:
            notes.append(f"{self.empty} group entries had an empty group value (in no group)")
        for i in self.interactions:
            if np.isfinite(i.statistic):
                anova = f", ANOVA p = {i.p_anova:.4g}" if np.isfinite(i.p_anova) else ""
                notes.append(f"interaction ({i.measure}, {i.system} vs {i.baseline}): does the effect "
                             f"differ between the {i.groups} groups? F = {i.statistic:.3f}, "
                             f"permutation p = {i.p_value:.4g} ({i.permutations} shuffles){anova}")
        return notes

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        from serpeval.core.strict_json import json_ready

        return json_ready({
            "grouping": self.grouping, "note": self.note, "test": self.test, "method": self.method,
            "correction": self.correction, "alpha": self.alpha, "confidence": self.confidence,
            "min_queries": self.min_queries, "groups": list(self.groups), "rows": self.to_dicts(),
            "interactions": self.interaction_rows(), "unknown_queries": list(self.unknown),
            "ungrouped_queries": list(self.ungrouped), "multi_group_queries": self.multi,
            "notes": self.notes(),
        })

    def _html_caption(self) -> str:
        return f"segments by {self.grouping}"


def _some(items: tuple[str, ...] | list[str], k: int = 5) -> str:
    return ", ".join(items[:k]) + (", ..." if len(items) > k else "")


def segment_breakdown(comparison: Comparison, groups: Groups, *, correction: str = "holm",
                      min_queries: int = MIN_QUERIES, n_permutations: int = 10_000,
                      rng: RngLike = None) -> SegmentBreakdown:
    """The per-group breakdown of every (measure, comparison) in ``comparison``.

    The comparison's test, alpha and confidence are used; the interval is the t interval
    of the group's mean delta (on the tested scale; none for geometric means).

    Raises:
        OptionError: an unknown correction, or no compared query in any group.
    """
    from serpeval.comparison.paired import test_scale
    from serpeval.stats.multiplicity import canonical_correction

    correction = canonical_correction(correction)
    min_queries = check_count(min_queries, "min_queries")
    generator = as_generator(rng)
    matrix, counts = groups.membership(comparison.query_ids)
    if not matrix.any():
        raise OptionError(f"no compared query is in any group of {groups.name} "
                          f"({len(set(groups.query_ids))} grouped queries, {len(comparison.query_ids)} "
                          f"compared; e.g. {_some(sorted(set(groups.query_ids)))} vs "
                          f"{_some(comparison.query_ids.astype(str).tolist())}). Check the query ids.")
    systems = comparison.systems
    index = [(systems.index(r.system), systems.index(r.baseline)) for r in comparison.rows
             if r.measure == str(comparison.measures[0])]
    tested = test_scale(comparison.measures, comparison.values)    # [systems, measures, queries]
    x_all = tested[[a for a, _ in index]].transpose(1, 0, 2)        # [measures, pairs, queries]
    y_all = tested[[b for _, b in index]].transpose(1, 0, 2)
    p, corrected, low, high, method = group_tests(
        x_all, y_all, matrix, test=comparison.test, confidence=comparison.confidence, correction=correction,
        n_resamples=comparison.resamples or 10_000, rng=generator)
    sizes = matrix.sum(axis=0)
    # Every interaction test shuffles with the same stream (as every comparison of the
    # randomization test shares its sign flips), so a measure's p-value does not depend on
    # which measures and pairs were tested before it.
    shuffle_seed = int(generator.integers(0, 2**63))

    rows = []
    interactions = []
    for j, m in enumerate(comparison.measures):
        scale_kind = m.spec.aggregate
        for k_pair, (a, b) in enumerate(index):
            for k in range(len(groups.order)):
                members = matrix[:, k]
                n = int(sizes[k])
                mean_a = m.aggregate(comparison.values[a, j, members]) if n else float("nan")
                mean_b = m.aggregate(comparison.values[b, j, members]) if n else float("nan")
                delta = mean_a - mean_b
                scale = {"sum": n, "gmean": np.nan}.get(scale_kind, 1.0)
                pc = float(corrected[j, k_pair, k])
                rows.append(SegmentRow(
                    measure=str(m), system=systems[a], baseline=systems[b], group=groups.order[k],
                    queries=n, mean=mean_a, baseline_mean=mean_b, delta=delta,
                    ci_low=float(low[j, k_pair, k]) * scale, ci_high=float(high[j, k_pair, k]) * scale,
                    p_value=float(p[j, k_pair, k]), p_value_corrected=pc,
                    significant=bool(np.isfinite(pc) and pc <= comparison.alpha),
                    improved=bool(delta != 0 and (delta > 0) == m.spec.higher_is_better),
                    too_small=n < min_queries))
            f, p_perm, p_anova, used = interaction_test(x_all[j, k_pair] - y_all[j, k_pair], matrix,
                                                        n_permutations=n_permutations,
                                                        rng=np.random.default_rng(shuffle_seed))
            interactions.append(Interaction(str(m), systems[a], systems[b], int((sizes > 0).sum()),
                                            int(sizes.sum()), f, p_perm, p_anova, used))
    return SegmentBreakdown(
        grouping=groups.name, note=groups.note, rows=tuple(rows), interactions=tuple(interactions),
        test=comparison.test, method=method or comparison.method, correction=correction,
        alpha=comparison.alpha, confidence=comparison.confidence, min_queries=min_queries,
        unknown=tuple(counts["unknown"]), ungrouped=tuple(counts["ungrouped"]), multi=counts["multi"],
        empty=groups.empty)


# ----------------------------------------------------------------------------- evaluate
@dataclass(frozen=True, eq=False)
class GroupMeans(Tabular):
    """Per-group aggregates of every run (``evaluate --groups``): no tests.

    Attributes:
        grouping: where the groups came from; measures: canonical names;
        rows: ``{"group", "run", "queries", <measure>: aggregate}`` dicts;
        unknown, ungrouped, multi: as in :class:`SegmentBreakdown`.
    """

    grouping: str
    measures: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    unknown: tuple[str, ...]
    ungrouped: tuple[str, ...]
    multi: int
    note: str = ""

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict per (group, run)."""
        return [dict(r) for r in self.rows]

    def notes(self) -> list[str]:
        """Counts of unmatched queries."""
        notes = [f"groups: {self.grouping}"]
        if self.note:
            notes.append(f"caution: {self.note}")
        if self.unknown:
            notes.append(f"{len(self.unknown)} queries in the groups were not evaluated: {_some(self.unknown)}")
        if self.ungrouped:
            notes.append(f"{len(self.ungrouped)} evaluated queries are in no group: {_some(self.ungrouped)}")
        if self.multi:
            notes.append(f"{self.multi} queries are in several groups (counted in each)")
        return notes

    def _html_caption(self) -> str:
        return f"means by {self.grouping}"


def group_means(results: Results, groups: Groups) -> GroupMeans:
    """Each run's aggregate of each measure per group (over the run's evaluated queries)."""
    rows = []
    unknown: set[str] = set(groups.query_ids)
    ungrouped: set[str] = set()
    multi = 0
    for run in results.runs:
        matrix, counts = groups.membership(run.query_ids)
        unknown &= set(counts["unknown"])
        ungrouped |= set(counts["ungrouped"])
        multi = max(multi, counts["multi"])
        for k, group in enumerate(groups.order):
            members = matrix[:, k]
            row: dict[str, Any] = {"group": group, "run": run.name, "queries": int(members.sum())}
            for j, m in enumerate(results.measures):
                row[str(m)] = m.aggregate(run.values[members, j]) if members.any() else float("nan")
            rows.append(row)
    rows.sort(key=lambda r: groups.order.index(r["group"]))
    return GroupMeans(groups.name, tuple(str(m) for m in results.measures), tuple(rows),
                      tuple(sorted(unknown)), tuple(sorted(ungrouped)), multi, groups.note)


def with_segments(comparison: Comparison, groups: Any, *, qrels: Any = None,
                  topics: Mapping[str, str] | None = None, column: str | None = None,
                  correction: str = "holm", min_queries: int = MIN_QUERIES,
                  n_permutations: int = 10_000, rng: RngLike = None) -> Comparison:
    """``comparison`` with its :attr:`~serpeval.comparison.results.Comparison.segments` set:
    the groups resolved (see :func:`resolve_groups`; difficulty uses the baseline, or the
    first system, on the first measure) and :func:`segment_breakdown` run."""

    base = comparison.baseline if comparison.baseline is not None else comparison.systems[0]
    spec = resolve_groups(groups, query_ids=comparison.query_ids, qrels=qrels,
                          baseline_values=comparison.values[comparison.systems.index(base), 0],
                          baseline_name=base, measure=str(comparison.measures[0]), topics=topics,
                          column=column)
    breakdown = segment_breakdown(comparison, spec, correction=correction, min_queries=min_queries,
                                  n_permutations=n_permutations, rng=rng)
    return replace(comparison, segments=breakdown)
