"""Fixtures shared by zarrlib's tests."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest

from zarrview.zarrlib.storage import uring

#: the ``os`` calls that let go of the GIL, one hand-off each on many cores (issue 15)
OS_CALLS = ("open", "fstat", "close", "preadv", "pread", "read")


@pytest.fixture
def os_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each of ``OS_CALLS`` is made from now on."""
    seen: Counter[str] = Counter()
    for name in OS_CALLS:
        real = getattr(os, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            seen[_name] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, counted)
    return seen


@pytest.fixture
def enters(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The requests of each ``io_uring_enter`` that submits some, from now on."""
    seen: list[int] = []
    real = uring._call

    def counted(*args: int) -> int:
        if args[0] == uring._ENTER and args[2]:
            seen.append(args[2])
        return real(*args)

    monkeypatch.setattr(uring, "_call", counted)
    return seen
