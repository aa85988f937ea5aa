"""``serpeval serve [CONFIG] [--corpus DOCS.jsonl --candidate k1=1.2,b=0.3] [--store events.duckdb]``."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from serpeval.cli._args import POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.core.errors import OptionError, require

if TYPE_CHECKING:
    import socket


def port_number(text: str) -> int:
    """``--port``: a TCP port from 1 to 65535 (``1e3`` counts, as for every integer option).
    Anything else is refused by argparse as one line, exit status 2 (``argument --port: must be
    a port number from 1 to 65535, got 99999``): a larger number would otherwise be bound modulo
    65536, and 0 would bind a random port that the announced address does not name."""
    from serpeval.serve.config import MAX_PORT

    try:
        value = POSITIVE_INT(text)
    except argparse.ArgumentTypeError:
        value = 0
    if not 1 <= value <= MAX_PORT:
        shown = text if text and text == text.strip() and " " not in text else repr(text)
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to {MAX_PORT}, got {shown}")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help=summary("serve"),
        description="Run a live experiment over HTTP: GET /search interleaves (team draft by default) or "
        "splits (A/B) two or more rankers and answers one list with a query_id; POST /events stores UBI "
        "events (click, impression, add_to_cart, purchase) in a DuckDB file or PostgreSQL; GET /healthz, "
        "GET /metrics. Quick start without a config: --corpus DOCS.jsonl --candidate k1=1.2,b=0.3 serves "
        "team draft between the embedded BM25's defaults (A) and the candidate (B). Then: serpeval "
        "interleaving-report STORE. Binds 127.0.0.1 unless --host says otherwise.",
    )
    p.add_argument("config", nargs="?", help="TOML config (server, experiment, backends; docs/how-to/serve.md)")
    p.add_argument("--corpus", metavar="DOCS.jsonl", help="quick start: the JSONL corpus of the embedded engine")
    p.add_argument("--candidate", metavar="k1=1.2,b=0.3", help="quick start: ranker B's BM25 parameters")
    p.add_argument("--store", metavar="PATH|URL", help="event store: a DuckDB file (default events.duckdb) or "
                   "postgresql://user@host/db")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, help="port (default 8080)")
    p.add_argument("--experiment", help="experiment name (quick start default: quickstart)")
    p.add_argument("--method", help="interleaving method (default team_draft)")
    p.add_argument("-k", type=POSITIVE_INT, help="results per page (default 10)")
    p.add_argument("--deadline-ms", type=float, help="per-backend deadline in ms (default 250)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from serpeval.serve.config import load_config, quick_config

    overrides = {"host": args.host, "port": args.port, "experiment": args.experiment, "method": args.method,
                 "k": args.k, "deadline_ms": args.deadline_ms, "store": args.store}
    if args.config:
        if args.corpus or args.candidate:
            raise OptionError("give a CONFIG or the quick start's --corpus/--candidate, not both.")
        config = load_config(args.config, **overrides)
    else:
        if not (args.corpus and args.candidate):
            raise OptionError("serve needs a CONFIG file, or --corpus DOCS.jsonl and --candidate k1=...,b=... "
                              "(the quick start).")
        overrides["store"] = args.store or "events.duckdb"
        config = quick_config(args.corpus, args.candidate, **overrides)
    return serve(config)


@contextlib.contextmanager
def _bm25s_without_numba() -> Iterator[None]:
    """Import bm25s (if an embedded backend does) with numba hidden: bm25s imports numba at
    import time for its own numba retrieval backend, 0.1-0.3 s of every start of serve, which
    this process never uses (the embedded engine takes bm25s's tokenizer and its plain-Python
    idf and tf functions, numba or not, and scores with its own sparse product). bm25s then
    takes its numpy path, in this process only: serve runs no other code that could want it."""
    if "bm25s" in sys.modules or "numba" in sys.modules:
        yield
        return
    sys.modules["numba"] = None  # type: ignore[assignment]  # import numba raises ImportError
    try:
        yield
    finally:
        if "numba" in sys.modules and sys.modules["numba"] is None:
            del sys.modules["numba"]


def _cannot_listen(exc: OSError, host: str, port: int) -> OptionError:
    """The one-line error of a failed bind or listen on ``host``/``port``: the cause and the fix."""
    import socket

    if exc.errno == errno.EADDRINUSE:
        why = ("the port is already in use (another serpeval serve, or another program); stop that one or "
               "choose another port (--port, or port in [server])")
    elif exc.errno == errno.EACCES:
        why = "permission denied (ports below 1024 need privileges); choose a port from 1024 up (--port)"
    elif exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        why = f"{host} is not an address of this machine ({exc.strerror or exc}); check --host (or host in [server])"
    else:
        why = f"{exc.strerror or exc}"
    return OptionError(f"cannot listen on {host} port {port}: {why}.")


def _bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``/``port`` as uvicorn binds one (IPv6 when ``host`` holds a
    colon; ``SO_REUSEADDR``, so a port left in TIME_WAIT by the previous run is free), not yet
    listening: a client that comes while the engines are built is refused at once, as when
    nothing is bound, instead of waiting in the backlog.

    serve binds before it spawns the writer or builds an index, and listens (:func:`_listen`)
    before it announces its address, so that a port in use is one line and exit status 2, not
    the announcement followed by uvicorn's log line and its status 3.

    Raises:
        OptionError: the port is in use, needs privileges, or ``host`` is not this machine's.
    """
    import socket

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise _cannot_listen(exc, host, port) from None
    return sock


