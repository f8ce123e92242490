"""Parts of blosc chunks decoded alone: only the blocks a read needs (codecs/blosc_partial.py).

Values are zarr-python's, for every blosc compressor and shuffle, several element sizes and
block sizes, v2 in both orders, v3, and shards; the decoding calls are counted, so a test shows
that an XZ section takes the partial path and a plane does not. Hostile frames never crash the
process (a fuzz run in a child) and fail as the whole-chunk path fails them.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.cache import ChunkCache
from zarrview.zarrlib.codecs import blosc_partial

pytestmark = [pytest.mark.skipif(not blosc_partial.available(), reason="blosc_getitem is not exported here"),
              pytest.mark.timeout(120)]

RNG = np.random.default_rng(1517)
SHAPE = (3, 96, 80)
SELECTIONS: list[Any] = [
    (slice(None), 37, slice(None)),  # an XZ section: one row of each chunk
    (1, slice(40, 42), slice(None)),
    (2, 5, slice(3, 70, 3)),
    (slice(None), slice(None), 33),  # a column: spread over the chunk, decoded whole
    (1, slice(None), slice(None)),
    (0, 95, 79),
]


def _data(dtype: str) -> np.ndarray:
    return (RNG.integers(0, 200, SHAPE) * RNG.integers(1, 3, SHAPE)).astype(dtype)


def _v2(path: Path, dtype: str, cname: str, shuffle: int, blocksize: int, order: str = "C") -> tuple[Path, np.ndarray]:
    data = _data(dtype)
    a = zarr.create_array(path, shape=SHAPE, chunks=(1, 64, 64), dtype=dtype, zarr_format=2, order=order,
                          compressors=numcodecs.Blosc(cname, 5, shuffle, blocksize), fill_value=0)
    a[...] = data
    return path, data


@pytest.mark.parametrize("dtype", ["u1", "<u2", "<f4", "<i8"])
@pytest.mark.parametrize(("cname", "shuffle", "blocksize"), [("lz4", 1, 0), ("zstd", 2, 1024), ("blosclz", 0, 512),
                                                             ("zlib", 1, 2048), ("lz4hc", 2, 0)])
def test_v2_values_equal_zarr_python(tmp_path: Path, dtype: str, cname: str, shuffle: int, blocksize: int) -> None:
    path, _ = _v2(tmp_path / "a.zarr", dtype, cname, shuffle, blocksize)
    z, a = zarr.open_array(path, mode="r"), zl.open(path)
    for sel in SELECTIONS:
        for workers in (1, 3):
            got = a.read(sel, executor=ThreadPoolExecutor(workers))
            assert got.dtype == z.dtype and np.array_equal(got, z[sel]), sel


@pytest.mark.parametrize("layout", ["v2_F", "v3", "v3_sharded"])
def test_other_layouts_equal_zarr_python(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "a.zarr"
    if layout == "v2_F":
        _v2(path, "<u2", "lz4", 1, 1024, order="F")
    else:
        codec = BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=2, blocksize=1024)
        a = zarr.create_array(path, shape=SHAPE, dtype="<u2", zarr_format=3, compressors=[codec], fill_value=0,
                              **({"shards": (1, 96, 80), "chunks": (1, 32, 40)} if layout == "v3_sharded"
                                 else {"chunks": (1, 64, 64)}))
        a[...] = _data("<u2")
    z, a = zarr.open_array(path, mode="r"), zl.open(path)
    for sel in SELECTIONS:
        assert np.array_equal(a.read(sel, executor=ThreadPoolExecutor(2)), z[sel]), sel


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of ``blosc_getitem`` (a part) and of numcodecs' whole-chunk decompress, from now on."""
    seen = {"part": 0, "whole": 0}
    real_part, real_whole = blosc_partial._getitem, numcodecs.blosc.decompress

    def part(*args: Any) -> int:
        seen["part"] += 1
        return int(real_part(*args))

    def whole(*args: Any, **kw: Any) -> Any:
        seen["whole"] += 1
        return real_whole(*args, **kw)

    monkeypatch.setattr(blosc_partial, "_getitem", part)
    monkeypatch.setattr(numcodecs.blosc, "decompress", whole)
    return seen


def test_a_section_decodes_parts_and_a_plane_whole_chunks(tmp_path: Path, calls: dict[str, int]) -> None:
    path, data = _v2(tmp_path / "a.zarr", "<u2", "lz4", 1, 1024)
    a = zl.open(path)
    assert np.array_equal(a.read((slice(None), 37, slice(None)), executor=ThreadPoolExecutor(2)), data[:, 37, :])
    assert calls == {"part": 3 * 2, "whole": 0}  # 3 planes x 2 chunks along x
    # a plane: the upper two chunks whole; the lower two (rows 64-95 of an array of 96) hold 32
    # of their 64 rows, half of each chunk, which is decoded alone
    assert np.array_equal(a.read((1, slice(None), slice(None)), executor=ThreadPoolExecutor(2)), data[1])
    assert calls == {"part": 6 + 2, "whole": 2}
    # the app's reads fill a chunk cache: whole chunks, which later steps of a slider reuse
    got = a.read((slice(None), 37, slice(None)), executor=ThreadPoolExecutor(2), cache=ChunkCache(1 << 20))
    assert np.array_equal(got, data[:, 37, :]) and calls == {"part": 8, "whole": 2 + 6}


