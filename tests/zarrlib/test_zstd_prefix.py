"""zstd chunks decoded only as far as a read's part of them reaches (decode.prefix_of).

Values are zarr-python's for v3 and v2 arrays, sharded inner chunks, several element sizes and
selections that end early in a chunk, late in it, or cover it. That the tail is really left
undecoded shows in a chunk whose last block is corrupt: its first rows still read, the whole
chunk is refused with a message naming it. Frames cut short before the part ends, and frames
declaring another size, fail as the whole-chunk path fails them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import ZstdCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.codecs.libzstd import prefix_decoder

pytestmark = pytest.mark.skipif(prefix_decoder() is None, reason="the system libzstd is not available")

RNG = np.random.default_rng(2026)
SHAPE = (2, 1024, 512)
CHUNKS = (1, 512, 512)  # 512 KiB of uint16: four zstd blocks
SELECTIONS: list[Any] = [
    (0, slice(600, 700), slice(None)),  # the first rows of the second chunk row
    (1, 513, slice(None)),  # an XZ row near a chunk's top
    (slice(None), 40, slice(3, 500, 7)),
    (0, slice(100, 612), slice(30, 400)),  # a viewport over two chunks, one cut early
    (slice(None), slice(None), 17),  # a column: to the chunk's end
    (1, slice(None), slice(None)),
    (0, 511, 511),
]


def _data(dtype: str) -> np.ndarray:
    return (RNG.integers(0, 300, SHAPE) * RNG.integers(1, 4, SHAPE)).astype(dtype)


@pytest.mark.parametrize("dtype", ["<u2", "<f4", "<i8"])
@pytest.mark.parametrize("layout", ["v3", "v2", "sharded"])
def test_values_equal_zarr_python(tmp_path: Path, dtype: str, layout: str) -> None:
    data = _data(dtype)
    path = tmp_path / "a.zarr"
    if layout == "v2":
        a = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=2,
                              compressors=numcodecs.Zstd(level=1), fill_value=0)
    elif layout == "sharded":
        a = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, shards=(1, 1024, 512), dtype=dtype,
                              compressors=ZstdCodec(level=1), fill_value=0)
    else:
        a = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, compressors=ZstdCodec(level=1))
    a[...] = data
    arr = zl.open(str(path))
    for sel in SELECTIONS:
        np.testing.assert_array_equal(arr[sel], zarr.open_array(path, mode="r")[sel], err_msg=str(sel))
        np.testing.assert_array_equal(arr[sel], data[sel], err_msg=str(sel))


def _corrupt_last_block(path: Path) -> Path:
    """Chunk (0, 0, 0) with its last compressed block's bytes scrambled (the frame's last 2 KiB)."""
    key = path / "c" / "0" / "0" / "0"
    raw = bytearray(key.read_bytes())
    tail = len(raw) - 2048
    raw[tail:] = bytes((b ^ 0x5A) for b in raw[tail:])
    key.write_bytes(bytes(raw))
    return key


def test_the_tail_past_the_part_is_never_decoded(tmp_path: Path) -> None:
    data = _data("<u2")
    path = tmp_path / "a.zarr"
    zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype="<u2", compressors=ZstdCodec(level=1))[...] = data
    _corrupt_last_block(path)
    arr = zl.open(str(path))
    np.testing.assert_array_equal(arr[0, :100, :], data[0, :100, :])  # the first quarter: the tail untouched
    with pytest.raises(zl.CodecError, match=r"chunk c/0/0/0 of .*zstd"):
        arr[0, 500:512, :]  # reaches the scrambled block


def test_a_frame_cut_short_before_the_part_ends_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.zarr"
    zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype="<u2", compressors=ZstdCodec(level=1))[...] = _data("<u2")
    key = path / "c" / "0" / "0" / "0"
    key.write_bytes(key.read_bytes()[:300])  # the header and a little of the first block
    arr = zl.open(str(path))
    with pytest.raises(zl.CodecError, match=r"chunk c/0/0/0 of .*zstd"):
        arr[0, :100, :]
    failures: list[zl.ChunkFailure] = []
    got = arr.read((0, slice(0, 100), slice(None)), failures=failures)
    assert [f.key for f in failures] == ["c/0/0/0"] and (got == 0).all()
