"""The configuration of ``serpeval serve``: a TOML file, or the quick start's flags.

.. code-block:: toml

    [server]
    host = "127.0.0.1"          # loopback unless told otherwise
    port = 8080
    store = "events.duckdb"     # or "postgresql://user@host/db"
    store_process = true        # write from a child process (false: a thread of the server)
    api_key_env = "SERPEVAL_API_KEY"   # /events needs "Authorization: Bearer <key>" when set
    max_body_bytes = 1048576
    max_batch = 1000
    cors_origins = []           # no CORS headers unless listed

    [experiment]
    name = "bm25-b"
    design = "interleaving"     # or "ab"
    method = "team_draft"       # balanced, probabilistic, optimized; 3+ backends: multileaving
    k = 10
    deadline_ms = 250           # per backend
    options = {}                # method options (tau, ignore_shared, credit_function)
    salt = "bm25-b-2026-12"     # A/B: the hash salt (default: the experiment name)
    weights = [0.5, 0.5]        # A/B: one weight per backend

    [[backends]]                # the first backend is the control (A)
    name = "A"
    kind = "embedded"
    corpus = "../shared/data/cranfield/corpus.jsonl"

    [[backends]]
    name = "B"
    kind = "embedded"
    params = {k1 = 1.2, b = 0.3}

Backends of kind ``embedded`` share one index per corpus and index options (``fields``,
``id_field``; the first backend's corpus is the default, its other options are not): two
backends on one file with different ``fields`` each get their own index. Other kinds are the
HTTP engines of :mod:`serpeval.engines` (``http``, ``elasticsearch``, ``opensearch``,
``solr``, ``vespa``), their table passed to the engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serpeval.core.errors import InputError, OptionError

__all__ = ["BackendConfig", "ServeConfig", "load_config", "quick_config"]

DESIGNS = ("interleaving", "ab")
MAX_PORT = 65535  # TCP ports are 16 bits: a larger number would bind that number modulo 65536


@dataclass(frozen=True)
class BackendConfig:
    """One ranker: a team label, an engine kind and its settings."""

    name: str
    kind: str = "embedded"
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``serve`` needs (see the module docstring for the meaning of each field)."""

    backends: tuple[BackendConfig, ...]
    store: str = "events.duckdb"
    experiment: str = "serpeval"
    design: str = "interleaving"
    method: str = "team_draft"
    k: int = 10
    deadline_ms: float = 250.0
    options: dict[str, Any] = field(default_factory=dict)
    salt: str | None = None
    weights: tuple[float, ...] | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    api_key: str | None = None
    max_body_bytes: int = 1 << 20
    max_batch: int = 1000
    cors_origins: tuple[str, ...] = ()
    write_timeout_s: float = 10.0
    store_process: bool = True

    def __post_init__(self) -> None:
        if len(self.backends) < 1:
            raise OptionError("serve needs at least one backend (two or more to interleave).")
        names = [b.name for b in self.backends]
        if len(set(names)) != len(names) or any(not n or n == "shared" for n in names):
            raise OptionError(f"backend names must be distinct and non-empty (and not 'shared'); got {names}.")
        if self.design not in DESIGNS:
            raise OptionError(f"experiment design {self.design!r} is unknown; expected one of {', '.join(DESIGNS)}.")
        if self.design == "interleaving" and len(self.backends) < 2:
            raise OptionError("an interleaving experiment needs two or more backends.")
        if not (isinstance(self.k, int) and 1 <= self.k <= 1000):
            raise OptionError(f"k must be an integer from 1 to 1000; got {self.k!r}.")
        if not self.deadline_ms > 0:
            raise OptionError(f"deadline_ms must be positive; got {self.deadline_ms!r}.")
        if isinstance(self.port, bool) or not (isinstance(self.port, int) and 1 <= self.port <= MAX_PORT):
            raise OptionError(f"port must be an integer from 1 to {MAX_PORT}; got {self.port!r}.")
        if self.weights is not None and len(self.weights) != len(self.backends):
            raise OptionError(f"weights has {len(self.weights)} entries for {len(self.backends)} backends.")
        if self.design == "interleaving":
            from serpeval.online.interleaving import canonical_method

            canonical_method(self.method)  # unknown: "did you mean"

    @property
    def control(self) -> str:
        """The control's team label (the first backend)."""
        return self.backends[0].name


