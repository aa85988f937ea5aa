"""Per-segment effects of A/B and interleaving experiments (``ab --by``, ``interleaving-report --by``).

A segment is the value of one impressions-log column (country, device, query class...). The
engine does the work in one grouped expression; only per-(segment, variant) moments reach
Python:

1. impressions -> (unit, segment): ``GROUP BY unit, segment`` sums each unit's impressions
   *within the segment* (a user seen in two segments is two clusters, one per segment);
2. -> (segment, variant): ``GROUP BY segment, variant`` gives n, means, variances,
   covariances (:func:`~serpeval.online.logs.moments.fetch_moments`).

Per segment the A/B effect is the same test as :func:`~serpeval.online.experiments.analyze_ab`
(delta method clustered by unit, Welch t for per-unit means, two-proportion z when the unit
is the impression). The p-values of one (metric, treatment) are corrected across the
segments (Holm by default), over the segments that have a test: a segment with fewer than 2
units in an arm, or without variance (within each arm every unit has the same value, so the
standard error of the difference is 0), is reported with no test, left out of the correction
and of Cochran's Q, and counted in the notes. A NULL segment value is a segment of its own,
``(missing)``, never merged with a real value: when the column also holds the text
``(missing)``, NULL is labelled ``(NULL)`` (or the first free ``(NULL 2)``, ...) and a note says so.

- **Interaction** (does the effect differ between segments?): Cochran's Q on the segment
  effects, ``Q = sum_g w_g (e_g - e_w)^2`` with ``w_g = 1 / se_g^2`` and ``e_w`` the
  weighted mean, against chi-square with ``G - 1`` df. It assumes independent segments:
  units in several segments make them correlated (a warning counts such units).
- **Simpson's paradox**: the overall effect (the segments' moments pooled per arm) is set
  against the *mix-standardised* effect ``sum_g pi_g e_g`` (``pi_g``: the segment's share
  of all units, both arms pooled). When the two have opposite signs and the mix differs
  between the arms (chi-square test of the units per segment and arm, p < ``alpha``), the
  overall effect comes from the segment mix, not from the treatment inside the segments;
  the report says so, with the mix per arm. With the same mix in both arms there is no
  paradox to report: opposite signs of two near-zero effects are noise.

Interleaving: per segment, Δ = (wins_A + ties / 2) / impressions - 1/2 with the sign
convention of :func:`serpeval.online.interleaving.analysis.analyze_counts`, and a
delta-method interval clustered by unit (``Y_u`` = wins + ties / 2, ``X_u`` = impressions
of unit u). Each impression shows both rankers, so there is no arm mix and no Simpson check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from serpeval.core.errors import InputError, OptionError
from serpeval.core.tabular import Tabular
from serpeval.online.experiments.options import SEGMENT_FIELDS, ABDesign, resolve_design
from serpeval.online.logs.features import drop_mixed_units, mixed_unit, prepare
from serpeval.online.logs.sources import collect_sorted, count, first_row, read_logs
from serpeval.stats.effects import no_variance
from serpeval.stats.multiplicity import canonical_correction
from serpeval.stats.validation import confidence_label

__all__ = ["SegmentEffect", "SegmentEffects", "analyze_ab_segments", "analyze_interleaving_segments",
           "cochran_q", "simpson_check"]

MISSING = "(missing)"


def _null_label(values: list[Any], by: str) -> tuple[str, list[str]]:
    """The label of the NULL segment: ``(missing)``, or when the column holds that text as a
    real value, the first of ``(NULL)``, ``(NULL 2)``, ... it does not hold; and the note
    that says so (none when the column has no NULL or no clash)."""
    real = {v for v in values if v is not None}
    label, i = MISSING, 1
    while label in real:
        label = "(NULL)" if i == 1 else f"(NULL {i})"
        i += 1
    if label == MISSING or None not in values:
        return label, []
    return label, [f"the NULL values of {by!r} are the segment {label!r}: the column also holds the value "
                   f"{MISSING!r}, a segment of its own"]


def _segment_count(segment: Any) -> Any:
    """Distinct values of ``segment`` with NULL as one value of its own (``nunique`` skips it)."""
    return segment.nunique() + segment.isnull().any().cast("int64")


@dataclass(frozen=True)
class SegmentEffect:
    """One (metric, treatment, segment): values, effect and interval, p-values.

    ``improved``: the treatment is better (A/B: the effect in the metric's good direction;
    interleaving: B, the treatment, preferred, i.e. Δ < 0 since Δ > 0 means A preferred).
    """

    metric: str
    treatment: str
    control: str
    segment: str
    units: int
    units_control: int
    units_treatment: int
    value_control: float
    value_treatment: float
    effect: float
    ci_low: float
    ci_high: float
    se: float
    p_value: float
    p_value_corrected: float
    significant: bool
    improved: bool
    test: str

    def to_dict(self) -> dict[str, Any]:
        """All fields."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class SegmentEffects(Tabular):
    """Per-segment effects of one experiment (A/B or interleaving).

    Attributes:
        kind: ``ab`` or ``interleaving``; by: the segment column; experiment, source, backend.
        rows: one :class:`SegmentEffect` per (metric, treatment, segment).
        overall: ``{(metric, treatment): (effect, se)}`` from the pooled moments.
        interactions: one dict per (metric, treatment): Cochran's ``q``, ``df``, ``p_value``.
        simpson: one sentence per (metric, treatment) that shows Simpson's paradox.
        mix: ``{segment: {variant: units}}``; mix_p: chi-square p of "same mix in every arm".
        users, multi_segment_users: distinct units, and those seen in several segments.
        skipped: segments left out of a test (an arm with fewer than 2 units, no variance),
            with why.
        alpha, correction: level and the correction across segments.
    """

    kind: str
    by: str
    experiment: str
    source: str
    backend: str
    rows: tuple[SegmentEffect, ...]
    overall: dict[tuple[str, str], tuple[float, float]]
    interactions: tuple[dict[str, Any], ...]
    simpson: tuple[str, ...]
    mix: dict[str, dict[str, int]]
    mix_p: float
    users: int
    multi_segment_users: int
    alpha: float
    correction: str
    skipped: tuple[str, ...] = ()
    notes_extra: tuple[str, ...] = field(default=())

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict per (metric, treatment, segment)."""
        return [r.to_dict() for r in self.rows]

    def title(self) -> str:
        """One line: what was broken down by what."""
        what = "A/B effects" if self.kind == "ab" else "interleaving preference"
        return f"{what} by {self.by} (experiment {self.experiment or '-'}; {self.source}, {self.backend})"

    def notes(self) -> list[str]:
        """Method, correction, interaction, Simpson's paradox and the warnings."""
        names = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no"}
        notes = [f"{confidence_label(1 - self.alpha)} CIs clustered by unit within each segment; "
                 f"{names.get(self.correction, self.correction)} correction across {self._family()} "
                 f"within each metric and treatment; significant: corrected p < {self.alpha:g}"]
        if self.kind == "ab":
            notes.append("per-segment effects without CUPED (the overall analysis may use it)")
        if self.kind == "interleaving":
            notes.append("Δ: the preference of the overall interleaving report (its sign), per segment; "
                         "share A / share B: the credit shares (wins + ties / 2) / impressions "
                         "of A and B; delta-method z per segment")
        if self.multi_segment_users:
            notes.append(f"WARNING: {self.multi_segment_users:,} of {self.users:,} units appear in several "
                         f"segments of {self.by!r}: their impressions count in each segment (one cluster per "
                         "segment), so segments are not independent and the interaction test is approximate")
        for i in self.interactions:
            out = i.get("left_out", 0)
            left = (f" ({out} segment(s) without a test left out)" if out else "")
            if np.isfinite(i["q"]):
                notes.append(f"interaction ({i['metric']}, {i['treatment']}): does the effect differ between "
                             f"the {i['df'] + 1} segments with a test{left}? Cochran's Q = {i['q']:.3f}, "
                             f"df = {i['df']}, p = {i['p_value']:.4g}")
            elif out:
                notes.append(f"interaction ({i['metric']}, {i['treatment']}): no Cochran's Q: fewer than 2 "
                             f"segments with a test{left}")
        notes += [f"SIMPSON'S PARADOX: {s}" for s in self.simpson]
        if self.kind == "ab" and np.isfinite(self.mix_p) and self.mix_p < 0.001:
            notes.append(f"the segment mix differs between the arms (chi-square p = {self.mix_p:.3g}): "
                         "compare segment effects, not the overall one, if the mix shift is an artefact")
        notes += list(self.skipped)
        notes += list(self.notes_extra)
        return notes

    def _family(self) -> str:
        """The segments each correction ran over: those with a test (a finite p-value)."""
        sizes: dict[tuple[str, str], int] = {}
        for r in self.rows:
            key = (r.metric, r.treatment)
            sizes[key] = sizes.get(key, 0) + bool(np.isfinite(r.p_value))
        tested = sorted(set(sizes.values())) or [0]
        of = len(self.mix)
        if tested == [of]:
            return f"the {of} segments"
        many = f"{tested[0]}" if len(tested) == 1 else f"{tested[0]} to {tested[-1]}"
        return f"the {many} segments with a test (of {of}; the others have no test and no corrected p)"

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        from serpeval.core.strict_json import json_ready

        return json_ready({
            "kind": self.kind, "by": self.by, "experiment": self.experiment, "source": self.source,
            "backend": self.backend, "alpha": self.alpha, "correction": self.correction,
            "rows": self.to_dicts(), "interactions": list(self.interactions),
            "overall": [{"metric": m, "treatment": t, "effect": e, "se": se}
                        for (m, t), (e, se) in self.overall.items()],
            "simpson": list(self.simpson), "mix": self.mix, "mix_p_value": self.mix_p,
            "users": self.users, "multi_segment_users": self.multi_segment_users, "notes": self.notes(),
        })

    def _html_caption(self) -> str:
        return self.title()


