"""Open search logs as ibis tables on DuckDB (default) or Spark, without loading rows into Python.

:func:`read_logs` accepts

- a path: a Parquet file, folder or glob; a CSV file (``.csv``, ``.csv.gz``); a DuckDB
  database (``.duckdb``, ``.db``: tables ``impressions`` and, if present, ``clicks``); or a
  *log folder* holding ``impressions.*`` (file or folder of Parquet/CSV files) and optionally
  ``clicks.*`` and ``pre.*`` (the pre-period, for CUPED); a local glob that also matches
  such ``clicks.*`` or ``pre.*`` files reads them in those roles, not as impressions (and
  says so in :attr:`Logs.notes`);
- an in-memory table: pandas or polars DataFrame, Arrow table;
- an ibis table (any backend: its own engine runs the analysis) or a Spark DataFrame.

Files are read by the engine (DuckDB views over the files, Spark readers), so a 100-million
row log never passes through Python memory.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import threading
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.core import sparkconf
from serpeval.core.errors import InputError, OptionError, SerpevalError, require
from serpeval.online.logs import sqlcache
from serpeval.online.logs.schema import LogSchema

__all__ = [
    "BACKENDS", "Logs", "collect", "collect_sorted", "count", "duckdb_connection", "first_row", "read_logs",
    "spark_session",
]

BACKENDS = ("duckdb", "spark")
_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
_DUCKDB = (".duckdb", ".db", ".ddb")


@dataclass(frozen=True, eq=False)
class Logs:
    """Impressions (and optional clicks / pre-period) tables bound to one engine.

    Attributes:
        impressions: ibis table, one row per page shown.
        clicks: ibis table of the events layout (one row per click), or None.
        pre: pre-period impressions (same schema; for CUPED), or None.
        backend: ``duckdb`` or ``spark``.
        source: where the log came from, for messages and reports.
        schema: the column names.
        notes: how the source was read, where a reader must know it (files of a glob taken
            out of the impressions).
        clicks_matched: every row of ``clicks`` has the impression id of a row of
            ``impressions`` (the clicks were restricted to them, as
            :func:`~serpeval.online.experiments.triggered.triggered_logs` does): there are no
            orphan clicks to count.
        unrestricted_clicks: with ``clicks_matched``, the clicks table before that restriction
            (None: ``clicks`` itself). An analysis joins the clicks to its kept pages, whose
            ids are among the impressions', so the join implies the restriction: joining
            these instead gives the same rows without the restriction's own reading of the
            impressions (on Spark a scan and shuffle, a job or more, per query).
        known_trigger: the analysis splits the log by its ``triggered`` column (the whole log
            of a triggered analysis): an impression whose flag is NULL belongs to neither
            part, so it is left out and counted
            (:attr:`~serpeval.online.logs.features.Exclusions.missing_trigger`), never read
            as untriggered.
    """

    impressions: Any
    clicks: Any = None
    pre: Any = None
    backend: str = "duckdb"
    source: str = "<logs>"
    schema: LogSchema = field(default_factory=LogSchema)
    notes: tuple[str, ...] = ()
    clicks_matched: bool = False
    unrestricted_clicks: Any = None
    known_trigger: bool = False

    def with_schema(self, schema: LogSchema) -> Logs:
        """The same tables read with other column names."""
        matched = self.clicks_matched and schema.impression_id == self.schema.impression_id
        return Logs(self.impressions, self.clicks, self.pre, self.backend, self.source, schema,
                    self.notes, matched, self.unrestricted_clicks if matched else None,
                    self.known_trigger)

    def joined_clicks(self) -> Any:
        """The clicks to join to kept pages of :attr:`impressions` (:attr:`unrestricted_clicks`
        where the restriction to the impressions is implied by that join)."""
        if self.clicks_matched and self.unrestricted_clicks is not None:
            return self.unrestricted_clicks
        return self.clicks


def read_logs(
    source: Any,
    *,
    clicks: Any = None,
    pre: Any = None,
    backend: str = "duckdb",
    schema: LogSchema | None = None,
    table: str = "impressions",
    clicks_table: str = "clicks",
    spark: Any = None,
) -> Logs:
    """Open a log (see the module docstring for what ``source`` may be).

    Args:
        source: impressions (or a log folder / DuckDB database holding all tables).
        clicks: a separate clicks table (events layout), same kinds of input.
        pre: pre-period impressions for CUPED, same kinds of input.
        backend: ``duckdb`` (embedded, default) or ``spark`` (the active SparkSession, or a
            local one). Ignored for ibis tables and Spark DataFrames, which bring their own.
            Typed ``str``, not a ``Literal``: any case and the alias ``pyspark`` are accepted.
        schema: column names (default: the documented schema).
        table, clicks_table: table names inside a DuckDB database.
        spark: a SparkSession to use with ``backend="spark"``.
    """
    if isinstance(source, Logs):
        return source if schema is None else source.with_schema(schema)
    schema = schema or LogSchema()
    backend = _backend_name(source, backend)
    engine = _Engine(backend, spark, text_lists=_text_list_columns(schema))
    label = _label(source)
    notes: tuple[str, ...] = ()
    if isinstance(source, (str, Path)) and not is_uri(source):
        path = Path(source)
        if any(ch in str(source) for ch in "*?[") and not path.exists():
            source, clicks, pre, notes = _split_glob(str(source), clicks, pre)
        else:
            _check_local(path)
        if path.is_dir() and _find(path, "impressions") is not None:
            clicks = clicks if clicks is not None else _find(path, "clicks")
            pre = pre if pre is not None else _find(path, "pre")
            source = _find(path, "impressions")
        elif path.suffix.lower() in _DUCKDB:
            return _read_database(path, table, clicks_table, engine, schema, pre)
    return Logs(
        impressions=engine.table(source, "impressions"),
        clicks=None if clicks is None else engine.table(clicks, "clicks"),
        pre=None if pre is None else engine.table(pre, "pre"),
        backend=engine.name,
        source=label,
        schema=schema,
        notes=notes,
    )


#: Files of a log folder that are not impressions: ``{role: (what it is, its stem)}``.
_ROLES = {"clicks": "clicks table", "pre": "pre-period (CUPED)"}


def _role(path: str) -> str | None:
    """``clicks`` or ``pre`` for a log folder's ``clicks.*`` / ``pre.*`` file, else None."""
    name = Path(path).name.lower()
    return next((role for role in _ROLES for suffix in (*_PARQUET, *_CSV)
                 if name == f"{role}{suffix}"), None)


