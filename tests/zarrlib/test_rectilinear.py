"""Rectilinear chunk grids read as zarr-python 3.4.2 reads them.

zarr-python writes each array (1-D to 3-D, uneven edges, runs, regular dimensions mixed in,
chunks past the end after a resize, sharded with regular inner chunks, several codecs and
data types, chunks never written) and reads it back; zarrview must read the whole array and
random selections identical to numpy indexing of zarr-python's values, read exactly the
chunks (or shards) that zarr-python's chunk sizes say a selection touches, and give each
chunk the extent zarr-python gives it. Hostile grids fail as ``ZarrError``s naming the node
and the bad value.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.zarrlib.errors import CodecError, MetadataError, UnsupportedFeatureError, ZarrError
from zarrview.zarrlib.storage.local import LocalStore
from rectilinear_arrays import NAMES, write_arrays
from remote_backends import prefer
from store_wrappers import CountingStore

Written = tuple[Path, dict[str, Any]]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("rectilinear")
    return root, write_arrays(root)


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, what
    if want.dtype.kind == "U":  # text: zarr-python's strings, saved fixed-width
        assert got.dtype.kind == "O", what
        assert np.array(got.tolist(), dtype=str).tolist() == want.tolist(), what
        return
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(got, want, err_msg=what)


def _bounds(sizes: list[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])


def _touched(sizes: list[list[int]], shape: tuple[int, ...], sel: tuple[Any, ...]) -> set[tuple[int, ...]]:
    """The chunks holding a selected element, from zarr-python's chunk sizes alone."""
    per_dim = []
    for s, n, dim_sizes in zip(sel, shape, sizes):
        idx = np.arange(n)[s]
        per_dim.append(np.unique(np.searchsorted(_bounds(dim_sizes)[1:], np.atleast_1d(idx), side="right")).tolist())
    return set(itertools.product(*per_dim))


def _selections(shape: tuple[int, ...], rng: np.random.Generator, n: int) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for _ in range(n):
        sel: list[Any] = []
        for size in shape:
            kind = rng.integers(0, 4) if size else 1
            if kind == 0:
                sel.append(int(rng.integers(0, size)))
            elif kind == 1:
                sel.append(slice(None))
            else:
                a, b = sorted(int(v) for v in rng.integers(0, size + 1, 2))
                sel.append(slice(a, b, int(rng.integers(1, 6)) if kind == 3 else None))
        out.append(tuple(sel))
    return out


def _key(coords: tuple[int, ...]) -> str:
    return "c/" + "/".join(str(c) for c in coords)


def _units(arr: zl.Array, sizes: dict[str, Any]) -> list[list[int]]:
    """The sizes of what a read decodes one at a time: inner chunks, or whole shards where
    codecs around the shard keep it from being read in parts."""
    return sizes["write"] if sizes["sharded"] and arr.meta.shard_layout is None else sizes["read"]


def test_the_writer_wrote_every_case(written: Written) -> None:
    root, manifest = written
    assert sorted(manifest) == sorted(NAMES)
    for name in NAMES:
        doc = json.loads((root / f"{name}.zarr" / "zarr.json").read_text())
        assert doc["chunk_grid"]["name"] == "rectilinear", name
        assert manifest[name]["sharded"] == name.startswith("sharded"), name
    whole = [name for name in NAMES if name.startswith("sharded") and zl.open(root / f"{name}.zarr").meta.shard_layout is None]
    assert whole == ["sharded_crc", "sharded_transposed"]  # the shards that decode whole


