"""Group commit in a child process: :class:`ProcessWriter`, what ``serpeval serve`` writes through.

:class:`~serpeval.online.events.store.GroupWriter` writes on a thread of the serving process.
Its database work (DuckDB's commit, psycopg's encoding of a COPY) then competes with the
event loop for the GIL, and serve's slowest answers waited for it: at 100-500 requests/s on
2 cores the store alone added 2-4 ms to serve's p99 (bench/results/serve.md). Here the same
GroupWriter runs in a child process (``python -m serpeval.online.events.writer_process
TARGET``); the server only queues each request's rows, and one thread pickles them down a
pipe.

**Protocol** (the child's stdin and stdout; each frame a 4-byte big-endian length and a
pickle): the child opens the store and answers ``("ready", kind, label)`` or ``("failed",
exception)``; then the server sends ``(job_id, queries, events)`` and the child answers
``(job_id, WriteResult | exception)`` once that job's group has committed (or failed); an
empty frame or the end of stdin closes the child after it has written what it holds.

**Durability** is the child's GroupWriter's: a job's result is sent only after its commit, so
a 2xx still means "on disk". When the child dies, every job it had not answered fails with
:class:`StoreUnavailable` (503, the client retries) and the next write starts a new child.
When the server dies (even ``kill -9``), the child reads the end of its stdin, writes what it
holds and exits, releasing the store; a new child waits up to ``open_timeout_s`` for another
one's DuckDB lock to go away.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import itertools
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import IO, Any

from serpeval.core.errors import SerpevalError
from serpeval.online.events.schema import EventRow
from serpeval.online.events.store import EventStore, GroupWriter, StoreUnavailable, WriteResult

__all__ = ["ProcessWriter"]

_LENGTH = struct.Struct(">I")


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> tuple[bool, Any]:
    """``(True, message)``, or ``(False, None)`` at the end of the stream, on an empty frame or
    on a torn one (the other side died mid-write)."""
    try:
        head = stream.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return False, None
        (size,) = _LENGTH.unpack(head)
        data = stream.read(size) if size else b""
        if size == 0 or len(data) < size:
            return False, None
        return True, pickle.loads(data)
    except Exception:
        return False, None


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`StoreUnavailable` with its first line."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return StoreUnavailable(f"event store: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return exc


class ProcessWriter:
    """:class:`~serpeval.online.events.store.GroupWriter`'s interface (``submit``, ``close``)
    with the store in a child process (see the module docstring). ``kind`` and ``label`` say
    which store it writes to (``duckdb`` / ``postgresql``; the target without a password).

    With ``wait=False`` the constructor only starts the child, which opens the store while the
    caller does something else (serve builds its engines meanwhile); :meth:`ready` then waits
    for it. Nothing is sent before it is ready.

    Raises (from the constructor, or from :meth:`ready`): what opening the store raises
    (:class:`InputError` for a bad target, :class:`StoreUnavailable` for an unreachable database).
    """

    def __init__(self, target: str, *, linger_s: float = 0.1, open_timeout_s: float = 30.0,
                 wait: bool = True) -> None:
        self.target = str(target)
        self.linger_s = linger_s
        self.open_timeout_s = open_timeout_s
        self.kind = ""
        self.label = ""
        self._lock = threading.Lock()
        self._pending: dict[int, concurrent.futures.Future[WriteResult]] = {}
        self._ids = itertools.count()
        self._outbox: queue.SimpleQueue[tuple[int, list[Any], list[EventRow]] | None] = queue.SimpleQueue()
        self._closed = False
        self._child: subprocess.Popen[bytes] | None = None
        self._starting: subprocess.Popen[bytes] | None = self._spawn()
        self._sender: threading.Thread | None = None
        if wait:
            self.ready()

    def ready(self) -> None:
        """Wait until the first child has opened the store (raising what opening it raised)."""
        starting, self._starting = self._starting, None
        if starting is not None:
            self._handshake(starting)
            self._sender = threading.Thread(target=self._send_loop, name="serpeval-store-sender", daemon=True)
            self._sender.start()

    # ------------------------------------------------------------------ the child
    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "serpeval.online.events.writer_process", self.target, repr(self.linger_s),
             repr(self.open_timeout_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def _start_child(self) -> None:
        self._handshake(self._spawn())

    def _handshake(self, child: subprocess.Popen[bytes]) -> None:
        if child.stdout is None or child.stdin is None:  # pragma: no cover - PIPE was asked for
            raise StoreUnavailable(f"event store {self.target}: no pipe to the writer process.")
        ok, message = _receive(child.stdout)
        if not ok or message[0] != "ready":
            child.kill()
            child.communicate()  # closes the pipes
            if ok and isinstance(message[1], BaseException):
                raise message[1]
            raise StoreUnavailable(f"event store {self.target}: the writer process ended at start "
                                   f"(status {child.returncode}).")
        self.kind, self.label = message[1], message[2]
        self._child = child
        threading.Thread(target=self._receive_loop, args=(child,), name="serpeval-store-receiver",
                         daemon=True).start()

    def _receive_loop(self, child: subprocess.Popen[bytes]) -> None:
        stdout = child.stdout
        while stdout is not None:
            ok, message = _receive(stdout)
            if not ok:
                break
            job_id, outcome = message
            with self._lock:
                future = self._pending.pop(job_id, None)
            if future is None:
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
        status = child.wait()
        for pipe in (child.stdout, child.stdin):
            with contextlib.suppress(OSError, ValueError):
                if pipe is not None:
                    pipe.close()
        with self._lock:
            if self._child is child:
                self._child = None
            lost, self._pending = self._pending, {}
        for future in lost.values():
            future.set_exception(StoreUnavailable(
                f"event store {self.label}: the writer process ended (status {status}) before committing; "
                "nothing was acknowledged, retry."))

    # ------------------------------------------------------------------ the server side
    def submit(self, queries: list[tuple[Any, ...]] = (), events: list[EventRow] = ()  # type: ignore[assignment]
               ) -> concurrent.futures.Future[WriteResult]:
        """Queue rows; the future resolves once they are committed (or fail)."""
        future: concurrent.futures.Future[WriteResult] = concurrent.futures.Future()
        if self._closed or self._sender is None:
            future.set_exception(StoreUnavailable(f"event store {self.label or self.target}: the writer is "
                                                  f"{'closed' if self._closed else 'not ready'}."))
            return future
        job_id = next(self._ids)
        with self._lock:
            self._pending[job_id] = future
        self._outbox.put((job_id, list(queries), list(events)))
        return future

    def _send_loop(self) -> None:
        restart_after = 0.0
        while True:
            job = self._outbox.get()
            if job is None:
                break
            with self._lock:
                child = self._child
            if child is None and time.monotonic() >= restart_after:
                try:
                    self._start_child()
                except Exception:
                    restart_after = time.monotonic() + 1.0  # at most one attempt a second
                with self._lock:
                    child = self._child
            if child is None or child.stdin is None:
                self._fail(job[0], StoreUnavailable(f"event store {self.label or self.target}: the writer process "
                                                    "is not running; nothing was acknowledged, retry."))
                continue
            try:
                _send(child.stdin, job)
            except (OSError, ValueError):  # the child is gone: its receiver fails what is pending
                self._fail(job[0], StoreUnavailable(f"event store {self.label}: the writer process ended; "
                                                    "nothing was acknowledged, retry."))
        with self._lock:
            child = self._child
        if child is not None and child.stdin is not None:
            with contextlib.suppress(OSError):
                child.stdin.write(_LENGTH.pack(0))
                child.stdin.close()

    def _fail(self, job_id: int, exc: BaseException) -> None:
        with self._lock:
            future = self._pending.pop(job_id, None)
        if future is not None:
            future.set_exception(exc)

    def close(self, timeout_s: float = 60.0) -> None:
        """Send what is queued, let the child commit it and exit, and wait for it."""
        if self._closed:
            return
        self._closed = True
        starting, self._starting = self._starting, None
        if starting is not None:  # never made ready: stop the child, which holds nothing
            starting.kill()
            starting.communicate()
            return
        self._outbox.put(None)
        if self._sender is not None:
            self._sender.join(timeout_s)
        with self._lock:
            child = self._child
        if child is not None:
            try:
                child.wait(timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


# ---------------------------------------------------------------------- the child process
def _open_store(target: str, timeout_s: float) -> Any:
    """The store, waiting while another process (a writer of a killed server, finishing) still
    holds a DuckDB file's lock."""

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return EventStore(target)
        except StoreUnavailable as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            _wait_for_lock(target, deadline)


