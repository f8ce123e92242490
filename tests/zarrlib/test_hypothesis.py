"""Property tests: arrays of random shape, chunking, dtype and layout written by zarr-python 3
(format 3, optionally sharded, or format 2) read back through zarrlib with random selections,
compared against numpy indexing of the data that was written.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass

import numcodecs
import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)

import zarrview.zarrlib as zl
from _bad_helpers import assert_same_values

pytestmark = pytest.mark.timeout(120)

# CI must be reproducible: it replays a fixed sequence of examples; local runs explore anew.
SETTINGS = settings(max_examples=40, deadline=None, derandomize=bool(os.environ.get("CI")),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


# ----------------------------------------------------------------------------------------------
# Layouts


@dataclass
class Layout:
    shape: tuple[int, ...]
    chunks: tuple[int, ...]          # inner chunks
    shards: tuple[int, ...] | None
    dtype: np.dtype
    zarr_format: int
    compressor: str | None
    big_endian: bool = False
    order: str = "C"                 # v2 memory order
    separator: str = "/"             # chunk key separator
    key_encoding: str = "default"    # v3: default / v2
    transpose: tuple[int, ...] | None = None
    crc: bool = False
    index_location: str = "end"      # sharded only
    index_crc: bool = True           # sharded only
    fill_value: object = 0

    @property
    def outer_chunks(self) -> tuple[int, ...]:
        return self.shards if self.shards is not None else self.chunks


def _chunk_len(draw, size: int, max_chunks: int) -> int:
    """A chunk length giving at most ``max_chunks`` chunks along a dimension of ``size``."""
    n = draw(st.integers(1, max_chunks))
    base = max(1, math.ceil(size / n))
    return base + draw(st.integers(0, 2))


@st.composite
def layouts(draw, *, sharded: bool | None = None, zarr_format: int | None = None,
            dtypes=DTYPES, max_side: int = 7, min_side: int = 0) -> Layout:
    fmt = zarr_format if zarr_format is not None else draw(st.sampled_from([3, 2]))
    if sharded:
        fmt = 3
    ndim = draw(st.integers(1 if sharded else 0, 4))
    side = max_side if ndim <= 2 else max(3, max_side - 2)
    shape = tuple(draw(st.lists(st.integers(min_side, side), min_size=ndim, max_size=ndim)))
    max_chunks = 4 if ndim <= 2 else 2
    chunks = tuple(_chunk_len(draw, s, max_chunks) for s in shape)
    shards = None
    use_shards = sharded if sharded is not None else (fmt == 3 and ndim > 0 and draw(st.booleans()))
    if use_shards:
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    compressor = draw(st.sampled_from([None, "zstd", "gzip", "blosc"]))
    big = dtype.itemsize > 1 and draw(st.booleans())
    lay = Layout(shape=shape, chunks=chunks, shards=shards, dtype=dtype, zarr_format=fmt,
                 compressor=compressor, big_endian=big)
    if fmt == 2:
        lay.order = draw(st.sampled_from("CF"))
        lay.separator = draw(st.sampled_from("./"))
    else:
        lay.key_encoding = draw(st.sampled_from(["default", "v2"]))
        lay.separator = draw(st.sampled_from("./"))
        if ndim >= 2 and draw(st.booleans()):
            lay.transpose = tuple(draw(st.permutations(range(ndim))))
        lay.crc = draw(st.booleans())
        if shards is not None:
            lay.index_location = draw(st.sampled_from(["end", "start"]))
            lay.index_crc = draw(st.booleans())
    lay.fill_value = draw(hnp.from_dtype(dtype))
    return lay


def _compressor(lay: Layout):
    if lay.zarr_format == 2:
        return {None: None, "zstd": numcodecs.Zstd(level=1), "gzip": numcodecs.GZip(level=1),
                "blosc": numcodecs.Blosc(cname="lz4", clevel=1)}[lay.compressor]
    out = {None: [], "zstd": [ZstdCodec(level=1)], "gzip": [GzipCodec(level=1)],
           "blosc": [BloscCodec(cname="lz4", clevel=1)]}[lay.compressor]
    if lay.crc:
        out = out + [Crc32cCodec()]
    return out or None


def create(path: str, lay: Layout) -> zarr.Array:
    kwargs: dict = dict(store=path, shape=lay.shape, chunks=lay.chunks, zarr_format=lay.zarr_format,
                        compressors=_compressor(lay), fill_value=lay.fill_value, overwrite=True)
    if lay.zarr_format == 2:
        kwargs["dtype"] = lay.dtype.newbyteorder(">" if lay.big_endian else "<") \
            if lay.dtype.itemsize > 1 else lay.dtype
        kwargs["order"] = lay.order
        kwargs["chunk_key_encoding"] = {"name": "v2", "separator": lay.separator}
    else:
        kwargs["dtype"] = lay.dtype
        serializer = BytesCodec(endian="big" if lay.big_endian else "little") \
            if lay.dtype.itemsize > 1 else BytesCodec(endian=None)
        kwargs["chunk_key_encoding"] = {"name": lay.key_encoding, "separator": lay.separator}
        transpose = [TransposeCodec(order=lay.transpose)] if lay.transpose is not None else []
        if lay.shards is None:
            kwargs["serializer"] = serializer
            if transpose:
                kwargs["filters"] = transpose
        else:
            # the sharding codec spelled out, so the inner pipeline and index layout vary too
            kwargs["chunks"] = lay.shards
            kwargs["serializer"] = ShardingCodec(
                chunk_shape=lay.chunks,
                codecs=[*transpose, serializer, *(kwargs.pop("compressors") or [])],
                index_codecs=[BytesCodec(), *([Crc32cCodec()] if lay.index_crc else [])],
                index_location=lay.index_location)
            kwargs["compressors"] = None
    return zarr.create_array(**kwargs)


def write(path: str, lay: Layout, data: np.ndarray) -> None:
    a = create(path, lay)
    if data.size:
        a[...] = data


# ----------------------------------------------------------------------------------------------
# Selections


def _slices(n: int):
    bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
    step = st.one_of(st.none(), st.integers(1, 4))
    return st.builds(slice, bound, bound, step)


def _item(n: int):
    if n == 0:
        return _slices(n)
    return st.one_of(st.integers(-n, n - 1), _slices(n))


@st.composite
def selections(draw, shape: tuple[int, ...]):
    items = [draw(_item(n)) for n in shape]
    if draw(st.booleans()):
        # leading items, Ellipsis, trailing items
        a = draw(st.integers(0, len(items)))
        b = draw(st.integers(0, len(items) - a))
        sel = items[:a] + [Ellipsis] + (items[len(items) - b:] if b else [])
    else:
        sel = items[: draw(st.integers(0, len(items)))]
    if len(sel) == 1 and draw(st.booleans()):
        return sel[0]
    return tuple(sel)


def check_read(a, expected: np.ndarray, sel) -> None:
    got = a[sel]
    assert isinstance(got, np.ndarray), type(got)
    assert_same_values(got, np.asarray(expected[sel]))


def check_metadata(a, lay: Layout) -> None:
    assert a.kind == "array"
    assert a.zarr_format == lay.zarr_format
    assert tuple(a.shape) == lay.shape
    assert np.dtype(a.dtype).str[1:] == lay.dtype.str[1:]
    assert tuple(a.chunks) == lay.chunks
    if lay.shards is None:
        assert a.shards is None
    else:
        assert tuple(a.shards) == lay.shards
    fv = np.asarray(a.fill_value, dtype=lay.dtype)
    assert_same_values(fv, np.asarray(lay.fill_value, dtype=lay.dtype))


# ----------------------------------------------------------------------------------------------
# Tests


@SETTINGS
@given(st.data())
def test_random_layout_random_selections(data):
    lay = data.draw(layouts(), label="layout")
    values = data.draw(hnp.arrays(lay.dtype, lay.shape), label="values")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.zarr")
        write(path, lay, values)
        a = zl.open(path)
        check_metadata(a, lay)
        assert_same_values(a[...], values)
        for _ in range(data.draw(st.integers(1, 6), label="n_selections")):
            sel = data.draw(selections(lay.shape), label="selection")
            check_read(a, values, sel)


@SETTINGS
@given(st.data())
def test_sharded_layouts(data):
    lay = data.draw(layouts(sharded=True), label="layout")
    values = data.draw(hnp.arrays(lay.dtype, lay.shape), label="values")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.zarr")
        write(path, lay, values)
        a = zl.open(path)
        check_metadata(a, lay)
        assert_same_values(a[...], values)
        for _ in range(data.draw(st.integers(1, 6), label="n_selections")):
            check_read(a, values, data.draw(selections(lay.shape), label="selection"))


@SETTINGS
@given(st.data())
def test_array_inside_group(data):
    """The same, but the array is a member of a group, opened through the group."""
    lay = data.draw(layouts(max_side=5), label="layout")
    values = data.draw(hnp.arrays(lay.dtype, lay.shape), label="values")
    name = data.draw(st.sampled_from(["x", "data", "a b", "ünïcode", "日本"]), label="name")
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "g.zarr")
        zarr.open_group(root, mode="w", zarr_format=lay.zarr_format)
        write(os.path.join(root, name), lay, values)
        g = zl.open(root)
        assert g.kind == "group"
        assert [m.name for m in g.members()] == [name]
        a = g[name]
        assert a.path == "/" + name and a.name == name
        check_metadata(a, lay)
        check_read(a, values, data.draw(selections(lay.shape), label="selection"))


@SETTINGS
@given(st.data())
def test_missing_chunks_read_fill_value(data):
    lay = data.draw(layouts(dtypes=["uint8", "int16", "int64", "float32", "float64", "complex64",
                                    "bool", "uint64"], min_side=1), label="layout")
    values = data.draw(hnp.arrays(lay.dtype, lay.shape), label="values")
    fill = np.asarray(lay.fill_value, dtype=lay.dtype)
    grid = [math.ceil(s / c) for s, c in zip(lay.shape, lay.chunks)]
    all_chunks = list(np.ndindex(*grid))
    written = data.draw(st.lists(st.sampled_from(all_chunks), unique=True,
                                 max_size=max(0, len(all_chunks) - 1)), label="written")
    expected = np.full(lay.shape, fill, dtype=lay.dtype)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.zarr")
        arr = create(path, lay)
        for idx in written:
            region = tuple(slice(i * c, min((i + 1) * c, s))
                           for i, c, s in zip(idx, lay.chunks, lay.shape))
            arr[region] = values[region]
            expected[region] = values[region]
        n_files = sum(len(fs) for _, _, fs in os.walk(path))
        meta_files = 2 if lay.zarr_format == 2 else 1  # .zarray + .zattrs / zarr.json
        n_outer = math.prod(math.ceil(s / c) for s, c in zip(lay.shape, lay.outer_chunks))
        assert n_files - meta_files < n_outer or lay.shards is not None
        a = zl.open(path)
        assert_same_values(a[...], expected)
        for _ in range(3):
            check_read(a, expected, data.draw(selections(lay.shape), label="selection"))


@SETTINGS
@given(lay=layouts(max_side=6))
def test_never_written_array_is_all_fill(lay):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.zarr")
        create(path, lay)
        a = zl.open(path)
        expected = np.full(lay.shape, np.asarray(lay.fill_value, dtype=lay.dtype), dtype=lay.dtype)
        assert_same_values(a[...], expected)
