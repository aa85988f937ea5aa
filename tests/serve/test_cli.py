"""``serpeval serve`` and ``serpeval replay`` on the command line (in-process: uvicorn's run is
replaced by a recorder that drives the app the command built)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.serve.conftest import run_async, with_client

from serpeval.cli import main


@pytest.fixture
def started(monkeypatch: Any) -> Iterator[list[dict[str, Any]]]:
    """Record what uvicorn's server would run instead of serving forever; drive the app once.
    The socket serve claims is bound to a free loopback port instead of the one asked for (the
    tests must not depend on 8080 being free); ``host`` and ``port`` are those asked for."""
    import socket

    import uvicorn

    from serpeval.cli import cmd_serve

    calls: list[dict[str, Any]] = []
    bound: list[socket.socket] = []

    def bind(host: str, port: int) -> socket.socket:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        bound.append(sock)
        return sock

    def record(server: Any, sockets: list[socket.socket] | None = None) -> None:
        async def body(client: Any) -> Any:
            return (await client.get("/search", params={"q": "wing flow", "user": "u"})).json()

        app = server.config.app
        server.started = True
        calls.append({"app": app, "answer": run_async(with_client(app, body)), "host": server.config.host,
                      "port": server.config.port, "sockets": sockets})

    monkeypatch.setattr(cmd_serve, "_bind", bind)
    monkeypatch.setattr(uvicorn.Server, "run", record)
    yield calls
    for sock in bound:
        sock.close()


def test_quick_start(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path, monkeypatch: Any,
                     capsys: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3"]) == 0
    (call,) = started
    assert (call["host"], call["port"]) == ("127.0.0.1", 8080)
    assert call["answer"]["experiment"] == "quickstart"
    assert len(call["answer"]["hits"]) == 10
    assert (tmp_path / "events.duckdb").exists()
    assert "experiment 'quickstart' (team_draft: A vs B) on http://127.0.0.1:8080; events to events.duckdb" \
        in capsys.readouterr().err


def test_ctrl_c_ends_serve_with_status_0_and_a_failed_start_with_3(small_corpus: Path, tmp_path: Path,
                                                                    monkeypatch: Any) -> None:
    """uvicorn's Server.run raises the Ctrl-C again once it has shut down: serve (which runs it
    on the socket it claimed) ends with status 0, as it did under uvicorn.run, not 130; an app
    whose start-up failed ends with uvicorn.run's status 3, not 0."""
    import socket

    import uvicorn

    from serpeval.cli import cmd_serve

    def bind(host: str, port: int) -> socket.socket:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        return sock

    def interrupted(server: Any, sockets: Any = None) -> None:
        server.started = True
        raise KeyboardInterrupt

    def never_started(server: Any, sockets: Any = None) -> None:
        server.started = False

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cmd_serve, "_bind", bind)
    argv = ["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3"]
    monkeypatch.setattr(uvicorn.Server, "run", interrupted)
    assert main([*argv, "--store", str(tmp_path / "a.duckdb")]) == 0
    monkeypatch.setattr(uvicorn.Server, "run", never_started)
    assert main([*argv, "--store", str(tmp_path / "b.duckdb")]) == 3


def test_config_file_with_overrides(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(f'[experiment]\nname = "cfg"\ndesign = "ab"\n[[backends]]\nname = "A"\n'
                      f'corpus = "{small_corpus}"\n[[backends]]\nname = "B"\nparams = {{b = 0.2}}\n')
    assert main(["serve", str(config), "--port", "9123", "--store", str(tmp_path / "x.duckdb")]) == 0
    (call,) = started
    assert call["port"] == 9123
    assert call["answer"]["experiment"] == "cfg"
    assert call["answer"]["variant"] in ("A", "B")
    assert (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["serve"], "serve needs a CONFIG file, or --corpus DOCS.jsonl and --candidate"),
    (["serve", "x.toml", "--corpus", "d.jsonl"], "give a CONFIG or the quick start's --corpus/--candidate"),
    (["serve", "missing.toml"], "missing.toml: no such config file."),
])
def test_serve_usage_errors(argv: list[str], message: str, capsys: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) != 0
    assert message in capsys.readouterr().err