def _wait_for_lock(path: str, until: float) -> None:
    """Return once no other process holds the lock of the DuckDB file ``path`` (or at ``until``).

    DuckDB locks its file with a POSIX record lock (``fcntl``). Probing that lock is a system
    call of a few microseconds where a failed open of the database costs ~4 ms of CPU, so the
    probe runs every 2 ms and the store is opened again as soon as the lock is free, instead of
    an open every 50 ms (25 ms of waiting on average at each restart after a ``kill -9``). A
    probe that finds the file unlocked at once (released meanwhile, or a lock it cannot see)
    waits 50 ms as before: never a loop of failed opens. The probe holds the lock for an
    instant only: this process has no other descriptor of the file (closing any descriptor of
    a file drops a process's POSIX locks on it), and an opener elsewhere that lands in that
    instant fails as against any holder, and tries again.
    """
    try:
        import fcntl

        fd = os.open(path, os.O_RDWR)
    except (ImportError, OSError):  # no POSIX locks here, or no file to probe
        time.sleep(max(0.0, min(until, time.monotonic() + 0.05) - time.monotonic()))
        return
    held = False
    try:
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                held = True
                if time.monotonic() >= until:
                    return
                time.sleep(0.002)
                continue
            fcntl.lockf(fd, fcntl.LOCK_UN)
            break
    finally:
        os.close(fd)
    if not held:
        time.sleep(max(0.0, min(until, time.monotonic() + 0.05) - time.monotonic()))


def main(argv: list[str]) -> int:
    """The child: open the store, then commit what arrives on stdin (see the module docstring)."""
    # Ctrl-C reaches the whole process group and a service manager's SIGTERM the whole group
    # too: the child ignores both and ends when the server does (the end of its stdin), after
    # writing what it holds.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    target, linger_s, open_timeout_s = argv[0], float(argv[1]), float(argv[2])
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    out_lock = threading.Lock()
    try:
        store = _open_store(target, open_timeout_s)
    except Exception as exc:
        _send(stdout, ("failed", _portable(exc) if isinstance(exc, SerpevalError) else
                       StoreUnavailable(f"event store {target}: cannot open ({type(exc).__name__}).")))
        return 1
    _send(stdout, ("ready", store.kind, store._label()))
    writer = GroupWriter(store, linger_s=linger_s)

    def answer(job_id: int, future: concurrent.futures.Future[WriteResult]) -> None:
        exc = future.exception()
        outcome: Any = _portable(exc) if exc is not None else future.result()
        with out_lock, contextlib.suppress(OSError, ValueError):  # the server gone: nobody waits
            _send(stdout, (job_id, outcome))

    while True:
        ok, job = _receive(stdin)
        if not ok:
            break
        job_id, queries, events = job
        writer.submit(queries, events).add_done_callback(functools.partial(answer, job_id))
    writer.close()  # writes what is queued, then closes the store
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
