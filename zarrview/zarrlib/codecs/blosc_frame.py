"""A blosc frame's header and block layout, checked in Python before c-blosc reads any of it.

c-blosc 1.x (the library numcodecs bundles) trusts much of a frame: where its blocks start,
how long each compressed stream is, and, inside BloscLZ streams, the lengths the stream
claims. A frame is refused here, with a ``CodecError``, unless:

- it is exactly as long as its header says (``cbytes``), in the one format version c-blosc 1
  reads (2), with no flag from the future, a known compressor, a type size of 1-255 and a
  block size between 1 and both the decoded size and c-blosc's largest block;
- a plain copy (``memcpyed``) holds exactly the decoded size after the header;
- otherwise every block start lies inside the frame, past the table of starts;
- and, for BloscLZ, no stream holds a run of 0xFF bytes long enough to wrap a match length.

The last rule answers a heap overflow *write* in BloscLZ decompression (c-blosc 1.21, and
c-blosc2's copy of the same code). A match whose length field is 7 continues its length in
bytes that each add their value, and continues while a byte is 0xFF. The sum is a signed
32-bit integer: starting from 6, 8,421,504 bytes of 0xFF and a last byte of 119 or more take
it past 2**31 - 1 (8,421,505 wrap whatever follows). The wrapped length is negative, so the
check ``op + len > op_limit`` passes, and the copy that follows takes the length as a huge
unsigned count and writes gigabytes past the block's output. The output bound is checked
inside the decoder, after it is too late; nothing the caller passes can stop it.

Walking every token of every BloscLZ stream in Python (as the tests do) costs 2 to 45 times what
c-blosc takes to decode it, 2-126 ms for a 1 MiB chunk, so the guard checks what is sufficient
instead (bench/bench_blosc_guard.py: about 3 µs a 1 MiB chunk, a median 1 % of its decode):

- A wrap needs a single run of at least ``WRAP_RUN`` 0xFF bytes inside one stream, so a
  stream shorter than that cannot hold one; real streams are never that long (BloscLZ writes
  a stream no longer than the block it decodes to, and blocks are 8 KiB to a few MiB), and a
  frame shorter than that holds no such stream. Those frames cost the header checks only.
- A longer stream is scanned, with numpy, for ``segment = neblock // 255 + 64`` bytes of 0xFF
  at an offset that is a multiple of ``segment``. In a valid stream a run of 0xFF spans at
  most a literal (32 bytes), one match's control byte and that match's length bytes (its
  length, at most the block's ``neblock`` decoded bytes, over 255), since the byte ending a
  length is below 255 and a literal's control byte is below 32: shorter than ``segment``, so
  it never fills one. A run of ``WRAP_RUN`` bytes is at least twice ``segment`` for every
  block c-blosc accepts (at most ``MAX_BLOCKSIZE``, about 683 MiB: ``segment`` is at most
  2.8 million), so it always fills one. Taking the minimum of each segment costs about a
  millisecond for 10 MB, a tenth of decoding it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CodecError
from .base import Buffer, as_memoryview

HEADER = 16
FORMAT_VERSION = 2
SHUFFLE, MEMCPYED, BITSHUFFLE, RESERVED, DONT_SPLIT = 0x1, 0x2, 0x4, 0x8, 0x10
#: compressor codes (the header's flags >> 5) and the stream version each must carry
COMPRESSORS = {0: "blosclz", 1: "lz4", 2: "snappy", 3: "zlib", 4: "zstd"}
STREAM_VERSION = 1
MAX_TYPESIZE = 255
MAX_BLOCKSIZE = (2**31 - 1 - MAX_TYPESIZE * 4) // 3
#: blocks are split into one stream per byte of the type where the type is at most this big ...
MAX_SPLITS = 16
#: ... and the block holds at least this many elements (the rule c-blosc decodes by)
MIN_SPLIT_ITEMS = 128
#: 0xFF length bytes in one BloscLZ match that can wrap its signed 32-bit length:
#: 6 + 255 * 8_421_504 + 119 + 3 = 2**31
WRAP_RUN = 8_421_504
#: slack over a length's own 0xFF bytes in a valid stream: a literal, a control byte, a far distance
RUN_SLACK = 64
#: a scan takes about this many bytes at a time (whole segments)
_SCAN_PIECE = 1 << 22
#: block tables up to this long are read without numpy (faster for the few blocks of a chunk)
_SMALL_TABLE = 64


@dataclass(frozen=True)
class BloscHeader:
    version: int
    stream_version: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int

    @property
    def compressor(self) -> str:
        return COMPRESSORS.get(self.flags >> 5, f"unknown compressor {self.flags >> 5}")

    @property
    def memcpyed(self) -> bool:
        return bool(self.flags & MEMCPYED)

    @property
    def nblocks(self) -> int:
        return -(-self.nbytes // self.blocksize)

    @property
    def leftover(self) -> int:
        return self.nbytes % self.blocksize

    def splits(self, block_bytes: int, leftover_block: bool) -> int:
        """How many streams c-blosc decodes a block from (``blosc_d``'s rule)."""
        if (not self.flags & DONT_SPLIT and self.typesize <= MAX_SPLITS
                and self.blocksize // self.typesize >= MIN_SPLIT_ITEMS and not leftover_block):
            return self.typesize
        return 1


def read_header(data: Buffer) -> BloscHeader:
    view = as_memoryview(data).cast("B")
    if len(view) < HEADER:
        raise CodecError(f"blosc: {len(view)} bytes cannot hold a blosc frame")
    return BloscHeader(*_HEAD.unpack_from(view))


_HEAD = struct.Struct("<BBBBiii")


def check_frame(data: Buffer) -> BloscHeader:
    """The frame's header, once every claim c-blosc would act on is checked (see the module)."""
    view = as_memoryview(data).cast("B")
    h = read_header(view)
    if h.cbytes != len(view):
        raise CodecError(f"blosc: frame truncated or padded (header says {h.cbytes} bytes, found {len(view)})")
    if h.nbytes == 0:
        return h  # an empty buffer: c-blosc reads nothing past the header
    if h.nbytes < 0:
        raise CodecError(f"blosc: the header declares {h.nbytes} decoded bytes")
    if h.version != FORMAT_VERSION:
        raise CodecError(f"blosc: frame format version {h.version}; c-blosc 1 reads version {FORMAT_VERSION}")
    if h.flags & RESERVED:
        raise CodecError(f"blosc: header flags {h.flags:#04x} set a reserved bit")
    if not 1 <= h.typesize <= MAX_TYPESIZE:
        raise CodecError(f"blosc: type size {h.typesize}")
    if not 0 < h.blocksize <= min(h.nbytes, MAX_BLOCKSIZE):
        raise CodecError(f"blosc: block size {h.blocksize} for {h.nbytes} decoded bytes")
    if h.memcpyed:
        if h.cbytes != h.nbytes + HEADER:
            raise CodecError(f"blosc: a copied frame of {h.nbytes} bytes is {h.cbytes} bytes long")
        return h
    if h.flags >> 5 not in COMPRESSORS or h.stream_version != STREAM_VERSION:
        raise CodecError(f"blosc: {h.compressor} streams of version {h.stream_version}")
    table_end = HEADER + 4 * h.nblocks
    if table_end > h.cbytes:
        raise CodecError(f"blosc: {h.nblocks} blocks do not fit a frame of {h.cbytes} bytes")
    if h.nblocks <= _SMALL_TABLE:
        starts: Any = struct.unpack_from(f"<{h.nblocks}i", view, HEADER)
    else:
        starts = block_starts(view, h)
    if min(starts) < table_end or max(starts) > h.cbytes - 4:
        raise CodecError(f"blosc: a block starts outside the frame ({h.cbytes} bytes, blocks from {table_end})")
    if h.compressor == "blosclz" and h.cbytes - table_end >= WRAP_RUN:
        check_blosclz_runs(view, h)
    return h


def block_starts(view: memoryview, h: BloscHeader) -> np.ndarray:
    """The table of block offsets after the header (int32, as stored)."""
    return np.frombuffer(view, "<i4", h.nblocks, HEADER)


def compressed_streams(view: memoryview, h: BloscHeader, min_length: int = 0) -> list[tuple[int, int, int]]:
    """(offset, length, decoded size) of each compressed stream at least ``min_length`` long
    (a stream as long as its decoded size is a plain copy, and left out).

    The streams of the full blocks are followed a split at a time across all blocks at once
    (at most 16 numpy steps, however many blocks), the last block's alone."""
    if h.memcpyed or h.nbytes <= 0:
        return []
    raw = np.frombuffer(view, np.uint8)
    starts = block_starts(view, h)
    full = h.nblocks - (1 if h.leftover else 0)
    found: list[tuple[int, int, int]] = []
    layouts: list[tuple[np.ndarray, int, int]] = []
    if full:
        nsplits = h.splits(h.blocksize, False)
        layouts.append((starts[:full].astype(np.int64), nsplits, h.blocksize // nsplits))
    if h.leftover:
        layouts.append((starts[full:].astype(np.int64), 1, h.leftover))
    for offsets, nsplits, neblock in layouts:
        for _ in range(nsplits):
            if int(offsets.max()) > h.cbytes - 4:
                raise CodecError(f"blosc: a stream starts outside the frame ({h.cbytes} bytes)")
            lengths = raw[offsets].astype(np.int64)
            for k in (1, 2, 3):
                lengths |= raw[offsets + k].astype(np.int64) << (8 * k)
            lengths = np.where(lengths >= 2**31, lengths - 2**32, lengths)
            offsets = offsets + 4
            if int(lengths.min()) < 0 or int((offsets + lengths).max()) > h.cbytes:
                raise CodecError(f"blosc: a stream runs past the frame's end ({h.cbytes} bytes)")
            for i in np.flatnonzero((lengths >= min_length) & (lengths != neblock)):
                found.append((int(offsets[i]), int(lengths[i]), neblock))
            offsets = offsets + lengths
    return found


def holds_run(data: np.ndarray, segment: int, value: int = 0xFF) -> bool:
    """Whether some ``segment`` bytes of ``data`` at a multiple of ``segment`` are all ``value``:
    true of every run of at least twice ``segment - 1`` bytes, false of every run shorter than
    ``segment`` (a few MiB are looked at a time)."""
    step = max(1, _SCAN_PIECE // segment) * segment
    whole = len(data) - len(data) % segment
    for lo in range(0, whole, step):
        rows = data[lo:min(lo + step, whole)].reshape(-1, segment)
        if (rows.min(axis=1) == value).any():
            return True
    return False


def check_blosclz_runs(view: memoryview, h: BloscHeader, min_length: int = WRAP_RUN) -> None:
    """Refuse a BloscLZ stream with a run of 0xFF no valid match needs (see the module); only
    streams at least ``min_length`` long are scanned (shorter ones cannot wrap a length)."""
    raw = np.frombuffer(view, np.uint8)
    for offset, length, neblock in compressed_streams(view, h, min_length):
        segment = neblock // 255 + RUN_SLACK
        if holds_run(raw[offset:offset + length], segment):
            raise CodecError(f"blosc: a BloscLZ stream holds {segment} or more bytes of 0xFF in a row, more than "
                             f"a match in a block of {neblock} bytes needs; a length that long wraps and c-blosc "
                             "would write past its output")
