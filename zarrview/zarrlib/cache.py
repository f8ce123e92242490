"""A thread-safe LRU of decoded chunks bounded by bytes.

A viewer revisits the same chunks constantly (slider back and forth, pan and return), and
decoding dominates read time, so caching decoded arrays rather than raw bytes is the win.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np


def _nbytes(arr: np.ndarray) -> int:
    if arr.dtype.kind == "O":
        return arr.size * 64 + sum(len(x) for x in arr.flat if isinstance(x, (str, bytes)))
    return int(arr.nbytes)


class ChunkCache:
    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self._max = int(max_bytes)
        self._items: OrderedDict[Hashable, tuple[np.ndarray, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0

    @property
    def max_bytes(self) -> int:
        return self._max

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        with self._lock:
            self._max = int(value)
            self._evict()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> np.ndarray | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: Hashable, arr: np.ndarray) -> None:
        size = _nbytes(arr)
        if size > self._max:
            return
        arr.flags.writeable = False  # shared between readers: nobody may modify it
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (arr, size)
            self._bytes += size
            self._evict()

    def _evict(self) -> None:
        while self._bytes > self._max and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
