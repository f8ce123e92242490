"""The series a click on an image asks for, without Qt: along time, else z, else the channels;
one line per channel shown, in its colour and named with its label; x in the OME axis's
physical units. Checked on images ome-zarr-py wrote and on metadata written by hand, against
numpy and the metadata as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.image.channels import palette
from zarrview.viewing.image.state import ViewState, initial_state
from zarrview.viewing.line.at_point import point_query, series_dim
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.view import image_state
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from test_series import SeriesHarness

pytest.importorskip("ome_zarr")
from ome_stores import hand_image, ome_zarr_image  # noqa: E402

MICRONS = {"z": "micrometer", "y": "micrometer", "x": "micrometer"}
OMERO = {"channels": [
    {"label": "DAPI", "color": "0000FF", "window": {"start": 0, "end": 500, "min": 0, "max": 65535}, "active": True},
    {"label": "GFP", "color": "00FF00", "window": {"start": 0, "end": 500, "min": 0, "max": 65535}, "active": False},
    {"label": "mCherry", "color": "FF0000", "window": {"start": 0, "end": 500, "min": 0, "max": 65535}, "active": True}],
    "rdefs": {"model": "color"}}


def _opened(path: Path, store: Any = None) -> tuple[ViewState, OmeImage]:
    img = detect(zl.open(store if store is not None else str(path)))  # type: ignore[arg-type]
    assert isinstance(img, OmeImage)
    state = image_state(img)
    assert state is not None
    return state, img


def _written_level0(path: Path) -> dict[str, list[float]]:
    """Level 0's scale and translation as the writer stored them."""
    attrs: dict[str, Any] = dict(zarr.open_group(str(path), mode="r").attrs)
    ms: dict[str, Any] = attrs.get("ome", attrs)["multiscales"][0]
    out: dict[str, list[float]] = {"translation": [0.0] * len(ms["axes"])}
    for t in ms["datasets"][0]["coordinateTransformations"]:
        out[t["type"]] = t[t["type"]]
    return out


@pytest.mark.parametrize(("axes", "shape", "want"), [
    ("tczyx", (4, 3, 5, 16, 16), "t"),
    ("tczyx", (1, 3, 5, 16, 16), "z"),   # one time point: nothing to plot along it
    ("czyx", (3, 5, 16, 16), "z"),
    ("czyx", (3, 1, 16, 16), "c"),       # one plane: the channels are all there is
    ("cyx", (3, 16, 16), "c"),
    ("tcyx", (5, 2, 16, 16), "t"),
    ("zyx", (6, 16, 16), "z"),
])
def test_the_default_dimension_is_time_then_z_then_the_channels(tmp_path: Path, axes: str, shape: tuple[int, ...],
                                                                 want: str) -> None:
    data = np.arange(int(np.prod(shape)), dtype="u2").reshape(shape)
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, axes, scale_factors=())
    state, img = _opened(path)
    assert axes[series_dim(state, img.first.axes) or 0] == want
    query = point_query(state, 3, 4, img.first.axes)
    assert query is not None and axes[query.dim] == want


def test_plain_arrays_prefer_a_dimension_named_time_or_z_with_more_than_one_element(tmp_path: Path) -> None:
    cases = ((("sample", "time", "y", "x"), (3, 4), 1), (("sample", "z", "y", "x"), (3, 4), 1),
             (("a", "b", "y", "x"), (3, 4), 0), (("time", "b", "y", "x"), (1, 4), 1))
    for i, (names, lead, want) in enumerate(cases):
        zarr.create_array(tmp_path / str(i), shape=(*lead, 8, 8), dtype="f4", dimension_names=names)[...] = 1
        state = initial_state(zl.open(tmp_path / str(i)))  # type: ignore[arg-type]
        assert (state.y_dim, state.x_dim) == (2, 3) and series_dim(state) == want, names
        query = point_query(state, 1, 2)
        assert query is not None and query.dim == want and query.lines == () and query.point == (0, 0, 1, 2)
    assert series_dim(initial_state(zl.open(tmp_path / "0")).with_(y_dim=0, x_dim=1)) == 2  # type: ignore[arg-type]


def test_x_is_scale_times_index_plus_translation_in_the_axis_unit(tmp_path: Path) -> None:
    path = hand_image(tmp_path / "hand.zarr", "0.4",
                      [((3, 2, 5, 8, 8), (30.0, 1.0, 2.0, 0.5, 0.25), (60.0, 0.0, 5.0, 0.25, 0.125))], "tczyx",
                      units={"t": "second", **MICRONS})
    state, img = _opened(path)
    state = state.with_(indices=(1, 0, 2, 0, 0))
    meta = _written_level0(path)
    query = point_query(state, 3, 6, img.first.axes)
    assert query is not None and query.dim == 0
    for d, n, heading in ((0, 3, "t (s)"), (2, 5, "z (µm)"), (3, 8, "y (µm)"), (4, 8, "x (µm)")):
        want = meta["scale"][d] * np.arange(n) + meta["translation"][d]
        np.testing.assert_array_equal(query.axis(d).values, want)
        assert query.axis(d).heading == heading
    assert query.axis(1).heading == "c"
    # the title says where the line lies in µm; the channels are named by the lines, not the title
    assert [line.label for line in query.lines] == ["channel 0", "channel 1"]
    h = SeriesHarness()
    try:
        h.show(query)
        s = h.settle()
        assert s.title.endswith("at z=9 µm, y=1.75 µm, x=1.625 µm") and s.x_label == "t (s)"
        np.testing.assert_array_equal(s.x, meta["scale"][0] * np.arange(3) + meta["translation"][0])
        h.along(2)
        s = h.settle()
        assert s.x_label == "z (µm)" and s.title.endswith("at t=90 s, y=1.75 µm, x=1.625 µm")
        np.testing.assert_array_equal(s.x, 2.0 * np.arange(5) + 5.0)
    finally:
        h.close()


