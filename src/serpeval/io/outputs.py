"""Write outputs atomically, so that a failure never leaves a half-written file.

Every file serpeval writes (CSV, JSON, HTML, PNG, Parquet, TREC) goes through
:func:`atomic_path`: the content is written to a temporary file in the target's folder
(``.NAME.XXXXXXXX.tmp``), flushed to disk, and renamed over the target only when complete.
A full disk, a size limit or Ctrl-C removes the temporary file and leaves the previous
target (if any) untouched. A target that exists and is not a regular file (``/dev/null``,
``/dev/stdout``, a FIFO) is written directly instead: replacing a device by a file would be
wrong. A symbolic link is followed: the file it points to is replaced, the link stays.

:func:`check_outputs` refuses, before any work is done, an output whose folder is missing,
that is a folder, or that is one of the command's inputs (``-o run.txt`` would replace the
run). Failures are :class:`~serpeval.core.errors.OutputError` naming the path and the cause.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from serpeval.core.errors import OutputError, os_error_cause
from serpeval.core.identity import identity as _identity
from serpeval.core.identity import input_named

__all__ = ["atomic_files", "atomic_path", "check_outputs", "folder_meant", "write_bytes", "write_stdout",
           "write_text", "writing_error"]

STDOUT = "<stdout>"


def writing_error(exc: OSError, label: str, atomic: bool = False) -> OutputError:
    """An OutputError for ``exc`` raised while writing ``label`` (``atomic``: through a
    temporary file, so a previous file there is unchanged)."""

    label = str(exc.filename) if exc.filename == STDOUT else label
    if exc.errno == errno.EBADF and label == STDOUT:
        return OutputError(f"{STDOUT}: cannot write: standard output is closed. Redirect it to a "
                           "file, or write with -o FILE.")
    cause = os_error_cause(exc)
    if exc.errno == errno.ENOENT:
        cause = f"the folder {Path(label).parent} does not exist"
    elif exc.errno == errno.EISDIR:
        cause = "it is a folder; give a file name"
    elif atomic:
        cause += f"; {Path(label).name} was not written (a previous file there is unchanged)"
    return OutputError(f"{label}: cannot write: {cause}.")


def write_stdout(text: str) -> None:
    """Print ``text`` and flush it (a full or closed standard output is an OutputError;
    a reader that went away, ``| head``, stays a BrokenPipeError for the caller)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise writing_error(exc, STDOUT) from None


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return the path."""
    with atomic_path(path) as temporary, open(temporary, "wb") as handle:
        handle.write(data)
    return Path(path)


def _special(path: Path) -> bool:
    """An existing target that is not a regular file (a device, a FIFO): written in place."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def folder_meant(path: str | Path) -> bool:
    """Whether ``path`` is spelled as a folder: it ends with a separator (``out/``). Such a name
    is never written as a file (``Path("out/")`` would drop the slash and write ``out``)."""
    text = os.fspath(path)
    return text.endswith(("/", os.sep)) and text.rstrip("/" + os.sep) != ""


def _refuse_folder_name(label: str, path: str | Path) -> None:
    if folder_meant(path) and not _special(Path(path)):
        raise OutputError(f"{label}: cannot write: the name ends with '/', which means a folder; give a file "
                          f"name (e.g. {os.fspath(path).rstrip('/' + os.sep)}/results.txt).")


def _refuse_input(label: str, path: str | Path, inputs: dict[tuple[int, int], str] | None = None) -> None:
    """An OutputError when ``path`` is one of ``inputs`` or an input noted in the command's scope."""
    key = _identity(path)
    source = (inputs or {}).get(key) if key is not None else None
    source = source or input_named(path)
    if source is not None:
        raise OutputError(f"{label}: refusing to overwrite an input of this command ({source}); "
                          "choose another output file.")


