"""The BloscLZ match-length wrap, shown against the installed c-blosc and refused before it.

The crafted frame is built from the report's description (``blosclz_streams.crafted_frame``):
a long match whose length goes on in 8,421,504 bytes of 0xFF, so its signed 32-bit length
wraps. In a child process, c-blosc (through numcodecs, unguarded) decodes it into a buffer
followed by canary bytes and then a page that may not be touched: the child's exit status
and the canary show whether c-blosc writes past its output. With c-blosc 1.21.7 (numcodecs
0.16) it does: the canary right after the output holds the match's bytes and the child dies
of SIGSEGV at the guard page. One length byte less (the longest length that does not wrap)
is refused by c-blosc cleanly, canary intact: the wrap alone makes the difference.

zarrview refuses the frame, naming the chunk, before any C call: the C entry points are
replaced by functions that fail the test if called, and in a child with them left in place
every read path (whole chunk, one row through ``blosc_getitem``, v2, v3 and an inner chunk
of a shard) ends normally.
Thousands of frames c-blosc wrote itself (every shuffle, clevel, several type and block
sizes, data rich in 0xFF) pass every check, and a token walker written from the decoder's
rules decodes each of their streams to exactly the bytes c-blosc decodes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import google_crc32c
import numcodecs
import numpy as np
import pytest
import zarr
from blosclz_streams import PATTERN, crafted_frame, walk
from numcodecs import blosc
from zarr.codecs import BloscCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.codecs import blosc_partial
from zarrview.zarrlib.codecs.blosc_frame import (
    RUN_SLACK,
    WRAP_RUN,
    check_blosclz_runs,
    check_frame,
    compressed_streams,
)
from zarrview.zarrlib.errors import CodecError

pytestmark = pytest.mark.timeout(240)

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(zl.__file__).parents[2]), str(HERE)])}
#: uint8, 8 MiB: the crafted frame's decoded size. A frame long enough to wrap (8.4 MB of 0xFF)
#: is then within what blosc can store such a chunk as, so a read asks for all of it and reaches
#: the guard (a smaller chunk's frame is refused by its size before it is read)
CHUNK = (2048, 4096)
SHAPE = (2 * CHUNK[0], 2 * CHUNK[1])
#: a row in the second row of chunks, where the crafted chunk is
ROW = CHUNK[0] + 6


def _data() -> np.ndarray:
    return (np.arange(SHAPE[0] * SHAPE[1]) % 256).astype(np.uint8).reshape(SHAPE)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in text.split(".")[:3])


#: no c-blosc 1 release fixes the wrap (up to 1.21.7, the one numcodecs 0.16 bundles)
KNOWN_VULNERABLE = _version(blosc.VERSION_STRING) <= (1, 21, 7)

UNGUARDED = '''
import ctypes, mmap, os, sys
import numpy as np
from numcodecs import blosc
from blosclz_streams import crafted_frame
path, nbytes, ext, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
frame = crafted_frame(nbytes, ext, last)
page = mmap.PAGESIZE
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
os.ftruncate(fd, 3 * page)
m = mmap.mmap(fd, 3 * page)  # shared with the file: the parent reads it after a crash
buf = np.frombuffer(m, np.uint8)
buf[nbytes:] = 0xA5  # the canary: everything after the output
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
assert libc.mprotect(ctypes.addressof(ctypes.c_char.from_buffer(m)) + 2 * page, page, 0) == 0
try:
    blosc.decompress(frame, buf[:nbytes])
    print("decoded", flush=True)
except Exception as e:
    print("refused", e, flush=True)
'''


def _unguarded(tmp_path: Path, ext: int, last: int) -> tuple[int, str, bytes]:
    script, canary = tmp_path / "unguarded.py", tmp_path / f"out-{ext}-{last}.bin"
    script.write_text(UNGUARDED)
    r = subprocess.run([sys.executable, str(script), str(canary), "4096", str(ext), str(last)],
                       capture_output=True, text=True, timeout=120, env=ENV)
    return r.returncode, r.stdout, canary.read_bytes()[4096:4096 + 64]


def test_installed_cblosc_writes_past_its_output_on_the_crafted_stream(tmp_path: Path) -> None:
    rc, said, canary = _unguarded(tmp_path, WRAP_RUN - 1, 254)  # 2**31 - 120: no wrap
    assert rc == 0 and said.startswith("refused") and canary == b"\xa5" * 64, (rc, said, canary[:8])
    rc, said, canary = _unguarded(tmp_path, WRAP_RUN, 119)  # 2**31: wraps to -2**31
    if KNOWN_VULNERABLE:
        assert rc in (-signal.SIGSEGV, -signal.SIGBUS), (rc, said)
        assert canary[:16] == PATTERN * 8  # written past the output, before the guard page stopped it
    else:  # a c-blosc that refuses the wrap: update SECURITY.md
        assert rc == 0 and said.startswith("refused") and canary == b"\xa5" * 64, (rc, said)


def _stores(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    data = _data()
    v2 = zarr.create_array(tmp_path / "v2.zarr", shape=data.shape, chunks=CHUNK, dtype="u1", zarr_format=2,
                           compressors=numcodecs.Blosc("blosclz", 5, 0), fill_value=0)
    v3 = zarr.create_array(tmp_path / "v3.zarr", shape=data.shape, chunks=CHUNK, dtype="u1",
                           compressors=BloscCodec(cname="blosclz", clevel=5, shuffle="noshuffle"), fill_value=0)
    v2[...] = data
    v3[...] = data
    sharded = zarr.create_array(tmp_path / "sharded.zarr", shape=data.shape, chunks=CHUNK, shards=data.shape,
                                dtype="u1", compressors=BloscCodec(cname="blosclz", clevel=5, shuffle="noshuffle"),
                                fill_value=0)
    sharded[...] = data
    frame = crafted_frame(CHUNK[0] * CHUNK[1])
    (tmp_path / "v2.zarr" / "1.0").write_bytes(frame)
    (tmp_path / "v3.zarr" / "c" / "1" / "0").write_bytes(frame)
    _replace_inner_chunk(tmp_path / "sharded.zarr" / "c" / "0" / "0", 2, frame)
    return {"v2": (tmp_path / "v2.zarr", "1.0"), "v3": (tmp_path / "v3.zarr", "c/1/0"),
            "sharded": (tmp_path / "sharded.zarr", "inner chunk [1, 0] in shard c/0/0")}


def _replace_inner_chunk(shard: Path, entry: int, frame: bytes) -> None:
    """The shard (index at the end, its crc32c after it) with one inner chunk's bytes replaced."""
    raw = shard.read_bytes()
    index = np.frombuffer(raw[-4 - 16 * 4:-4], "<u8").reshape(-1, 2).copy()
    chunks = [raw[int(o):int(o + n)] for o, n in index]
    chunks[entry] = frame
    offsets = np.cumsum([0] + [len(c) for c in chunks[:-1]])
    index[:, 0], index[:, 1] = offsets, [len(c) for c in chunks]
    table = index.astype("<u8").tobytes()
    shard.write_bytes(b"".join(chunks) + table + struct.pack("<I", google_crc32c.value(table)))


