"""The ``conditional`` codec: chunks whose headers switch nested codecs on and off per chunk,
compressed here by numcodecs and Python's gzip as the spec's encoding steps say, read back as
the numpy data they hold; headers naming unlisted codecs, and bad configurations, are named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrview.zarrlib as zl

pytestmark = pytest.mark.timeout(60)
NESTED = [{"name": "gzip", "configuration": {"level": 3}}, {"name": "zstd", "configuration": {"level": 1}}]


def encode(raw: bytes, mask: int, header_bytes: int = 1) -> bytes:
    """The spec's encoding: each codec whose bit is set, in list order, then the header."""
    if mask & 1:
        raw = gzip.compress(raw, 3)
    if mask & 2:
        raw = numcodecs.Zstd(1).encode(raw)
    return mask.to_bytes(header_bytes, "little") + raw


def store(root: Path, chunks: dict[str, bytes], config: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4, 10], "data_type": "int32", "fill_value": -1,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 5]}},
        "chunk_key_encoding": {"name": "default"},
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "conditional", "configuration": config}]}))
    for key, data in chunks.items():
        (root / "c" / key).parent.mkdir(parents=True, exist_ok=True)
        (root / "c" / key).write_bytes(data)
    return root


@pytest.mark.parametrize("masks", [(0, 1), (2, 3), (3, 0)])
def test_each_chunk_undoes_the_codecs_its_header_names(tmp_path: Path, masks: tuple[int, int]) -> None:
    data = np.arange(40, dtype="<i4").reshape(4, 10) * 7
    chunks = {f"0/{j}": encode(np.ascontiguousarray(data[:, 5 * j:5 * j + 5]).tobytes(), masks[j]) for j in range(2)}
    arr = zl.open(store(tmp_path, chunks, {"codecs": NESTED}))
    assert isinstance(arr, zl.Array) and "conditional(gzip" in arr.codecs
    np.testing.assert_array_equal(arr[...], data)


def test_a_wider_header_leaves_room_for_codecs_added_later(tmp_path: Path) -> None:
    data = np.arange(40, dtype="<i4").reshape(4, 10)
    chunks = {"0/0": encode(np.ascontiguousarray(data[:, :5]).tobytes(), 1, header_bytes=2)}
    arr = zl.open(store(tmp_path, chunks, {"codecs": NESTED, "header_bits": 16}))
    np.testing.assert_array_equal(arr[...], np.where(np.arange(10) < 5, data, -1))


def test_a_header_naming_an_unlisted_codec_is_named(tmp_path: Path) -> None:
    chunks = {"0/0": encode(bytes(80), 4)}
    with pytest.raises(zl.CodecError, match=r"chunk c/0/0 of /: conditional: the header sets bit 2, but only 2"):
        zl.open(store(tmp_path, chunks, {"codecs": NESTED}))[...]


@pytest.mark.parametrize("config, message", [
    ({"codecs": NESTED, "header_bits": 12}, "header_bits must be a multiple of 8"),
    ({"codecs": NESTED * 5, "header_bits": 8}, "header_bits must be a multiple of 8 of at least 10"),
    ({"codecs": [{"name": "bytes"}]}, "is not a bytes->bytes codec"),
    ({"codecs": []}, "codecs must be a non-empty list"),
    ({"codecs": NESTED, "mode": 1}, "unknown fields"),
])
def test_bad_configurations_are_named(tmp_path: Path, config: dict[str, Any], message: str) -> None:
    with pytest.raises(zl.MetadataError, match=message):
        zl.open(store(tmp_path, {}, config))