def test_replay_reports_a_tampered_row(tmp_path: Path, small_corpus: Path, capsys: Any) -> None:
    import duckdb
    from tests.serve.conftest import app_for, counter_ids

    from serpeval.serve.backends import build_backends
    from serpeval.serve.config import quick_config

    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", str(tmp_path / "e.duckdb"), design="interleaving")

    async def body(client: Any) -> None:
        for q in ("wing flow", "boundary layer", "heat"):
            await client.get("/search", params={"q": q})

    run_async(with_client(app_for(config, build_backends(config), query_ids=counter_ids()), body))
    con = duckdb.connect(config.store)
    attributes = json.loads(con.execute("SELECT query_attributes FROM ubi_queries WHERE query_id = 'q000001'")
                            .fetchone()[0])
    attributes["interleaving"]["seed"] += 1  # a different seed: other coins
    con.execute("UPDATE ubi_queries SET query_attributes = ? WHERE query_id = 'q000001'", [json.dumps(attributes)])
    con.close()
    out = tmp_path / "replay.json"
    assert main(["replay", config.store, "-f", "json", "-o", str(out)]) == 1
    data = json.loads(out.read_text())
    assert (data["checked"], data["equal"]) == (3, 2)
    assert [row["query_id"] for row in data["differing"]] == ["q000001"]


def test_ab_reads_the_store(tmp_path: Path, small_corpus: Path, capsys: Any) -> None:
    from tests.serve.conftest import app_for, click_event

    from serpeval.online.events.logs import read_event_logs
    from serpeval.online.experiments.analysis import analyze_ab
    from serpeval.serve.backends import build_backends
    from serpeval.serve.config import quick_config

    config = quick_config(str(small_corpus), "k1=0.2,b=0", str(tmp_path / "ab.duckdb"), design="ab")

    async def body(client: Any) -> None:
        events = []
        for i in range(120):
            answer = (await client.get("/search", params={"q": "wing flow", "user": f"u{i % 40}"})).json()
            if i % 3 == 0:
                events.append(click_event(answer["query_id"], 1, answer["hits"][0]["id"]))
        await client.post("/events", json=events)

    run_async(with_client(app_for(config, build_backends(config)), body))
    out = tmp_path / "ab.json"
    assert main(["ab", config.store, "-f", "json", "-o", str(out)]) == 0
    assert "read 120 impressions and 40 events (40 clicks)" in capsys.readouterr().err
    read = read_event_logs(config.store, design="ab")
    expected = analyze_ab(read.impressions, None, clicks=read.clicks).to_dicts()
    got = json.loads(out.read_text())
    ctr = next(r for r in got["results"] if r["metric"] == "ctr")
    assert ctr["effect"] == pytest.approx(next(r for r in expected if r["metric"] == "ctr")["effect"])


@pytest.mark.parametrize("port", ["0", "99999", "65536", "-1", "80.5", "http"])
def test_port_out_of_range_is_refused(port: str, capsys: Any, small_corpus: Path, tmp_path: Path) -> None:
    """``--port 99999`` was accepted and bound port 99999 - 65536; it is refused as ``--port 0``
    always was: one argparse line, exit status 2, nothing started."""
    argv = ["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3",
            "--store", str(tmp_path / "e.duckdb"), "--port", port]
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"serpeval serve: error: argument --port: must be a port number from 1 to 65535, " \
                                   f"got {port}"
    assert not (tmp_path / "e.duckdb").exists()


def test_highest_port_is_accepted(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path) -> None:
    assert main(["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3",
                 "--store", str(tmp_path / "e.duckdb"), "--port", "65535"]) == 0
    assert started[0]["port"] == 65535


