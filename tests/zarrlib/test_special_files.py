"""Files that are not regular files where a store's documents belong: a FIFO blocks whoever opens
it for reading until a writer comes, and a link to /dev/zero never ends. Sniffing a folder for a
Parquet reference set and reading a reference file must refuse both by what they are."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl

pytestmark = pytest.mark.timeout(60)


def finishes(fn: Callable[[], object], fifo: Path | None = None) -> BaseException | object:
    """What ``fn`` returned or raised, failing the test if it is still busy after 10 s (a FIFO
    reader is released by opening its writing end, so the test process can end)."""
    got: list[object] = []

    def run() -> None:
        try:
            got.append(fn())
        except BaseException as e:  # noqa: BLE001 - the caller judges it
            got.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        if fifo is not None:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("blocked on a special file")
    return got[0]


def test_consolidated_metadata_that_is_a_fifo_does_not_block_opening(tmp_path: Path) -> None:
    root = tmp_path / "c.zarr"
    g = zarr.open_group(root, mode="w", zarr_format=2)
    g.create_array("a", shape=(4,), dtype="i2")[...] = np.arange(4)
    zarr.consolidate_metadata(root)
    (root / ".zmetadata").unlink()
    os.mkfifo(root / ".zmetadata")
    got = finishes(lambda: zl.open(root), root / ".zmetadata")
    if isinstance(got, BaseException):  # refused, by name
        assert isinstance(got, zl.ZarrError) and ".zmetadata" in str(got) and "FIFO" in str(got), got
    else:  # or read from the members' own documents
        assert isinstance(got, zl.Group)
        np.testing.assert_array_equal(got["a"][...], np.arange(4))


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_reference_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    refs = tmp_path / "refs.json"
    if kind == "fifo":
        os.mkfifo(refs)
    else:
        os.symlink("/dev/zero", refs)
    got = finishes(lambda: zl.open(f"reference::{refs}"), refs if kind == "fifo" else None)
    assert isinstance(got, zl.ZarrError), got
    named = str(refs) if kind == "fifo" else "/dev/zero"  # a link is named by what it resolves to
    assert named in str(got) and "not a regular file" in str(got)
    assert ("a FIFO" if kind == "fifo" else "a character device") in str(got)
