"""Realistic search logs for demos, tests and benchmarks, simulated from click models.

The world (:class:`LogGenerator`):

- ``n_queries`` queries with Zipf popularity (``P(q) ~ 1/(q+1)``); each has a pool of
  ``3k`` documents with relevance grades ``0..levels-1`` (``P(g) ~ 2^-g``) and two rankers:
  A orders the pool by ``grade + N(0, noise_a)``, B by ``grade + N(0, noise_b)`` (less
  noise, better ranker; ``noise_b=None`` makes B identical to A);
- users search ``1 + Poisson(lambda_u)`` times with ``lambda_u ~ Gamma(activity_shape)``
  (mean ``impressions_per_user``), and differ in how readily they click: a per-user shift
  ``b_u ~ N(user_mean, user_sd)`` of every attractiveness on the logit scale (the click
  models' ``shift=``). That heterogeneity is what makes impressions of one user correlated;
- clicks come from a click model of :mod:`serpeval.online.clicks` (default ``dbn``,
  its continuation fitted on the Yandex click log) on the grades shown; with the default
  ``user_mean = -2`` the log looks like web search: about 0.7 clicks per page, 37% of pages
  abandoned, 31% with a click on the top result; click times add a log-normal
  pause before each click to the previous click's dwell; dwell is log-normal with median
  ``10 + 15 grade`` seconds.

**A/B logs**: every user is in one experiment (``user % n_experiments``) and one variant
(drawn with ``split``). The control arm shows ranker A, the other arms ranker B, with every
attractiveness shifted by ``effect`` (logit scale): a known, injected effect whose exact
consequence for CTR, abandonment and clicks@1 :meth:`LogGenerator.expected` computes from
the click model (quadrature over users, no simulation).

**Triggered (counterfactual) logging**: every A/B and interleaving impression carries
``triggered``: True when the other arm would have shown a different page for it (the two
rankers' top k differ for its query, or the injected ``effect`` applies there). With
``changed_queries < 1`` ranker B differs from A only on that share of the queries (drawn
once, after the rest of the world, so the world is otherwise the same for a seed) and the
injected effect applies only there too: a change that touches some queries, the case
triggered analysis is for (:func:`serpeval.online.experiments.analyze_ab_triggered`).

**Your own rankers**: ``pair=`` takes two rankers' top k with the true grade of every shown
document (:func:`serpeval.online.simulation.world.make_world` from qrels and two runs, or
:func:`~serpeval.online.simulation.world.synthetic_pair`) instead of the generated world: the control
arm shows ranker A, the treatment ranker B (queries keep the Zipf popularity, in order).

**Interleaving logs** (``interleaving=True``): every impression shows the team-draft
interleaving of A and B (:func:`serpeval.online.interleaving.batch.interleave_batch`;
``ignore_shared=True`` drafts with shared picks on no team); ``teams`` holds ``A``, ``B`` or
``shared`` per position. B wins more often when it is the
better ranker (``noise_b < noise_a``). ``interleaving="probabilistic"`` shows probabilistic
interleavings instead (softmax ``tau``, Hofmann et al. 2011) and records the fields a
counterfactual estimate needs (``shown`` as ``d<pool code>``, ``logging_design``,
``logging_rankings``, ``tau``, ``propensity``: :mod:`serpeval.online.counterfactual`).

Logs are produced in chunks of users, so :func:`write_logs` writes a 100-million-impression
Parquet log in bounded memory. Same ``rng`` seed, same log, whatever the chunk size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.core.progress import Progress, progress_callback

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

__all__ = ["GeneratedLogs", "LogGenerator", "generate_logs", "split_clicks", "write_logs"]

_TEAM_LABELS = np.array(["shared", "A", "B"])  # indexed by team code + 1 (NEUTRAL = -1)
#: users simulated together with one random stream (chunks are made of whole blocks)
BLOCK_USERS = 50_000
#: the largest log generated: expected impressions ``n_users x impressions_per_user`` (here
#: about 300,000 impressions/s and 25 bytes of Parquet each: 4e9 is some 4 hours and 100 GB;
#: 1e12 users would take years and petabytes, so such sizes are refused up front)
MAX_IMPRESSIONS = 4_000_000_000
#: the largest attractiveness shift (logit scale): sigmoid(40) = 1 - 4e-18 is 1.0 in double
#: precision, so a larger shift gives the same log (every result clicked, or none)
MAX_EFFECT = 40.0


@dataclass(frozen=True)
class GeneratedLogs:
    """A generated log: impressions (nested layout), the pre-period (or None), the settings."""

    impressions: pa.Table
    pre: pa.Table | None
    generator: LogGenerator


@dataclass(frozen=True)
class _World:
    grades: NDArray[np.int64]  # [n_queries, pool]
    rank_a: NDArray[np.int64]  # [n_queries, k] pool indices, best first
    rank_b: NDArray[np.int64]
    popularity: NDArray[np.float64]
    effect_on: NDArray[np.bool_] | None = None  # [n_queries]: where the injected effect applies (None: all)

    def triggered(self, effect: float) -> NDArray[np.bool_]:
        """Per query: would the arms show different pages (rankings differ, or the effect applies)?"""
        differ = (self.rank_a != self.rank_b).any(axis=1)
        if effect:
            differ |= np.ones(len(differ), dtype=bool) if self.effect_on is None else self.effect_on
        return differ

    @property
    def shown_a(self) -> NDArray[np.int64]:
        """Grades ranker A shows for each query, ``[n_queries, k]`` (-1: empty slot)."""
        return _grades_at(self.grades, self.rank_a)

    @property
    def shown_b(self) -> NDArray[np.int64]:
        """Grades ranker B shows for each query."""
        return _grades_at(self.grades, self.rank_b)


def _grades_at(grades: NDArray[np.int64], codes: NDArray[np.int64]) -> NDArray[np.int64]:
    """``grades[q, codes[q, r]]``, -1 where the code is -1 (a ranking shorter than k)."""
    return np.where(codes >= 0, np.take_along_axis(grades, np.maximum(codes, 0), axis=1), -1)


@dataclass(frozen=True)
class LogGenerator:
    """Settings of a simulated search log (see the module docstring)."""

    n_users: int = 10_000
    experiments: int | tuple[str, ...] = ("ranker-v2",)
    variants: tuple[str, ...] = ("control", "treatment")
    split: tuple[float, ...] | None = None
    effect: float = 0.0
    click_model: Any = "dbn"
    levels: int = 5
    k: int = 10
    n_queries: int = 1_000
    impressions_per_user: float = 4.0
    activity_shape: float = 1.0
    user_mean: float = -2.0
    user_sd: float = 1.0
    noise_a: float = 1.5
    noise_b: float | None = None
    start: str = "2026-01-05"
    days: int = 14
    pre_days: int = 0
    interleaving: bool | str = False
    ignore_shared: bool = False
    tau: float = 3.0
    changed_queries: float = 1.0
    pair: Any = field(default=None, repr=False, compare=False)
    times: bool = True
    seed: int = 0
    _model: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.n_users, (int, np.integer)) or self.n_users < 1:
            raise OptionError(f"n_users must be a positive integer; got {self.n_users!r}.")
        if not self.impressions_per_user >= 1 or not np.isfinite(self.impressions_per_user):
            raise OptionError(
                f"impressions_per_user must be a finite number >= 1; got "
                f"{self.impressions_per_user!r}."
            )
        if not np.isfinite(self.effect) or abs(self.effect) > MAX_EFFECT:
            raise OptionError(
                f"effect must be a finite shift of at most {MAX_EFFECT:g} in size on the logit "
                f"scale (beyond it every click probability is 0 or 1 in double precision); got "
                f"{self.effect!r}."
            )
        expected = float(self.n_users) * float(self.impressions_per_user)
        if expected > MAX_IMPRESSIONS:
            raise OptionError(
                f"{self.n_users:,} users x {self.impressions_per_user:g} impressions each = "
                f"{expected:.3g} expected impressions; at most {MAX_IMPRESSIONS:.0e} are generated "
                "(about 300,000 impressions/s and 25 bytes each: 4e9 take some 4 hours and "
                "100 GB, larger logs would not finish). Use fewer users."
            )
        for name, least in (("days", 1), ("pre_days", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
                raise OptionError(f"{name} must be an integer >= {least}; got {value!r}.")
        names = self.experiment_names
        if not names or len(set(names)) != len(names):
            raise OptionError(
                f"experiments must be a count >= 1 or distinct names; got {self.experiments!r}."
            )
        if (
            len(self.variants) < (1 if self.interleaving else 2)
            or len(set(self.variants)) != len(self.variants)
            or not all(isinstance(v, str) and v.strip() for v in self.variants)
        ):
            raise OptionError(
                "variants must be distinct, non-empty names, at least two for an A/B log (the "
                f"first is the control), e.g. control,treatment; got {self.variants!r}."
            )
        if self.split is not None and (
            len(self.split) != len(self.variants) or min(self.split) <= 0
        ):
            raise OptionError(
                f"split needs one positive share per variant {self.variants}; got {self.split!r}."
            )
        if not (isinstance(self.changed_queries, (int, float)) and 0.0 < self.changed_queries <= 1.0):
            raise OptionError(f"changed_queries must be a share in (0, 1]; got {self.changed_queries!r}.")
        if self.interleaving not in (False, True, "team_draft", "probabilistic"):
            raise OptionError(f"interleaving must be False, True (team draft), 'team_draft' or 'probabilistic'; "
                              f"got {self.interleaving!r}.")
        if self.interleaving and self.effect:
            raise OptionError(
                "effect applies to A/B logs; in an interleaving log make ranker B "
                "better (noise_b < noise_a) instead."
            )
        if self.pair is not None:
            object.__setattr__(self, "n_queries", len(self.pair.a))
            object.__setattr__(self, "k", int(self.pair.a.shape[1]))
            object.__setattr__(self, "levels", int(self.pair.levels))
        model = self.click_model
        if isinstance(model, str):
            from serpeval.online.clicks import click_model

            model = click_model(model, levels=self.levels)
        object.__setattr__(self, "_model", model)

    # ------------------------------------------------------------------ the world
    @property
    def experiment_names(self) -> tuple[str, ...]:
        """The experiments' names (``exp0000``... when ``experiments`` is a count)."""
        if isinstance(self.experiments, (int, np.integer)):
            width = len(str(int(self.experiments) - 1))
            return tuple(f"exp{i:0{width}d}" for i in range(int(self.experiments)))
        return tuple(self.experiments)

    def world(self) -> _World:
        """Queries, their graded pools and the two rankers (fixed by ``seed``, or ``pair``)."""
        if self.pair is not None:
            n = len(self.pair.a)
            popularity = 1.0 / np.arange(1, n + 1)
            return _World(
                np.asarray(self.pair.grades),
                np.asarray(self.pair.a),
                np.asarray(self.pair.b),
                popularity / popularity.sum(),
            )
        rng = np.random.default_rng(self.seed)
        pool = 3 * self.k
        p_grade = 0.5 ** np.arange(self.levels)
        grades = rng.choice(self.levels, size=(self.n_queries, pool), p=p_grade / p_grade.sum())
        rank_a = np.argsort(
            -(grades + rng.normal(0, self.noise_a, grades.shape)), axis=1, kind="stable"
        )[:, : self.k]
        rank_b = (
            rank_a
            if self.noise_b is None
            else np.argsort(
                -(grades + rng.normal(0, self.noise_b, grades.shape)), axis=1, kind="stable"
            )[:, : self.k]
        )
        popularity = 1.0 / np.arange(1, self.n_queries + 1)
        effect_on = None
        if self.changed_queries < 1.0:  # drawn last: the rest of the world does not move
            effect_on = rng.random(self.n_queries) < self.changed_queries
            rank_b = np.where(effect_on[:, None], rank_b, rank_a)
        return _World(grades, rank_a, rank_b, popularity / popularity.sum(), effect_on)

    def expected(self, variant: str | None = None, nodes: int = 60) -> dict[str, float]:
        """Exact expected per-impression CTR, abandonment and clicks@1 of an A/B arm.

        ``E[f] = sum_q P(q) E_b[f(q, b + effect)]``, the inner expectation over the user
        shift ``b ~ N(user_mean, user_sd)`` by Gauss-Hermite quadrature with ``nodes`` points, the
        click probabilities exact from the click model (no sampling).
        """
        variant = self.variants[0] if variant is None else variant
        if variant not in self.variants:
            raise OptionError(f"unknown variant {variant!r}; variants: {', '.join(self.variants)}.")
        world = self.world()
        treated = variant != self.variants[0]
        items = world.shown_b if treated else world.shown_a
        x, w = np.polynomial.hermite_e.hermegauss(nodes)
        w = w / w.sum()
        shift = np.full(len(items), self.effect if treated else 0.0)
        if world.effect_on is not None:
            shift = np.where(world.effect_on, shift, 0.0)
        ctr = abandonment = at1 = 0.0
        for xi, wi in zip(x, w, strict=True):
            s = self.user_mean + xi * self.user_sd + shift
            probs = self._model.click_probabilities(items, shift=s)
            none = self._model.click_count_distribution(items, shift=s)[:, 0]
            ctr += wi * float(world.popularity @ probs.sum(axis=1))
            at1 += wi * float(world.popularity @ probs[:, 0])
            abandonment += wi * float(world.popularity @ none)
        return {"ctr": ctr, "abandonment": abandonment, "clicks_at_1": at1}

    # ------------------------------------------------------------------ sampling
    def chunks(
        self, rng: int | np.random.Generator | None = None, chunk_users: int = 250_000
    ) -> Iterator[tuple[pa.Table, pa.Table | None]]:
        """``(impressions, pre)`` Arrow tables for consecutive chunks of users.

        Users are simulated in fixed blocks of :data:`BLOCK_USERS`, each with its own
        generator spawned from ``rng``, so the log does not depend on ``chunk_users``.
        """
        import pyarrow as pa

        from serpeval.core.checks import as_generator, check_count

        check_count(chunk_users, "chunk_users")
        world = self.world()
        n_blocks = -(-self.n_users // BLOCK_USERS)
        streams = as_generator(rng).spawn(n_blocks)
        per_chunk = max(1, chunk_users // BLOCK_USERS)
        next_id = 0
        for start in range(0, n_blocks, per_chunk):
            parts = []
            for block in range(start, min(start + per_chunk, n_blocks)):
                first = block * BLOCK_USERS
                users = np.arange(first, min(first + BLOCK_USERS, self.n_users), dtype=np.int64)
                table, pre = self._chunk(users, world, streams[block], next_id)
                next_id += table.num_rows + (0 if pre is None else pre.num_rows)
                parts.append((table, pre))
            yield (
                pa.concat_tables([p[0] for p in parts]),
                None if self.pre_days <= 0 else pa.concat_tables([p[1] for p in parts]),
            )

    def _chunk(
        self, users: NDArray[np.int64], world: _World, rng: np.random.Generator, first_id: int
    ) -> tuple[pa.Table, pa.Table | None]:
        n = len(users)
        shape = self.activity_shape
        rate = rng.gamma(shape, (self.impressions_per_user - 1) / shape, n)
        counts = 1 + rng.poisson(rate)
        split = (
            np.full(len(self.variants), 1.0)
            if self.split is None
            else np.asarray(self.split, float)
        )
        arm = rng.choice(len(self.variants), size=n, p=split / split.sum())
        bias = rng.normal(self.user_mean, self.user_sd, n)
        pre = None
        if self.pre_days > 0:
            pre_counts = rng.poisson((rate + 1) * self.pre_days / self.days)
            pre = self._impressions(
                users,
                pre_counts,
                None,
                bias,
                world,
                rng,
                first_id,
                start_offset_days=-self.pre_days,
                days=self.pre_days,
            )
        table = self._impressions(
            users,
            counts,
            arm,
            bias,
            world,
            rng,
            first_id + (0 if pre is None else pre.num_rows),
            0,
            self.days,
        )
        return table, pre

    def _impressions(
        self,
        users: NDArray[np.int64],
        counts: NDArray[np.int64],
        arm: Any,
        bias: NDArray[np.float64],
        world: _World,
        rng: np.random.Generator,
        first_id: int,
        start_offset_days: int,
        days: int,
    ) -> pa.Table:
        import pyarrow as pa

        owner = np.repeat(np.arange(len(users)), counts)
        m = len(owner)
        query = rng.choice(self.n_queries, size=m, p=world.popularity)
        shift = bias[owner]
        columns: dict[str, Any] = {
            "impression_id": np.arange(first_id, first_id + m, dtype=np.int64)
        }
        if arm is not None:
            names = self.experiment_names
            columns["experiment"] = _dictionary(np.asarray(names), users[owner] % len(names))
            columns["variant"] = _dictionary(np.asarray(self.variants), arm[owner])
        columns["user_id"] = users[owner]
        columns["query_id"] = query.astype(np.int64)
        seconds = rng.uniform(0, days * 86400.0, m) + start_offset_days * 86400.0
        columns["timestamp"] = np.datetime64(self.start, "us") + (seconds * 1e6).astype(
            "timedelta64[us]"
        )
        if self.interleaving == "probabilistic" and arm is not None:
            items, clicks = self._probabilistic(query, world, rng, shift, columns, m)
        elif self.interleaving and arm is not None:
            from serpeval.online.interleaving.batch import interleave_batch

            shown = interleave_batch(
                world.rank_a[query], world.rank_b[query], "team_draft", self.k, rng,
                ignore_shared=self.ignore_shared,
            )
            items = np.take_along_axis(world.grades[query], np.maximum(shown.docs, 0), axis=1)
            items = np.where(shown.docs >= 0, items, -1)
            columns["n_shown"] = (shown.docs >= 0).sum(axis=1).astype(np.int32)
            clicks = self._model.sample(items, rng, shift=shift)
            team_codes = shown.teams.astype(np.int64) + 1
            columns["teams"] = _lists(_TEAM_LABELS[team_codes].ravel(), np.full(m, self.k))
        else:
            treated = np.zeros(m, dtype=bool) if arm is None else arm[owner] > 0
            # B's pages stacked under A's: one gather of each impression's page, not two and a select
            shown_ab = np.concatenate([world.shown_a, world.shown_b])
            items = shown_ab[query + len(world.shown_a) * treated]
            columns["n_shown"] = (items >= 0).sum(axis=1).astype(np.int32)
            effect = self.effect * treated
            if world.effect_on is not None:
                effect = effect * world.effect_on[query]
            clicks = self._model.sample(items, rng, shift=shift + effect)
        if arm is not None:
            columns["triggered"] = world.triggered(self.effect)[query]
        row, col = np.nonzero(clicks)
        per_row = np.bincount(row, minlength=m)
        columns["clicks"] = _lists((col + 1).astype(np.int32), per_row)
        if self.times:
            grade = items[row, col]
            dwell = rng.lognormal(np.log(10.0 + 15.0 * np.maximum(grade, 0)), 0.8)
            pause = rng.lognormal(np.log(2.0) + 0.15 * col, 0.6)
            columns["click_seconds"] = _lists(
                np.round(_click_times(pause, dwell, per_row), 3), per_row
            )
            columns["dwell_seconds"] = _lists(np.round(dwell, 3), per_row)
        return pa.table(columns)

    def _probabilistic(self, query: NDArray[np.int64], world: _World, rng: np.random.Generator,
                       shift: NDArray[np.float64], columns: dict[str, Any], m: int,
                       ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """Probabilistic interleaving of A and B (issue 32): every impression records what a
        counterfactual estimate needs: ``shown`` (doc ids ``d<pool code>``), ``logging_design``,
        ``logging_rankings``, ``tau`` and the exact ``propensity`` of the shown list
        (docs/explanation/counterfactual-logs.md)."""
        import pyarrow as pa

        from serpeval.online.interleaving.probabilistic import (
            interleave_batch,
            list_probabilities,
            softmax_weights,
        )

        width = int(max(world.rank_a.max(initial=0), world.rank_b.max(initial=0))) + 1
        weights = softmax_weights([world.rank_a, world.rank_b], width, self.tau)[query]
        docs, teams = interleave_batch(weights, self.k, rng)
        _, prefix = list_probabilities(weights, docs)
        items = np.where(docs >= 0, np.take_along_axis(world.grades[query], np.maximum(docs, 0), axis=1), -1)
        shown = docs >= 0
        n_shown = shown.sum(axis=1)
        columns["n_shown"] = n_shown.astype(np.int32)
        clicks = self._model.sample(items, rng, shift=shift)
        columns["teams"] = _lists(_TEAM_LABELS[teams.astype(np.int64) + 1].ravel(), np.full(m, self.k))
        labels = np.char.add("d", np.arange(width).astype(str))
        columns["shown"] = _lists(labels[docs[shown]], n_shown)
        per_query = pa.array([[labels[r[r >= 0]].tolist() for r in pair]
                              for pair in zip(world.rank_a, world.rank_b, strict=True)],
                             pa.list_(pa.list_(pa.string())))
        columns["logging_design"] = _dictionary(np.array(["probabilistic"]), np.zeros(m, dtype=np.int64))
        columns["logging_rankings"] = per_query.take(pa.array(query))
        columns["tau"] = np.full(m, float(self.tau))
        columns["propensity"] = prefix[np.arange(m), np.maximum(n_shown - 1, 0)]
        return items, clicks

    # ------------------------------------------------------------------ output
    def generate(self, rng: int | np.random.Generator | None = None) -> GeneratedLogs:
        """The whole log in memory (for tests and demos; use :meth:`write` for big logs)."""
        import pyarrow as pa

        parts = list(self.chunks(rng))
        impressions = pa.concat_tables([p[0] for p in parts])
        pre = pa.concat_tables([p[1] for p in parts]) if self.pre_days > 0 else None
        return GeneratedLogs(impressions, pre, self)

    def write(
        self,
        folder: str | Path,
        rng: int | np.random.Generator | None = None,
        *,
        chunk_users: int = 250_000,
        progress: Progress | bool | None = None,
    ) -> Path:
        """Write ``folder/impressions.parquet`` (and ``pre.parquet``) chunk by chunk.

        Atomically: the files are written under temporary names and appear together when
        complete (a full disk or Ctrl-C leaves the folder as it was). Existing files are
        replaced, and a ``pre.parquet`` of an earlier log is removed when this one has none
        (it would be taken as this log's pre-period). ``progress(done, total)`` is called
        with the users written (:mod:`serpeval.core.progress`).
        """
        import pyarrow.parquet as pq

        from serpeval.io.outputs import atomic_files

        out = Path(folder)
        names = ["impressions.parquet", *(["pre.parquet"] if self.pre_days > 0 else [])]
        writers: dict[str, pq.ParquetWriter] = {}
        report = progress_callback(progress)  # (users written, users in all)
        done = 0
        with atomic_files(out, names, stale=["pre.parquet"]) as paths:
            try:
                for table, pre in self.chunks(rng, chunk_users):
                    for name, part in (("impressions", table), ("pre", pre)):
                        if part is None:
                            continue
                        if name not in writers:
                            writers[name] = pq.ParquetWriter(paths[f"{name}.parquet"], part.schema)
                        writers[name].write_table(part, row_group_size=1_000_000)
                    done = min(done + chunk_users, self.n_users)
                    report(done, self.n_users)
            finally:
                for writer in writers.values():
                    writer.close()
        return out


def _dictionary(names: NDArray[Any], codes: NDArray[np.int64]) -> pa.DictionaryArray:
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32)), pa.array(names.tolist())
    )


