"""Writes arrays on rectilinear chunk grids with zarr-python 3.4 (run in the Python 3.12 venv).

Usage: python rectilinear_writer.py OUT_DIR

For each case it writes ``OUT_DIR/NAME.zarr`` and, from zarr-python's own read of that
store, ``OUT_DIR/NAME.npy`` (the whole array) and an entry of ``OUT_DIR/manifest.json``: the
chunk sizes zarr-python reads by (``read_chunk_sizes``: inner chunks when sharded) and
stores by (``write_chunk_sizes``), clipped to the shape. Some stores are then respelled by
hand in the forms the specification allows and zarr-python does not emit (runs mixed with
single edges, a bare integer, chunks past the end) and read back by zarr-python again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec

zarr.config.set({"array.rectilinear_chunks": True})

OUT = Path(sys.argv[1])
manifest: dict[str, Any] = {}


def values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype == "str":
        words = np.array(["", "a", "zarr", "rectilinear", "grüße", "chunk-edge"], dtype=object)
        return words[rng.integers(0, len(words), n)].reshape(shape)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True).reshape(shape)
    if kind == "c":
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
    return rng.normal(scale=1000, size=n).astype(dtype).reshape(shape)


def record(name: str) -> None:
    arr = zarr.open_array(str(OUT / f"{name}.zarr"), mode="r")
    data = arr[...]
    if data.dtype.kind in "OT":  # text: saved as fixed-width unicode, which .npy holds without pickle
        data = np.array(data.tolist(), dtype=str)
    np.save(OUT / f"{name}.npy", data)
    manifest[name] = {"read": [list(s) for s in arr.read_chunk_sizes],
                      "write": [list(s) for s in arr.write_chunk_sizes],
                      "sharded": any(isinstance(c, ShardingCodec) for c in arr.metadata.codecs)}
    try:  # the inner chunk shape of a sharded array, where zarr-python reads by inner chunk
        manifest[name]["inner"] = list(arr.chunks) if manifest[name]["sharded"] else None
    except NotImplementedError:  # it reads whole shards (codecs around the shard)
        manifest[name]["inner"] = None


def write(name: str, shape: tuple[int, ...], chunks: Any, dtype: str, *, seed: int = 0,
          region: tuple[slice, ...] | None = None, resize: tuple[int, ...] | None = None, **kwargs: Any) -> None:
    """An array filled with ``values`` (only ``region`` of it where given: the other chunks are
    never written), optionally resized afterwards (its grid then runs past the new shape)."""
    zdtype = str if dtype == "str" else dtype
    arr = zarr.create_array(str(OUT / f"{name}.zarr"), shape=shape, chunks=chunks, dtype=zdtype, **kwargs)
    data = values(shape, dtype, seed)
    where = region if region is not None else tuple(slice(None) for _ in shape)
    arr[where] = data[where]
    if resize is not None:
        arr.resize(resize)
    record(name)


def respell(name: str, source: str, chunk_shapes: list[Any]) -> None:
    """A copy of ``source`` whose grid is spelled ``chunk_shapes`` (the same chunks)."""
    import shutil

    shutil.copytree(OUT / f"{source}.zarr", OUT / f"{name}.zarr")
    path = OUT / f"{name}.zarr" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["chunk_grid"]["configuration"]["chunk_shapes"] = chunk_shapes
    path.write_text(json.dumps(doc))
    record(name)


write("line", (20,), [[3, 3, 3, 5, 6]], "int32", fill_value=-1)
write("plane", (10, 12), [[2, 2, 2, 4], 5], "float64", seed=1, fill_value=np.nan,
      region=(slice(0, 6), slice(0, 10)))
write("cube", (7, 9, 11), [[1, 2, 4], [3, 3, 3], [5, 1, 5]], "uint16", seed=2, fill_value=7,
      region=(slice(1, 7), slice(0, 5), slice(5, 11)), compressors=BloscCodec(cname="lz4", clevel=3, shuffle="shuffle"))
write("runs", (300, 200), [[7] * 20 + [13] * 10 + [1, 2, 7, 20], [40] * 3 + [5] * 16], "int16", seed=3,
      compressors=GzipCodec(level=1))
write("shrunk", (25,), [[5, 5, 5, 5, 5]], "float32", seed=4, fill_value=0.5, resize=(22,))
write("grown", (20,), [[3, 3, 3, 5, 6]], "int64", seed=5, fill_value=-9, resize=(26,))
write("empty", (0, 5), [4, [2, 3]], "int16", fill_value=3)
write("bool", (9, 6), [[4, 5], [1, 5]], "bool", seed=6, fill_value=False)
write("int8", (9, 6), [[2, 7], [3, 3]], "int8", seed=7, fill_value=3, compressors=None)
write("uint64", (9, 6), [[2, 7], [3, 3]], "uint64", seed=8, fill_value=2**64 - 1,
      serializer=BytesCodec(endian="big"), compressors=[ZstdCodec(level=3, checksum=True), Crc32cCodec()])
write("complex", (9, 6), [[6, 3], [1, 1, 4]], "complex128", seed=9, fill_value=0)
write("strings", (9, 6), [[2, 7], [4, 2]], "str", seed=10, fill_value="")
write("transposed", (11, 8), [[3, 8], [5, 3]], "float32", seed=11, filters=[TransposeCodec(order=(1, 0))],
      region=(slice(0, 3), slice(None)))
write("sharded", (20, 24), (2, 4), "uint16", seed=12, shards=[[4, 8, 8], [8, 16]], fill_value=1)
write("sharded_cube", (18, 10, 12), (3, 5, 2), "float32", seed=13, shards=[[6, 12], [10], [2, 4, 6]],
      fill_value=-1.5, region=(slice(0, 6), slice(None), slice(2, 12)))
write("sharded_start", (16, 15), (4, 5), "int32", seed=14, shards=[[8, 4, 4], [5, 10]],
      serializer=BytesCodec(endian="little"), compressors=BloscCodec(cname="zstd", clevel=1, shuffle="bitshuffle"))
write("sharded_edge", (21, 8), (3, 4), "uint8", seed=15, shards=[[6, 6, 9], [8]], fill_value=5, resize=(19, 8))
write("sharded_gzip", (40,), (2,), "float64", seed=16, shards=[[10, 2, 28]], compressors=GzipCodec(level=5),
      region=(slice(10, 30),))
# codecs around the shard (a checksum of the whole shard; a transpose before it): shards decode whole
write("sharded_crc", (20, 24), [[4, 8, 8], [8, 16]], "uint16", seed=17, serializer=ShardingCodec(chunk_shape=(2, 4)),
      compressors=Crc32cCodec(), region=(slice(0, 12), slice(None)))
write("sharded_transposed", (20, 24), [[4, 8, 8], [8, 16]], "int32", seed=18, filters=[TransposeCodec(order=(1, 0))],
      serializer=ShardingCodec(chunk_shape=(4, 2)), compressors=None)

# spellings zarr-python does not emit, of the same chunks
respell("line_expanded", "line", [[3, 3, 3, 5, 6]])
respell("line_overflow", "line", [[[3, 3], 5, 6, 6, [1, 4]]])
respell("plane_mixed", "plane", [[[2, 1], 2, [2, 1], 4], [5, 5, 5]])
respell("runs_split", "runs", [[[7, 10], [7, 10], [13, 9], 13, 1, 2, 7, 20], [[40, 3], [5, 16]]])
respell("cube_int", "cube", [[1, 2, 4], 3, [[5, 1], 1, [5, 2]]])

# a consolidated group of arrays whose grids are spelled alike ([[3, 3], 4]) but cut to other shapes
group = zarr.open_group(str(OUT / "consolidated.zarr"), mode="w")
for member, shape in (("a", (6, 8)), ("b", (6, 13)), ("c", (6, 1))):
    member_arr = group.create_array(member, shape=shape, chunks=[[3, 3], 4], dtype="int32", fill_value=-2)
    member_arr[:, : shape[1] - 1] = values(shape, "int32", len(member))[:, : shape[1] - 1]
zarr.consolidate_metadata(str(OUT / "consolidated.zarr"))
for member in ("a", "b", "c"):
    np.save(OUT / f"consolidated_{member}.npy", zarr.open_group(str(OUT / "consolidated.zarr"), mode="r")[member][...])

# a pyramid whose levels are block means of level 0, each on a rectilinear grid of its own
pyramid = zarr.open_group(str(OUT / "pyramid.zarr"), mode="w")
level = values((1, 512, 768), "uint16", 21)
for k, (rows, cols) in enumerate([([100, 156, 64, 64, 64, 64], [200, 200, 200, 168]),
                                  ([50, 78, 32, 32, 32, 32], [100, 284]), ([128], [60, 60, 60, 12])]):
    if k:
        z, h, w = level.shape
        level = level.reshape(z, h // 2, 2, w // 2, 2).mean(axis=(2, 4)).astype("uint16")
    pyramid.create_array(str(k), shape=level.shape, chunks=[1, rows, cols], dtype="uint16")[...] = level
    np.save(OUT / f"pyramid_{k}.npy", pyramid[str(k)][...])

(OUT / "manifest.json").write_text(json.dumps(manifest))
print(json.dumps(sorted(manifest)))
