"""Good stores written by zarr-python, built once per session and copied into each test's
tmp_path, for the tests that break them (test_bad_stores.py, test_hostile_stores.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ZstdCodec

DATA = np.arange(100, dtype="<i4").reshape(10, 10)
DATA8 = np.arange(64, dtype="<u2").reshape(8, 8)


def _build_v3(path: Path) -> None:
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.attrs["title"] = "good v3"
    for name, compressors in [("arr", [ZstdCodec()]), ("gz", [GzipCodec()]),
                              ("bl", [BloscCodec()]), ("raw", None)]:
        a = g.create_array(name, shape=(10, 10), chunks=(5, 5), dtype="<i4",
                           compressors=compressors, fill_value=0)
        a[:] = DATA
    a = g.create_array("crc", shape=(10, 10), chunks=(5, 5), dtype="<i4",
                       serializer=BytesCodec(), compressors=[Crc32cCodec()])
    a[:] = DATA
    a = g.create_array("sh", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="<u2",
                       compressors=None)
    a[:] = DATA8
    sub = g.create_group("sub")
    a = sub.create_array("inner", shape=(3,), chunks=(2,), dtype="f8")
    a[:] = [1.5, 2.5, 3.5]


def _build_v2(path: Path) -> None:
    g = zarr.open_group(path, mode="w", zarr_format=2)
    g.attrs["title"] = "good v2"
    for name, compressor in [("arr", numcodecs.Zstd()), ("gz", numcodecs.GZip()),
                             ("bl", numcodecs.Blosc()), ("raw", None)]:
        a = g.create_array(name, shape=(10, 10), chunks=(5, 5), dtype="<i4",
                           compressors=compressor, fill_value=0)
        a[:] = DATA
    sub = g.create_group("sub")
    a = sub.create_array("inner", shape=(3,), chunks=(2,), dtype="<f8")
    a[:] = [1.5, 2.5, 3.5]


@pytest.fixture(scope="session")
def _templates(tmp_path_factory):
    base = tmp_path_factory.mktemp("templates")
    _build_v3(base / "good3.zarr")
    _build_v2(base / "good2.zarr")
    return base


@pytest.fixture
def v3(_templates, tmp_path) -> Path:
    dst = tmp_path / "good3.zarr"
    shutil.copytree(_templates / "good3.zarr", dst)
    return dst


@pytest.fixture
def v2(_templates, tmp_path) -> Path:
    dst = tmp_path / "good2.zarr"
    shutil.copytree(_templates / "good2.zarr", dst)
    return dst


@pytest.fixture(params=[3, 2], ids=["v3", "v2"])
def store(request, v3, v2) -> tuple[int, Path]:
    return request.param, (v3 if request.param == 3 else v2)


def meta_key(fmt: int, node: str) -> str:
    """The array metadata key of ``node`` ('' = root) in format ``fmt``."""
    name = "zarr.json" if fmt == 3 else ".zarray"
    return f"{node}/{name}" if node else name


def chunk_key(fmt: int, node: str, *idx: int) -> str:
    if fmt == 3:
        return f"{node}/c/" + "/".join(map(str, idx))
    return f"{node}/" + ".".join(map(str, idx))


DRAFT = Path(__file__).parent / "data" / "zarr2" / "v3draft"


@pytest.fixture
def draft(tmp_path) -> Path:
    """A copy of the zarr 2.18-written store in the 2022 draft layout."""
    dst = tmp_path / "draft.zarr"
    shutil.copytree(DRAFT, dst)
    return dst


@pytest.fixture
def small_limits():
    """Bounds small enough that a bomb can be built in a test; restored afterwards."""
    import zarrview.zarrlib as zl

    old = zl.limits.configure(chunk_bytes=8 << 20, object_bytes=8 << 20, metadata_bytes=1 << 20)
    yield zl.limits.limits()
    zl.limits.restore(old)