def _split_glob(pattern: str, clicks: Any, pre: Any) -> tuple[Any, Any, Any, tuple[str, ...]]:
    """``(impressions, clicks, pre, notes)`` of a local glob.

    A glob over a log folder (``logs/*.parquet``) also matches its ``clicks.*`` and ``pre.*``:
    those are read in their roles (unless given separately), never as impressions, and a note
    says so. Without such files (or matches: the engine's globs go further, e.g. Spark's
    ``{a,b}``) the pattern is passed to the engine as it is.
    """
    import glob

    matched = sorted(p for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
    found = {role: [p for p in matched if _role(p) == role] for role in _ROLES}
    if not any(found.values()):
        return pattern, clicks, pre, ()
    impressions = [p for p in matched if _role(p) is None]
    if not impressions:
        raise InputError(f"{pattern}: matches only {', '.join(matched)}, which are a log "
                         "folder's clicks or pre-period, not impressions; name the impressions.")
    given = {"clicks": clicks, "pre": pre}
    notes = []
    for role, files in found.items():
        if not files:
            continue
        names = ", ".join(files)
        if given[role] is None:
            given[role] = files[0] if len(files) == 1 else files
            notes.append(f"{names}: matched by {pattern}, read as the {_ROLES[role]}, not as "
                         "impressions")
        else:
            notes.append(f"{names}: matched by {pattern}, left out of the impressions (the "
                         f"{_ROLES[role]} is given separately)")
    source = impressions[0] if len(impressions) == 1 else impressions
    return source, given["clicks"], given["pre"], tuple(notes)


def _check_local(path: Path) -> None:
    """A local log must be a real file or folder: the engine opens it itself, by name, maybe
    several times (a pipe, ``<(cat log.parquet)``, could be read only once)."""

    from serpeval.io.inputs import reading_error

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise InputError(f"{path}: no such file or folder.") from None
        raise reading_error(exc, str(path)) from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise InputError(
            f"{path}: is a pipe or a device; logs are read by the query engine, which needs a "
            "file or folder it can open by name. Save the log to a file first."
        )


def _backend_name(source: Any, backend: str) -> str:
    if _is_ibis_table(source):
        return "spark" if source.get_backend().name == "pyspark" else source.get_backend().name
    if type(source).__module__.startswith("pyspark"):
        return "spark"
    key = str(backend).lower()
    if key == "pyspark":
        key = "spark"
    if key not in BACKENDS:
        raise OptionError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}.")
    return key