# ----------------------------------------------------------------------------- statistics
def cochran_q(effects: Any, se: Any) -> tuple[float, int, float]:
    """Cochran's Q heterogeneity test of independent estimates: ``(Q, df, p)``.

    ``Q = sum w (e - sum w e / sum w)^2``, ``w = 1 / se^2``, chi-square with ``k - 1`` df over
    the ``k`` finite estimates with ``se > 0``; NaN with fewer than 2.
    """
    from scipy import stats

    e, s = np.asarray(effects, dtype=np.float64), np.asarray(se, dtype=np.float64)
    keep = np.isfinite(e) & np.isfinite(s) & (s > 0)
    e, s = e[keep], s[keep]
    if len(e) < 2:
        return float("nan"), 0, float("nan")
    w = 1.0 / (s * s)
    mean = (w * e).sum() / w.sum()
    q = float((w * (e - mean) ** 2).sum())
    return q, len(e) - 1, float(stats.chi2.sf(q, len(e) - 1))


def simpson_check(overall: float, effects: Any, shares: Any) -> tuple[bool, float, bool]:
    """``(paradox, standardised effect, every segment opposite)``.

    The standardised effect ``sum_g shares_g effects_g`` holds the segment mix fixed; a
    paradox is an overall effect and a standardised effect of opposite signs (both non-zero).
    """
    e, w = np.asarray(effects, dtype=np.float64), np.asarray(shares, dtype=np.float64)
    keep = np.isfinite(e)
    if not keep.any() or not np.isfinite(overall) or overall == 0:
        return False, float("nan"), False
    standardised = float((e[keep] * w[keep]).sum() / w[keep].sum())
    paradox = standardised != 0 and np.sign(standardised) != np.sign(overall)
    every = bool(np.all(np.sign(e[keep]) == -np.sign(overall)))
    return bool(paradox), standardised, every


