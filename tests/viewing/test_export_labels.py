"""An exported PNG of an OME-Zarr image draws its shown label layers as the window does: each
pixel blended with the colour of the label under it (image-label colours, the palette for the
rest, 0 transparent) at the layer's opacity, at full resolution and at a chosen pyramid level
(the label level matching it); hidden layers are left out; ``zarrview export --labels``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.cli import main
from zarrview.viewing.export.plane import export_plane, image_spec
from zarrview.viewing.labels.export import overlays
from zarrview.viewing.labels.layers import labels_group, layers_of, palette
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.view import image_state

from png_decode import decode_png

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402
from test_labels import _label  # noqa: E402  (17 and 5 coloured by the metadata, 3 by the palette)

N = 64
COLOURS = {17: (255, 0, 0, 255), 5: (0, 255, 0, 128)}
META = {"colors": [{"label-value": k, "rgba": list(v)} for k, v in COLOURS.items()]}


def _store(tmp_path: Path, version: str) -> Path:
    image = (np.arange(N * N).reshape(N, N) % 251).astype("u1")
    return ome_zarr_image(tmp_path / "img.zarr", version, image, "yx", labels={"nuclei": _label()},
                          label_metadata=META)


def _open(path: Path) -> tuple[OmeImage, tuple]:  # type: ignore[type-arg]
    root = zl.open(str(path))
    image = detect(root, labels=False)
    assert isinstance(image, OmeImage)
    return image, layers_of(labels_group(root))


def _png(spec, path: Path) -> np.ndarray:  # type: ignore[no-untyped-def]
    export_plane(spec, path)
    return decode_png(path.read_bytes()).astype(np.float64)


def _expected(base: np.ndarray, label: np.ndarray, opacity: float) -> np.ndarray:
    """``base`` with the label's colours over it, computed here from the stated colours."""
    rgba = palette(label).astype(np.float64)
    for value, colour in COLOURS.items():
        rgba[label == value] = colour
    alpha = rgba[..., 3:4] / 255.0 * opacity
    return np.rint(base[..., :3] * (1 - alpha) + rgba[..., :3] * alpha)


@pytest.mark.parametrize("version", ["0.4", "0.5"])
@pytest.mark.parametrize("level", [0, 1])
def test_png_blends_the_labels_at_the_exported_level(tmp_path: Path, version: str, level: int) -> None:
    path = _store(tmp_path, version)
    image, layers = _open(path)
    plain = _png(image_spec(image, None, level), tmp_path / "plain.png")
    spec = image_spec(image, None, level, layers)
    assert len(spec.labels) == 1
    drawn = _png(spec, tmp_path / "labels.png")
    # the label level written by ome-zarr-py for this image level, read by zarr-python
    label_path = next(lv.path for lv in layers[0].levels if lv.index == level)
    label = zarr.open_group(str(path), mode="r")[f"labels/nuclei/{label_path}"][...]
    assert label.shape == plain.shape[:2]
    expected = _expected(plain, label, layers[0].opacity)
    assert np.abs(drawn - expected).max() <= 1
    assert (drawn != plain).any(axis=-1).sum() == np.count_nonzero(label)  # every labelled pixel changed


def test_opacity_and_hidden_layers(tmp_path: Path) -> None:
    path = _store(tmp_path, "0.5")
    image, layers = _open(path)
    plain = _png(image_spec(image), tmp_path / "plain.png")
    opaque = _png(image_spec(image, None, 0, (layers[0].with_(opacity=1.0),)), tmp_path / "opaque.png")
    assert np.array_equal(opaque[10, 10, :3], [255, 0, 0])  # label 17, alpha 255, opacity 1
    assert np.abs(opaque - _expected(plain, _label(), 1.0)).max() <= 1
    state = image_state(image).with_(labels=(layers[0].with_(visible=False),))
    assert overlays(state, 0) == ()


def test_label_under_a_finer_image_is_drawn_by_nearest_element(tmp_path: Path) -> None:
    """A label image at half the image's resolution (scale 2 in its own metadata) covers each
    of its elements with 2 x 2 image pixels."""
    path = _store(tmp_path, "0.5")
    root = zarr.open_group(str(path), mode="r+")
    image, layers = _open(path)
    lab_levels = layers[0].levels
    half = next(lv for lv in lab_levels if lv.index == 1)  # the label's level 1: (32, 32), scale 2
    layer = layers[0].with_(levels=(half,))
    del root  # nothing was written
    plain = _png(image_spec(image), tmp_path / "plain.png")
    drawn = _png(image_spec(image, None, 0, (layer,)), tmp_path / "half.png")
    coarse = np.asarray(half.array.read())
    label = np.repeat(np.repeat(coarse, 2, axis=0), 2, axis=1)
    assert np.abs(drawn - _expected(plain, label, layer.opacity)).max() <= 1


def test_cli_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _store(tmp_path, "0.4")
    image, layers = _open(path)
    reference = _png(image_spec(image, None, 1, layers), tmp_path / "ref.png")
    assert main(["export", str(path), "--level", "1", "--labels", "-o", str(tmp_path / "all.png")]) == 0
    assert np.array_equal(decode_png((tmp_path / "all.png").read_bytes()), reference)
    assert main(["export", str(path), "--labels", "nuclei", "-o", str(tmp_path / "named.png")]) == 0
    assert main(["export", str(path), "--labels", "cells", "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "--labels cells" in err and "no such label image" in err and "nuclei" in err
    assert main(["export", f"{path}::/{image.first.levels[0].path}", "--labels", "-o", str(tmp_path / "y.png")]) == 2
    assert "--labels is for an OME-Zarr image group" in capsys.readouterr().err