def _label(source: Any) -> str:
    if isinstance(source, (str, Path)):
        return str(source)
    return f"<{type(source).__name__}>"


def is_uri(source: Any) -> bool:
    """A remote location (``s3a://``, ``hdfs://``, ``gs://``, ``https://``...), read by the
    engine itself: Spark through its Hadoop file systems, DuckDB through its httpfs extension."""
    return isinstance(source, str) and "://" in source and not source.startswith("file://")


def _find(folder: Path, stem: str) -> Path | None:
    """``folder/stem`` as a sub-folder of files, or ``folder/stem.<ext>``."""
    sub = folder / stem
    if sub.is_dir():
        return sub
    for suffix in (*_PARQUET, *_CSV):
        candidate = folder / f"{stem}{suffix}"
        if candidate.exists():
            return candidate
    return None


def _is_ibis_table(obj: Any) -> bool:
    return type(obj).__module__.startswith("ibis") and hasattr(obj, "get_backend")


def _read_database(
    path: Path, table: str, clicks_table: str, engine: _Engine, schema: LogSchema, pre: Any
) -> Logs:
    if engine.name != "duckdb":
        raise OptionError(
            f"{path}: a DuckDB database can only be analysed with backend='duckdb'; "
            "export the tables to Parquet for Spark."
        )
    con = duckdb_connection(str(path), read_only=True)
    # (ibis 12's list_tables() calls a method DuckDB 2 connections no longer have)
    tables = {
        row[0] for row in con.raw_sql("SELECT table_name FROM information_schema.tables").fetchall()
    }
    if table not in tables:
        raise InputError(
            f"{path}: no table {table!r}; tables: {', '.join(sorted(tables)) or 'none'}. "
            "Pass table=... (--table) to name the impressions table."
        )
    return Logs(
        impressions=con.table(table),
        clicks=con.table(clicks_table) if clicks_table in tables else None,
        pre=con.table("pre")
        if pre is None and "pre" in tables
        else (None if pre is None else _Engine("duckdb", None, con, _text_list_columns(schema))
              .table(pre, "pre")),
        backend="duckdb",
        source=str(path),
        schema=schema,
    )


#: Warnings the engines' Python clients raise on every query with the verified versions
#: (ibis 12 on DuckDB 2; ibis's pyspark backend on pandas 3): noise to a user, so hidden.
_ENGINE_NOISE = (
    "fetch_arrow_table\\(\\) is deprecated",
    "The 'future.infer_string' option is deprecated",
)