# ----------------------------------------------------------------------------- A/B
def _segment_column(opened: Any, by: str) -> None:
    if by not in opened.impressions.columns:
        raise OptionError(f"{opened.source}: no column {by!r} to segment by; columns: "
                          f"{', '.join(opened.impressions.columns)}.")


def _mixed_and_multi_segment_units(features: Any) -> tuple[dict[str, int], int, int]:
    """What :func:`~serpeval.online.logs.features.drop_mixed_units` and
    :func:`_multi_segment_units` count, in one engine query (on Spark each query costs a
    fixed ~0.3 s): the units seen in more than one variant and their rows, then of the
    other units how many there are and how many were seen in more than one segment."""

    per_unit = features.group_by("unit").aggregate(
        m=mixed_unit(features), rows=features.count(), k=_segment_count(features.segment))
    row = first_row(per_unit.aggregate(
        units=count(per_unit.m), rows=per_unit.rows.sum(where=per_unit.m).fill_null(0),
        users=count(~per_unit.m), multi=count(~per_unit.m & (per_unit.k > 1))))
    return ({"units": int(row["units"] or 0), "rows": int(row["rows"] or 0)}, int(row["users"] or 0),
            int(row["multi"] or 0))


def _multi_segment_units(units: Any) -> tuple[int, int]:
    """Distinct units, and units in more than one segment (one engine query)."""

    per_unit = units.group_by("unit").aggregate(k=_segment_count(units.segment))
    row = first_row(per_unit.aggregate(users=per_unit.count(), multi=(per_unit.k > 1).cast("int64").sum()))
    return int(row["users"] or 0), int(row["multi"] or 0)


