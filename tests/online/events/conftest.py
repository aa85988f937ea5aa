"""Fixtures of the event-store tests: a DuckDB file and a real PostgreSQL schema per test."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jsonschema", reason="the event schema needs the serve extra (pip install '.[serve]')")

POSTGRES = os.environ.get("SERPEVAL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def postgres_listening() -> bool:
    """Whether something accepts connections on 127.0.0.1:5432."""
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=0.5):
            return True
    except OSError:
        return False


def postgres_schema() -> Iterator[str]:
    """A URL whose search_path is a fresh schema, dropped afterwards (skip without a server)."""
    if not postgres_listening():
        pytest.skip("no PostgreSQL listening on 127.0.0.1:5432 (scripts/test.sh starts one where it can)")
    psycopg: Any = pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg (pip install '.[serve]')")
    schema = f"serpeval_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL at {POSTGRES} refuses the connection: {str(exc).splitlines()[0]}")
    with admin:
        admin.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    try:
        yield f"{POSTGRES}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(schema)))


@pytest.fixture(params=["duckdb", "postgresql"])
def store_url(request: Any, tmp_path: Any) -> Iterator[str]:
    """A DuckDB file, then a PostgreSQL schema: every store test runs on both backends."""
    if request.param == "duckdb":
        yield str(tmp_path / "events.duckdb")
    else:
        yield from postgres_schema()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL schema only."""
    yield from postgres_schema()
