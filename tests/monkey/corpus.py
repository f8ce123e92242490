"""The stores the monkey opens: small good ones of every kind the window shows (images, planes
of a volume, pyramids with labels, a plate, CF datasets, strings, records, lines, sharded and
both formats) and hostile ones (unparseable metadata, corrupt and missing chunks, a broken shard
index, a location that does not exist), written once into a folder by the writers the other
tests trust (zarr-python, ome-zarr-py, xarray).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numcodecs
import numpy as np
import zarr

from cf_datasets import write_cf_dataset
from ome_stores import ome_zarr_image, ome_zarr_plate, pattern

#: planes of the volume the slider phase steps through
SLIDER_PLANES = 64


@dataclass(frozen=True)
class Store:
    name: str
    location: str
    #: whether reading it is meant to fail somewhere (its errors are reported, never raised)
    hostile: bool = False


@dataclass(frozen=True)
class Corpus:
    stores: tuple[Store, ...]
    #: an array with ``SLIDER_PLANES`` planes along its first dimension (``location::/node``)
    slider_volume: str
    #: a plain file: an export "into" it must fail with a message
    not_a_folder: Path


def _plain_v3(path: Path) -> None:
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.attrs["title"] = "plain v3"
    vol = g.create_array("vol", shape=(SLIDER_PLANES, 48, 40), chunks=(1, 16, 16), dtype="f4",
                         dimension_names=["t", "y", "x"])
    vol[...] = np.arange(vol.size, dtype="f4").reshape(vol.shape) / 7
    g.create_array("sharded", shape=(4, 32, 32), chunks=(1, 8, 8), shards=(1, 16, 16), dtype="u2")[...] = \
        pattern((4, 32, 32))
    g.create_array("complex", shape=(20, 24), chunks=(10, 12), dtype="c8")[...] = \
        (np.arange(480) + 1j * np.arange(480)[::-1]).reshape(20, 24)
    g.create_array("rgb", shape=(30, 40, 3), chunks=(15, 20, 3), dtype="u1")[...] = pattern((30, 40, 3), "uint8")
    g.create_array("scalar", shape=(), dtype="i8")[...] = 42
    sub = g.create_group("series")
    sub.create_array("line", shape=(500,), chunks=(64,), dtype="f8")[...] = np.sin(np.arange(500) / 20)
    sub.create_array("names", shape=(12,), chunks=(5,), dtype=str)[...] = np.array([f"name {i}" for i in range(12)])
    g.create_array("empty", shape=(16, 16), chunks=(8, 8), dtype="i4", fill_value=-1)  # no chunk written


def _plain_v2(path: Path) -> None:
    g = zarr.open_group(path, mode="w", zarr_format=2)
    g.create_array("arr", shape=(10, 10), chunks=(5, 5), dtype="<i4", compressors=numcodecs.Zstd())[...] = \
        np.arange(100).reshape(10, 10)
    rec = np.zeros(6, dtype=[("a", "<i4"), ("b", "<f8")])
    rec["a"], rec["b"] = np.arange(6), np.arange(6) / 2
    g.create_array("records", shape=(6,), chunks=(3,), dtype=rec.dtype)[...] = rec
    g.create_group("sub").create_array("inner", shape=(3, 4, 5), chunks=(1, 2, 5), dtype="<f8")[...] = \
        np.arange(60).reshape(3, 4, 5)


def _hostile(path: Path) -> None:
    """Every failure a store can hand the window, one node each, beside a good node."""
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.create_array("good", shape=(8, 8), chunks=(4, 4), dtype="u2")[...] = pattern((8, 8))
    for name in ("corrupt", "missing", "shard"):
        kw = {"shards": (8, 8)} if name == "shard" else {}
        g.create_array(name, shape=(8, 8), chunks=(4, 4), dtype="u2", **kw)[...] = pattern((8, 8))
    (path / "corrupt" / "c" / "0" / "1").write_bytes(b"\x28\xb5\x2f\xfd not zstd at all")
    (path / "missing" / "c" / "1" / "1").unlink()  # reads as the fill value, not a failure
    shard = path / "shard" / "c" / "0" / "0"
    blob = bytearray(shard.read_bytes())
    blob[-20:-4] = b"\xff" * 16  # an index entry pointing past the shard
    shard.write_bytes(bytes(blob))
    (path / "badjson").mkdir()
    (path / "badjson" / "zarr.json").write_text("{not json")
    (path / "badshape").mkdir()
    (path / "badshape" / "zarr.json").write_text(
        '{"zarr_format": 3, "node_type": "array", "shape": [-4, 4], "data_type": "uint8", '
        '"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}, '
        '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}')
    (path / "unknown_codec").mkdir()
    (path / "unknown_codec" / "zarr.json").write_text(
        '{"zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "uint8", '
        '"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}, '
        '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "no-such-codec"}]}')


def build(root: Path) -> Corpus:
    """Write every store of the corpus under ``root`` (seconds; done once per run)."""
    root.mkdir(parents=True, exist_ok=True)
    _plain_v3(root / "plain3.zarr")
    _plain_v2(root / "plain2.zarr")
    _hostile(root / "hostile.zarr")
    labels = {"cells": (pattern((2, 8, 64, 64)) % 5).astype("uint8")}
    ome_zarr_image(root / "ome04.zarr", "0.4", pattern((2, 8, 64, 64)), "czyx", scale_factors=(2, 4),
                   chunks=(1, 1, 32, 32), labels=labels)
    ome_zarr_image(root / "ome05.zarr", "0.5", pattern((3, 64, 96)), "cyx", scale_factors=(2,), chunks=(1, 32, 32),
                   omero={"channels": [{"color": c, "window": {"start": 0, "end": 4000, "min": 0, "max": 65535},
                                        "label": n, "active": True} for c, n in
                                       (("FF0000", "red"), ("00FF00", "green"), ("0000FF", "blue"))],
                          "rdefs": {"model": "color"}})
    ome_zarr_plate(root / "plate.zarr", "0.4", ["A", "B"], ["1", "2"], ["A/1", "A/2", "B/2"], fields=1,
                   shape=(1, 16, 16))
    write_cf_dataset(root / "cf2.zarr", 2, consolidated=True)
    write_cf_dataset(root / "cf3.zarr", 3, consolidated=False)
    not_a_folder = root / "not-a-folder"
    not_a_folder.write_text("a file, not a folder")
    stores = [Store("plain3.zarr", str(root / "plain3.zarr")), Store("plain2.zarr", str(root / "plain2.zarr")),
              Store("ome04.zarr", str(root / "ome04.zarr")), Store("ome05.zarr", str(root / "ome05.zarr")),
              Store("plate.zarr", str(root / "plate.zarr")), Store("cf2.zarr", str(root / "cf2.zarr")),
              Store("cf3.zarr", str(root / "cf3.zarr")),
              Store("hostile.zarr", str(root / "hostile.zarr"), hostile=True),
              Store("absent.zarr", str(root / "absent.zarr"), hostile=True)]
    return Corpus(tuple(stores), f"{root / 'plain3.zarr'}::/vol", not_a_folder)
