"""OME-Zarr 0.6 written by ngff-zarr 0.50 (its default version): what ``detect`` finds and where
the image view places each level, against what ngff-zarr reads back (scale, translation and
units per level, shapes, pixel values) and the numbers it was given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

nz = pytest.importorskip("ngff_zarr")

import zarrview.zarrlib as zl  # noqa: E402
from ome_stores import pattern  # noqa: E402
from zarrview.viewing.image.levels import level_views  # noqa: E402
from zarrview.viewing.ome import OmeImage, detect, pyramid  # noqa: E402
from zarrview.viewing.ome.view import image_state  # noqa: E402

# (dims, shape, scale, translation, units, scale factors): a plain plane, and a 5-D image with
# time, channels, Z downsampled only at the last level and anisotropic pixels
IMAGES: dict[str, tuple[str, tuple[int, ...], dict[str, float], dict[str, float], dict[str, str], list[Any]]] = {
    "yx": ("yx", (64, 96), {"y": 0.5, "x": 0.25}, {"y": 10.0, "x": -3.0},
           {"y": "micrometer", "x": "micrometer"}, [2, 4]),
    "tczyx": ("tczyx", (2, 2, 8, 32, 48), {"t": 1.5, "c": 1.0, "z": 2.0, "y": 0.3, "x": 0.4},
              {"t": 0.0, "c": 0.0, "z": 1.0, "y": -5.0, "x": 7.5},
              {"t": "second", "z": "micrometer", "y": "nanometer", "x": "nanometer"},
              [{"z": 1, "y": 2, "x": 2}, {"z": 2, "y": 4, "x": 4}]),
}


@pytest.fixture(scope="module", params=sorted(IMAGES))
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Any]:
    dims, shape, scale, translation, units, factors = IMAGES[request.param]
    path = tmp_path_factory.mktemp("nz") / "img.ome.zarr"
    image = nz.to_ngff_image(pattern(shape), dims=list(dims), scale=scale, translation=translation,
                             axes_units=units, name="written")
    nz.to_ngff_zarr(str(path), nz.to_multiscales(image, scale_factors=factors), version="0.6")
    return request.param, path, nz.from_ngff_zarr(str(path))


def test_the_store_is_0_6(written: tuple[str, Path, Any]) -> None:
    _, path, _ = written
    attrs = zl.open(str(path)).attrs
    assert attrs["ome"]["version"] == "0.6" and "coordinateSystems" in attrs["ome"]["multiscales"][0]


def test_levels_units_shapes_and_pixels_match_the_writer(written: tuple[str, Path, Any]) -> None:
    name, path, ref = written
    dims = IMAGES[name][0]
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.version == "0.6"
    assert img.problems == (), img.problems
    ms = img.first
    assert [a.name for a in ms.axes] == list(dims)
    assert [a.unit for a in ms.axes] == [ref.images[0].axes_units.get(d) for d in dims]
    assert len(ms.levels) == len(ref.images) == 3
    for lv, im in zip(ms.levels, ref.images):
        assert list(im.dims) == list(dims)
        assert lv.scale == pytest.approx(tuple(im.scale[d] for d in dims), rel=1e-12)
        assert lv.translation == pytest.approx(tuple(im.translation[d] for d in dims), rel=1e-12, abs=1e-12)
        assert lv.shape == tuple(im.data.shape)
        assert lv.array is not None
        np.testing.assert_array_equal(lv.array[...], np.asarray(im.data))
    # the written numbers themselves at level 0
    _, _, scale, translation, units, _ = IMAGES[name]
    assert ms.levels[0].scale == tuple(scale[d] for d in dims)
    assert ms.levels[0].translation == tuple(translation[d] for d in dims)


def test_levels_overlay_level_0(written: tuple[str, Path, Any]) -> None:
    """Each level's tile lands over level 0's: level-0 coordinate = a * level coordinate + b,
    with a the ratio of pixel sizes and b where its pixel 0's edge lies, from ngff-zarr's numbers."""
    name, path, ref = written
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage)
    state = image_state(img)
    assert state is not None
    s0 = ref.images[0]
    for k, im in enumerate(ref.images):
        view, _ = level_views(state.with_(level=k))
        assert view.index == k
        for (a, b), d in ((view.rows, state.y_dim), (view.cols, state.x_dim)):
            axis = IMAGES[name][0][d]
            ratio = im.scale[axis] / s0.scale[axis]
            edge = (im.translation[axis] - im.scale[axis] / 2 - (s0.translation[axis] - s0.scale[axis] / 2)) \
                / s0.scale[axis]
            assert (a, b) == pytest.approx((ratio, edge), abs=1e-9)
        # and the physical extent of every level is level 0's (the shapes divide evenly here)
        full = tuple((0.0, float(n)) for n in img.first.levels[k].shape)
        first = tuple((0.0, float(n)) for n in img.first.levels[0].shape)
        np.testing.assert_allclose(pyramid.to_physical(img.first.levels[k], full)[-2:],
                                   pyramid.to_physical(img.first.levels[0], first)[-2:], atol=1e-9)