def collect(expr: Any) -> Any:
    """Run an ibis expression in its engine and return the (small) result as an Arrow table.

    On DuckDB the SQL is compiled once per expression shape and process
    (:mod:`serpeval.online.logs.sqlcache`); other engines run it through ibis as it is.
    """

    with warnings.catch_warnings():
        for message in _ENGINE_NOISE:
            warnings.filterwarnings("ignore", message=message)
        result = sqlcache.run(expr)
        return expr.to_pyarrow() if result is None else result


def collect_sorted(expr: Any, keys: list[str]) -> Any:
    """:func:`collect`, its rows sorted by ``keys`` (ascending, NULLs last, strings by their
    UTF-8 bytes): what ``expr.order_by(keys)`` returns on DuckDB and Spark, sorted here.

    For small results (grouped aggregates): an ORDER BY costs Spark a sampling job for its
    range partitioning and a shuffle stage more (~0.2 s of each query in local mode).
    """
    # (NULLs last: Arrow's default; pyarrow 18 takes no per-key placement, and 25 deprecates
    # the table-wide one)
    return collect(expr).sort_by([(k, "ascending") for k in keys])


def duckdb_connection(database: str = ":memory:", read_only: bool = False) -> Any:
    """An ibis DuckDB connection set up for serpeval's expressions.

    DuckDB 2 rejects the ``x -> ...`` lambda syntax that ibis 12 emits for array functions
    unless ``lambda_syntax`` allows it; this connection does.
    """
    ibis: Any = require("ibis", "ab")
    con = ibis.duckdb.connect(database, read_only=read_only)
    allow_arrow_lambdas(con)
    return con


#: ``[(process id, DuckDB connection)]``: the in-memory database of this process that
#: :func:`read_logs` opens its sessions on (made again in a forked child: a DuckDB database
#: must not cross a fork; the parent's is kept, never closed there, where its threads are not).
_MEMORY_DATABASE: list[tuple[int, Any]] = []
_FORKED: list[tuple[int, Any]] = []
_MEMORY_LOCK = threading.Lock()


def _memory_session() -> Any:
    """A new ibis connection, a DuckDB session of its own, to this process's in-memory database.

    Opening a DuckDB database costs about 12 ms of CPU, a session on an open one under 1 ms,
    and small analyses open one per :func:`read_logs`. A session is as isolated as a database
    of its own for what the analyses make: their tables and views are temporary, the
    session's own (invisible to other sessions), and go with it when it is closed or
    garbage-collected; its settings (time zone, lambda syntax) are its own too.
    """

    ibis: Any = require("ibis", "ab")
    from_connection = getattr(ibis.duckdb, "from_connection", None)
    if from_connection is None:  # pragma: no cover - an ibis without it: a database each
        return duckdb_connection()
    import duckdb

    with _MEMORY_LOCK:
        if not _MEMORY_DATABASE or _MEMORY_DATABASE[0][0] != os.getpid():
            _FORKED.extend(_MEMORY_DATABASE)
            _MEMORY_DATABASE[:] = [(os.getpid(), duckdb.connect(":memory:"))]
        session = _MEMORY_DATABASE[0][1].cursor()
    con = from_connection(session)
    allow_arrow_lambdas(con)
    return con


def allow_arrow_lambdas(con: Any) -> None:
    """Let a DuckDB connection accept ibis's ``x -> ...`` lambdas (a session setting)."""

    # DuckDB versions without the setting accept the old syntax anyway
    with contextlib.suppress(Exception):
        con.raw_sql("SET lambda_syntax='ENABLE_SINGLE_ARROW'")


