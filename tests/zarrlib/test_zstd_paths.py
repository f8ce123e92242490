"""Both zstd decode paths (system libzstd with a reused context, numcodecs as fallback)
give zarr-python's values, and both turn a damaged frame into a CodecError."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import zarr
from numcodecs import Zstd

import zarrview.zarrlib as zl
from zarrview.zarrlib.codecs import libzstd, zstd as zstd_module
from zarrview.zarrlib.errors import CodecError

RNG = np.random.default_rng(7)
DATA = (RNG.normal(1000, 50, size=(6, 64, 96))).astype("<u2")

needs_libzstd = pytest.mark.skipif(libzstd.decoder() is None, reason="no system libzstd on this machine")


@pytest.fixture(scope="module", params=["v3_chunked", "v3_sharded", "v2"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zstd") / request.param
    if request.param == "v2":
        from numcodecs import Zstd as NZ
        a = zarr.create_array(root, shape=DATA.shape, chunks=(1, 32, 32), dtype="u2",
                              compressors=NZ(level=3), zarr_format=2)
    elif request.param == "v3_sharded":
        a = zarr.create_array(root, shape=DATA.shape, chunks=(1, 16, 32), shards=(2, 32, 96), dtype="u2",
                              compressors=zarr.codecs.ZstdCodec(level=3))
    else:
        a = zarr.create_array(root, shape=DATA.shape, chunks=(2, 32, 32), dtype="u2",
                              compressors=zarr.codecs.ZstdCodec(level=3, checksum=True))
    a[...] = DATA
    return root


def _read_all(path: Path) -> np.ndarray:
    return zl.open(path)[...]


@needs_libzstd
def test_libzstd_path_matches_zarr_python(store: Path) -> None:
    expected = zarr.open_array(store, mode="r")[...]
    np.testing.assert_array_equal(_read_all(store), expected)
    np.testing.assert_array_equal(expected, DATA)


def test_numcodecs_fallback_matches_zarr_python(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zstd_module, "libzstd_decoder", lambda: None)
    np.testing.assert_array_equal(_read_all(store), zarr.open_array(store, mode="r")[...])


def _frame(payload: bytes) -> bytes:
    return bytes(Zstd(level=1).encode(payload))


@needs_libzstd
@pytest.mark.parametrize("damage", ["truncated", "checksum", "too_long_for_output"])
def test_libzstd_damaged_frames_raise(damage: str) -> None:
    payload = np.arange(4096, dtype="<u4").tobytes()
    frame = bytes(Zstd(level=1, checksum=True).encode(payload))
    out = np.empty(len(payload), dtype=np.uint8)
    if damage == "truncated":
        frame = frame[: len(frame) // 2]
    elif damage == "checksum":
        frame = frame[:-4] + bytes(b ^ 0xFF for b in frame[-4:])
    else:
        out = np.empty(len(payload) - 16, dtype=np.uint8)
    decode = libzstd.decoder()
    assert decode is not None
    with pytest.raises(CodecError, match="zstd"):
        decode(frame, out)


@needs_libzstd
def test_libzstd_from_many_threads_and_buffer_kinds() -> None:
    payloads = [RNG.integers(0, 50, size=5000 + 37 * i, dtype="u2").tobytes() for i in range(16)]
    frames = [_frame(p) for p in payloads]
    decode = libzstd.decoder()
    assert decode is not None
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for k in range(200):
                i = (k + offset) % len(frames)
                src: bytes | memoryview | np.ndarray = frames[i]
                if k % 3 == 1:
                    src = memoryview(bytearray(frames[i]))
                elif k % 3 == 2:
                    src = np.frombuffer(frames[i], dtype=np.uint8)
                out = np.empty(len(payloads[i]), dtype=np.uint8)
                decode(src, out)
                assert out.tobytes() == payloads[i]
        except BaseException as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