@pytest.mark.parametrize("name", NAMES)
def test_whole_array_and_chunk_extents_as_zarr_python_reads_them(written: Written, name: str) -> None:
    root, manifest = written
    want = np.load(root / f"{name}.npy")
    arr = zl.open(root / f"{name}.zarr")
    assert isinstance(arr, zl.Array) and arr.grid is not None
    _same(arr[...], want, name)
    read, stored = manifest[name]["read"], manifest[name]["write"]
    if manifest[name]["inner"] is not None:
        assert arr.chunks == tuple(manifest[name]["inner"])
    if _units(arr, manifest[name]) is stored:  # zarr-python reads these by shard; zarrview counts inner chunks
        assert arr.chunk_grid_shape() == tuple(-(-n // c) for n, c in zip(want.shape, arr.chunks))
    else:
        assert arr.chunk_grid_shape() == tuple(len(s) for s in read)
    assert arr.stored_grid_shape() == tuple(len(s) for s in stored)
    units = _units(arr, manifest[name])
    bounds = [_bounds(s) for s in units]
    for coords in itertools.product(*(range(len(s)) for s in units)):
        assert arr.chunk_box(coords) == tuple((int(b[c]), int(b[c + 1])) for b, c in zip(bounds, coords)), (name, coords)
    # the largest declared edges: no smaller than any chunk zarr-python clips to the shape
    outer = arr.shards if manifest[name]["sharded"] else arr.chunks
    assert outer == arr.grid.largest and all(c >= max(s, default=0) for c, s in zip(outer, stored))
    assert arr.grid.grid_shape == tuple(len(s) for s in stored)


@pytest.mark.parametrize("name", NAMES)
def test_random_selections_read_exactly_the_chunks_they_touch(written: Written, name: str) -> None:
    root, manifest = written
    want = np.load(root / f"{name}.npy")
    stored, sharded = manifest[name]["write"], manifest[name]["sharded"]
    rng = np.random.default_rng(sum(map(ord, name)))
    store = CountingStore(LocalStore(root / f"{name}.zarr"))
    read = _units(zl.open(store), manifest[name])  # type: ignore[arg-type]
    sharded = sharded and read is not stored
    for sel in _selections(want.shape, rng, 40) + [(Ellipsis,)]:
        full = tuple(slice(None) for _ in want.shape) if sel == (Ellipsis,) else sel
        arr = zl.open(store)  # a new reader each time: no shard index is remembered from before
        assert isinstance(arr, zl.Array)
        store.reset()
        _same(arr[sel], want[sel], f"{name}{sel}")
        chunks = _touched(read, want.shape, full)
        bounds = [_bounds(s) for s in read]
        assert sorted(arr.reader.chunk_boxes(sel)) == sorted(
            (c, tuple((int(b[i]), int(b[i + 1])) for b, i in zip(bounds, c))) for c in chunks), (name, sel)
        if not sharded:
            assert sorted(store.chunk_keys()) == sorted(_key(c) for c in chunks), (name, sel)
            continue
        shards = _touched(stored, want.shape, full)
        assert {r.key for r in store.requests if r.start is not None and r.start < 0} == {_key(s) for s in shards}
        assert set(store.chunk_keys()) <= {_key(s) for s in shards}, (name, sel)
        planned = arr.reader.chunk_coords(sel)
        assert len(planned) == len(set(planned)) and set(planned) == chunks, (name, sel)


@pytest.mark.parametrize("backend", ["fsspec", "auto"])
def test_over_http(written: Written, files_over_http: str, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    """A network store reads every chunk of a read in one batch: the same values."""
    prefer(monkeypatch, backend)
    root, _ = written
    rng = np.random.default_rng(3)
    for name in ("cube", "runs_split", "strings", "sharded_cube", "sharded_edge", "shrunk"):
        want = np.load(root / f"{name}.npy")
        arr = zl.open(files_over_http + quote(str((root / f"{name}.zarr").resolve())))
        assert isinstance(arr, zl.Array)
        _same(arr[...], want, name)
        for sel in _selections(want.shape, rng, 5):
            _same(arr[sel], want[sel], f"{name}{sel}")


def test_a_read_of_one_element_reads_one_chunk(written: Written) -> None:
    root, _ = written
    store = CountingStore(LocalStore(root / "runs.zarr"))
    arr = zl.open(store)
    want = np.load(root / "runs.npy")
    for i, j in [(0, 0), (139, 119), (140, 120), (279, 199), (280, 0), (281, 50), (299, 199)]:
        store.reset()
        assert arr[i, j] == want[i, j]
        assert len(store.chunk_keys()) == 1


@pytest.mark.parametrize("name", ["cube", "runs_split", "strings", "sharded_cube", "sharded_crc"])
def test_reads_through_the_chunk_cache(written: Written, name: str) -> None:
    """Chunks of differing shapes kept in the decoded-chunk cache serve a second read."""
    root, _ = written
    want = np.load(root / f"{name}.npy")
    store = CountingStore(LocalStore(root / f"{name}.zarr"))
    arr = zl.open(store)
    assert isinstance(arr, zl.Array)
    cache = zl.ChunkCache(64 << 20)
    rng = np.random.default_rng(9)
    for sel in _selections(want.shape, rng, 12) + [(Ellipsis,)]:
        _same(arr.read(sel, cache=cache), want[sel], f"{name}{sel}")
    store.reset()
    for sel in _selections(want.shape, rng, 12):
        _same(arr.read(sel, cache=cache), want[sel], f"{name}{sel}")
    stored = {str(p.relative_to(root / f"{name}.zarr")) for p in (root / f"{name}.zarr" / "c").rglob("*") if p.is_file()}
    assert stored and not stored & set(store.chunk_keys())  # every stored chunk came from the cache


def test_a_broken_chunk_is_named_with_its_extent(written: Written, tmp_path: Path) -> None:
    root, manifest = written
    shutil.copytree(root / "cube.zarr", tmp_path / "cube.zarr")
    (tmp_path / "cube.zarr" / "c" / "2" / "1" / "2").write_bytes(b"not blosc")
    arr = zl.open(tmp_path / "cube.zarr")
    failures: list[zl.ChunkFailure] = []
    got = arr.read(failures=failures)
    assert [f.coords for f in failures] == [(2, 1, 2)]
    bounds = [_bounds(s) for s in manifest["cube"]["read"]]
    box = tuple((int(b[c]), int(b[c + 1])) for b, c in zip(bounds, (2, 1, 2)))
    assert failures[0].box == box == ((3, 7), (3, 6), (6, 11)) and failures[0].key == "c/2/1/2"
    want = np.load(root / "cube.npy")
    region = tuple(slice(a, b) for a, b in box)
    assert (got[region] == 7).all()  # the fill value
    want[region] = 7
    np.testing.assert_array_equal(got, want)


def test_consolidated_arrays_with_one_spelling_and_other_shapes(written: Written) -> None:
    """Arrays whose grids read alike but cover other shapes: each array gets its own grid."""
    root, _ = written
    group = zl.open(root / "consolidated.zarr")
    assert isinstance(group, zl.Group)
    for member, columns in (("a", 2), ("b", 4), ("c", 1)):
        arr = group[member]
        assert isinstance(arr, zl.Array) and arr.chunk_grid_shape() == (2, columns), member
        _same(arr[...], np.load(root / f"consolidated_{member}.npy"), member)
    lines = _tree(root / "consolidated.zarr")
    assert [line.split("  ")[:3] for line in lines[1:]] == [
        ["a", "array", "(6, 8)"], ["b", "array", "(6, 13)"], ["c", "array", "(6, 1)"]]
    assert all("chunks rectilinear ≤(3, 4)" in line for line in lines[1:])


def test_an_unreadable_codec_still_shows_the_largest_chunk(written: Written, tmp_path: Path) -> None:
    _bad(tmp_path, written, "plane", lambda grid: None)
    path = tmp_path / "g" / "bad" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["codecs"].append({"name": "no_such_codec"})
    path.write_text(json.dumps(doc))
    arr = zl.open(tmp_path / "g")["bad"]  # type: ignore[index]
    assert isinstance(arr, zl.UnsupportedArray) and arr.written.chunks == arr.typical_chunks == (4, 5)
    assert arr.grid is not None and arr.stored_grid_shape() == arr.grid.grid_shape == (4, 3)
    with pytest.raises(UnsupportedFeatureError, match="no_such_codec"):
        arr.chunk_box((0, 0))
    assert "chunks (4, 5)" in _tree(tmp_path / "g")[1]


# --------------------------------------------------------------------------- hostile grids

def _bad(tmp_path: Path, written: Written, source: str, edit: Any) -> zl.Group:
    root, _ = written
    (tmp_path / "g").mkdir(exist_ok=True)
    (tmp_path / "g" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    shutil.rmtree(tmp_path / "g" / "bad", ignore_errors=True)
    shutil.copytree(root / f"{source}.zarr", tmp_path / "g" / "bad")
    path = tmp_path / "g" / "bad" / "zarr.json"
    doc = json.loads(path.read_text())
    edit(doc["chunk_grid"])
    path.write_text(json.dumps(doc))
    group = zl.open(tmp_path / "g")
    assert isinstance(group, zl.Group)
    return group


def _shapes(value: Any) -> Any:
    return lambda grid: grid["configuration"].__setitem__("chunk_shapes", value)


HOSTILE = [
    ("short", "plane", _shapes([[[2, 3], 3], 5]), MetadataError, "covers 9 elements, fewer than the 10"),
    ("short-int", "plane", _shapes([[2, 2, 2, 4], [5, 5]]), MetadataError, "covers 10 elements, fewer than the 12"),
    ("zero", "plane", _shapes([[2, 2, 0, 4, 2], 5]), MetadataError, "chunk_shapes[0][2]"),
    ("negative", "plane", _shapes([[2, 2, 2, 4], -5]), MetadataError, "not -5"),
    ("zero-run", "plane", _shapes([[[2, 0], 10], 5]), MetadataError, "count"),
    ("negative-run", "plane", _shapes([[[-2, 5]], 5]), MetadataError, "not -2"),
    ("run-of-three", "plane", _shapes([[[2, 3, 1], 4], 5]), MetadataError, "[edge, count]"),
    ("huge-run", "plane", _shapes([[[2, 2**64]], 5]), MetadataError, "18446744073709551616"),
    ("float", "plane", _shapes([[2, 2, 2, 4.0], 5]), MetadataError, "4.0"),
    ("bool", "plane", _shapes([True, 5]), MetadataError, "True"),
    ("rank", "plane", _shapes([[2, 2, 2, 4]]), MetadataError, "2 dimensions"),
    ("not-a-list", "plane", _shapes("2,2"), MetadataError, "'2,2'"),
    ("kind", "plane", lambda g: g["configuration"].__setitem__("kind", "external"), UnsupportedFeatureError,
     "'external'"),
    ("no-kind", "plane", lambda g: g["configuration"].pop("kind"), MetadataError, "kind"),
    ("shard-edge", "sharded", _shapes([[4, 7, 9], [8, 16]]), MetadataError, "shard edge 7"),
    ("huge-shard", "sharded", _shapes([[4, 8, 2**40], [8, 16]]), UnsupportedFeatureError, "need an index of"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_a_hostile_grid_is_an_error_naming_the_node_and_value(written: Written, tmp_path: Path,
                                                             case: tuple[str, str, Any, type, str]) -> None:
    _, source, edit, kind, words = case
    group = _bad(tmp_path, written, source, edit)
    with pytest.raises(kind) as e:
        group["bad"]
    assert "/bad/zarr.json" in str(e.value) and words in str(e.value)
    assert [line.split("  ")[1] for line in _tree(tmp_path / "g")[1:]] == ["error"]


def _tree(location: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "zarrview", "tree", str(location)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.lstrip("├└─│ ") for line in out.stdout.splitlines()]


def test_huge_runs_cost_nothing_until_read(written: Written, tmp_path: Path) -> None:
    """Runs of 2**62 chunks, and a last edge of 2**62 elements, open at once in little memory;
    reading the chunk whose declared size is over the bound fails as that chunk alone."""
    group = _bad(tmp_path, written, "line", _shapes([[[3, 3], 5, [2**62, 2**62]]]))
    tracemalloc.start()
    t0 = time.perf_counter()
    arr = group["bad"]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.perf_counter() - t0 < 1 and peak < 2**20
    assert isinstance(arr, zl.Array) and arr.chunk_grid_shape() == (5,) and arr.chunks == (2**62,)
    assert arr.chunk_box((4,)) == ((14, 20),)
    want = np.load(written[0] / "line.npy")
    np.testing.assert_array_equal(arr[:14], want[:14])  # the chunks before it are the written ones
    failures: list[zl.ChunkFailure] = []
    got = arr.read(slice(10, 20), failures=failures)
    assert len(failures) == 1 and isinstance(failures[0].error, CodecError)
    assert "more than the" in failures[0].message and "/bad" in failures[0].message
    assert failures[0].box == ((14, 20),) and failures[0].key == "bad/c/4"
    np.testing.assert_array_equal(got, np.concatenate([want[10:14], [-1] * 6]))  # the fill value


def test_a_dimension_listing_more_edges_than_the_bound_is_refused(written: Written, tmp_path: Path) -> None:
    old = zl.limits.configure(grid_edges=10)
    try:
        with pytest.raises(UnsupportedFeatureError) as e:
            _bad(tmp_path, written, "line", _shapes([[1, 2] * 5 + [10]]))["bad"]
    finally:
        zl.limits.restore(old)
    assert isinstance(zl.open(tmp_path / "g")["bad"], zl.Array)  # type: ignore[index]  # 11 entries: within the default
    assert str(e.value) == ("chunk_shapes[0] in /bad/zarr.json lists 11 edges; at most 10 are supported for one "
                            "dimension")


def test_every_error_is_a_zarr_error(written: Written, tmp_path: Path) -> None:
    """Random damage to the grid's JSON: each document opens or fails with a ZarrError."""
    rng = np.random.default_rng(5)
    pieces: list[Any] = [0, -1, 1, 2, 3, 2**62, 2**63, None, "x", [], [1], [2, 3], [[2, 3]], [[1, 2, 3]], 1.5, True,
                         {"a": 1}]
    for _ in range(60):
        shapes: list[Any] = [[int(v) for v in rng.integers(1, 5, rng.integers(0, 5))] for _ in range(2)]
        for _ in range(rng.integers(1, 3)):
            dim = shapes[rng.integers(0, 2)]
            piece = pieces[rng.integers(0, len(pieces))]
            if isinstance(dim, list) and dim and rng.integers(0, 2):
                dim[rng.integers(0, len(dim))] = piece
            else:
                shapes[rng.integers(0, 2)] = piece
        group = _bad(tmp_path, written, "plane", _shapes(shapes))
        try:
            arr = group["bad"]
        except ZarrError as e:
            assert "/bad/zarr.json" in str(e)
            continue
        assert isinstance(arr, zl.Array)
        arr.read(failures=[])


# --------------------------------------------------------------------------- command line

def test_info_shows_the_grid(written: Written) -> None:
    root, _ = written
    out = subprocess.run([sys.executable, "-m", "zarrview", "info", str(root / "plane.zarr")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = {line[:16].strip(): line[16:].strip() for line in out.stdout.splitlines() if line[:1].isalpha()}
    assert rows["Chunk grid"] == "rectilinear, 12 chunks (4, 3), largest (4, 5)"
    assert rows["Chunk edges 0"] == "2×3, 4 (4 chunks)" and rows["Chunk edges 1"] == "5×3 (3 chunks)"  # [[2, 3], 4] and 5
    assert rows["Stored chunks"].startswith("6 of 12,")  # rows 0-5 and columns 0-9 were written
    assert '"name": "rectilinear"' in out.stdout
    out = subprocess.run([sys.executable, "-m", "zarrview", "info", str(root / "sharded_edge.zarr")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Shard edges 0    6×2, 9 (3 shards)" in out.stdout and "Chunk shape      (3, 4)" in out.stdout
