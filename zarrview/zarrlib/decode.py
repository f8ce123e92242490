"""Decoding one chunk's bytes and placing its part of the selection in the output.

The common case (raw elements behind zstd or blosc) decodes straight into a buffer the
worker thread reuses for every chunk, so a read allocates (and faults in) no memory per
chunk; everything else goes through the array's codec pipeline. A chunk whose decoded size
is over the bound on one chunk is refused here, named, before any buffer is sized for it.

Chunks put in a cache outlive the read, so none may be a view of a reused buffer.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import numpy as np

from .cache import ChunkCache
from .codecs import blosc_partial
from .codecs.direct import DirectDecoder, direct_decoder
from .codecs.libzstd import prefix_decoder
from .codecs.zstd import frame_content_size
from .errors import CodecError, ZarrError
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .sink import ChunkSink
from .storage.base import Scratch
from .storage.byte_request import CHUNK_BOUND, Bound

def chunk_bound(meta: ArrayMetadata) -> Bound | None:
    """The most bytes one read chunk of ``meta`` is stored as, where its codecs bound it and the
    bound is under the store's own (a rectilinear grid's largest chunk bounds them all)."""
    most = meta.read_pipeline.max_stored_size(meta.read_spec())
    return None if most is None or most >= limits().object_bytes else Bound(most, CHUNK_BOUND)


def chunk_name(meta: ArrayMetadata, path: str, key: str, coords: tuple[int, ...]) -> str:
    """How error messages name a chunk: by key, or by position in its shard."""
    if meta.shard_layout is None:
        return f"chunk {key} of {path}"
    return f"inner chunk {list(coords)} in shard {key} of {path}"


_MAX_DIRECT = 1 << 30  # chunks larger than this are not worth a per-thread scratch buffer
_SHAPES = 1024  # direct decoders kept per array, one per decoded shape of a rectilinear grid
#: a blosc chunk's part is decoded alone (its blocks only) when it spans at most 1/MAX_PART of
#: the chunk, in store order (an XZ section's row of each chunk: ``codecs/blosc_partial``)
MAX_PART = 2
#: parts up to this size are copied holding the GIL (see ``put``)
SMALL_COPY = 1 << 16
#: a zstd chunk is decoded only as far as its part reaches when that leaves at least this much
#: undecoded: zstd's blocks hold 128 KiB of output each, and a shorter tail saves no block
#: (while decoding a frame piece by piece costs about 5 % more than in one call)
PREFIX_SAVES = 128 << 10
#: a blosc chunk read in part costs about this share of reading it whole (its stored bytes are
#: read whole, one block is decoded: 30 µs of 550 µs for a 512 KiB chunk, plus the read), which
#: sizes the workers a read of such parts runs on
PART_WORK = 8


def beyond_unicode(text: np.ndarray) -> int | None:
    """The largest code point of fixed-length text ``text`` (numpy ``U``) when it is above
    U+10FFFF, else None; read as the integers numpy stores, in the array's byte order."""
    order = "=" if text.dtype.byteorder in "=|" else text.dtype.byteorder
    codes = np.ascontiguousarray(text).view(np.dtype(f"{order}u4"))
    high = int(codes.max())
    return high if high > 0x10FFFF else None


def put(out: np.ndarray | ChunkSink, out_index: tuple[slice, ...], chunk: np.ndarray,
        inner: tuple[slice, ...]) -> None:
    """``out[out_index] = chunk[inner]``, without letting go of the GIL for a small contiguous part.

    numpy releases the GIL around a copy of more than a few hundred elements; taking it back
    while other decode workers hold it costs a sleep and a wake-up. The one-row parts of an XZ
    read are 1 KiB per chunk: a memoryview copy does the same memcpy holding the GIL, over
    sooner than a hand-off.
    """
    src = chunk[inner]
    if isinstance(out, np.ndarray) and isinstance(src, np.ndarray) and src.nbytes <= SMALL_COPY and src.flags.c_contiguous \
            and not src.dtype.hasobject:  # object arrays hold references: numpy must copy those
        dst = out[out_index]
        if isinstance(dst, np.ndarray) and dst.flags.c_contiguous and dst.dtype == src.dtype and dst.shape == src.shape:
            try:
                dst.data.cast("B")[:] = src.data.cast("B")
                return
            except (TypeError, ValueError, NotImplementedError, BufferError):  # a dtype without a buffer format
                pass
    out[out_index] = src


def part_layout(direct: DirectDecoder, inner: tuple[slice, ...]
                ) -> tuple[int, int, tuple[int, ...], tuple[int, ...]] | None:
    """Where the part ``inner`` of a C-order chunk lies in its bytes: its first byte, the byte
    after its last, and its shape and byte strides; None for a part that is empty or runs backwards."""
    size = direct.dtype.itemsize
    stride = size
    first = last = 0
    counts, steps = [], []
    for dim, s in zip(reversed(direct.shape), reversed(inner)):
        start, stop, step = s.indices(dim)
        n = len(range(start, stop, step))
        if n <= 0 or step <= 0:
            return None
        first += start * stride
        last += (start + (n - 1) * step) * stride
        counts.append(n)
        steps.append(step * stride)
        stride *= dim
    return first, last + size, tuple(reversed(counts)), tuple(reversed(steps))