def _listen(sock: socket.socket, host: str, port: int, backlog: int) -> None:
    """Start listening on ``sock`` (from :func:`_bind`). On Linux a bind with ``SO_REUSEADDR``
    succeeds next to another socket bound, not yet listening, to the same port: only the
    listen fails then, and it is reported as :func:`_bind` reports a failed bind."""
    try:
        sock.listen(backlog)
    except OSError as exc:
        raise _cannot_listen(exc, host, port) from None


def serve(config: Any) -> int:
    """Claim the port, build the engines, open the store and run uvicorn until interrupted.

    Every start-up failure (port, store, engines) is raised before serve announces its
    address; the socket and the writer process are released on the way out."""
    from serpeval.online.events.writer_process import ProcessWriter
    from serpeval.serve.app import create_app
    from serpeval.serve.backends import build_backends

    uvicorn: Any = require("uvicorn", "serve")
    sock = _bind(config.host, config.port)
    writer = None
    try:
        # the store's writer process opens the store while the engines are built
        writer = ProcessWriter(config.store, wait=False) if config.store_process else None
        print(f"serpeval serve: building {len(config.backends)} backends...", file=sys.stderr)
        with _bm25s_without_numba():
            backends = build_backends(config)
        app = create_app(config, backends, writer=writer)
        server = uvicorn.Server(uvicorn.Config(app, host=config.host, port=config.port, log_level="warning",
                                               access_log=False))
        _listen(sock, config.host, config.port, server.config.backlog)
    except BaseException:
        if writer is not None:
            writer.close()
        sock.close()
        raise
    names = " vs ".join(b.name for b in config.backends)
    how = config.method if config.design == "interleaving" else "A/B split"
    print(f"serpeval serve: experiment {config.experiment!r} ({how}: {names}) on http://{config.host}:{config.port}; "
          f"events to {app.state.serpeval['store_label']}", file=sys.stderr)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # Ctrl-C, the way to stop serve: uvicorn has shut down cleanly (the store closed) and
        # raises it again for the caller; uvicorn.run, which serve used before it claimed its
        # own socket, swallows it too, so serve ends with status 0, not "interrupted" (130)
        pass
    finally:
        sock.close()
    if not server.started:  # the app's start-up failed; uvicorn logged why (uvicorn.run's status)
        return 3
    return 0