def test_config_port_out_of_range_is_refused_on_the_command_line(started: list[dict[str, Any]], small_corpus: Path,
                                                                 tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(f'[server]\nport = 99999\n[[backends]]\nname = "A"\ncorpus = "{small_corpus}"\n'
                      '[[backends]]\nname = "B"\nparams = {b = 0.2}\n')
    assert main(["serve", str(config), "--store", str(tmp_path / "e.duckdb")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"serpeval serve: error: {config}: server.port is 99999; expected a port number from 1 to 65535."
    assert started == []


@pytest.mark.parametrize(("name", "content"), [
    ("events.csv", "query_id,doc\nq1,d1\n"),
    ("events.jsonl", '{"action_name": "click"}\n'),
    ("events.duckdb", "not a database, whatever its name\n"),
    ("events.db", "DUCK"),  # shorter than a DuckDB header
])
@pytest.mark.parametrize("store_process", [True, False])
def test_store_that_is_not_a_duckdb_file_is_refused(started: list[dict[str, Any]], small_corpus: Path,
                                                    tmp_path: Path, capsys: Any, name: str, content: str,
                                                    store_process: bool) -> None:
    """A CSV or JSONL file as the store was opened by DuckDB as an in-memory view: serve
    answered 200 to POST /events and the events were lost at exit. It is refused at start-up,
    before the address is announced, and the file is left as it was."""
    store = tmp_path / name
    store.write_text(content)
    config = tmp_path / "serve.toml"
    config.write_text(f'[server]\nstore = "{store}"\nstore_process = {str(store_process).lower()}\n'
                      f'[[backends]]\nname = "A"\ncorpus = "{small_corpus}"\n'
                      '[[backends]]\nname = "B"\nparams = {b = 0.2}\n')
    assert main(["serve", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"serpeval serve: error: {store}: exists and is not a DuckDB database file, so it cannot be the event "
        "store (DuckDB would open it as an in-memory view and the events would be lost at exit); name a new file "
        "or an existing DuckDB store (e.g. events.duckdb), or a postgresql:// URL.")
    assert " on http://" not in err
    assert started == []
    assert store.read_text() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "serve.toml"])  # no .wal beside it


@pytest.mark.parametrize("existing", ["missing", "duckdb"])
def test_new_or_duckdb_store_is_opened(started: list[dict[str, Any]], small_corpus: Path, tmp_path: Path,
                                       existing: str) -> None:
    """A missing store file is created as a DuckDB database, as before; an existing store is
    opened; the impression served is written to it."""
    import duckdb

    store = tmp_path / "events.duckdb"
    if existing == "duckdb":
        duckdb.connect(str(store)).close()
    assert main(["serve", "--corpus", str(small_corpus), "--candidate", "k1=1.2,b=0.3", "--store", str(store)]) == 0
    (call,) = started
    assert store.read_bytes()[8:12] == b"DUCK"
    con = duckdb.connect(str(store), read_only=True)
    try:
        assert con.execute("SELECT query_id FROM ubi_queries").fetchall() == [(call["answer"]["query_id"],)]
    finally:
        con.close()


def test_port_in_use_is_one_line_and_status_2(small_corpus: Path, tmp_path: Path) -> None:
    """A port in use: serve announced its address, then uvicorn logged ``[Errno 98] ... address
    already in use`` and the process exited with status 3 (undocumented). It fails before the
    announcement, with serpeval's one line and status 2, and leaves no writer process behind."""
    import socket
    import subprocess
    import sys

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "serpeval", "serve", "--corpus", str(small_corpus),
                              "--candidate", "k1=1.2,b=0.3", "--store", str(tmp_path / "e.duckdb"),
                              "--port", str(port)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == [
        f"serpeval serve: error: cannot listen on 127.0.0.1 port {port}: the port is already in use (another "
        "serpeval serve, or another program); stop that one or choose another port (--port, or port in [server])."]
    assert not (tmp_path / "e.duckdb").exists()  # refused before the store was opened


def test_port_taken_between_bind_and_listen_is_one_line() -> None:
    """On Linux a bind with SO_REUSEADDR succeeds next to another socket bound (not listening)
    to the same port; if that one listens first, serve's listen fails: the same one line."""
    import socket

    from serpeval.cli.cmd_serve import _bind, _listen
    from serpeval.core.errors import OptionError

    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", 0))
        port = other.getsockname()[1]
        with _bind("127.0.0.1", port) as sock:
            other.listen()
            with pytest.raises(OptionError, match=f"^cannot listen on 127.0.0.1 port {port}: the port is already "
                                                  r"in use \(another serpeval serve"):
                _listen(sock, "127.0.0.1", port, 16)