@contextlib.contextmanager
def atomic_path(path: str | Path, *, label: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``.

    Write the whole output to the yielded path (any writer: ``open``, ``savefig``, a
    ``ParquetWriter``). On success the file is flushed to disk and renamed over ``path``
    (its permission bits kept when it existed). On any exception, Ctrl-C included, the
    temporary file is removed and ``path`` is left as it was. An OSError from the body is
    reported as an OutputError naming ``path``. Refused: a name spelled as a folder (``out/``)
    and, inside a command, one of its inputs (see the module docstring).
    """
    target = Path(path)
    label = label or str(path)
    _refuse_folder_name(label, path)
    if _special(target):
        try:
            yield target
        except OSError as exc:
            raise writing_error(exc, label) from None
        return
    real = Path(os.path.realpath(target))
    if real.is_dir():
        raise OutputError(f"{label}: cannot write: it is a folder; give a file name.")
    _refuse_input(label, real)
    temporary = real.with_name(f".{real.name}.{secrets.token_hex(4)}.tmp{real.suffix}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        os.close(fd)
    except OSError as exc:
        raise writing_error(exc, label) from None
    try:
        with contextlib.suppress(OSError):
            os.chmod(temporary, stat.S_IMODE(real.stat().st_mode))  # keep an existing file's mode
        try:
            yield temporary
            _sync(temporary)
            os.replace(temporary, real)
        except OSError as exc:
            raise writing_error(exc, label, atomic=True) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(real.parent)


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (best effort: not every file system syncs a folder)."""
    with contextlib.suppress(OSError):
        _sync(folder)


def check_outputs(outputs: Mapping[str, str | Path | None], inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse bad outputs before any work: ``{option: path}`` (``{"-o": "out.csv"}``).

    Refused: a path whose folder does not exist or may not be written to, a path that is a
    folder or ends with ``/``, a path that is one of ``inputs`` or of the inputs noted in the
    command's scope (the same file by identity: any spelling, a symbolic or a hard link), and
    two options naming the same file. ``None`` and ``-`` (standard output) are skipped.

    Raises:
        OutputError: naming the option, the path and the reason.
    """
    given = {option: str(path) for option, path in outputs.items() if path not in (None, "", "-")}
    sources: dict[tuple[int, int], str] = {}
    for source in inputs:
        key = _identity(source) if source not in (None, "", "-") else None
        if key is not None:
            sources.setdefault(key, str(source))
    seen: dict[tuple[int, int] | str, str] = {}
    for option, path in given.items():
        target = Path(path)
        if _special(target):
            continue
        _refuse_folder_name(f"{option} {path}", path)
        if target.is_dir():
            raise OutputError(f"{option} {path}: cannot write: it is a folder; give a file name.")
        folder = Path(os.path.realpath(target)).parent
        if not folder.is_dir():
            why = "is not a folder" if folder.exists() else "does not exist"
            raise OutputError(f"{option} {path}: cannot write: the folder {target.parent} {why}.")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputError(f"{option} {path}: cannot write: permission denied (in {target.parent}).")
        _refuse_input(f"{option} {path}", target, sources)
        key = _identity(target)
        name = key or str(Path(os.path.realpath(target)))
        if name in seen:
            raise OutputError(f"{option} {path}: the same file as {seen[name]}; give each output its own file.")
        seen[name] = f"{option} {path}"


@contextlib.contextmanager
def atomic_files(folder: str | Path, names: Iterable[str], *, stale: Iterable[str] = ()
                 ) -> Iterator[dict[str, Path]]:
    """Yield ``{name: temporary path}`` for files that appear in ``folder`` together, or not at all.

    A new folder is written as a temporary folder next to it (``.NAME.XXXXXXXX.tmp``) and
    renamed when complete; in an existing folder each file is written as a temporary file
    and all are renamed at the end. On success the files named in ``stale`` (left by an
    earlier, different output) are removed; on any failure, Ctrl-C included, the temporary
    files go and the folder is as it was.

    Raises:
        OutputError: ``folder`` is a file, or a file cannot be written.
    """
    import shutil

    target = Path(folder)
    label = str(folder)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{label}: cannot write a log folder: a file of that name exists.")
    names, stale = tuple(names), tuple(stale)
    for name in (*names, *stale):
        _refuse_input(str(target / name), target / name)
    token = secrets.token_hex(4)
    fresh = not target.exists()
    try:
        if fresh:
            target.parent.mkdir(parents=True, exist_ok=True)
            home = target.parent / f".{target.name}.{token}.tmp"
            home.mkdir()
            paths = {name: home / name for name in names}
        else:
            home = target
            paths = {name: target / f".{name}.{token}.tmp" for name in names}
    except OSError as exc:
        raise writing_error(exc, label) from None
    try:
        try:
            yield paths
            for path in paths.values():
                if path.exists():
                    _sync(path)
            if fresh:
                os.rename(home, target)
            else:
                for name, path in paths.items():
                    if path.exists():
                        os.replace(path, target / name)
                for name in stale:
                    if name not in paths:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(target / name)
        except OSError as exc:
            raise writing_error(exc, label, atomic=True) from None
    except BaseException:
        if fresh:
            shutil.rmtree(home, ignore_errors=True)
        else:
            for path in paths.values():
                with contextlib.suppress(OSError):
                    os.unlink(path)
        raise
    _sync_folder(target.parent if fresh else target)
