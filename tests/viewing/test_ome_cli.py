"""``zarrview info`` describes the OME metadata of a group; ``zarrview tree`` marks images,
label images, labels groups, plates, wells and bioformats2raw collections."""

from __future__ import annotations

from pathlib import Path

import pytest

from ome_stores import bioformats2raw, hand_image, ome_attrs, write_group
from zarrview.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_info_describes_an_ome_image(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str) -> None:
    omero = {"channels": [{"label": "DAPI", "color": "0000FF", "window": {"start": 1, "end": 9, "min": 0, "max": 255}},
                          {"label": "GFP", "color": "00FF00", "active": False}]}
    path = hand_image(tmp_path / "img.zarr", version, [((2, 40, 60), (1, 0.5, 0.25), None),
                                                       ((2, 20, 20), (1, 1.0, 0.75), (0, 0.25, 0.25))],
                      "cyx", chunks=(1, 16, 16), units={"y": "micrometer", "x": "micrometer"}, extra={"omero": omero})
    out = _run(capsys, "info", str(path))
    assert f"OME-NGFF image (version {version})" in out
    assert "Axes: c (channel), y (space, micrometer), x (space, micrometer)" in out
    assert "0  path '0'  shape (2, 40, 60)  scale (1, 0.5, 0.25)  chunks (1, 16, 16): 24 (2×3×4)  uint16" in out
    assert "1  path '1'  shape (2, 20, 20)  scale (1, 1, 0.75)  translation (0, 0.25, 0.25)  chunks (1, 16, 16): 8 (2×2×2)" in out
    assert "0: DAPI  color 0000FF  window 1–9 of 0–255  active" in out
    assert "1: GFP  color 00FF00  no window  inactive" in out
    prefix = "$.ome." if version == "0.5" else "$."
    assert f"error: /: {prefix}omero.channels[1]: channel 1 ('GFP') has no \"window\"" in out
    assert out.index("OME-NGFF image") < out.index("Attributes:")


def test_tree_marks_ome_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_group(tmp_path / "all.zarr", "0.5", {})
    hand_image(root / "img", "0.5", [((32, 32), (1, 1), None), ((16, 16), (2, 2), None)], "yx")
    write_group(root / "img" / "labels", "0.5", ome_attrs("0.5", labels=["cells"]))
    hand_image(root / "img" / "labels" / "cells", "0.5", [((32, 32), (1, 1), None), ((16, 16), (2, 2), None)], "yx",
               dtype="uint8", extra={"image-label": {"colors": []}})
    plate = {"rows": [{"name": "A"}], "columns": [{"name": "1"}, {"name": "2"}],
             "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0}]}
    write_group(root / "plate", "0.5", ome_attrs("0.5", plate=plate))
    write_group(root / "plate" / "A", "0.5", {})
    write_group(root / "plate" / "A" / "1", "0.5", ome_attrs("0.5", well={"images": [{"path": "0"}]}))
    bioformats2raw(root / "bf", "0.5", 2, series_attr=True)
    out = _run(capsys, "tree", str(root))
    lines = out.splitlines()

    def line(name: str) -> str:
        return next(x for x in lines if x.split("── ")[-1].startswith(name + "  "))

    assert line("img").endswith("group  v3  [OME image 0.5, 2 levels]")
    assert line("labels").endswith("[OME labels 0.5, 1]")
    assert line("cells").endswith("[OME label 0.5, 2 levels]")
    assert line("plate").endswith("[OME plate 0.5, 1x2, 1 wells]")
    assert any(x.endswith("── 1  group  v3  [OME well 0.5, 1 fields]") for x in lines)
    assert line("bf").endswith("[OME bioformats2raw 0.5]")
    assert lines[0].endswith("group  v3")  # no OME metadata, no mark


def test_info_lists_every_bioformats2raw_series(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bioformats2raw(tmp_path / "bf.zarr", "0.4", 3, series_attr=False)
    out = _run(capsys, "info", str(path))
    assert "Series (3, from numbered groups): 0, 1, 2" in out