def _lists(values: NDArray[Any], per_row: NDArray[np.int64]) -> pa.ListArray:
    import pyarrow as pa

    offsets = np.zeros(len(per_row) + 1, dtype=np.int32)
    np.cumsum(per_row, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values))


def _click_times(
    pause: NDArray[np.float64], dwell: NDArray[np.float64], per_row: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Seconds from the page view to each click: pauses plus the dwell of earlier clicks.

    Flat arrays ordered by impression; ``per_row`` clicks per impression. A segmented
    cumulative sum: ``t_j = t_{j-1} + dwell_{j-1} + pause_j`` within an impression.
    """
    starts = np.cumsum(per_row) - per_row
    first = np.zeros(len(pause), dtype=bool)
    first[starts[per_row > 0]] = True
    step = pause + np.where(first, 0.0, np.concatenate(([0.0], dwell[:-1])))
    total = np.cumsum(step)
    base = np.repeat(total[first] - step[first], per_row[per_row > 0])
    return total - base



def generate_logs(
    n_users: int = 10_000, *, rng: int | np.random.Generator | None = None, **settings: Any
) -> GeneratedLogs:
    """A generated log in memory: ``LogGenerator(n_users, **settings).generate(rng)``."""
    return LogGenerator(n_users, **settings).generate(rng)


def write_logs(
    folder: str | Path,
    n_users: int = 10_000,
    *,
    rng: int | np.random.Generator | None = None,
    chunk_users: int = 250_000,
    progress: Progress | bool | None = None,
    **settings: Any,
) -> Path:
    """Write a generated log folder (``impressions.parquet``, ``pre.parquet`` with pre_days)."""
    return LogGenerator(n_users, **settings).write(
        folder, rng, chunk_users=chunk_users, progress=progress
    )


def split_clicks(impressions: pa.Table, schema: Any = None) -> tuple[pa.Table, pa.Table]:
    """The events layout of a nested log: impressions without click lists, and a clicks table.

    Useful to export CSV (one row per click) or to feed systems that log clicks separately.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.online.logs.schema import LogSchema

    s = schema or LogSchema()
    clicks = impressions.column(s.clicks).combine_chunks()
    owner = pc.list_parent_indices(clicks)
    out = {
        s.impression_id: pc.take(impressions.column(s.impression_id), owner),
        s.position: pc.list_flatten(clicks),
    }
    for name in (s.click_seconds, s.dwell_seconds):
        if name in impressions.column_names:
            out[name] = pc.list_flatten(impressions.column(name).combine_chunks())
    drop = [
        c for c in (s.clicks, s.click_seconds, s.dwell_seconds) if c in impressions.column_names
    ]
    return impressions.drop_columns(drop), pa.table(out)
