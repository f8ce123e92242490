"""Label overlays in the view model (no Qt): label images written by ome-zarr-py become layers
with their colours (the last entry wins on repeats, a generated palette otherwise) and
properties; their planes are read in the same request as the image, at the label level matching
the image's (also for a label pyramid with fewer levels), and placed over it; the readout names
the label and its properties; showing, hiding and opacity redraw without a read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.labels.layers import LabelLayer, colorize, labels_group, layers_of, palette
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.model import Level
from zarrview.viewing.ome.view import image_state
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from view_harness import Harness

pytest.importorskip("ome_zarr")
from ome_stores import _fmt, ome_zarr_image, zarr_format  # noqa: E402

META = {"colors": [{"label-value": 17, "rgba": [0, 0, 255, 255]}, {"label-value": 5, "rgba": [0, 255, 0, 128]},
                   {"label-value": 17, "rgba": [255, 0, 0, 255]}],
        "properties": [{"label-value": 17, "area": 341, "class": "cell"}, {"label-value": 5, "class": "debris"}]}
N = 64


def _label() -> np.ndarray:
    lab = np.zeros((N, N), "u4")
    lab[8:24, 8:24] = 17
    lab[32:48, 4:60] = 5
    lab[50:60, 40:60] = 3
    return lab


def _image() -> np.ndarray:
    return (np.arange(N * N).reshape(N, N) % 251).astype("u1")


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


def _open(path: Path, store: CountingStore | None = None) -> tuple[OmeImage, tuple[LabelLayer, ...]]:
    root = zl.open(store if store is not None else str(path))
    image = detect(root, labels=False)  # as the window reads it: the labels afterwards
    assert isinstance(image, OmeImage)
    return image, layers_of(labels_group(root))


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_colours_last_entry_wins_properties_and_palette(tmp_path: Path, version: str) -> None:
    path = ome_zarr_image(tmp_path / "img.zarr", version, _image(), "yx", labels={"nuclei": _label()},
                          label_metadata=META)
    _, layers = _open(path)
    (layer,) = layers
    assert layer.name == "nuclei" and layer.visible and layer.axes == ("y", "x") and len(layer.levels) == 3
    assert dict(layer.colors) == {17: (255, 0, 0, 255), 5: (0, 255, 0, 128)}  # the second 17 wins
    assert dict(layer.properties) == {17: {"area": 341, "class": "cell"}, 5: {"class": "debris"}}
    rgba = colorize(_label(), layer)
    assert rgba.shape == (N, N, 4) and rgba.dtype == np.uint8
    assert tuple(rgba[10, 10]) == (255, 0, 0, 255) and tuple(rgba[40, 10]) == (0, 255, 0, 128)
    assert tuple(rgba[0, 0]) == (0, 0, 0, 0)  # 0 is the background: transparent
    assert tuple(rgba[55, 50]) == tuple(palette(np.array([3]))[0]) and rgba[55, 50, 3] == 255


def test_palette_is_distinct_and_deterministic() -> None:
    values = np.arange(1, 257)
    colours = palette(values)
    assert (colours[:, 3] == 255).all() and tuple(palette(np.array([0]))[0]) == (0, 0, 0, 0)
    assert len({tuple(c) for c in colours[:, :3]}) == 256
    # neighbouring values differ clearly (at least 40 levels in some channel)
    assert (np.abs(colours[1:, :3].astype(int) - colours[:-1, :3].astype(int)).max(axis=1) >= 40).all()
    np.testing.assert_array_equal(palette(values.astype("u8")), colours)  # by value, whatever the type
    np.testing.assert_array_equal(palette(values[::-1])[::-1], colours)


@pytest.mark.parametrize("dtype", ["u8", "i8", "i1", "u2"])
def test_colorize_any_integer_matches_a_per_value_lookup(dtype: str) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    pool = np.array(sorted({0, 1, 2, int(info.max), int(info.max) - 1, int(info.min), 2**62 % (int(info.max) + 1)}),
                    dtype=dtype)
    values = rng.choice(pool, size=(40, 30))
    stated = {int(info.max): (1, 2, 3, 4), int(info.min): (9, 8, 7, 6), 2**63 + 5: (5, 5, 5, 5), -(2**63) - 7: (1, 1, 1, 1)}
    layer = LabelLayer("l", (), colors=stated)
    got = colorize(values, layer)
    for v in pool:
        want = stated.get(int(v), tuple(palette(np.array([v]))[0]))
        assert (got[values == v] == np.array(want, np.uint8)).all(), (dtype, v)


@pytest.mark.parametrize("dtype", ["u8", "i8", "i1", "u1", "i2"])
def test_colorize_narrow_ranges_at_the_ends_of_each_type(dtype: str) -> None:
    """A narrow range of values is coloured through a table indexed by value (no sort): right at
    the type's ends too, where a difference in the type itself would wrap."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2)
    layer = LabelLayer("l", (), colors={int(info.max): (1, 2, 3, 4), int(info.min): (9, 8, 7, 6), 7: (7, 7, 7, 7)})
    for base in (int(info.min), int(info.max) - 200, 0):
        offsets = rng.integers(0, 200, (30, 20))
        values = np.array([[min(base + int(o), int(info.max)) for o in row] for row in offsets], dtype=dtype)
        values[0, 0] = values.max()
        got = colorize(values, layer)
        for v in np.unique(values):
            want = layer.colors.get(int(v), tuple(palette(np.array([v]))[0]))
            assert (got[values == v] == np.array(want, np.uint8)).all(), (dtype, base, v)


