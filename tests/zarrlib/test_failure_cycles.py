"""A read that records failed chunks leaves no reference cycle behind: an error's traceback holds
the frames of the read (its output, its buffers), and a long-lived process frees such cycles
only at a full collection, which Python postpones while its oldest generation is large."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


@pytest.mark.parametrize("damage", ["corrupt", "dev_zero"])
def test_failed_chunks_leave_no_cycle_holding_the_read(tmp_path: Path, damage: str,
                                                        no_automatic_collection: None) -> None:
    z = zarr.open_array(tmp_path / "a.zarr", mode="w", shape=(40, 40), chunks=(10, 10), dtype="f8", zarr_format=3)
    z[...] = np.arange(1600.0).reshape(40, 40)
    key = tmp_path / "a.zarr" / "c" / "1" / "2"
    key.unlink()
    if damage == "corrupt":
        key.write_bytes(b"not zstd at all")
    else:
        os.symlink("/dev/zero", key)
    arr = zl.open(tmp_path / "a.zarr")
    failures: list[zl.ChunkFailure] = []
    out = arr.read(..., failures=failures)
    assert [f.key for f in failures] == ["c/1/2"] and isinstance(failures[0].error, zl.ZarrError)
    assert str(failures[0].error) == failures[0].message  # the kind and message are kept
    del out, failures
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    ours = [o for o in gc.garbage if type(o).__name__ == "frame" and "/zarrview/" in o.f_code.co_filename]
    assert ours == [], [f"{f.f_code.co_filename}:{f.f_lineno} {f.f_code.co_name}" for f in ours]
