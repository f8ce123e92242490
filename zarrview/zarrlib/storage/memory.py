"""A dict-backed store: for tests and for stores built in memory by callers."""

from __future__ import annotations

from collections.abc import Mapping

from .base import Store


class MemoryStore(Store):
    def __init__(self, data: Mapping[str, bytes], url: str = "memory://") -> None:
        super().__init__(url)
        self._data = dict(data)

    def get(self, key: str) -> bytes | None:
        value = self._data.get(key)
        return None if value is None else bytes(value)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        keys: set[str] = set()
        dirs: set[str] = set()
        for k in self._data:
            if not k.startswith(prefix):
                continue
            head, sep, _ = k[len(prefix):].partition("/")
            (dirs if sep else keys).add(head)
        return sorted(keys), sorted(dirs)
