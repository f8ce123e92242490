"""A composite exports as the view draws it: the PNG of a 3-channel OME-Zarr image (written by
ome-zarr-py with omero colours and windows) equals the composite by the specification's rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import zarrview.zarrlib as zl
from zarrview.viewing.export.plane import export_plane, image_spec
from zarrview.viewing.ome import OmeImage, detect

from ome_stores import ome_zarr_image
from png_decode import decode_png
from test_channels import OMERO, truth


def test_a_composite_png_is_the_composite(tmp_path: Path) -> None:
    data = np.random.default_rng(12).integers(0, 4096, (3, 2, 40, 30), dtype="u2")
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, "czyx", scale_factors=(2,), chunks=(1, 1, 16, 16),
                          omero=OMERO)
    image = detect(zl.open(path))  # type: ignore[arg-type]
    assert isinstance(image, OmeImage)
    spec = image_spec(image)
    assert spec.channels and spec.channel_dim == 0
    export_plane(spec, tmp_path / "out.png")
    png = decode_png((tmp_path / "out.png").read_bytes())
    z = 1  # rdefs defaultZ
    expected = np.round(truth(np.moveaxis(data[:, z], 0, -1).astype(float), OMERO["channels"]) * 255)
    assert png.shape == (40, 30, 3)
    assert np.abs(png.astype(int) - expected.astype(int)).max() <= 1
    # the raw values still export as they are, channel axis included, in the array's order
    export_plane(spec, tmp_path / "out.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), data[:, z])