@pytest.mark.parametrize("bad", ["truncated", "padded", "garbage_blocks", "other_size"])
def test_bad_frames_fail_as_whole_chunks_do(tmp_path: Path, bad: str) -> None:
    path, data = _v2(tmp_path / "a.zarr", "<u2", "lz4", 1, 1024)
    key = path / "1.0.1"
    raw = bytearray(key.read_bytes())
    if bad == "truncated":
        raw = raw[:len(raw) // 2]
    elif bad == "padded":
        raw += b"\0" * 7
    elif bad == "garbage_blocks":  # the header and its length stand, the blocks do not
        raw[16:] = os.urandom(len(raw) - 16)
    else:  # a valid frame of another size
        raw = bytearray(numcodecs.Blosc("lz4", 5, 1).encode(np.zeros(100, "<u2")))
    key.write_bytes(bytes(raw))
    a = zl.open(path)
    fails: dict[str, list[Any]] = {}
    for name, sel in (("part", (1, 37, slice(None))), ("whole", (1, slice(None), slice(None)))):
        failures: list[Any] = []
        got = a.read(sel, failures=failures, executor=ThreadPoolExecutor(1))
        fails[name] = [(f.key, f.message) for f in failures]
        spoilt = data.copy()
        if failures:
            spoilt[1, 0:64, 64:80] = 0  # the bad chunk's part: the fill value
        assert np.array_equal(got[..., :64], data[sel][..., :64])
        if bad != "garbage_blocks":
            assert np.array_equal(got, spoilt[sel])
    if bad == "garbage_blocks":  # blosc has no checksum: what fails, on either path, is that chunk
        assert all(k == "1.0.1" for k, _ in fails["part"] + fails["whole"]), fails
    else:
        assert fails["part"] == fails["whole"] and len(fails["part"]) == 1 and "1.0.1" in fails["part"][0][0]


def test_hostile_frames_never_crash(tmp_path: Path) -> None:
    """Thousands of damaged frames, most with a header that passes the length check, read by
    ``decode_range`` in a child process: it must end normally (a crash would be a signal)."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    env = {**os.environ, "PYTHONPATH": str(Path(zl.__file__).parents[2])}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=100, env=env)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    done, refused = map(int, r.stdout.split())
    assert done == 4000 and refused > 1000  # many were refused, by the check or by c-blosc


FUZZ = '''
import random, struct
import numpy as np
from numcodecs import Blosc
from zarrview.zarrlib.codecs import blosc_partial
from zarrview.zarrlib.errors import CodecError
rng = random.Random(15)
data = (np.arange(32 * 1024) % 251).astype("<u2")
frames = [bytes(Blosc(c, 5, s, b).encode(data)) for c in ("lz4", "zstd", "blosclz", "zlib")
          for s in (0, 1, 2) for b in (0, 2048)]
out = np.empty(data.nbytes, np.uint8)
refused = 0
for i in range(4000):
    f = bytearray(rng.choice(frames))
    kind = i % 4
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            f[rng.randrange(len(f))] = rng.randrange(256)
    elif kind == 1:
        for _ in range(rng.randint(1, 4)):
            f[rng.randrange(min(len(f), 16 + 4 * 32))] = rng.randrange(256)
    elif kind == 2:
        f = f[:rng.randrange(16, len(f))]
    else:
        k = rng.randrange(16, min(len(f) - 4, 16 + 4 * 32))
        f[k:k + 4] = struct.pack("<i", rng.choice([-1, 2**31 - 1, len(f), rng.randrange(-2**31, 2**31)]))
    if rng.random() < 0.8:
        f[12:16] = struct.pack("<I", len(f))
    start = rng.randrange(0, data.nbytes // 2) * 2
    stop = min(data.nbytes, start + rng.randrange(1, 2048) * 2)
    try:
        refused += not blosc_partial.decode_range(bytes(f), data.nbytes, start, stop, out)
    except CodecError:
        refused += 1
print(4000, refused)
'''


def test_frames_of_other_element_sizes_decode_right() -> None:
    """The range is asked in the frame's own element size (its header's typesize)."""
    data = np.arange(4096, dtype="<u4")
    out = np.empty(data.nbytes, np.uint8)
    for typesize in (1, 2, 4, 8):
        frame = numcodecs.Blosc("lz4", 5, 1, 256).encode(data.view(f"u{typesize}") if typesize != 8 else data.view("u8"))
        assert struct.unpack("<B", frame[3:4])[0] == typesize
        assert blosc_partial.decode_range(frame, data.nbytes, 400, 1208, out)
        assert out[:808].tobytes() == data.view(np.uint8)[400:1208].tobytes()
        assert not blosc_partial.decode_range(frame, data.nbytes + 4, 400, 1208, out)  # another size: refused
    assert not blosc_partial.decode_range(frame, data.nbytes, 402, 1208, out)  # not on an element of 8 bytes