def test_one_request_reads_the_image_and_the_label_at_the_matching_level(tmp_path: Path, h: Harness) -> None:
    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", _image(), "yx", labels={"nuclei": _label()},
                          label_metadata=META, chunks=(32, 32))
    store = CountingStore(LocalStore(path))
    image, layers = _open(path, store)
    state = image_state(image).with_(labels=layers, region=(0.0, N, 0.0, N), screen_scale=(0.25, 0.25))
    store.reset()
    scene = h.show(state)
    assert h.driver.requests == 1  # the coarsest level is the one wanted: one request, image and label
    keys = store.chunk_keys()
    assert {k.rsplit("/c/", 1)[0] for k in keys} == {"s2", "labels/nuclei/s2"}
    tile = scene.detail or scene.coarse
    assert tile is not None and tile.level == 2
    plane = tile.label("nuclei")
    assert plane is not None and plane.level == 2 and (plane.r0, plane.c0, plane.step_r, plane.step_c) == (0, 0, 4, 4)
    truth = zarr.open_group(str(path), mode="r")["labels/nuclei/s2"][...]
    np.testing.assert_array_equal(plane.values, truth)
    np.testing.assert_array_equal(plane.rgba, colorize(truth, layers[0]))
    # zoomed in to 1:1 in a corner: level 0 of both, one more request, the same chunks of each
    store.reset()
    h.ctl.budget = 2  # level 0's four chunks are not read whole: only the corner's
    scene = h.show(h.ctl.state.with_(region=(0.0, 20.0, 0.0, 20.0), screen_scale=(4.0, 4.0)))
    assert h.driver.requests == 2 and sorted(store.chunk_keys()) == ["labels/nuclei/s0/c/0/0", "s0/c/0/0"]
    plane = scene.detail.label("nuclei")
    assert plane.level == 0 and (plane.step_r, plane.values.shape) == (1, (32, 32))
    np.testing.assert_array_equal(plane.values, _label()[:32, :32])