def _backend(entry: Any, where: str, base: Path) -> BackendConfig:
    if not isinstance(entry, dict) or "name" not in entry:
        raise InputError(f"{where}: each [[backends]] entry needs a name (the team label), e.g. name = \"A\".")
    settings = {k: v for k, v in entry.items() if k not in ("name", "kind")}
    if "corpus" in settings and not Path(str(settings["corpus"])).is_absolute():
        settings["corpus"] = str(base / str(settings["corpus"]))
    return BackendConfig(str(entry["name"]), str(entry.get("kind", "embedded")), settings)


def load_config(path: str | Path, **overrides: Any) -> ServeConfig:
    """Read a TOML config (see the module docstring); ``overrides`` (not None) win."""
    import tomllib

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such config file.") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc}).") from None
    known = {"server", "experiment", "backends"}
    unknown = set(data) - known
    if unknown:
        raise InputError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; expected server, experiment, "
                         "backends.")
    server = data.get("server", {})
    exp = data.get("experiment", {})
    entries = data.get("backends", [])
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path}: no [[backends]]; list two or more rankers (the first is the control).")
    backends = tuple(_backend(e, f"{path}: backends[{i}]", p.parent) for i, e in enumerate(entries))
    api_key = _api_key(server, path)
    store = str(server.get("store", "events.duckdb"))
    if not store.startswith(("postgresql://", "postgres://")) and not Path(store).is_absolute():
        store = str(p.parent / store)
    values: dict[str, Any] = {
        "backends": backends, "store": store, "experiment": str(exp.get("name", "serpeval")),
        "design": str(exp.get("design", "interleaving")), "method": str(exp.get("method", "team_draft")),
        "k": exp.get("k", 10), "deadline_ms": float(exp.get("deadline_ms", 250.0)),
        "options": dict(exp.get("options", {})), "salt": exp.get("salt"),
        "weights": None if exp.get("weights") is None else tuple(float(w) for w in exp["weights"]),
        "host": str(server.get("host", "127.0.0.1")), "port": _port(server.get("port", 8080), f"{path}: server.port"),
        "api_key": api_key,
        "max_body_bytes": int(server.get("max_body_bytes", 1 << 20)), "max_batch": int(server.get("max_batch", 1000)),
        "cors_origins": tuple(server.get("cors_origins", ())),
        "store_process": _flag(server.get("store_process", True), f"{path}: server.store_process"),
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ServeConfig(**values)


def _api_key(server: dict[str, Any], path: str | Path) -> str | None:
    """The API key of ``[server]``: the value of the environment variable named by
    ``api_key_env``, else ``api_key``, else None (``/events`` then takes events without a key).

    Raises:
        InputError: ``api_key_env`` is not a variable name, or names a variable that is unset
            or empty while no ``api_key`` is given: the config asks for a key, and starting
            without one would silently accept every event.
    """
    api_key = server.get("api_key")
    if api_key is not None and not str(api_key):  # asked for, but empty: authentication silently off
        raise InputError(f"{path}: server.api_key is empty; give the key, or remove api_key to run without one.")
    if "api_key_env" not in server:
        return None if api_key is None else str(api_key)
    name = server["api_key_env"]
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{path}: server.api_key_env is {name!r}; expected the name of the environment variable "
                         "that holds the API key, e.g. \"SERPEVAL_API_KEY\".")
    api_key = os.environ.get(name) or api_key
    if not api_key:
        raise InputError(f"{path}: server.api_key_env names the environment variable {name}, which is unset or "
                         f"empty, so /events would take events without a key; export {name}=KEY before starting "
                         "serve, or remove api_key_env to run without a key.")
    return str(api_key)


def _port(value: Any, where: str) -> int:
    """A TCP port from 1 to 65535 (an integer, or its digits as a string)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PORT:
        raise InputError(f"{where} is {value!r}; expected a port number from 1 to {MAX_PORT}.")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{where} is {value!r}; expected true or false.")
    return value


def parse_setting(text: str) -> dict[str, Any]:
    """``k1=1.2,b=0.3`` as ``{"k1": "1.2", "b": "0.3"}`` (the engine checks the values)."""
    out: dict[str, Any] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise OptionError(f"--candidate {text!r}: expected NAME=VALUE pairs separated by commas, "
                              "e.g. k1=1.2,b=0.3.")
        out[name.strip()] = value.strip()
    return out


def quick_config(corpus: str, candidate: str, store: str, **overrides: Any) -> ServeConfig:
    """The quick start: team draft between the embedded engine's default BM25 (A) and the
    ``candidate`` setting (B) over ``corpus``."""
    backends = (BackendConfig("A", "embedded", {"corpus": corpus}),
                BackendConfig("B", "embedded", {"corpus": corpus, "params": parse_setting(candidate)}))
    values: dict[str, Any] = {"backends": backends, "store": store, "experiment": "quickstart"}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ServeConfig(**values)
