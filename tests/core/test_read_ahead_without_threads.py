"""The read-ahead when no thread can be started (under ``ulimit -v`` a thread's stack may not
fit: ``RuntimeError: can't start new thread``): every item is still read, in order, in the
caller's thread, and a read's error still reaches the caller at its item."""

from __future__ import annotations

import threading

import pytest

from serpeval.core.read_ahead import ReadAhead


def test_reads_in_the_callers_thread_when_no_thread_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    readers: list[str] = []

    def read(item: str) -> str:
        readers.append(threading.current_thread().name)
        if item == "bad":
            raise ValueError("bad item")
        return item.upper()

    ahead = ReadAhead(["a", "é", "bad", "never"], read, ahead=True)
    assert next(ahead) == "A"
    assert next(ahead) == "É"
    with pytest.raises(ValueError, match="bad item"):
        next(ahead)
    assert set(readers) == {threading.current_thread().name}