def test_a_label_pyramid_with_fewer_levels_follows_the_image(tmp_path: Path, h: Harness) -> None:
    from ome_zarr.writer import write_labels

    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", _image(), "yx", scale_factors=(2, 4, 8), chunks=(32, 32))
    root = zarr.open_group(str(path), mode="a", zarr_format=zarr_format("0.4"))
    write_labels(_label(), root, name="cells", scaler=None, scale_factors=[2], axes="yx", fmt=_fmt("0.4"),
                 label_metadata=META)
    image, layers = _open(path)
    assert len(image.first.levels) == 4 and len(layers[0].levels) == 2
    state = image_state(image).with_(labels=layers, region=(0.0, N, 0.0, N), screen_scale=(0.125, 0.125))
    scene = h.show(state)
    tile = scene.detail or scene.coarse
    assert tile is not None and tile.level == 3 and tile.step_r == 8
    plane = tile.label("cells")
    # the coarsest label level (factor 2) is the one as fine as the image's level 3 (factor 8), read
    # one pixel in four: the image's pixel size, placed in level-0 coordinates with its own steps
    assert plane is not None and plane.level == 1 and (plane.r0, plane.c0, plane.step_r, plane.step_c) == (0, 0, 8, 8)
    level1 = zarr.open_group(str(path), mode="r")[f"labels/cells/{layers[0].levels[1].path}"]
    np.testing.assert_array_equal(plane.values, level1[::4, ::4])
    for row, col in [(10, 10), (40, 30), (55, 45), (0, 63)]:  # over the image: the label of that place
        assert scene.label_at("cells", row, col) == _label()[row - row % 8, col - col % 8]
    # at level 1 of the image, the label's level 1 whole
    scene = h.show(h.ctl.state.with_(screen_scale=(0.5, 0.5)))
    plane = scene.detail.label("cells")
    assert scene.detail.level == 1 and plane.level == 1 and (plane.step_r, plane.values.shape) == (2, (32, 32))
    assert scene.label_at("cells", 41, 31) == _label()[40, 30]


def test_the_readout_names_the_label_and_its_properties(tmp_path: Path, h: Harness) -> None:
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", _image(), "yx", scale_factors=(), labels={"nuclei": _label()},
                          label_metadata=META)
    image, layers = _open(path)
    h.show(image_state(image).with_(labels=layers))
    value = _image()[10, 12]
    assert h.ctl.readout(10, 12) == f'y 10, x 12: {value} | nuclei 17 (area: 341, class: "cell")'
    assert h.ctl.readout(40, 12).endswith(' | nuclei 5 (class: "debris")')
    assert h.ctl.readout(55, 50).endswith(" | nuclei 3") and h.ctl.readout(0, 0).endswith(" | nuclei 0")
    h.show(h.ctl.state.with_label("nuclei", visible=False))
    assert h.ctl.readout(10, 12) == f"y 10, x 12: {value}"


def test_toggling_and_opacity_redraw_without_a_read(tmp_path: Path, h: Harness) -> None:
    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", _image(), "yx", scale_factors=(), labels={"nuclei": _label()},
                          label_metadata=META)
    image, layers = _open(path)
    hidden = tuple(layer.with_(visible=False) for layer in layers)
    scene = h.show(image_state(image).with_(labels=hidden))
    assert h.driver.requests == 1 and scene.detail is not None and scene.detail.labels == ()  # a hidden layer is not read
    scene = h.show(h.ctl.state.with_label("nuclei", visible=True))  # shown, never read: read now
    assert h.driver.requests == 2 and scene.detail.label("nuclei") is not None
    tile = scene.detail
    for changes in ({"opacity": 1.0}, {"visible": False}, {"visible": True}, {"opacity": 0.25}):
        scene = h.show(h.ctl.state.with_label("nuclei", **changes))
        assert h.driver.requests == 2 and scene.detail is tile
        assert scene.labels == h.ctl.state.labels and scene.labels[0].opacity == h.ctl.state.labels[0].opacity
    assert scene.labels[0].opacity == 0.25 and scene.labels[0].visible