def spark_session() -> Any:
    """The active SparkSession, or a new local one (``local[*]``, UTC, quiet, no UI; the
    options of :mod:`serpeval.core.sparkconf`, Java checked first). Its warehouse folder is a
    temporary directory removed when the process exits."""
    require("pyspark", "spark")
    import atexit
    import tempfile

    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    problem = sparkconf.java_problem()
    if problem:
        raise SerpevalError(f"{problem} Or use --backend duckdb.")
    cores = os.cpu_count() or 2
    sparkconf.set_worker_python()
    builder = SparkSession.builder.master(f"local[{cores}]").appName("serpeval")
    for key, value in sparkconf.local_options(sparkconf.shuffle_partitions(None, cores)).items():
        builder = builder.config(key, value)
    warehouse = tempfile.mkdtemp(prefix="serpeval-spark-")
    atexit.register(shutil.rmtree, warehouse, ignore_errors=True)  # leave no folder in the temp directory
    try:
        session = sparkconf.get_or_create_quietly(builder.config("spark.sql.warehouse.dir", warehouse))
    except Exception as exc:  # Java broken: say how to fix it
        raise SerpevalError(
            f"could not start a local Spark session ({type(exc).__name__}: {exc}). Spark needs "
            f"Java {sparkconf.JAVA_MIN} or later on PATH (or JAVA_HOME; Debian/Ubuntu: "
            f"{sparkconf.JAVA_INSTALL}); or use --backend duckdb."
        ) from exc
    session.sparkContext.setLogLevel("ERROR")
    return session


def _text_list_columns(schema: LogSchema) -> tuple[str, ...]:
    """The impressions' columns that hold a list, written as text (``1;3``, ``[1, 3]``) in a
    CSV file: read as text whatever the values look like (a column of single positions,
    ``1``, is a list of one position, not an integer column)."""
    return (schema.clicks, schema.click_seconds, schema.dwell_seconds, schema.teams)


#: the roles whose CSV files are impressions (their list columns are text, see
#: :func:`_text_list_columns`); a clicks table's columns are scalars, typed by the reader
_IMPRESSION_ROLES = ("impressions", "pre")


