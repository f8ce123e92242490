"""The chunk grid model: boundaries where the writer's chunks end, the chunk under a point, and
what is stored for a chunk, against the files and shard indexes on disk."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from rectilinear_arrays import write_arrays
from zarrview.viewing import initial_state
from zarrview.viewing.image.chunk_grid import chunk_under, describe_chunk, grid_lines
from zarrview.viewing.image.levels import LevelView, level_view


def _dense(tmp_path: Path) -> Any:
    a = zarr.create_array(tmp_path / "a.zarr", shape=(3, 100, 130), chunks=(1, 16, 20), dtype="u2", fill_value=0)
    a[1, :40, :] = 9
    return zl.open(tmp_path / "a.zarr")


def test_lines_lie_on_the_chunk_boundaries_in_view(tmp_path: Path) -> None:
    arr = _dense(tmp_path)
    lv = level_view(initial_state(arr, {0: 1}), 0)
    whole = grid_lines(lv, 1, 2, (0, 100, 0, 130))
    assert whole.chunk_rows == (0, 16, 32, 48, 64, 80, 96, 100)
    assert whole.chunk_cols == (0, 20, 40, 60, 80, 100, 120, 130)
    assert whole.shard_rows == whole.shard_cols == () and not whole.dense
    part = grid_lines(lv, 1, 2, (30.5, 70, 41, 59.5))
    assert part.chunk_rows == (32, 48, 64) and part.chunk_cols == ()
    assert grid_lines(lv, 1, 2, (0, 100, 0, 130), most=5).dense


def test_shards_and_their_inner_chunks(tmp_path: Path) -> None:
    zarr.create_array(tmp_path / "s.zarr", shape=(64, 96), chunks=(8, 8), shards=(32, 32), dtype="u1", fill_value=0)
    arr = zl.open(tmp_path / "s.zarr")
    lines = grid_lines(level_view(initial_state(arr), 0), 0, 1, (0, 64, 0, 96))
    assert lines.chunk_rows == tuple(range(0, 65, 8)) and lines.chunk_cols == tuple(range(0, 97, 8))
    assert lines.shard_rows == (0, 32, 64) and lines.shard_cols == (0, 32, 64, 96)


def test_a_coarser_level_is_placed_like_its_pixels(tmp_path: Path) -> None:
    """A level whose pixel is 4 of level 0's, shifted by 1.5: its boundaries land where its tiles do."""
    arr = _dense(tmp_path)
    lv = LevelView(2, arr, (1, 0, 0), None, (1.0, 1.0), rows=(4.0, 1.5), cols=(4.0, 1.5))
    lines = grid_lines(lv, 1, 2, (0, 150, 0, 90))
    assert lines.level == 2
    assert lines.chunk_rows == tuple(4 * e + 1.5 for e in (0, 16, 32))
    assert lines.chunk_cols == tuple(4 * e + 1.5 for e in (0, 20))
    assert chunk_under(lv, 1, 2, 4 * 17 + 1.5 + 0.1, 4 * 45 + 1.5 + 0.1) == (1, 1, 2)


def test_the_chunk_under_a_point(tmp_path: Path) -> None:
    arr = _dense(tmp_path)
    lv = level_view(initial_state(arr, {0: 2}), 0)
    for row, col in itertools.product((0.5, 15.5, 16.5, 99.5), (0.5, 19.9, 20.1, 129.5)):
        assert chunk_under(lv, 1, 2, row, col) == (2, int(row) // 16, int(col) // 20)
    assert chunk_under(lv, 1, 2, 100.5, 3) is None and chunk_under(lv, 1, 2, 3, -0.5) is None


def test_what_is_stored_for_a_chunk_is_its_file(tmp_path: Path) -> None:
    arr = _dense(tmp_path)
    coords = [(1, 0, 0), (1, 2, 6), (1, 3, 0), (0, 0, 0)]
    found = arr.chunks_stored(coords)
    for c, stored in zip(coords, found):
        path = tmp_path / "a.zarr" / "c" / "/".join(map(str, c))
        assert stored.coords == c and stored.key == "c/" + "/".join(map(str, c))
        assert stored.nbytes == (path.stat().st_size if path.exists() else None), c
    assert found[0].nbytes is not None and found[3].nbytes is None
    assert describe_chunk(arr, (0, 0, 0), found[3]) == "chunk [0, 0, 0] (c/0/0/0): not stored, reads as the fill value"
    assert describe_chunk(arr, (1, 0, 0), found[0]).startswith(f"chunk [1, 0, 0] (c/1/0/0): {found[0].nbytes} B stored")


def test_what_is_stored_for_an_inner_chunk_is_its_index_entry(tmp_path: Path) -> None:
    s = zarr.create_array(tmp_path / "s.zarr", shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="u1", fill_value=0)
    s[:4, :6] = np.arange(24).reshape(4, 6)
    shard = (tmp_path / "s.zarr" / "c" / "0" / "0").read_bytes()
    index = np.frombuffer(shard[-(16 * 4 + 4):-4], dtype="<u8").reshape(4, 2)  # written at the end, with a CRC
    arr = zl.open(tmp_path / "s.zarr")
    found = arr.chunks_stored([(0, 0), (0, 1), (1, 0), (3, 3)])
    assert [f.nbytes for f in found[:2]] == [int(index[0, 1]), int(index[1, 1])]
    assert found[2].nbytes is None and found[2].key == "c/0/0"  # its shard is stored, it is not
    assert found[3].nbytes is None and found[3].key == "c/1/1"  # its shard is not stored
    assert describe_chunk(arr, (0, 1), found[1]).startswith(f"chunk [0, 1] in shard c/0/0: {int(index[1, 1])} B stored")


@pytest.fixture(scope="module")
def rectilinear(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("rectilinear-grid")
    return root, write_arrays(root)


def test_a_rectilinear_grid_draws_its_own_edges(rectilinear: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = rectilinear
    arr = zl.open(root / "plane_mixed.zarr")
    rows, cols = (np.concatenate([[0], np.cumsum(s)]).tolist() for s in manifest["plane_mixed"]["read"])
    lines = grid_lines(level_view(initial_state(arr), 0), 0, 1, (0, arr.shape[0], 0, arr.shape[1]))
    assert list(lines.chunk_rows) == rows and list(lines.chunk_cols) == cols
    lv = level_view(initial_state(arr), 0)
    for r, c in ((0.5, 0.5), (rows[1] + 0.5, cols[2] - 0.5), (rows[-1] - 0.5, cols[-1] - 0.5)):
        want = (int(np.searchsorted(rows, r, side="right")) - 1, int(np.searchsorted(cols, c, side="right")) - 1)
        assert chunk_under(lv, 0, 1, r, c) == want
