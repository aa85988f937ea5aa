"""Compiled-SQL cache for ibis expressions run on DuckDB.

An analysis builds a handful of ibis expressions and runs each once; on a small log, ibis's
compilation to SQL (its rewrite passes over the expression graph, then sqlglot) costs several
times more than DuckDB's run of the query. An analysis of the same shape (the same column
types, options and literals) builds the same expressions over other tables, so the SQL is
compiled once per process and reused:

- key: the expression's *shape*: its operations in topological order, each as its type and
  arguments, with each table it reads (an ``ops.DatabaseTable``: DuckDB tables and views, the
  temporary tables :func:`~serpeval.online.logs.sources.read_logs` makes of in-memory data)
  as its place in the expression, its schema and namespace, not its name; and each string
  literal that only equality tests read (``experiment == 'x'``, ``variant IN ('A', 'B')``)
  as its place, not its value. Two expressions share a key exactly when they differ only in
  those names and values (and in the connection, which compilation does not read);
- value: the SQL compiled from the expression with placeholders in those places (names
  holding a random token of the process), into which each run writes its tables' quoted
  names and its strings as ibis writes them (sqlglot's string literal for DuckDB).

The query then runs the way ibis's own ``to_pyarrow`` runs it on DuckDB (the SQL through the
connection's relation API, the Arrow result converted to the expression's schema by ibis's
DuckDB converter), so results are the same, bit for bit.

Only what compilation alone makes runnable is cached: an expression holding in-memory tables
(memtables), UDFs or geospatial operations needs ibis's pre-execution hooks (registering data
or functions, loading an extension), so it, like any expression of another backend (Spark),
is run by ibis as usual (:func:`run` returns None), as is an expression with an operation
this reading of ibis does not expect.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["run", "sql"]

#: Compiled SQL by placeholder expression (and row-limit option); at most ``_MAX`` entries,
#: the oldest dropped first.
_CACHE: dict[Any, str] = {}
_MAX = 256
_LOCK = threading.Lock()
#: The placeholders' names hold a random token of this process, so no literal of an
#: expression (or a real table's name) can be mistaken for one.
_TOKEN = uuid.uuid4().hex
_NAME = re.compile(f'"__serpeval_table_{_TOKEN}_([0-9]+)__"|\'__serpeval_value_{_TOKEN}_([0-9]+)__\'')


def _placeholder(kind: str, i: int) -> str:
    return f"__serpeval_{kind}_{_TOKEN}_{i}__"


def _quoted(name: str) -> str:
    """``name`` as a DuckDB quoted identifier (as ibis's compiler writes it)."""
    return '"' + name.replace('"', '""') + '"'


def _special_types() -> tuple[type, ...]:
    """Operation types that need ibis's pre-execution hooks (those this ibis has)."""
    import ibis.expr.operations as ops
    from ibis.expr.operations import vectorized

    names = ("InMemoryTable", "ScalarUDF", "AggUDF", "GeoSpatialUnOp", "GeoSpatialBinOp")
    found = [getattr(ops, name, None) for name in names] + [getattr(vectorized, "VectorizedUDF", None)]
    return tuple(t for t in found if isinstance(t, type))


class _Skip(Exception):
    """The expression holds an operation that needs ibis's pre-execution hooks."""


@dataclass(frozen=True)
class _Ref:
    """A child operation in a shape: its place in the topological order."""

    index: int


def _frozen(value: Any, refs: list[int]) -> Any:
    """An argument of an operation as a hashable part of its shape (``(type, value)`` pairs,
    so that ``1``, ``1.0`` and ``True`` differ); the children it names are added to ``refs``."""
    if isinstance(value, _Ref):
        refs.append(value.index)
        return value
    if isinstance(value, tuple):
        return tuple(_frozen(v, refs) for v in value)
    if isinstance(value, dict):
        return (_Ref, tuple((_frozen(k, refs), _frozen(v, refs)) for k, v in value.items()))
    return (type(value), value)


@dataclass
class _Shape:
    """An expression's shape (its cache key) and what the SQL of the shape is filled in with."""

    key: tuple[Any, ...]
    tables: list[Any]  # the DatabaseTable of each table placeholder
    values: list[Any]  # the string Literal of each value placeholder


def _shape(op: Any, special: tuple[type, ...]) -> _Shape:
    """The expression's operations in topological order, each as its type and arguments with
    children as :class:`_Ref`; each table as its place in the tables (with its schema and
    namespace, not its name); and each string literal that only equality tests read
    (``experiment == 'x'``, ``variant IN ('A', 'B')``) as its place in the values, so that
    analyses of other experiments share the SQL. (A literal that anything else reads stays
    in the key: the compiler may derive SQL from its value.) Equal keys are equal expressions
    up to those names and values. Raises :class:`_Skip` on an operation of ``special``."""
    import ibis.expr.operations as ops

    rows: list[Any] = []
    tables: dict[Any, int] = {}
    strings: dict[int, Any] = {}  # row -> string Literal
    pinned: set[int] = set()  # rows of string literals read by other operations
    tests = (ops.Equals, ops.NotEquals, ops.InValues)

    def visit(node: Any, _: Any, **args: Any) -> _Ref:
        if type(node) is ops.DatabaseTable:
            row: Any = (ops.DatabaseTable, tables.setdefault(node, len(tables)), node.schema, node.namespace)
        elif isinstance(node, special):
            raise _Skip
        else:
            refs: list[int] = []
            row = (type(node), *(_frozen(v, refs) for v in args.values()))
            if type(node) is ops.Literal and isinstance(node.value, str) and node.dtype.is_string():
                strings[len(rows)] = node
            elif not isinstance(node, tests):
                pinned.update(refs)
        rows.append(row)
        return _Ref(len(rows) - 1)

    op.map(visit)
    values: list[Any] = []
    for index in sorted(strings.keys() - pinned):
        rows[index] = (ops.Literal, _Ref, len(values), strings[index].dtype)
        values.append(strings[index])
    return _Shape(tuple(rows), list(tables), values)


def _compile(backend: Any, op: Any, shape: _Shape) -> str:
    """The SQL of ``op`` with its tables and parameters replaced by placeholders."""
    placeholders = {t: t.copy(name=_placeholder("table", i), source=None) for i, t in enumerate(shape.tables)}
    placeholders.update({v: v.copy(value=_placeholder("value", i)) for i, v in enumerate(shape.values)})
    return str(backend.compile(op.replace(placeholders).to_expr().as_table()))


def _compiled(expr: Any) -> tuple[Any, str] | None:
    """``(DuckDB backend, SQL over the real tables)`` of ``expr``, the SQL compiled once per
    shape; None where the cache does not apply."""
    # (ibis and sqlglot are loaded already: the expression is ibis's. No import here is
    # guarded: one that failed half-way, as under an address-space limit, must raise, not
    # leave a half-made module for ibis's own run to trip on.)
    import ibis
    import ibis.expr.operations as ops
    import sqlglot.expressions as sge

    special = _special_types()
    op = expr.op()
    try:
        # any other kind of table (in memory) needs the hooks too
        shape = _shape(op, (ops.PhysicalTable, *special))
    except _Skip:
        return None
    except MemoryError:
        raise
    except Exception:  # pragma: no cover - an operation this reading of ibis does not know
        return None
    # the connection: the one all the tables are bound to (else ibis's own run says what is wrong)
    backend: Any = shape.tables[0].source if shape.tables else None
    if (getattr(backend, "name", None) != "duckdb" or not hasattr(backend, "con")
            or any(t.source is not backend for t in shape.tables)):
        return None
    consumed = getattr(backend, "_record_batch_readers_consumed", {})
    if any(t.name in consumed for t in shape.tables):  # a RecordBatchReader: ibis checks its use
        return None
    key = (shape.key, ibis.options.sql.default_limit)
    sql = _CACHE.get(key)
    if sql is None:
        sql = _compile(backend, op, shape)
        with _LOCK:
            if len(_CACHE) >= _MAX:
                _CACHE.pop(next(iter(_CACHE)), None)
            _CACHE[key] = sql

    def fill(match: Any) -> str:
        if match[1] is not None:
            return _quoted(shape.tables[int(match[1])].name)
        # a string as ibis's compiler writes it (sqlglot's literal in the backend's dialect)
        return str(sge.convert(shape.values[int(match[2])].value).sql(dialect=backend.dialect))

    return backend, _NAME.sub(fill, sql)


def sql(expr: Any) -> str | None:
    """The DuckDB SQL of ``expr`` (a table expression), or None where the cache does not apply."""
    compiled = _compiled(expr)
    return None if compiled is None else compiled[1]


def run(expr: Any) -> Any:
    """The Arrow result of ``expr`` run on its DuckDB connection with cached SQL (as ibis's
    ``to_pyarrow`` runs it), or None where the cache does not apply."""
    compiled = _compiled(expr)
    if compiled is None:
        return None
    from ibis.backends.duckdb.converter import DuckDBPyArrowData  # (what ibis's own run imports)

    backend, text = compiled
    table = backend.con.sql(text).to_arrow_table()
    return expr.__pyarrow_result__(table, data_mapper=DuckDBPyArrowData)