@pytest.fixture(params=["0.4", "0.5"])
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, np.ndarray]:
    """Three channels of five 2 µm planes, chunked two channels and two planes at a time."""
    data = np.random.default_rng(7).integers(1, 4000, (3, 5, 16, 16)).astype("u2")
    path = ome_zarr_image(tmp_path / "stack.zarr", request.param, data, "czyx", scale_factors=(), chunks=(2, 2, 8, 8),
                          scale={"z": 2.0, "y": 0.5, "x": 0.5}, units=MICRONS, omero=OMERO)
    return path, data


def test_one_line_per_active_channel_in_its_colour(stack: tuple[Path, np.ndarray]) -> None:
    path, data = stack
    store = CountingStore(LocalStore(path))
    state, img = _opened(path, store)
    assert state.composite
    query = point_query(state, 5, 11, img.first.axes)
    assert query is not None and query.dim == 1 and query.across == 0
    h = SeriesHarness()
    try:
        store.reset()
        h.show(query)
        s = h.settle()
        assert s.message is None and not s.notes and not s.busy
        assert [(line.label, line.color) for line in s.lines] == [("DAPI", (0, 0, 255)), ("mCherry", (255, 0, 0))]
        for line, c in zip(s.lines, (0, 2)):
            np.testing.assert_array_equal(line.y, data[c, :, 5, 11].astype("f8"))
        meta = _written_level0(path)
        np.testing.assert_array_equal(s.x, meta["scale"][1] * np.arange(5) + meta["translation"][1])
        # the lines cross 3 chunks along z in each of the 2 channel chunks; each chunk is read once
        assert s.done == s.total == 6 and store.chunk_reads() == 6
        assert "2 lines of 5 values" in s.status
        # one channel at a time: the line of the channel on the slider
        single = state.with_channel_mode("single").with_(indices=(1, 0, 0, 0))
        query = point_query(single, 5, 11, img.first.axes)
        assert query is not None and query.dim == 1
        h.show(query)
        s = h.settle()
        assert [(line.label, line.color) for line in s.lines] == [("GFP", (0, 255, 0))]
        np.testing.assert_array_equal(s.y, data[1, :, 5, 11].astype("f8"))
        # along the channels: one line across them, the channels' labels on the ticks
        h.show(point_query(state, 5, 11, img.first.axes, dim=0))  # type: ignore[arg-type]
        s = h.settle()
        assert len(s.lines) == 1 and s.lines[0].label == "" and s.x_label == "c"
        np.testing.assert_array_equal(s.y, data[:, 0, 5, 11].astype("f8"))
        assert s.x_format is not None and [s.x_format(v) for v in (0.0, 1.0, 2.0, 0.5)] == ["DAPI", "GFP", "mCherry", ""]
    finally:
        h.close()


def test_a_corrupt_chunk_costs_only_its_channels(tmp_path: Path) -> None:
    data = np.random.default_rng(8).integers(1, 4000, (3, 6, 8, 8)).astype("u2")
    path = ome_zarr_image(tmp_path / "bad.zarr", "0.4", data, "czyx", scale_factors=(), chunks=(1, 2, 8, 8),
                          units=MICRONS)
    state, img = _opened(path)
    chunk = path / img.first.levels[0].path / "1" / "1" / "0" / "0"  # channel 1, planes 2 and 3
    assert chunk.is_file()
    chunk.write_bytes(b"not a chunk")
    query = point_query(state, 2, 3, img.first.axes)
    assert query is not None and [line.color for line in query.lines] == palette(3)
    h = SeriesHarness()
    try:
        h.show(query)
        s = h.settle()
        assert len(s.notes) == 1 and "1.1.0.0" in s.notes[0].replace("/", ".")
        for c, line in enumerate(s.lines):
            want = data[c, :, 2, 3].astype("f8")
            if c == 1:
                want[2:4] = np.nan
            np.testing.assert_array_equal(line.y, want)
    finally:
        h.close()


def test_an_rgb_picture_gives_its_red_green_and_blue_as_lines(tmp_path: Path) -> None:
    data = np.random.default_rng(3).integers(0, 255, (6, 10, 12, 3), dtype="u1")
    zarr.create_array(tmp_path / "rgb", shape=data.shape, chunks=(2, 10, 12, 3), dtype="u1",
                      dimension_names=["time", "y", "x", "rgb"])[...] = data
    arr = zl.open(tmp_path / "rgb")
    state = initial_state(arr, colour=True)  # type: ignore[arg-type]
    assert state.channel_dim == 3 and not state.composite
    query = point_query(state, 4, 7)
    assert query is not None and query.dim == 0 and query.spread
    assert [(line.index, line.label) for line in query.lines] == [(0, "red"), (1, "green"), (2, "blue")]
    h = SeriesHarness()
    try:
        h.show(query)
        s = h.settle()
        assert len(s.lines) == 3
        for k, line in enumerate(s.lines):
            np.testing.assert_array_equal(line.y, data[:, 4, 7, k])
    finally:
        h.close()
