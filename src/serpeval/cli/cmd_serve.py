"""``serpeval serve [CONFIG] [--corpus DOCS.jsonl --candidate k1=1.2,b=0.3] [--store events.duckdb]``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from serpeval.cli._args import POSITIVE_INT
from serpeval.cli.commands import summary
from serpeval.core.errors import OptionError, require


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
    p.add_argument("--port", type=POSITIVE_INT, help="port (default 8080)")
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


def serve(config: Any) -> int:
    """Build the engines, open the store and run uvicorn until interrupted."""
    from serpeval.online.events.writer_process import ProcessWriter
    from serpeval.serve.app import create_app
    from serpeval.serve.backends import build_backends

    uvicorn: Any = require("uvicorn", "serve")
    # the store's writer process opens the store while the engines are built
    writer = ProcessWriter(config.store, wait=False) if config.store_process else None
    try:
        print(f"serpeval serve: building {len(config.backends)} backends...", file=sys.stderr)
        with _bm25s_without_numba():
            backends = build_backends(config)
        app = create_app(config, backends, writer=writer)
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    names = " vs ".join(b.name for b in config.backends)
    how = config.method if config.design == "interleaving" else "A/B split"
    print(f"serpeval serve: experiment {config.experiment!r} ({how}: {names}) on http://{config.host}:{config.port}; "
          f"events to {app.state.serpeval['store_label']}", file=sys.stderr)
    uvicorn.run(app, host=config.host, port=config.port, log_level="warning", access_log=False)
    return 0
