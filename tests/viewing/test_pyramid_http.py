"""The issue's request counts, at a loopback HTTP server: a 4-level pyramid of a (3, 16384, 16384)
OME-Zarr image opened whole reads only chunks of its coarsest adequate level; zoomed to 1:1 in a
corner it reads only the level-0 chunks that intersect the view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.view import image_state

from http_server import serve
from ome_stores import axes_list, ome_attrs
from view_harness import Harness

N = 16384
CHUNK = 512


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, np.ndarray]:
    """Only what the test reads is stored: level 3 whole, and level 0's top-left corner (the rest
    of each level reads as the fill value, as a sparse store does)."""
    root = tmp_path_factory.mktemp("ome16k") / "img.zarr"
    g = zarr.open_group(root, mode="w", zarr_format=3)
    datasets = []
    for k in range(4):
        f = 2**k
        datasets.append({"path": str(k), "coordinateTransformations": [
            {"type": "scale", "scale": [1.0, 0.25 * f, 0.25 * f]},
            {"type": "translation", "translation": [0.0, 0.125 * (f - 1), 0.125 * (f - 1)]}]})
        g.create_array(str(k), shape=(3, N // f, N // f), chunks=(1, CHUNK, CHUNK), dtype="u2", fill_value=0,
                       dimension_names=["c", "y", "x"])
    g.attrs.update(ome_attrs("0.5", multiscales=[{"name": "big", "axes": axes_list("cyx", {"y": "micrometer", "x": "micrometer"}),
                                                   "datasets": datasets}]))
    rng = np.random.default_rng(9)
    coarsest = rng.integers(1, 60000, (3, N // 8, N // 8), dtype="u2")
    g["3"][...] = coarsest
    corner = rng.integers(1, 60000, (1, 1024, 1024), dtype="u2")
    g["0"][:1, :1024, :1024] = corner
    return root, coarsest, corner


def _chunk_gets(log: object) -> list[str]:
    return [r[1] for r in log.requests("GET") if "/c/" in r[1]]  # type: ignore[attr-defined]


def test_request_counts_of_a_remote_pyramid(image: tuple[Path, np.ndarray, np.ndarray]) -> None:
    root, coarsest, corner = image
    h = Harness(budget=256)
    try:
        with serve(root.parent) as (url, log):
            found = detect(zl.open(f"{url}/{root.name}"), labels=False)  # type: ignore[arg-type]
            assert isinstance(found, OmeImage) and not found.errors
            state = image_state(found)
            assert state is not None and len(state.pyramid or ()) == 4 and state.indices[0] == 0
            log.clear()
            # the whole image in an 800-pixel view: a screen pixel is 20 level-0 pixels: level 3 (8x) is adequate
            scene = h.show(state.with_(region=(0, N, 0, N), screen_scale=(800 / N, 800 / N)))
            gets = _chunk_gets(log)
            assert gets and all("/3/c/" in p for p in gets), sorted({p.split("/c/")[0] for p in gets})
            assert state.composite  # three channels without omero: their composite, each read whole
            assert len(gets) == 3 * (N // 8 // CHUNK) ** 2  # three channels' planes of level 3: 3 x 16 chunks
            np.testing.assert_array_equal(scene.detail.values, np.moveaxis(coarsest, 0, -1))  # type: ignore[union-attr]
            log.clear()
            # zoomed to 1:1 in the top-left corner
            scene = h.show(state.with_(region=(100, 700, 200, 1000), screen_scale=(1.0, 1.0)))
            gets = _chunk_gets(log)
            assert gets and all("/0/c/" in p for p in gets)
            touched = {tuple(int(v) for v in p.split("/0/c/")[1].split("/")) for p in gets}
            assert touched == {(ch, r, c) for ch in range(3) for r in range(2) for c in range(2)}  # rows 100:700, columns 200:1000
            tile = scene.detail
            assert tile is not None and tile.level == 0 and tile.covers(100, 700, 200, 1000)
            np.testing.assert_array_equal(tile.values[..., 0], corner[0, tile.r0:tile.r1, tile.c0:tile.c1])
    finally:
        h.close()
