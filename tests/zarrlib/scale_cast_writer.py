"""Writes arrays through zarr-python's ``scale_offset`` and ``cast_value`` codecs (run in a 3.12
venv with zarr 3.4.2 and cast-value-rs), and what zarr-python reads back from each.

Usage: python scale_cast_writer.py OUT_FOLDER

OUT_FOLDER/s.zarr holds one array per case; OUT_FOLDER/<case>.npy is zarr-python's read of it.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import zarr
from zarr.codecs import BytesCodec, CastValue, ScaleOffset, ShardingCodec, ZstdCodec

warnings.simplefilter("ignore")
out = os.path.abspath(sys.argv[1])
root = zarr.open_group(os.path.join(out, "s.zarr"), mode="w", zarr_format=3)
rng = np.random.default_rng(3)


def case(name, data, filters, *, fill=0, chunks=None, shards=None, serializer="auto", compressors="auto",
         written=None):
    arr = root.create_array(name, shape=data.shape, dtype=data.dtype, chunks=chunks or data.shape, shards=shards,
                            filters=filters, fill_value=fill, serializer=serializer, compressors=compressors)
    region = written if written is not None else tuple(slice(None) for _ in data.shape)
    arr[region] = data[region]
    np.save(os.path.join(out, f"{name}.npy"), arr[...])


floats = (rng.uniform(10, 100, (13, 17))).astype("f4")
case("f4_to_u1", floats, [ScaleOffset(offset=10, scale=2.5), CastValue(data_type="uint8", out_of_range="clamp")],
     fill=10.0, chunks=(5, 6))
case("f4_scale_only", floats, [ScaleOffset(offset=5, scale=0.1)], chunks=(4, 17))
u16 = rng.integers(1000, 1256, (9, 11)).astype("u2")
case("u2_range", u16, [ScaleOffset(offset=1000), CastValue(data_type="uint8")], fill=1000, chunks=(4, 4))
f64 = rng.uniform(0, 2540, (10, 12))
f64[2, 3] = np.nan
f64[7, :5] = np.nan
case("f8_nan_map", f64, [ScaleOffset(offset=-10, scale=0.1),
                         CastValue(data_type="uint8", rounding="nearest-even",
                                   scalar_map={"encode": [("NaN", 0)], "decode": [(0, "NaN")]})],
     fill="NaN", chunks=(4, 5), written=(slice(0, 8), slice(None)))
i16 = rng.integers(-3000, 3000, (8, 8)).astype("i2")
case("i2_wrap", i16, [CastValue(data_type="int8", out_of_range="wrap")], chunks=(3, 8))
case("f8_towards_zero", rng.uniform(-50, 50, (6, 7)), [CastValue(data_type="int16", rounding="towards-zero")],
     chunks=(6, 7))
case("f4_to_f2", floats * 37.3, [CastValue(data_type="float16", rounding="towards-negative")], chunks=(13, 9))
case("i4_scale", rng.integers(-100, 100, (7, 9)).astype("i4") * 6, [ScaleOffset(offset=-4, scale=3)],
     fill=2, chunks=(3, 4), written=(slice(0, 5), slice(None)))
case("sharded_cast", floats, [ScaleOffset(offset=10, scale=2), CastValue(data_type="uint8", out_of_range="clamp")],
     fill=12.0, chunks=(4, 6), shards=(8, 12), written=(slice(0, 6), slice(0, 5)))
case("cast_around_shard", floats[:8, :12], [ScaleOffset(offset=10, scale=2), CastValue(data_type="uint8")],
     fill=12.0, chunks=(8, 12), compressors=None,
     serializer=ShardingCodec(chunk_shape=(4, 6), codecs=[BytesCodec(), ZstdCodec()]),
     written=(slice(0, 3), slice(0, 5)))
case("cast_in_shard", floats[:12, :12], None, fill=11.5, chunks=(12, 12),
     serializer=ShardingCodec(chunk_shape=(4, 6), codecs=[
         ScaleOffset(offset=10, scale=4), CastValue(data_type="uint16", out_of_range="clamp"),
         BytesCodec(), ZstdCodec()]), compressors=None, written=(slice(0, 6), slice(0, 5)))