def test_a_stale_answer_with_labels_is_dropped(tmp_path: Path, h: Harness) -> None:
    data = np.stack([_image(), _image() + 1])
    lab = np.stack([_label(), _label() * 2])
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, "zyx", scale_factors=(), labels={"nuclei": lab})
    image, layers = _open(path)
    state = image_state(image).with_(labels=layers)
    h.set_state(state)
    scene = h.show(state.with_(indices=(1, 0, 0)))  # the first answer lands after the second request: dropped
    assert h.driver.requests == 2 and scene.coarse is None
    plane = scene.detail.label("nuclei")
    np.testing.assert_array_equal(plane.values, lab[1])  # the slider carried to the label's plane
    assert h.ctl.readout(10, 10).endswith(" | nuclei 34")


def test_a_label_without_the_channel_axis_over_a_composite(tmp_path: Path, h: Harness) -> None:
    from ome_zarr.writer import write_labels

    data = np.stack([_image(), _image()])
    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", data, "cyx", scale_factors=())
    root = zarr.open_group(str(path), mode="a", zarr_format=3)
    write_labels(_label(), root, name="yx only", scaler=None, scale_factors=[], axes="yx", fmt=_fmt("0.5"))
    image, layers = _open(path)
    state = image_state(image).with_(labels=layers)
    assert state.composite and layers[0].axes == ("y", "x")
    scene = h.show(state)
    np.testing.assert_array_equal(scene.detail.label("yx only").values, _label())
    assert " | yx only 17" in h.ctl.readout(10, 10)


