"""zarrlib's reads checked against zarr-python's, plain and through a chunk cache (the app's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.cache import ChunkCache


def assert_reads_like_zarr(path: Path, sel: Any, workers: int, cached: bool) -> None:
    want = zarr.open_array(path, mode="r")[sel]
    a = zl.open(path)
    cache = ChunkCache(64 << 20) if cached else None
    for _ in range(2):  # the second read of a cached one comes from the cache
        got = a.read(sel, executor=ThreadPoolExecutor(workers), cache=cache)
        assert got.dtype == want.dtype and np.array_equal(got, want)