class _Engine:
    """Turns each kind of input into an ibis table on one backend.

    ``text_lists``: the impressions' columns read as text from CSV files
    (:func:`_text_list_columns`).
    """

    def __init__(self, name: str, spark: Any, con: Any = None,
                 text_lists: tuple[str, ...] = ()) -> None:
        self.name = name
        self._spark = spark
        self._con = con
        self.text_lists = text_lists

    @property
    def spark(self) -> Any:
        """The SparkSession (started on first use)."""
        if self._spark is None:
            self._spark = spark_session()
        return self._spark

    @property
    def con(self) -> Any:
        """The ibis connection (opened on first use)."""
        if self._con is None:
            if self.name == "duckdb":
                self._con = _memory_session()
            else:
                ibis: Any = require("ibis", "ab")
                self._con = ibis.pyspark.connect(self.spark)
        return self._con

    def table(self, obj: Any, role: str) -> Any:
        if _is_ibis_table(obj):
            backend = obj.get_backend()
            if backend.name == "duckdb":
                allow_arrow_lambdas(backend)
            return obj
        if type(obj).__module__.startswith("pyspark"):
            view = _view_name(role)
            obj.createOrReplaceTempView(view)
            ibis: Any = require("ibis", "ab")
            return ibis.pyspark.connect(obj.sparkSession).table(view)
        if isinstance(obj, (str, Path)):
            return self._file(str(obj), role)
        if isinstance(obj, list) and obj and all(isinstance(p, str) for p in obj):
            return self._file(obj, role)  # files of one glob (see _split_glob)
        from serpeval.io.tables import to_arrow

        arrow = to_arrow(obj, role)
        view = _view_name(role)
        if self.name == "duckdb":
            return self.con.create_table(view, arrow, temp=True)

        with warnings.catch_warnings():
            # pyspark 4.0 converts through pandas with an argument pandas 3 deprecates
            warnings.filterwarnings("ignore", message="The copy keyword is deprecated")
            self.spark.createDataFrame(arrow).createOrReplaceTempView(view)
        return self.con.table(view)

    def _file(self, path: str | list[str], role: str) -> Any:
        if isinstance(path, list):  # files of one format, named one by one
            first = path[0].lower()
            return self._read(path, role, first.endswith(_CSV), ".tsv" in first)
        p = Path(path)
        if not is_uri(path) and not any(ch in path for ch in "*?["):
            _check_local(p)
        name = p.name.lower()
        is_csv = name.endswith(_CSV) or (p.is_dir() and any(p.glob("*.csv*")))
        if is_uri(path):
            if not is_csv and not name.endswith(_PARQUET) and self.name == "duckdb":
                path = path.rstrip("/") + "/**/*.parquet"  # a remote folder of Parquet files
        elif p.is_dir():
            pattern = "**/*.csv*" if is_csv else "**/*.parquet"
            if not any(p.glob(pattern)):
                raise InputError(
                    f"{path}: the folder holds no {'CSV' if is_csv else 'Parquet'} files."
                )
            path = str(p / pattern) if self.name == "duckdb" else str(p)
        elif not is_csv and not name.endswith(_PARQUET) and "*" not in name:
            raise InputError(
                f"{path}: unknown log format; expected Parquet ({', '.join(_PARQUET)}), "
                f"CSV ({', '.join(_CSV)}), a DuckDB database ({', '.join(_DUCKDB)}) "
                "or a log folder with impressions.* (and clicks.*)."
            )
        return self._read(path, role, is_csv, ".tsv" in name)

    def _read(self, path: str | list[str], role: str, is_csv: bool, is_tsv: bool) -> Any:
        """A table over the file(s) at ``path``, read by the engine."""
        view = _view_name(role)
        paths = path if isinstance(path, list) else [path]
        texts = self.text_lists if is_csv and role in _IMPRESSION_ROLES else ()
        try:
            if self.name == "duckdb":
                if is_csv:
                    delim = "\t" if is_tsv else ","
                    table = self.con.read_csv(path, table_name=view, delim=delim)
                    retype = {c: "VARCHAR" for c, t in table.schema().items()
                              if c in texts and not t.is_string()}
                    if retype:  # the sniffer typed a list column by its values: read it as text
                        table = self.con.read_csv(path, table_name=view, delim=delim, types=retype)
                    return table
                return self.con.read_parquet(path, table_name=view)
            reader = self.spark.read
            known = None if is_csv else parquet_spark_schema(self.spark, paths)
            if known is not None:
                reader = reader.schema(known)
            sep = "\t" if is_tsv else ","
            frame = (
                reader.csv(paths, header=True, inferSchema=True, sep=sep)
                if is_csv
                else reader.parquet(*paths)
            )
            if texts and any(f.name in texts and f.dataType.typeName() != "string"
                             for f in frame.schema.fields):
                from pyspark.sql.types import StringType, StructField, StructType

                as_text = StructType([
                    StructField(f.name, StringType(), True) if f.name in texts else f
                    for f in frame.schema.fields
                ])
                frame = self.spark.read.schema(as_text).csv(paths, header=True, sep=sep)
            frame.createOrReplaceTempView(view)
            return self.con.table(view)
        except (SerpevalError, MemoryError):
            raise
        except Exception as exc:
            if type(exc).__name__ == "OutOfMemoryException":  # DuckDB's: out of memory, not a bad file
                raise
            java = getattr(exc, "java_exception", None)  # py4j: the JVM's message is the useful one
            # the first line of the message (an exception may carry none: its type then)
            detail = next(iter((str(java) if java is not None else str(exc)).strip().splitlines()), "")
            detail = detail or "no message"
            raise InputError(
                f"{', '.join(paths)}: could not be read as {'CSV' if is_csv else 'Parquet'} "
                f"({type(exc).__name__}: {detail})."
            ) from exc


