"""``n5_default``: N5 arrays written by tensorstore's N5 driver, given a ``zarr.json`` beside their
``attributes.json`` (as the codec's spec lays out), read as tensorstore reads them; edge blocks
truncated as Java's N5 writes them, and hostile headers, by hand."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl

ts = pytest.importorskip("tensorstore")
pytestmark = pytest.mark.timeout(120)

COMPRESSORS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "raw": ({"type": "raw"}, []),
    "gzip": ({"type": "gzip", "level": 5}, [{"name": "gzip", "configuration": {"level": 5}}]),
    "zstd": ({"type": "zstd", "level": 1}, [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]),
}


def zarr_json(folder: Path, shape: list[int], block: list[int], data_type: str, extra: list[dict[str, Any]],
              chain: list[dict[str, Any]] | None = None) -> None:
    order = list(reversed(range(len(shape))))
    codecs = chain if chain is not None else [{"name": "transpose", "configuration": {"order": order}},
                                              {"name": "bytes", "configuration": {"endian": "big"}}, *extra]
    (folder / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type, "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": block}},
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}},
        "codecs": [{"name": "n5_default", "configuration": {"codecs": codecs}}]}))


def n5_array(folder: Path, data: np.ndarray, block: list[int], compression: str) -> np.ndarray:
    store = ts.open({"driver": "n5", "kvstore": {"driver": "file", "path": str(folder)},
                     "metadata": {"dimensions": list(data.shape), "blockSize": block, "dataType": str(data.dtype),
                                  "compression": COMPRESSORS[compression][0]}}, create=True).result()
    store[...].write(data).result()
    zarr_json(folder, list(data.shape), block, str(data.dtype), COMPRESSORS[compression][1])
    return np.asarray(store.read().result())


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
@pytest.mark.parametrize("dtype", ["int16", "float32", "uint8", "float64"])
def test_tensorstore_n5_arrays_read_as_tensorstore_reads_them(tmp_path: Path, compression: str, dtype: str) -> None:
    data = (np.random.default_rng(2).normal(size=(10, 5, 3)) * 100).astype(dtype)
    expected = n5_array(tmp_path / "a", data, [4, 3, 2], compression)
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array) and arr.codecs.startswith("n5_default(transpose([2, 1, 0])")
    np.testing.assert_array_equal(arr[...], expected)
    np.testing.assert_array_equal(arr[3:9, 1:4, 1], expected[3:9, 1:4, 1])


def block_bytes(values: np.ndarray, mode: int = 0, dims: list[int] | None = None) -> bytes:
    """An N5 default-mode block as the N5 spec lays it out: header, then the values in
    column-major order, big-endian, uncompressed."""
    shape = dims if dims is not None else list(values.shape)
    header = struct.pack(">HH", mode, len(shape)) + struct.pack(f">{len(shape)}I", *shape)
    return header + np.asfortranarray(values).astype(values.dtype.newbyteorder(">")).tobytes(order="F")


def test_truncated_edge_blocks_read_with_the_fill_value_beyond_them(tmp_path: Path) -> None:
    data = np.arange(10 * 7, dtype="<i4").reshape(10, 7)
    folder = tmp_path / "a"
    expected = n5_array(folder, data, [4, 3], "raw")
    (folder / "2" / "2").write_bytes(block_bytes(data[8:10, 6:7]))  # a 2x1 block, as Java's N5 writes the corner
    (folder / "1" / "2").write_bytes(block_bytes(data[4:8, 6:7]))
    arr = zl.open(folder)
    np.testing.assert_array_equal(arr[...], expected)
    # a block larger than its chunk is cut to the chunk
    (folder / "0" / "0").write_bytes(block_bytes(np.full((5, 4), 9, "<i4")))
    np.testing.assert_array_equal(zl.open(folder)[0:4, 0:3], np.full((4, 3), 9))


@pytest.mark.parametrize("block, message", [
    (b"\x00", "1 bytes cannot hold its header"),
    (struct.pack(">HH", 1, 2) + struct.pack(">2I", 4, 3), "mode 1 is not the default mode 0"),
    (struct.pack(">HH", 0, 3) + struct.pack(">3I", 4, 3, 1), "header says 3 dimensions, the array has 2"),
    (struct.pack(">HH", 0, 2) + b"\x00\x00\x00\x04", "cannot hold a header of 12"),
    (struct.pack(">HH", 0, 2) + struct.pack(">2I", 2**31, 2**31), "more than the"),
    (struct.pack(">HH", 0, 2) + struct.pack(">2I", 4, 3) + b"\x00" * 5, "expected 48 bytes"),
])
def test_hostile_blocks_are_named(tmp_path: Path, block: bytes, message: str) -> None:
    folder = tmp_path / "a"
    n5_array(folder, np.zeros((8, 6), "<i4"), [4, 3], "raw")
    (folder / "1" / "0").write_bytes(block)
    with pytest.raises(zl.CodecError, match="1/0") as e:
        zl.open(folder)[...]
    assert message in str(e.value)


@pytest.mark.parametrize("chain, message", [
    ([{"name": "bytes", "configuration": {"endian": "big"}}], "must start with a transpose reversing all 2"),
    ([{"name": "transpose", "configuration": {"order": [0, 1]}}, {"name": "bytes", "configuration": {"endian": "big"}}],
     "must start with a transpose"),
    ([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}],
     "must be big-endian bytes"),
    ([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "gzip"}, {"name": "zstd"}], "at most one bytes->bytes codec"),
])
def test_chains_other_than_n5s_are_metadata_errors(tmp_path: Path, chain: list[dict[str, Any]], message: str) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    zarr_json(folder, [8, 6], [4, 3], "int32", [], chain)
    with pytest.raises(zl.MetadataError, match=message):
        zl.open(folder)
