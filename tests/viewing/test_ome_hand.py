"""Stores built by hand for what no writer makes: anisotropic and non-2 factors, Z-downsampled
levels, translations with a multiscale-level transform, several multiscales, sharded levels,
sparse plates, bioformats2raw with and without OME/series (listed and, over HTTP, probed)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

import zarrview.zarrlib as zl
from ome_stores import bioformats2raw, hand_image, ome_attrs, pattern, write_group
from zarrview.viewing.ome import Bioformats2raw, OmeImage, OmePlate, detect, pyramid

VERSIONS = ("0.4", "0.5")


def _errors(node: object) -> list[str]:
    return [str(p) for p in node.problems if p.severity == "error"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", VERSIONS)
def test_anisotropic_non_2_factors_and_z_downsampled_levels(tmp_path: Path, version: str) -> None:
    levels = [((30, 300, 300), (2.0, 0.2, 0.2), None),
              ((30, 100, 100), (2.0, 0.6, 0.6), None),      # factor 3 in y and x only
              ((10, 34, 34), (6.0, 1.8, 1.8), None)]        # then 3 in z too
    path = hand_image(tmp_path / "a.zarr", version, levels, "zyx", chunks=(8, 64, 64),
                      units={"z": "micrometer", "y": "micrometer", "x": "micrometer"})
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    ms = img.first
    assert [lv.shape for lv in ms.levels] == [(30, 300, 300), (30, 100, 100), (10, 34, 34)]
    assert [pyramid.pixel_size(lv) for lv in ms.levels] == [(2, 0.2, 0.2), (2, 0.6, 0.6), (6, 1.8, 1.8)]
    assert [tuple(round(f, 9) for f in fs) for fs in pyramid.factors(ms.levels)] == [(1, 1, 1), (1, 3, 3), (3, 9, 9)]
    assert [lv.chunk_counts for lv in ms.levels] == [(4, 5, 5), (4, 2, 2), (2, 1, 1)]
    # an XY view at 1:4 wants the factor-3 level, at 1:10 the last (Z-downsampled) one
    assert pyramid.choose_level(ms.levels, {1: 4.0, 2: 4.0}) == 1
    assert pyramid.choose_level(ms.levels, {1: 10.0, 2: 10.0}) == 2
    # an XZ view at 1:4 in x but 1:1 in z cannot use the Z-downsampled level
    assert pyramid.choose_level(ms.levels, {0: 1.0, 2: 10.0}) == 1
    assert pyramid.map_index(ms.levels[0], ms.levels[2], 0, 29) == 9


@pytest.mark.parametrize("version", VERSIONS)
def test_translations_combine_with_the_multiscale_transform(tmp_path: Path, version: str) -> None:
    levels = [((64, 64), (1.0, 1.0), (0.0, 0.0)), ((32, 32), (2.0, 2.0), (0.5, 0.5)),
              ((11, 11), (6.0, 6.0), (2.5, 2.5))]
    group = [{"type": "scale", "scale": [0.25, 0.5]}, {"type": "translation", "translation": [100.0, -3.0]}]
    path = hand_image(tmp_path / "t.zarr", version, levels, "yx", multiscale_transforms=group)
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    got = [(lv.scale, lv.translation) for lv in img.first.levels]
    assert got == [((0.25, 0.5), (100.0, -3.0)), ((0.5, 1.0), (100.125, -2.75)), ((1.5, 3.0), (100.625, -1.75))]
    # level 0's rows 0..64 are level 1's 0..32 and level 2's 0..10.67: every level covers the same place
    lv = img.first.levels
    assert pyramid.to_level(lv, 1, ((0, 64), (0, 64))) == ((0, 32), (0, 32))
    assert pyramid.to_level(lv, 2, ((0, 63), (0, 63))) == ((0, 10.5), (0, 10.5))
    assert pyramid.covering(lv[2], pyramid.to_level(lv, 2, ((0, 64), (0, 64)))) == ((0, 11), (0, 11))


@pytest.mark.parametrize("version", VERSIONS)
def test_several_multiscales_are_all_read_the_first_by_default(tmp_path: Path, version: str) -> None:
    path = hand_image(tmp_path / "m.zarr", version, [((32, 32), (1, 1), None), ((16, 16), (2, 2), None)], "yx",
                      name="full", more_multiscales=[{"name": "max projection", "levels": [("mip0", (8, 8), (4, 4))]}])
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    assert [ms.name for ms in img.multiscales] == ["full", "max projection"] and img.first.name == "full"
    assert [lv.path for lv in img.multiscales[1].levels] == ["mip0"]
    np.testing.assert_array_equal(img.multiscales[1].levels[0].array[...], pattern((8, 8)))  # type: ignore[index]


def test_sharded_levels_count_chunks_and_shards(tmp_path: Path) -> None:
    names = ["y", "x"]
    attrs = ome_attrs("0.5", multiscales=[{"axes": [{"name": n, "type": "space"} for n in names], "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}])
    path = write_group(tmp_path / "s.zarr", "0.5", attrs, {"0": {"shape": (100, 70), "chunks": (10, 10),
                                                                 "shards": (50, 20), "dimension_names": names}})
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.problems == ()
    lv = img.first.levels[0]
    assert (lv.chunks, lv.shards, lv.chunk_counts, lv.shard_counts) == ((10, 10), (50, 20), (10, 7), (2, 4))


@pytest.mark.parametrize("version", VERSIONS)
def test_sparse_plate_with_bioformats2raw_layout(tmp_path: Path, version: str) -> None:
    plate = {"rows": [{"name": r} for r in "ABCDEFGH"], "columns": [{"name": str(c)} for c in range(1, 13)],
             "wells": [{"path": "B/12", "rowIndex": 1, "columnIndex": 11}, {"path": "H/1", "rowIndex": 7, "columnIndex": 0}],
             "field_count": 3}
    path = write_group(tmp_path / "p.zarr", version, ome_attrs(version, plate=plate, **{"bioformats2raw.layout": 3}))
    node = detect(zl.open(str(path)))
    assert isinstance(node, OmePlate) and node.problems == (), node.problems
    assert node.bioformats2raw and node.field_count == 3 and node.acquisitions == ()
    assert [(w.row, w.column) for w in node.wells] == [(1, 11), (7, 0)]
    assert sum(node.well_at(r, c) is not None for r in range(8) for c in range(12)) == 2


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("series_attr", [True, False])
def test_bioformats2raw_lists_every_series(tmp_path: Path, version: str, series_attr: bool) -> None:
    path = bioformats2raw(tmp_path / "bf.zarr", version, 12, series_attr=series_attr)
    node = detect(zl.open(str(path)))
    assert isinstance(node, Bioformats2raw) and node.problems == (), node.problems
    assert node.series == tuple(str(i) for i in range(12))  # numerically ordered, not 0, 1, 10, 11, 2
    assert node.series_from == ("OME/series" if series_attr else "numbered groups")
    for s in node.series:
        img = detect(zl.open(f"{path}::/{s}"))
        assert isinstance(img, OmeImage) and img.name == f"series {s}"


@pytest.mark.parametrize("version", VERSIONS)
def test_bioformats2raw_series_paths_from_the_ome_group(tmp_path: Path, version: str) -> None:
    path = bioformats2raw(tmp_path / "bf.zarr", version, 2, series_attr=True, names=["first", "second/image"])
    node = detect(zl.open(str(path)))
    assert isinstance(node, Bioformats2raw) and node.series == ("first", "second/image")


@pytest.mark.parametrize("version", VERSIONS)
def test_bioformats2raw_over_http_probes_the_numbered_groups(tmp_path: Path, version: str,
                                                             files_over_http: str) -> None:
    """A server that cannot list: series 0, 1, 2 are found by asking for each until one is missing."""
    path = bioformats2raw(tmp_path / "bf.zarr", version, 3, series_attr=False)
    node = detect(zl.open(files_over_http + quote(str(path.resolve()))))
    assert isinstance(node, Bioformats2raw) and node.series == ("0", "1", "2")
    assert node.series_from == "numbered groups"


def test_a_gap_in_the_numbered_series_is_reported(tmp_path: Path) -> None:
    path = bioformats2raw(tmp_path / "bf.zarr", "0.4", 3, series_attr=False)
    import shutil

    shutil.rmtree(path / "1")
    node = detect(zl.open(str(path)))
    assert isinstance(node, Bioformats2raw) and node.series == ("0", "2")
    assert any("consecutively" in p.message for p in node.problems)
