"""Fixtures shared by zarrlib's tests."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest

#: the ``os`` calls that let go of the GIL, one hand-off each on many cores
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
