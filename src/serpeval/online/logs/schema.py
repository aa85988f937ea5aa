"""The search-log schema that A/B and interleaving analyses read.

A log is one **impressions** table (one row per result page shown) and, optionally, a
separate **clicks** table (one row per click). Column names are the defaults below; pass a
:class:`LogSchema` to map other names (``LogSchema(unit="uid", variant="arm")``).

Impressions (one row per result page shown)

================= ======================= ======== ============================================
column            type                    needed   meaning
================= ======================= ======== ============================================
``impression_id`` integer or string       yes      unique per shown page (duplicates: error)
``experiment``    string                  yes      experiment name (one log may hold several)
``variant``       string (or integer)     yes      arm, e.g. ``control`` / ``treatment``
``user_id``       integer or string       yes      the randomisation unit (statistics cluster on it)
``query_id``      integer or string       no       the query (reports; interleaving per query)
``timestamp``     timestamp               no       when the page was shown (sequential looks)
``n_shown``       integer                 one of   how many results were shown ...
``shown``         list of doc ids         these    ... or the shown doc ids in order
``clicks``        list of integers        *        clicked positions (1 = top), in click order
``click_seconds`` list of floats          no       seconds from the page view to each click
``dwell_seconds`` list of floats          no       dwell time after each click
``teams``         list of strings         interl.  team of each shown position (``A``/``B``;
                                                   anything else, e.g. ``shared``, earns no credit)
``triggered``     boolean                 trigg.   counterfactual logging: would the other arm
                                                   (A/B) or the other ranker (interleaving) have
                                                   shown a different page? (the top k differ)
================= ======================= ======== ============================================

**Counterfactual logs** (:mod:`serpeval.online.counterfactual`) add, per impression,
``logging_design`` (``probabilistic`` or ``ab``), ``logging_rankings`` (the randomised
rankings, a list of lists of doc ids), ``tau`` or ``arm_shares``, and optionally
``propensity`` / ``prefix_propensities`` / ``position_propensities`` (checked against the
exact values recomputed by :func:`serpeval.online.interleaving.propensities`); ``shown`` is
then required. The fields and their UBI mapping: docs/explanation/counterfactual-logs.md.

``triggered`` is needed only by the triggered analyses
(:func:`~serpeval.online.experiments.triggered.analyze_ab_triggered`,
:func:`~serpeval.online.experiments.triggered.analyze_interleaving_triggered`): the serving system
computes both arms' top k for every request and logs whether they differ.

``*`` Clicks come either as the ``clicks`` list column (the *nested* layout: Parquet,
DuckDB, DataFrames; in CSV write the list as ``1;3`` or ``[1, 3]``) or as a separate clicks
table (the *events* layout, any format):

================= ======================= ======== ============================================
``impression_id`` as in impressions       yes      the page the click was on
``position``      integer                 yes      clicked position (1 = top)
``click_seconds`` float, or ``timestamp`` no       seconds since the page view, or the click's
                                                   own timestamp (then minus the page's)
``dwell_seconds`` float                   no       dwell time after the click
================= ======================= ======== ============================================

Rules (every excluded row is counted and reported, never dropped silently):

- the *first click* (MRR, time to first click) is the first in the list (nested layout:
  lists are in click order) or the earliest by ``click_seconds`` (events layout; ties: the
  higher position; without times, the top-most click);
- a click on a position outside ``1..n_shown``, or on an impression that is not in the
  log, is excluded ("clicks without impressions"); in text lists, an element that is not
  a number counts as such a click;
- rows with a missing impression id, unit or variant, and rows with a missing or negative
  ``n_shown``, are excluded; negative click times and dwell times count as missing;
- units seen in more than one variant are excluded (their assignment is broken);
- duplicated impression ids are an error (``duplicates="exclude"`` drops all their rows;
  ``"unchecked"`` skips the check for logs whose ids are unique by construction).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["LogSchema", "check_columns"]


@dataclass(frozen=True)
class LogSchema:
    """Column names of a log (the defaults are the documented schema).

    ``unit`` is the randomisation unit: every statistic clusters on it. Use
    ``unit="impression_id"`` when pages (not users) were randomised.
    """

    impression_id: str = "impression_id"
    experiment: str = "experiment"
    variant: str = "variant"
    unit: str = "user_id"
    query_id: str = "query_id"
    timestamp: str = "timestamp"
    n_shown: str = "n_shown"
    shown: str = "shown"
    clicks: str = "clicks"
    click_seconds: str = "click_seconds"
    dwell_seconds: str = "dwell_seconds"
    teams: str = "teams"
    triggered: str = "triggered"
    # the clicks table of the events layout
    position: str = "position"

    @classmethod
    def from_pairs(cls, pairs: list[str] | None) -> LogSchema:
        """From ``role=column`` strings (the command line's ``--column user_id=uid``)."""
        from serpeval.core.errors import OptionError

        known = {f.name for f in fields(cls)}
        aliases = {"user_id": "unit"}
        mapping: dict[str, str] = {}
        for pair in pairs or []:
            role, sep, column = pair.partition("=")
            role = aliases.get(role.strip(), role.strip())
            if not sep or role not in known or not column.strip():
                raise OptionError(
                    f"--column {pair!r}: expected ROLE=COLUMN with ROLE one of "
                    f"{', '.join(sorted(known | {'user_id'}))}; e.g. --column user_id=uid."
                )
            mapping[role] = column.strip()
        return cls(**mapping)


#: what each role's column must hold, for :func:`check_columns`
_KINDS: dict[str, tuple[str, ...]] = {
    "impression_id": ("integer", "string"),
    "experiment": ("string", "integer"),
    "variant": ("string", "integer", "boolean"),
    "unit": ("integer", "string"),
    "query_id": ("integer", "string"),
    "timestamp": ("timestamp", "date"),
    "n_shown": ("integer",),
    "shown": ("array",),
    "clicks": ("array<integer>", "string"),
    "click_seconds": ("array<numeric>", "string", "numeric", "timestamp"),
    "dwell_seconds": ("array<numeric>", "string", "numeric"),
    "teams": ("array<string>", "string"),
    "triggered": ("boolean",),
    "position": ("integer",),
}


#: the SQL type a cast to each kind of :data:`_KINDS` names (a role's first kind is suggested)
_SQL_TYPES = {
    "integer": "BIGINT",
    "string": "VARCHAR",
    "boolean": "BOOLEAN",
    "numeric": "DOUBLE",
    "timestamp": "TIMESTAMP",
    "date": "DATE",
    "array": "VARCHAR[]",
    "array<integer>": "BIGINT[]",
    "array<numeric>": "DOUBLE[]",
    "array<string>": "VARCHAR[]",
}


def _kind_ok(dtype: Any, kind: str) -> bool:
    if kind == "integer":
        return bool(dtype.is_integer())
    if kind == "string":
        return bool(dtype.is_string())
    if kind == "boolean":
        return bool(dtype.is_boolean())
    if kind == "numeric":
        return bool(dtype.is_numeric()) and not dtype.is_boolean()
    if kind == "timestamp":
        return bool(dtype.is_timestamp())
    if kind == "date":
        return bool(dtype.is_date())
    if kind.startswith("array"):
        if not dtype.is_array():
            return False
        inner = kind[6:-1] if "<" in kind else ""
        return not inner or _kind_ok(dtype.value_type, inner)
    raise AssertionError(kind)  # pragma: no cover - internal table


def check_columns(
    table: Any, schema: LogSchema, roles: list[str], *, source: str, optional: tuple[str, ...] = ()
) -> set[str]:
    """Check that ``table`` (an ibis table) has the columns of ``roles`` with usable types.

    Returns the roles present (``optional`` ones may be absent). Raises
    :class:`~serpeval.core.errors.InputError` naming the column, what was expected, what was found
    and how to fix it.
    """
    from serpeval.core.errors import InputError

    columns = dict(zip(table.columns, table.schema().types, strict=True))
    present: set[str] = set()
    missing = []
    for role in [*roles, *optional]:
        name = getattr(schema, role)
        if name not in columns:
            if role not in optional:
                missing.append(f"{role} (column {name!r})")
            continue
        dtype = columns[name]
        kinds = _KINDS[role]
        if not any(_kind_ok(dtype, kind) for kind in kinds):
            raise InputError(
                f"{source}: column {name!r} ({role}) has type {dtype}; expected "
                f"{' or '.join(kinds)}. Cast it in your query or when writing the file "
                f"(e.g. CAST({name} AS {_SQL_TYPES[kinds[0]]})), or map another column with "
                "LogSchema/--column."
            )
        present.add(role)
    if missing:
        raise InputError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"found {', '.join(columns) or 'none'}. "
            "Rename them to the documented schema (serpeval.online.logs.schema) or map yours, "
            "e.g. LogSchema(unit='uid') or --column user_id=uid."
        )
    return present