def analyze_ab_segments(
    logs: Any,
    experiment: str | None = None,
    design: ABDesign | None = None,
    *,
    by: str,
    clicks: Any = None,
    **keywords: Any,
) -> SegmentEffects:
    """Per-segment A/B effects by the log column ``by`` (see the module docstring).

    Args are those of :func:`~serpeval.online.experiments.analyze_ab`, plus ``by``. Of the
    :class:`~serpeval.online.experiments.options.ABDesign` it reads metrics, control,
    alpha, correction, use_t, duplicates, long_click_seconds, backend and schema; there is
    no CUPED here (``design.cuped=True`` is refused) and no sample-ratio check per segment
    (the segment mix is tested instead).

    Raises:
        OptionError: ``by`` is not a column of the impressions log; ``design.cuped`` is True.
    """
    from scipy import stats

    from serpeval.online.experiments.analysis import (
        adjust_tested,
        chosen_metrics,
        compare_metric,
        moment_pairs,
        needed_columns,
    )
    from serpeval.online.logs.moments import Moments, fetch_moments, unit_table

    d = resolve_design(design, experiment, keywords, "analyze_ab_segments", allowed=SEGMENT_FIELDS)
    if d.cuped:
        raise OptionError("analyze_ab_segments has no CUPED (the pre-period log is not split by segment); "
                          "use a design with cuped=None or False.")
    metrics, control, alpha, correction, use_t = d.metrics, d.control, d.alpha, d.correction, d.use_t
    duplicates, long_click_seconds, backend, schema = d.duplicates, d.long_click_seconds, d.backend, d.schema
    chosen = chosen_metrics(metrics)
    opened = read_logs(logs, clicks=clicks, backend=backend, schema=schema)
    _segment_column(opened, by)
    prepared = prepare(opened, experiment, duplicates=duplicates,
                       long_click_seconds=long_click_seconds, need=needed_columns(chosen), segment=by)
    per_impression = opened.schema.unit == opened.schema.impression_id
    variables, pairs = moment_pairs(chosen, False)
    variables.add("impressions")
    mixed, users, multi = _mixed_and_multi_segment_units(prepared.features)
    features, mixed_units, mixed_rows = drop_mixed_units(prepared.features, mixed)
    units = unit_table(features, set(variables), keys=["segment"])   # NULL: a group of its own
    keys, moments, _ = fetch_moments(units, variables, pairs, by=("segment", "variant"))
    null_label, null_note = _null_label([k["segment"] for k in keys], by)
    for k in keys:
        k["segment"] = null_label if k["segment"] is None else k["segment"]
    segments = list(dict.fromkeys(k["segment"] for k in keys))
    variants = sorted({k["variant"] for k in keys})
    if len(variants) < 2:
        raise InputError(f"{opened.source}: experiment {prepared.experiment!r} has units in only one "
                         f"variant ({', '.join(variants) or 'none'}); an A/B test needs at least two.")
    ctrl = control or ("control" if "control" in variants else variants[0])
    if ctrl not in variants:
        raise InputError(f"{opened.source}: no variant {ctrl!r} (variants: {', '.join(variants)}).")
    treatments = [v for v in variants if v != ctrl]
    where = {(k["segment"], k["variant"]): i for i, k in enumerate(keys)}
    mix = {s: {v: int(moments.n[where[(s, v)]]) if (s, v) in where else 0 for v in variants} for s in segments}
    table = np.array([[mix[s][v] for v in variants] for s in segments], dtype=np.float64)
    mix_p = float(stats.chi2_contingency(table).pvalue) if table.shape[0] > 1 and (table.sum(0) > 0).all() \
        and (table.sum(1) > 0).all() else float("nan")
    shares = table.sum(axis=1) / table.sum()

    def pooled(variant: str) -> Moments:
        index = [where[(s, variant)] for s in segments if (s, variant) in where]
        out = moments.take(index[0])
        for i in index[1:]:
            out = out.pool(moments.take(i))
        return out

    rows: list[SegmentEffect] = []
    interactions: list[dict[str, Any]] = []
    simpson: list[str] = []
    overall: dict[tuple[str, str], tuple[float, float]] = {}
    skipped: list[str] = []
    for metric in chosen:
        for treatment in treatments:
            found: list[tuple[str, int, int, Any, str]] = []
            for s in segments:
                ic, it = where.get((s, ctrl)), where.get((s, treatment))
                nc = int(moments.n[ic]) if ic is not None else 0
                nt = int(moments.n[it]) if it is not None else 0
                if nc < 2 or nt < 2:
                    skipped.append(f"segment {s!r}: {nc} unit(s) in {ctrl}, {nt} in {treatment}; at least 2 "
                                   f"per arm are needed, no test for {metric.name}")
                    found.append((s, nc, nt, None, ""))
                    continue
                effect, test, _ = compare_metric(metric, moments.take(ic), moments.take(it), alpha=alpha,
                                                 use_t=use_t, per_impression=per_impression, with_pre=False)
                if no_variance(effect):
                    skipped.append(f"segment {s!r}: {nc} unit(s) in {ctrl}, {nt} in {treatment}; no variance "
                                   "(within each arm every unit has the same value: the standard error of the "
                                   f"difference is 0), no test for {metric.name}")
                    test = ""
                found.append((s, nc, nt, effect.scalar(), test))
            p = np.array([float(e.p_value) if e is not None else np.nan for _, _, _, e, _ in found])
            corrected = adjust_tested(p, correction)
            for (s, nc, nt, e, test), pc in zip(found, corrected, strict=True):
                nan = float("nan")
                rows.append(SegmentEffect(
                    metric=metric.name, treatment=treatment, control=ctrl, segment=s, units=nc + nt,
                    units_control=nc, units_treatment=nt,
                    value_control=float(e.control) if e else nan, value_treatment=float(e.treatment) if e else nan,
                    effect=float(e.effect) if e else nan, ci_low=float(e.ci_lower) if e else nan,
                    ci_high=float(e.ci_upper) if e else nan, se=float(e.se) if e else nan,
                    p_value=float(e.p_value) if e else nan, p_value_corrected=float(pc),
                    significant=bool(np.isfinite(pc) and pc < alpha),
                    improved=bool(e is not None and e.effect != 0 and (e.effect > 0) == metric.higher_is_better),
                    test=test))
            effects = np.array([float(e.effect) if e else np.nan for _, _, _, e, _ in found])
            ses = np.array([float(e.se) if e else np.nan for _, _, _, e, _ in found])
            interactions.append(_interaction(metric.name, treatment, effects, np.where(np.isfinite(p), ses, np.nan)))
            whole, _, _ = compare_metric(metric, pooled(ctrl), pooled(treatment), alpha=alpha, use_t=use_t,
                                         per_impression=per_impression, with_pre=False)
            whole = whole.scalar()
            overall[(metric.name, treatment)] = (float(whole.effect), float(whole.se))
            paradox, standardised, every = simpson_check(float(whole.effect), effects, shares)
            # Only a mix that differs between the arms can cause the paradox; without that, two
            # near-zero effects of opposite signs are noise (A/A tests with equal mixes showed it).
            if paradox and np.isfinite(mix_p) and mix_p < alpha:
                shares_text = "; ".join(
                    f"{s}: {mix[s][ctrl] / max(table[:, variants.index(ctrl)].sum(), 1):.0%} of {ctrl} vs "
                    f"{mix[s][treatment] / max(table[:, variants.index(treatment)].sum(), 1):.0%} of {treatment}"
                    for s in segments)
                simpson.append(
                    f"{metric.name}, {treatment} vs {ctrl}: the overall effect is {whole.effect:+.4g} but "
                    f"{'every segment' if every else 'the segments, at a fixed mix,'} point the other way "
                    f"(mix-standardised effect {standardised:+.4g}); the segment mix differs between the arms "
                    f"({shares_text}). Read the segment effects, not the overall one.")
    notes = [*null_note, *prepared.exclusions.with_mixed(mixed_units, mixed_rows).notes(), *opened.notes]
    return SegmentEffects(
        kind="ab", by=by, experiment=prepared.experiment or "", source=opened.source, backend=opened.backend,
        rows=tuple(rows), overall=overall, interactions=tuple(interactions), simpson=tuple(simpson), mix=mix,
        mix_p=mix_p, users=users, multi_segment_users=multi, alpha=alpha, correction=correction,
        skipped=tuple(dict.fromkeys(skipped)), notes_extra=tuple(notes))