def test_guard_refuses_the_crafted_chunk_before_any_c_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(real: Callable[..., Any], at: int) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if len(memoryview(args[at])) > WRAP_RUN:  # only the crafted frame is that long
                raise AssertionError("c-blosc was called on the crafted frame")
            return real(*args, **kwargs)
        return call

    parts: list[int] = []
    real_getitem = blosc_partial._getitem

    def getitem(src: int, *args: Any) -> Any:  # blosc_getitem takes the frame's address
        if struct.unpack("<i", ctypes.string_at(src + 12, 4))[0] > WRAP_RUN:
            raise AssertionError("blosc_getitem was called on the crafted frame")
        parts.append(src)
        return real_getitem(src, *args)

    stores = _stores(tmp_path)
    monkeypatch.setattr(blosc, "decompress", refusing(blosc.decompress, 0))
    monkeypatch.setattr(numcodecs.Blosc, "decode", refusing(numcodecs.Blosc.decode, 1))
    if real_getitem is not None:
        monkeypatch.setattr(blosc_partial, "_getitem", getitem)
    for path, key in stores.values():
        a = zl.open(str(path))
        for sel in ((slice(None), slice(None)), (ROW, slice(None)), (ROW, slice(1, 4)),
                    (slice(CHUNK[0], CHUNK[0] + 64), slice(0, 64))):
            with pytest.raises(CodecError) as e:
                a.read(sel)
            assert key in str(e.value) and "0xFF" in str(e.value) and "write past" in str(e.value)
        data = _data()
        for sel in ((slice(0, 64), slice(None)), (ROW, slice(CHUNK[1] + 100, CHUNK[1] + 103))):  # the chunks beside it read
            assert np.array_equal(np.asarray(a.read(sel)), data[sel])
    out = np.empty(4096, np.uint8)
    with pytest.raises(CodecError, match="0xFF"):  # the blosc_getitem path checks first as well
        blosc_partial.decode_range(crafted_frame(4096), 4096, 0, 64, out)
    assert parts or real_getitem is None  # the valid chunks beside it were read in part, through the patch


