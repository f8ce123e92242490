"""A chunk's stored object is asked for no more bytes than its codecs can store a chunk as.

The truth for the bound is what zarr-python (and numcodecs) store: each chunk of arrays
written with each compressor, of random (incompressible) and of constant data, is within it.
The bound's use: a server that answers a chunk of a 64 x 64 uint8 array with a body without
end is abandoned after about that chunk's worst case (70 KiB), not after the 2 GiB one stored
object may hold, and the message names the chunk's bound; a shard index entry claiming more
than an inner chunk can be stored as is refused before anything is fetched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ZstdCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.decode import chunk_bound
from zarrview.zarrlib.errors import CodecError, TooLargeError
from zarrview.zarrlib.limits import limits

from hostile_http import Hostile, serve_hostile
from remote_backends import backend  # noqa: F401  (each read on each backend)

#: what the client may have taken past a bound before it hung up (the kernel's buffers; see
#: test_hostile_http): far under the 256 MiB an endless body sends to a client that reads on
SLACK = 32 << 20

V3 = {
    "no compressor": dict(compressors=None),
    "zstd": dict(compressors=[ZstdCodec(level=3)]),
    "zstd, checksum": dict(compressors=[ZstdCodec(level=22, checksum=True)]),
    "gzip": dict(compressors=[GzipCodec(level=9)]),
    "blosc": dict(compressors=[BloscCodec(cname="lz4", shuffle="bitshuffle")]),
    "zstd, crc32c": dict(compressors=[ZstdCodec(), Crc32cCodec()]),
    "big-endian": dict(serializer=BytesCodec(endian="big"), compressors=None),
}
V2 = {
    "zlib": dict(compressors=numcodecs.Zlib(level=1)),
    "lz4": dict(compressors=numcodecs.LZ4()),
    "bz2": dict(compressors=numcodecs.BZ2()),
    "lzma": dict(compressors=numcodecs.LZMA()),
    "blosc zstd": dict(compressors=numcodecs.Blosc(cname="zstd", shuffle=2)),
    "delta then zlib": dict(filters=[numcodecs.Delta(dtype="<u2")], compressors=numcodecs.Zlib()),
    "none": dict(compressors=None),
}


def _write(path: Path, zarr_format: int, options: dict[str, Any], data: np.ndarray) -> None:
    a = zarr.create_array(path, shape=data.shape, chunks=(40, 50), dtype=data.dtype, zarr_format=zarr_format,  # type: ignore[arg-type]
                          **options)
    a[...] = data


def _stored(path: Path) -> list[int]:
    return [p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.name.startswith((".z", "zarr.json"))]


@pytest.mark.parametrize("fmt,name", [(3, n) for n in V3] + [(2, n) for n in V2])
@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_every_chunk_written_is_within_its_codecs_bound(fmt: int, name: str, backend: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    dtype = "<u2" if name == "delta then zlib" else "<u4"
    noise = rng.integers(0, 2**16 if dtype == "<u2" else 2**32, size=(100, 120), dtype=dtype)
    for kind, data in (("noise", noise), ("constant", np.full_like(noise, 7))):
        path = tmp_path / f"{kind}.zarr"
        _write(path, fmt, (V3 if fmt == 3 else V2)[name], data)
        arr = zl.open(path)
        bound = chunk_bound(arr.meta)
        assert bound is not None, f"{name}: the codecs bound a chunk of fixed-size values"
        sizes = _stored(path)
        assert len(sizes) == 9 and max(sizes) <= bound, (name, kind, max(sizes), int(bound))
        np.testing.assert_array_equal(arr[...], data)  # every chunk read within it
    raw = 40 * 50 * np.dtype(dtype).itemsize
    assert bound < 2 * raw + (128 << 10), "the bound is of the chunk's size, not of any object's"


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_variable_length_and_unknown_codecs_keep_the_stores_bound(backend: str, tmp_path: Path) -> None:
    strings = zarr.create_array(tmp_path / "s.zarr", shape=(4,), chunks=(2,), dtype=str)
    strings[...] = np.array(["a", "bb", "ccc", "dddd"])
    assert chunk_bound(zl.open(tmp_path / "s.zarr").meta) is None or \
        chunk_bound(zl.open(tmp_path / "s.zarr").meta) <= limits().chunk_bytes + limits().chunk_bytes // 64 + (64 << 10)
    odd = zarr.create_array(tmp_path / "o.zarr", shape=(8,), chunks=(4,), dtype="u1", zarr_format=2,
                            compressors=numcodecs.Zlib(), filters=[numcodecs.FixedScaleOffset(0, 1, "u1")])
    odd[...] = np.arange(8, dtype="u1")
    assert chunk_bound(zl.open(tmp_path / "o.zarr").meta) is not None  # a filter of known output
    pickled = zarr.create_array(tmp_path / "p.zarr", shape=(8,), chunks=(4,), dtype="u1", zarr_format=2,
                                compressors=numcodecs.Zlib(), filters=[numcodecs.Base64()])
    pickled[...] = np.arange(8, dtype="u1")
    assert chunk_bound(zl.open(tmp_path / "p.zarr").meta) is None  # base64's output: not bounded here


def test_an_endless_chunk_is_abandoned_at_its_codecs_bound(backend: str, tmp_path: Path) -> None:
    data = np.arange(128 * 128, dtype="u1").reshape(128, 128)
    a = zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(64, 64), dtype="u1",
                          compressors=[ZstdCodec()])
    a[...] = data
    assert limits().object_bytes >= 1 << 30  # the store's own bound: far past what the server sends
    with serve_hostile(tmp_path, {r"/c/1/0$": Hostile("endless_chunked")}) as (url, state):
        arr = zl.open(f"{url}/a.zarr")
        bound = chunk_bound(arr.meta)
        assert bound is not None and bound < 80 << 10
        np.testing.assert_array_equal(arr[:64], data[:64])  # the other chunks read as written
        with pytest.raises(TooLargeError) as e:
            arr[64:]
        state.wait_quiet(timeout=10.0)
        sent = state.body_sent("/c/1/0")
    assert "a.zarr/c/1/0" in str(e.value) and "as this array's codecs store it" in str(e.value), str(e.value)
    assert sent < bound + SLACK, f"the server sent {sent} bytes for a chunk bounded at {int(bound)}"


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_a_shard_index_entry_past_the_inner_chunks_bound_is_refused_unread(backend: str, tmp_path: Path) -> None:
    data = np.arange(32 * 32, dtype="<u2").reshape(32, 32)
    a = zarr.create_array(tmp_path / "s.zarr", shape=data.shape, chunks=(8, 8), shards=(32, 32), dtype="<u2",
                          compressors=None)
    a[...] = data
    shard = tmp_path / "s.zarr" / "c" / "0" / "0"
    raw = bytearray(shard.read_bytes())
    index = np.frombuffer(raw, dtype="<u8", count=32, offset=len(raw) - 4 - 256).reshape(16, 2).copy()
    index[5, 1] = 64 << 20  # inner chunk 5 claims 64 MiB; an 8 x 8 uint16 chunk stores as 128 bytes
    # the index's checksum kept valid (numcodecs computes it): only the claim is wrong
    raw[len(raw) - 4 - 256:] = bytes(numcodecs.CRC32C().encode(index.tobytes()))
    shard.write_bytes(bytes(raw))
    with pytest.raises(CodecError) as e:
        zl.open(tmp_path / "s.zarr")[...]
    assert "index entry 5" in str(e.value) and "128 bytes" in str(e.value) and "corrupt" in str(e.value), str(e.value)
    failures: list[Any] = []
    got = zl.open(tmp_path / "s.zarr").read(..., failures=failures)  # type: ignore[attr-defined]
    assert len(failures) == 1
    np.testing.assert_array_equal(np.delete(got.reshape(4, 8, 4, 8).transpose(0, 2, 1, 3).reshape(16, 64), 5, 0),
                                  np.delete(data.reshape(4, 8, 4, 8).transpose(0, 2, 1, 3).reshape(16, 64), 5, 0))