def _interaction(metric: str, treatment: str, effects: Any, ses: Any) -> dict[str, Any]:
    """Cochran's Q over the segments with a test (a finite ``ses`` > 0), and how many had none
    (``left_out``: too few units, no variance), so that the report can say it."""
    q, df, q_p = cochran_q(effects, ses)
    s = np.asarray(ses, dtype=np.float64)
    used = int(np.count_nonzero(np.isfinite(s) & (s > 0) & np.isfinite(np.asarray(effects, dtype=np.float64))))
    return {"metric": metric, "treatment": treatment, "q": q, "df": df, "p_value": q_p, "segments": used,
            "left_out": len(s) - used}


# ----------------------------------------------------------------------------- interleaving
def analyze_interleaving_segments(
    logs: Any,
    experiment: str | None = None,
    *,
    by: str,
    teams: tuple[str, str] = ("A", "B"),
    alpha: float = 0.05,
    correction: str = "holm",
    duplicates: str = "error",
    backend: str = "duckdb",
    schema: Any = None,
    clicks: Any = None,
) -> SegmentEffects:
    """Per-segment interleaving preference by the log column ``by``, clustered by user.

    One engine query: per (segment, unit) the sums ``Y`` = wins + ties / 2 and ``X`` =
    impressions, then per segment their moments. Δ = mean(Y) / mean(X) - 1/2 (in the sign of
    :func:`~serpeval.online.interleaving.analysis.analyze_counts`), its standard error by the
    delta method, a z-test and interval; the correction across segments; Cochran's Q.
    """
    from scipy import stats

    from serpeval.online.experiments.analysis import adjust_tested
    from serpeval.online.interleaving.analysis import analyze_counts

    correction = canonical_correction(correction)
    if len(teams) != 2 or teams[0] == teams[1]:
        raise OptionError(f"teams must be two different labels; got {teams!r}.")
    opened = read_logs(logs, clicks=clicks, backend=backend, schema=schema)
    _segment_column(opened, by)
    prepared = prepare(opened, experiment, duplicates=duplicates,  # type: ignore[arg-type]
                       teams=(teams[0], teams[1]), segment=by)
    f = prepared.features
    f = f.mutate(y=(f.credit_a > f.credit_b).cast("float64") + 0.5 * (f.credit_a == f.credit_b).cast("float64"))
    units = f.group_by(["segment", "unit"]).aggregate(y=f.y.sum(), x=f.count().cast("float64"))
    per_segment = units.group_by("segment").aggregate(
        n=units.count(), my=units.y.mean(), mx=units.x.mean(), vy=units.y.var(how="sample"),
        vx=units.x.var(how="sample"), cyx=units.y.cov(units.x, how="sample"))
    table = collect_sorted(per_segment, ["segment"])
    users, multi = _multi_segment_units(units)
    # the sign of Δ follows the interleaving analysis (one decision, made there)
    sign = float(np.sign(analyze_counts([1], [0], [0], n_resamples=1, rng=0).delta))
    raw = table.column("segment").to_pylist()   # NULL: a segment of its own (sorted last)
    null_label, null_note = _null_label(raw, by)
    segments = [null_label if s is None else str(s) for s in raw]
    col = {c: np.nan_to_num(np.asarray(table.column(c).to_numpy(zero_copy_only=False), dtype=np.float64))
           for c in ("n", "my", "mx", "vy", "vx", "cyx")}
    ratio = col["my"] / col["mx"]
    var = (col["vy"] - 2 * ratio * col["cyx"] + ratio * ratio * col["vx"]) / (col["mx"] ** 2)
    n = col["n"]
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(n >= 2, np.sqrt(np.maximum(var, 0.0) / n), np.nan)  # one unit: no variance, no interval
        effect = sign * (ratio - 0.5)
        flat = se == 0   # every unit the same share: no variance, no test (z would be +-inf)
        z = np.where(se > 0, effect / se, np.nan)
        p = np.where(se > 0, 2 * stats.norm.sf(np.abs(z)), np.nan)
        q = stats.norm.ppf(1 - alpha / 2)
        half = np.where(se > 0, q * se, np.nan)
    corrected = adjust_tested(p, correction)
    a, b = teams
    rows = tuple(SegmentEffect(
        metric="Δ interleaving", treatment=b, control=a, segment=s,
        units=int(n[i]), units_control=int(n[i]), units_treatment=int(n[i]),
        value_control=float(ratio[i]), value_treatment=float(1 - ratio[i]), effect=float(effect[i]),
        ci_low=float(effect[i] - half[i]), ci_high=float(effect[i] + half[i]), se=float(se[i]),
        p_value=float(p[i]), p_value_corrected=float(corrected[i]),
        significant=bool(np.isfinite(corrected[i]) and corrected[i] < alpha),
        improved=bool(ratio[i] < 0.5),   # the treatment (B) preferred, whatever the sign of Δ
        test="delta-method z (clustered by unit)" if np.isfinite(p[i]) else "") for i, s in enumerate(segments))
    skipped = tuple(f"segment {s!r}: {int(n[i])} unit(s); at least 2 are needed for a test" if n[i] < 2 else
                    f"segment {s!r}: {int(n[i])} unit(s); no variance: every unit has the same share of "
                    "credit, so the standard error is 0 and there is no test (p-value and interval undefined)"
                    for i, s in enumerate(segments) if n[i] < 2 or flat[i])
    return SegmentEffects(
        kind="interleaving", by=by, experiment=prepared.experiment or "", source=opened.source,
        backend=opened.backend, rows=rows, overall={}, interactions=(
            _interaction("Δ interleaving", b, effect, np.where(np.isfinite(p), se, np.nan)),),
        simpson=(), mix={s: {"units": int(n[i])} for i, s in enumerate(segments)}, mix_p=float("nan"),
        users=users, multi_segment_users=multi, alpha=alpha, correction=correction, skipped=skipped,
        notes_extra=tuple([*null_note, *prepared.exclusions.notes(), *opened.notes]))