GUARDED = '''
import sys
import zarrview.zarrlib as zl
from zarrview.zarrlib.errors import CodecError
for path in sys.argv[1:]:
    a = zl.open(path)
    for sel in ((slice(None), slice(None)), (ROW, slice(None)), (ROW, slice(0, 3))):
        try:
            a.read(sel)
            print("read")
        except CodecError as e:
            print(str(e).replace("\\n", " "))
'''


def test_guarded_reads_end_normally_with_cblosc_in_place(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    script = tmp_path / "guarded.py"
    script.write_text(GUARDED.replace("ROW", str(ROW)))
    r = subprocess.run([sys.executable, str(script), *(str(p) for p, _ in stores.values())],
                       capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    assert len(lines) == 9
    for i, (_, key) in enumerate(stores.values()):
        assert all(key in line and "0xFF" in line for line in lines[3 * i:3 * i + 3]), lines


def _bytes(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        return rng.integers(0, 256, size, dtype=np.uint8)
    if kind in ("zeros", "ff"):
        return np.full(size, 0xFF if kind == "ff" else 0, np.uint8)
    if kind == "ramp":
        return (np.arange(size) // 7).astype(np.uint8)
    if kind == "pattern":
        return np.resize(rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8), size)
    if kind == "sparse":
        return np.where(rng.random(size) < 0.02, 0xFF, 0).astype(np.uint8)
    if kind == "ff_runs":  # runs of 0xFF of 3 to 3000 bytes between random bytes
        runs = (np.arange(size) // int(rng.integers(3, 3000))) % 2 == 1
        return np.where(runs, 0xFF, rng.integers(0, 256, size)).astype(np.uint8)
    return np.cumsum(rng.integers(-2, 3, size)).astype(np.uint8)  # smooth


def _frames() -> list[tuple[bytes, np.ndarray]]:
    """3000 frames c-blosc writes with BloscLZ (about 1900 compressed, 45,000 streams), with their data."""
    rng = np.random.default_rng(1705)
    kinds = ["random", "zeros", "ff", "ramp", "pattern", "sparse", "ff_runs", "smooth"]
    dtypes = ["u1", "<u2", "<u4", "<u8", "<f4", "S3", "V12", "V16", "V24"]
    frames = []
    for i in range(3000):
        dt = np.dtype(dtypes[i % len(dtypes)])
        n = int(rng.integers(0, 40000 // dt.itemsize + 1))
        raw = _bytes(kinds[(i // len(dtypes)) % len(kinds)], n * dt.itemsize, rng)
        codec = numcodecs.Blosc("blosclz", int(rng.integers(0, 10)), int(i % 3), [0, 0, 128, 1024, 4096, 65536][i % 6])
        frames.append((bytes(codec.encode(raw.view(dt))), raw))
    return frames


def test_thousands_of_real_blosclz_frames_pass_every_check() -> None:
    streams = compared = 0
    for frame, raw in _frames():
        h = check_frame(frame)
        view = memoryview(frame)
        check_blosclz_runs(view, h, min_length=0)  # the scan long streams get, on every stream
        if h.nbytes == 0 or h.memcpyed:
            continue
        decoded = np.frombuffer(blosc.decompress(frame), np.uint8)
        assert np.array_equal(decoded, raw)
        for offset, length, neblock in compressed_streams(view, h):
            streams += 1
            w = walk(frame[offset:offset + length], neblock, decode=not h.flags & 0x5 and compared < 400)
            assert w.decoded == neblock and w.longest_ff <= neblock // 255 + RUN_SLACK - 32
            if w.output is not None:
                compared += 1
                at = bytes(decoded).find(w.output)  # unshuffled: the stream's bytes appear as they are
                assert at >= 0
    assert streams > 5000 and compared == 400


def test_a_real_stream_longer_than_a_wrap_is_scanned_and_passes() -> None:
    rng = np.random.default_rng(8)
    n = 16 << 20
    words = rng.integers(0, 256, (n // 16, 16), dtype=np.uint8)
    words[1::2] = words[0::2]  # compresses to about 60 %: one stream of about 10 MB
    words[:, 5] = 0xFF
    raw = words.reshape(-1)
    frame = bytes(numcodecs.Blosc("blosclz", 5, 0, n).encode(raw.view("V32")))  # 32-byte items: never split
    h = check_frame(frame)
    long_streams = compressed_streams(memoryview(frame), h, WRAP_RUN)
    assert len(long_streams) == 1 and long_streams[0][1] >= WRAP_RUN
    assert np.array_equal(np.frombuffer(blosc.decompress(frame), np.uint8), raw)
    spoilt = bytearray(frame)
    offset = long_streams[0][0]
    spoilt[offset + 1000:offset + 1000 + WRAP_RUN] = b"\xff" * WRAP_RUN
    with pytest.raises(CodecError, match="bytes of 0xFF in a row"):
        check_frame(bytes(spoilt))


def _header(**fields: int) -> bytes:
    f = {"version": 2, "lz": 1, "flags": 0x10, "typesize": 1, "nbytes": 4096, "blocksize": 4096, "cbytes": 0,
         "start": 20, **fields}
    body = struct.pack("<i", 8) + bytes(8)
    cbytes = f["cbytes"] or 20 + len(body)
    return struct.pack("<BBBBiiii", f["version"], f["lz"], f["flags"], f["typesize"], f["nbytes"], f["blocksize"],
                       cbytes, f["start"]) + body


@pytest.mark.parametrize(("fields", "said"), [
    ({"version": 3}, "format version 3"),
    ({"flags": 0x18}, "reserved bit"),
    ({"typesize": 0}, "type size 0"),
    ({"blocksize": 0}, "block size 0"),
    ({"blocksize": 8192}, "block size 8192"),
    ({"nbytes": -5}, "-5 decoded bytes"),
    ({"flags": 0x12}, "a copied frame"),
    ({"flags": 0xB0}, "unknown compressor 5"),
    ({"lz": 2}, "streams of version 2"),
    ({"start": 12}, "starts outside the frame"),
    ({"start": 30}, "starts outside the frame"),
    ({"blocksize": 1}, "4096 blocks do not fit"),
    ({"cbytes": 100}, "truncated or padded"),
])
def test_header_claims_are_checked_for_every_compressor(fields: dict[str, int], said: str) -> None:
    with pytest.raises(CodecError, match=said):
        check_frame(_header(**fields))
    check_frame(_header())  # the same frame, unspoilt, passes (c-blosc then refuses its garbage stream)
