"""The metadata panel's Attributes tab for CF, xarray, NCZarr and GeoZarr attributes.

The truth for the marks is where each key is defined: CF 1.12 appendix A (the specification's
text, copied into tests/data/cf) for CF attributes, xarray's ``_ARRAY_DIMENSIONS`` as xarray
writes it, netCDF-C's ``_nczarr_array``, the GeoZarr ``proj:``/``spatial:`` keys; the stores are
written at test time by xarray and zarr-python. The panel reads nothing: the store is deleted before it is shown.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.app.attributes_view import CONVENTION_ROLE, GEO_SECTION, AttributesView
from zarrview.app.metadata_panel import MetadataPanel

xr = pytest.importorskip("xarray")
APPENDIX_A = Path(__file__).resolve().parents[1] / "data" / "cf" / "appa.adoc"


def appendix_a() -> set[str]:
    """The attribute names of CF's Table A.1 (its rows start with ``| **`name`**``)."""
    return set(re.findall(r"^\|\s*\*\*`([A-Za-z_]+)`\*\*", APPENDIX_A.read_text(), re.M))


@pytest.fixture
def panel(qtbot: Any, worker_pool: Any) -> MetadataPanel:
    p = MetadataPanel(worker_pool)
    qtbot.addWidget(p)
    p.resize(700, 420)
    p.show()
    p.setCurrentWidget(p.attrs)
    return p


def xarray_store(path: Path) -> Path:
    ds = xr.Dataset({"t2m": (("lat", "lon"), np.zeros((2, 3)), {"long_name": "2 metre temperature", "units": "K",
                                                                 "my_note": "kept", "history": "made today"})},
                    coords={"lat": ("lat", [10.0, 20.0], {"units": "degrees_north"})})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=2, mode="w", encoding={"t2m": {"dtype": "int16", "scale_factor": 0.5}})
    return path


def test_convention_keys_are_tagged_and_explained(panel: MetadataPanel, tmp_path: Path) -> None:
    path = xarray_store(tmp_path / "x.zarr")
    node = zl.open(f"{path}::/t2m")
    shutil.rmtree(path)  # everything shown comes from memory
    panel.show_node(node)
    tags = panel.attrs.conventions()
    cf = appendix_a()
    assert len(cf) > 60
    assert {k for k, tag in tags.items() if tag == "CF"} == {k for k in node.attrs if k in cf}
    assert tags["_ARRAY_DIMENSIONS"] == "xarray" and "my_note" not in tags
    assert {"long_name", "units", "scale_factor", "history"} <= set(tags)
    top = panel.attrs.invisibleRootItem()
    items = {top.child(i).text(0): top.child(i) for i in range(top.childCount())}
    assert items["units"].text(1) == "K" and items["scale_factor"].text(1) == "0.5"  # values unchanged
    assert "CF conventions" in items["units"].toolTip(0) and "xarray" in items["_ARRAY_DIMENSIONS"].toolTip(0)
    assert not items["my_note"].toolTip(0)


def test_the_tag_is_drawn_beside_the_key(panel: MetadataPanel, qtbot: Any) -> None:
    view: AttributesView = panel.attrs
    view.show_attrs({"units": "K", "unitz": "K"})  # same width of key text, one a CF key
    qtbot.waitExposed(view)
    image = view.viewport().grab().toImage()
    top = view.invisibleRootItem()
    width = view.columnWidth(0)

    def marks(item: Any) -> int:
        rect = view.visualItemRect(item)
        key_end = rect.left() + view.fontMetrics().horizontalAdvance(item.text(0)) + 30
        base = image.pixelColor(width - 1, rect.center().y())
        return sum(image.pixelColor(x, y) != base for x in range(key_end, width - 1)
                   for y in range(rect.top() + 1, rect.bottom()))

    assert marks(top.child(0)) > 20 and marks(top.child(1)) == 0
    assert width >= view.fontMetrics().horizontalAdvance("units") + view.fontMetrics().horizontalAdvance("CF")
    assert top.child(0).data(0, CONVENTION_ROLE) == "CF" and top.child(1).data(0, CONVENTION_ROLE) is None


def test_geozarr_metadata_has_a_section(panel: MetadataPanel, tmp_path: Path) -> None:
    root = zarr.open_group(tmp_path / "geo.zarr", mode="w", zarr_format=3)
    root.attrs.update({
        "zarr_conventions": [{"name": "proj:", "uuid": "f17cb550"}, {"name": "spatial:"}],
        "proj:code": "EPSG:32633",
        "spatial:bbox": [500000.0, 4000000.0, 600000.0, 4100000.0],
        "proj:projjson": {"type": "ProjectedCRS", "name": "WGS 84 / UTM zone 33N"},
        "title": "scene",
    })
    node = zl.open(tmp_path / "geo.zarr")
    shutil.rmtree(tmp_path / "geo.zarr")
    panel.show_node(node)
    assert panel.attrs.geo_rows() == [
        ("zarr_conventions", "proj:, spatial:"),
        ("proj:code", "EPSG:32633"),
        ("spatial:bbox", "[500000, 4000000, 600000, 4100000]"),
        ("proj:projjson", "WGS 84 / UTM zone 33N (ProjectedCRS)"),
    ]
    top = panel.attrs.invisibleRootItem()
    assert top.child(0).text(0) == GEO_SECTION and top.child(0).isExpanded()
    tags = panel.attrs.conventions()
    assert tags == {"zarr_conventions": "GeoZarr", "proj:code": "GeoZarr", "spatial:bbox": "GeoZarr",
                    "proj:projjson": "GeoZarr", "title": "CF"}


def test_nczarr_and_odd_attributes_never_break_the_view(panel: MetadataPanel) -> None:
    view: AttributesView = panel.attrs
    odd = {"_nczarr_array": {"dimension_references": ["/x"]}, "_NCZARR_ATTR": {"types": {}},
           "scale_factor": "not a number", "_FillValue": None, "valid_range": [1, "two"], "": 3,
           "flag_values": [[1], {"a": 2}], "nested": {"units": "m"}}
    view.show_attrs(odd)
    tags = view.conventions()
    assert tags == {"_nczarr_array": "NCZarr", "_NCZARR_ATTR": "NCZarr", "scale_factor": "CF",
                    "_FillValue": "CF", "valid_range": "CF", "flag_values": "CF"}  # nested keys are not attributes
    top = view.invisibleRootItem()
    shown = {top.child(i).text(0): top.child(i).text(1) for i in range(top.childCount())}
    assert shown["scale_factor"] == "not a number" and shown["_FillValue"] == "None"  # the raw values
    assert shown["valid_range"] == "[2 items]" and view.geo_rows() == []
    view.show_attrs(["not", "a", "mapping"])
    assert top.childCount() == 1 and view.conventions() == {}