def test_hand_built_levels_place_a_label_of_another_pixel_size() -> None:
    """A label stored at half the image's resolution (scale 2 over 1) is read at its level 0,
    one label pixel spanning two image pixels."""
    from zarrview.viewing.labels.reads import plan_label
    from zarrview.viewing.image.planning import plan_view
    from zarrview.viewing.image.state import initial_state

    arr = _FakeArray((N, N))  # plans only: nothing is read
    lab = _FakeArray((N // 2, N // 2))
    levels = (Level(0, "0", arr, (1.0, 1.0), (0.0, 0.0), (N, N)),)  # type: ignore[arg-type]
    layer = LabelLayer("half", (Level(0, "0", lab, (2.0, 2.0), (0.5, 0.5), (N // 2, N // 2)),),  # type: ignore[arg-type]
                       ("y", "x"))
    state = initial_state(arr, pyramid=levels, axis_names=("y", "x")).with_(labels=(layer,))  # type: ignore[arg-type]
    plan = plan_view((N, N), (N, N), (0, 1), {}, (10.0, 30.0, 20.0, 40.0), (1.0, 1.0), 256, None)
    read = plan_label(layer, state, 0, plan)
    assert read.level is not None and read.level.index == 0 and (read.step_r, read.step_c) == (2, 2)
    (rs, cs) = read.selection
    assert rs.start * 2 <= plan.r0 and (rs.stop * 2 >= plan.r1) and read.r0 == rs.start * 2 and read.c0 == cs.start * 2


class _FakeArray:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.chunks, self.ndim, self.dimension_names, self.path = shape, shape, len(shape), ("y", "x"), "/"
        self.typical_chunks = shape
        self.dtype = np.dtype("u1")


def test_a_label_without_a_pyramid_is_sampled_within_the_chunk_budget(tmp_path: Path) -> None:
    from ome_zarr.writer import write_labels

    n = 256
    data = (np.arange(n * n).reshape(n, n) % 251).astype("u1")
    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", data, "yx", scale_factors=(2, 4, 8), chunks=(32, 32))
    root = zarr.open_group(str(path), mode="a", zarr_format=3)
    lab = (np.arange(n * n).reshape(n, n) // 7).astype("u4")
    write_labels(lab, root, name="flat", scaler=None, scale_factors=[], axes="yx", fmt=_fmt("0.5"),
                 storage_options={"chunks": (32, 32)})
    store = CountingStore(LocalStore(path))
    image, layers = _open(path, store)
    assert len(layers[0].levels) == 1  # 64 chunks at its only level
    harness = Harness(budget=16)
    try:
        store.reset()
        scene = harness.show(image_state(image).with_(labels=layers, region=(0.0, n, 0.0, n),
                                                      screen_scale=(0.125, 0.125)))
        label_keys = [k for k in store.chunk_keys() if k.startswith("labels/")]
        assert len(label_keys) <= 16 and len(set(label_keys)) == len(label_keys)
        plane = (scene.detail or scene.coarse).label("flat")
        assert plane is not None and plane.step_r >= 64 and plane.step_c >= 64
        for i in range(plane.values.shape[0]):  # each sample is the label at its place
            for j in range(plane.values.shape[1]):
                assert plane.values[i, j] == lab[int(plane.r0 + i * plane.step_r), int(plane.c0 + j * plane.step_c)]
    finally:
        harness.close()


def test_the_ring_prefetch_reads_the_labels_around_the_view_too(tmp_path: Path) -> None:
    n = 256
    data = (np.arange(n * n).reshape(n, n) % 251).astype("u1")
    lab = (np.arange(n * n).reshape(n, n) // 100).astype("u4")
    from ome_zarr.writer import write_labels

    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", data, "yx", scale_factors=(), chunks=(32, 32))
    write_labels(lab, zarr.open_group(str(path), mode="a", zarr_format=3), name="l", scaler=None, scale_factors=[],
                 axes="yx", fmt=_fmt("0.5"), storage_options={"chunks": (32, 32)})
    store = CountingStore(LocalStore(path))
    image, layers = _open(path, store)
    harness = Harness(budget=16, prefetch=True)
    try:
        store.reset()
        harness.show(image_state(image).with_(labels=layers, region=(64.0, 128.0, 64.0, 128.0), screen_scale=(4.0, 4.0)))
        assert sorted(k for k in store.chunk_keys() if k.startswith("labels/")) == [
            f"labels/l/{layers[0].levels[0].path}/c/{r}/{c}" for r in (2, 3) for c in (2, 3)]
        harness.deferred[-1]()  # the frame is painted: the ring around the view is read ahead
        end = time.monotonic() + 20
        while harness.driver.prefetch.warmed < 1 + len(layers) and time.monotonic() < end:  # the image's and each layer's
            time.sleep(0.01)
        harness.settle()
        ring = {k for k in store.chunk_keys() if k.startswith("labels/")}
        assert len(ring) == 16  # chunks 1..4 along both axes
        store.reset()
        scene = harness.show(harness.ctl.state.with_(region=(96.0, 160.0, 96.0, 160.0)))  # a pan into the ring
        assert harness.driver.requests == 2 and store.chunk_keys() == []  # image and labels from the cache
        np.testing.assert_array_equal(scene.detail.label("l").values, lab[96:160, 96:160])
    finally:
        harness.close()


def test_a_label_chunk_that_cannot_be_read_is_background_and_said(tmp_path: Path, h: Harness) -> None:
    from ome_zarr.writer import write_labels

    path = ome_zarr_image(tmp_path / "img.zarr", "0.5", _image(), "yx", scale_factors=(), chunks=(32, 32))
    write_labels(_label(), zarr.open_group(str(path), mode="a", zarr_format=3), name="nuclei", scaler=None,
                 scale_factors=[], axes="yx", fmt=_fmt("0.5"), storage_options={"chunks": (32, 32)},
                 label_metadata=META)
    image, layers = _open(path)
    (path / "labels" / "nuclei" / layers[0].levels[0].path / "c" / "0" / "0").write_bytes(b"not a chunk")
    scene = h.show(image_state(image).with_(labels=layers))
    plane = scene.detail.label("nuclei")
    assert plane.error is not None and "1 chunk could not be read" in plane.error
    assert (plane.values[:32, :32] == 0).all() and (plane.values[32:48, 4:60] == 5).all()  # the rest is read
    text = h.ctl.readout(40, 10)
    assert ' | nuclei 5 (class: "debris") (partly unreadable: 1 chunk could not be read' in text
    assert scene.detail.failures == ()  # the image's own chunks are all there: nothing hatched