def blosc_part(direct: DirectDecoder, inner: tuple[slice, ...]) -> tuple[int, int, tuple[int, ...], tuple[int, ...]] | None:
    """Where the part ``inner`` lies in a C-order blosc chunk's bytes (``part_layout``), where
    it is small enough to be decoded from its blocks alone (at most ``1 / MAX_PART`` of the chunk)."""
    if direct.order != "C" or not blosc_partial.available():
        return None
    layout = part_layout(direct, inner)
    if layout is None or (layout[1] - layout[0]) * MAX_PART > direct.nbytes:
        return None
    return layout


def prefix_end(direct: DirectDecoder, inner: tuple[slice, ...]) -> int | None:
    """The end of the part ``inner`` in a C-order zstd chunk's bytes, where decoding the frame
    only that far leaves at least one block undecoded; else None."""
    if direct.nbytes <= PREFIX_SAVES:  # no part of it can leave a whole block undecoded
        return None
    if direct.order != "C" or prefix_decoder() is None or direct.dtype.kind in "OU":
        return None
    layout = part_layout(direct, inner)
    if layout is None or direct.nbytes - layout[1] < PREFIX_SAVES:
        return None
    return layout[1]


def part_of(direct: DirectDecoder, data: Any, inner: tuple[slice, ...], flat: np.ndarray) -> np.ndarray | None:
    """The part ``inner`` of a C-order blosc chunk, decoding only the blocks that hold it (into
    ``flat``); None where it is over ``MAX_PART`` of the chunk or cannot be had that way (then
    the whole chunk is decoded). A frame that is not what it should be raises ``CodecError``."""
    layout = blosc_part(direct, inner)
    if layout is None:
        return None
    first, stop, counts, steps = layout
    try:
        if not blosc_partial.decode_range(data, direct.nbytes, first, stop, flat):
            return None
    except CodecError:
        return None  # the whole-chunk path names it
    return np.ndarray(counts, direct.dtype, flat, 0, steps)


def prefix_of(direct: DirectDecoder, data: Any, inner: tuple[slice, ...], flat: np.ndarray,
              chunk: np.ndarray | None) -> np.ndarray | None:
    """The C-order zstd chunk seen whole over ``flat`` with only the bytes up to the end of its
    part ``inner`` decoded (the rest is stale: only ``inner`` may be read); None where that
    would not save a block or cannot be had that way (the whole chunk is then decoded)."""
    end = prefix_end(direct, inner)
    prefix = prefix_decoder()
    if end is None or prefix is None or frame_content_size(data) != direct.nbytes:
        return None  # a frame of another declared size is the general pipeline's to name
    prefix(data, flat[:end])
    return chunk if chunk is not None else direct.view(flat[:direct.nbytes])


class Buffers:
    """One thread's reusable buffers: for stored bytes (``raw``), for a decoded chunk (``flat``),
    and ``flat`` seen as a chunk, made once rather than per chunk."""

    __slots__ = ("raw", "flat", "chunk")

    def __init__(self, raw: Scratch, decoder: ChunkDecoder) -> None:
        self.raw = raw
        self.flat = np.empty(decoder.scratch_nbytes, np.uint8)
        self.chunk = decoder.direct.view(self.flat) if decoder.direct is not None else None