#: Arrow types of a Parquet file's columns whose Spark type is fixed (Spark's own Parquet
#: schema inference), for :func:`parquet_spark_schema`: Arrow type -> pyspark type name.
_PARQUET_TO_SPARK = {
    "int8": "ByteType", "int16": "ShortType", "int32": "IntegerType", "int64": "LongType",
    "float": "FloatType", "double": "DoubleType", "bool": "BooleanType", "string": "StringType",
    "large_string": "StringType", "date32[day]": "DateType",
}


def parquet_spark_schema(spark: Any, paths: list[str]) -> Any:
    """The Spark schema of one local Parquet file, read from its footer with pyarrow, or None.

    Spark infers a Parquet file's schema with a job of its own (~0.1-0.3 s in local mode,
    whatever the file's size); given the schema, its reader runs none. Only columns whose
    Spark type is certain are mapped (the types of :data:`_PARQUET_TO_SPARK`, dictionary-
    encoded strings, timestamps in ms or us, lists of those but timestamps): exactly what
    Spark's own inference gives, every field and list element nullable as it makes them
    (pinned by tests/online/logs/test_spark_jobs.py). Any other input (several files, a
    folder, a remote file, another type, a footer pyarrow cannot read) gets None: Spark
    infers the schema itself, as before.
    """

    if len(paths) != 1 or is_uri(paths[0]) or not Path(paths[0]).is_file():
        return None
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(paths[0])
        arrow = parquet.schema_arrow
        leaves = {c.path: c for c in parquet.schema}
    except Exception:  # not a Parquet file pyarrow reads: Spark says what is wrong
        return None
    from pyspark.sql import types as T

    ntz = str(spark.conf.get("spark.sql.parquet.inferTimestampNTZ.enabled", "true")).lower() == "true"

    def spark_type(t: Any, leaf: Any) -> Any:
        if pa.types.is_dictionary(t):
            return T.StringType() if pa.types.is_string(t.value_type) else None
        if pa.types.is_timestamp(t):  # its Parquet annotation decides (UTC-adjusted or not)
            if leaf is None or leaf.physical_type != "INT64" or t.unit not in ("ms", "us"):
                return None
            logical = json.loads(leaf.logical_type.to_json() or "{}")
            if logical.get("Type") != "Timestamp":
                return None
            utc = logical.get("isAdjustedToUTC")
            if not isinstance(utc, bool):
                return None
            return T.TimestampNTZType() if ntz and not utc else T.TimestampType()
        name = _PARQUET_TO_SPARK.get(str(t))
        return None if name is None else getattr(T, name)()

    fields = []
    for f in arrow:
        if f.metadata or any(ch in f.name for ch in " ,;{}()\n\t=`."):
            return None
        if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            item = f.type.value_field
            inner = None if item.metadata or pa.types.is_timestamp(item.type) else spark_type(item.type, None)
            mapped = None if inner is None else T.ArrayType(inner, containsNull=True)
        else:
            mapped = spark_type(f.type, leaves.get(f.name))
        if mapped is None:
            return None
        fields.append(T.StructField(f.name, mapped, nullable=True))
    names = [f.name.lower() for f in arrow]
    if not fields or len(set(names)) != len(names):
        return None
    return T.StructType(fields)


def _view_name(role: str) -> str:
    return f"serpeval_{role}_{uuid.uuid4().hex[:12]}"


def count(condition: Any, where: Any = None) -> Any:
    """``SUM(CAST(condition AS BIGINT))`` with 0 for no rows."""
    return condition.cast("int64").sum(where=where).fill_null(0)


def first_row(expr: Any) -> dict[str, Any]:
    """The only row of an aggregate expression, as a dict (runs the query)."""
    rows = collect(expr).to_pylist()
    return rows[0] if rows else {}


def on_spark(expr: Any) -> bool:
    """Whether an ibis expression runs on Spark (where each query costs a fixed ~0.3 s of
    planning, code generation and job scheduling, whatever its size)."""
    return bool(expr.get_backend().name == "pyspark")
