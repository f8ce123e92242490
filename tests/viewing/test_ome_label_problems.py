"""An image's label images are checked once, against their image, whoever asks: ``zarrview
info`` (the image detected with its labels) and the window's OME tab (the image, then its
``labels`` group read apart) list the same problems, a label pyramid with fewer levels than its
image among them, on a store written by ome-zarr-py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.labels.layers import labels_group
from zarrview.viewing.ome import OmeImage, detect

pytest.importorskip("ome_zarr")


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ome_zarr.writer import write_image, write_labels

    path = tmp_path_factory.mktemp("ome") / "img.zarr"
    root = zarr.open_group(str(path), mode="w", zarr_format=2)
    data = np.arange(2 * 32 * 32, dtype="u2").reshape(2, 32, 32)
    write_image(data, root, axes="cyx", scale_factors=[2])  # two levels
    cells = (np.arange(32 * 32).reshape(32, 32) // 100 % 4).astype("u1")
    write_labels(cells[None], root, name="cells", axes="cyx")
    label = zarr.open_group(str(path / "labels" / "cells"), mode="r+", zarr_format=2)
    multiscales = label.attrs["multiscales"]
    multiscales[0]["datasets"] = multiscales[0]["datasets"][:1]  # a label pyramid of one level
    label.attrs["multiscales"] = multiscales
    return path


def _key(p: object) -> tuple[str, str, str, str]:
    return (p.severity, p.node, p.path, p.message)  # type: ignore[attr-defined]


def test_the_window_and_info_list_the_same_problems(image: Path) -> None:
    group = zl.open(str(image))
    assert isinstance(group, zl.Group)
    whole = detect(group)  # as info reads it
    alone = detect(group, labels=False)  # as the window reads the image first
    assert isinstance(whole, OmeImage) and isinstance(alone, OmeImage)
    labels = labels_group(group, alone)  # then its labels group, on a worker
    assert labels is not None and labels.labels == ("cells",)
    tab = sorted(map(_key, alone.problems + labels.problems))
    assert tab == sorted(map(_key, whole.problems))
    levels = [p for p in whole.problems if "has 1 levels; it MUST have as many as its image (2)" in p.message]
    assert len(levels) == 1 and levels[0].severity == "error" and levels[0].node == "/labels"


def test_info_prints_the_label_pyramid_error(image: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "zarrview", "info", str(image)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "label image 'cells' has 1 levels; it MUST have as many as its image (2)" in out.stdout