class ChunkDecoder:
    """Decodes one array's chunks; holds what the per-chunk path would otherwise recompute."""

    def __init__(self, meta: ArrayMetadata, path: str) -> None:
        self.meta = meta
        self.path = path
        #: a chunk whose decoded size is over the bound cannot be decoded: each read of one
        #: fails with this size named (chunks never stored still read as the fill value)
        #: (rectilinear: the largest chunk's; each chunk is then checked against the bound alone)
        self.chunk_nbytes = meta.read_spec().nbytes
        self.grid = meta.read_grid
        over = self.chunk_nbytes > limits().chunk_bytes
        self.too_large = over and self.grid is None
        direct = None if over else direct_decoder(meta.read_pipeline, meta.read_spec())
        self.direct = direct if direct is not None and direct.nbytes <= _MAX_DIRECT else None
        #: bytes of the per-thread buffer the direct path decodes into
        self.scratch_nbytes = self.direct.nbytes if self.direct is not None else 0
        #: a rectilinear grid's chunks by decoded shape: the direct decoder of each shape
        self._shaped: dict[tuple[int, ...], DirectDecoder | None] = {}

    def work_nbytes(self, inner: tuple[slice, ...], cached: bool) -> int:
        """About the decoded bytes a chunk whose part ``inner`` is read costs, for sizing a read's
        workers: a whole chunk, an eighth of one for a blosc part, the prefix for a zstd one."""
        direct = self.direct
        if cached or direct is None or self.grid is not None:
            return self.chunk_nbytes
        part = blosc_part(direct, inner) if direct.blosc_frame else None
        if part is not None:
            return max(part[1] - part[0], direct.nbytes // PART_WORK)
        end = prefix_end(direct, inner) if direct.zstd_frame else None
        return self.chunk_nbytes if end is None else end

    def place(self, data: Any, key: str, coords: tuple[int, ...], inner: tuple[slice, ...],
              out_index: tuple[slice, ...], out: np.ndarray | ChunkSink, bufs: Buffers, cache: ChunkCache | None,
              cache_key: Hashable) -> None:
        """Decode ``data`` and copy the selected part (``inner``) to ``out[out_index]``."""
        if self.grid is None:
            if self.too_large:
                self._refuse(key, coords, self.meta.read_shape, self.chunk_nbytes)
            direct, view = self.direct, bufs.chunk
        else:
            direct, view = self._direct_for(key, coords), None
        if direct is not None:
            if cache is None and direct.blosc_frame and (part := part_of(direct, data, inner, bufs.flat)) is not None:
                self._check_text(part, key, coords)
                put(out, out_index, part, tuple(slice(None) for _ in inner))
                return
            if cache is None and direct.zstd_frame:
                try:
                    whole = prefix_of(direct, data, inner, bufs.flat, view)
                except CodecError as e:
                    raise type(e)(f"{chunk_name(self.meta, self.path, key, coords)}: {e}") from e
                if whole is not None:
                    put(out, out_index, whole, inner)
                    return
            if cache is not None:
                target = np.empty(direct.nbytes, np.uint8)
            else:
                target = bufs.flat if view is not None else bufs.flat[:direct.nbytes]
            try:
                chunk = direct.decode_to(data, target, view if cache is None else None)
            except CodecError as e:
                raise type(e)(f"{chunk_name(self.meta, self.path, key, coords)}: {e}") from e
            if chunk is not None:
                self._check_text(chunk, key, coords)
                if cache is not None:
                    cache.put(cache_key, chunk if chunk.base is target else chunk.copy())
                put(out, out_index, chunk, inner)
                return
        chunk = self.decode(data, key, coords)
        self._check_text(chunk, key, coords)
        if cache is not None:  # cached chunks outlive this read: none may alias the scratch buffer
            cache.put(cache_key, chunk.copy() if bufs.raw.holds(chunk) else chunk)
        put(out, out_index, chunk, inner)

    def _check_text(self, chunk: np.ndarray, key: str, coords: tuple[int, ...]) -> None:
        """Fixed-length text holds code points, each at most U+10FFFF: a corrupt chunk's larger
        ones make strings that Python cannot build (SystemError in ``tolist``) or builds broken."""
        if chunk.dtype.kind != "U" or not chunk.size:
            return
        high = beyond_unicode(chunk)
        if high is not None:
            raise CodecError(f"{chunk_name(self.meta, self.path, key, coords)}: the code point {high:#x} of its text "
                             "is beyond Unicode (at most 0x10ffff): the chunk is corrupt")

    def _refuse(self, key: str, coords: tuple[int, ...], shape: tuple[int, ...], nbytes: int) -> None:
        raise CodecError(f"{chunk_name(self.meta, self.path, key, coords)}: the chunk shape "
                         f"{list(shape)} decodes to {human(nbytes)}, more than the "
                         f"{human(limits().chunk_bytes)} allowed for one chunk")

    def _direct_for(self, key: str, coords: tuple[int, ...]) -> DirectDecoder | None:
        """A rectilinear chunk's direct decoder (its shape's), refused when over the bound."""
        assert self.grid is not None
        shape = self.grid.chunk_shape(coords)
        try:
            return self._shaped[shape]
        except KeyError:
            pass
        nbytes = math.prod(shape) * self.meta.dtype.itemsize
        if nbytes > limits().chunk_bytes:
            self._refuse(key, coords, shape, nbytes)
        direct = None if self.direct is None else replace(self.direct, shape=shape, nbytes=nbytes)
        if len(self._shaped) >= _SHAPES:
            self._shaped.clear()
        self._shaped[shape] = direct
        return direct

    def decode(self, data: Any, key: str, coords: tuple[int, ...]) -> np.ndarray:
        """One chunk through the array's codec pipeline; any failure is a CodecError naming it."""
        spec = self.meta.read_spec()
        if self.grid is not None:
            spec = spec.with_shape(self.grid.chunk_shape(coords))
        where = chunk_name(self.meta, self.path, key, coords)
        try:
            arr = self.meta.read_pipeline.decode(data, spec)
        except CodecError as e:
            raise type(e)(f"{where}: {e}") from e
        except ZarrError as e:
            raise CodecError(f"{where}: {e}") from e
        except Exception as e:  # a codec library failing in an unforeseen way is still a bad chunk
            raise CodecError(f"{where}: {type(e).__name__}: {e}") from e
        if arr.shape != spec.shape:
            raise CodecError(f"{where}: decoded shape {arr.shape}, expected {spec.shape}")
        return arr
