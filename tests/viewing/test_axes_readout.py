"""Colour axes chosen by name before size, and the pixel readout's words and numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing import colour_axis, initial_state
from zarrview.viewing.image.readout import format_value

from view_harness import Harness


def _array(tmp_path: Path, shape: tuple[int, ...], names: list[str] | None = None, dtype: str = "u1") -> zl.Array:
    name = "a" + "_".join(map(str, shape)) + ("".join(names) if names else "")
    zarr.create_array(tmp_path / name, shape=shape, chunks=shape, dtype=dtype, dimension_names=names)
    return zl.open(tmp_path / name)  # type: ignore[return-value]


@pytest.mark.parametrize(("shape", "names", "expected"), [
    ((64, 48, 3), None, 2),                                  # a photograph
    ((64, 48, 4), ["y", "x", "c"], 2),                       # RGBA, named
    ((2, 3, 4, 64, 48), ["t", "c", "z", "y", "x"], 1),      # OME: the channel axis, not z of size 4
    ((2, 5, 4, 64, 48), ["t", "c", "z", "y", "x"], None),   # five channels: no RGB, and z is not offered
    ((4, 64, 48), ["z", "y", "x"], None),                   # named, none a channel: a short z is not colour
    ((3, 64, 48), None, 0),                                  # unnamed planar RGB
    ((64, 48), None, None),
    ((3, 64, 48, 3), ["band", "y", "x", "s"], 0),            # a named band axis wins over the last position
])
def test_colour_axis(tmp_path: Path, shape: tuple[int, ...], names: list[str] | None, expected: int | None) -> None:
    assert colour_axis(_array(tmp_path, shape, names)) == expected


def test_a_photograph_is_shown_in_colour_with_its_rows_and_columns(tmp_path: Path) -> None:
    state = initial_state(_array(tmp_path, (64, 48, 3)))
    assert (state.y_dim, state.x_dim, state.channel_dim) == (0, 1, 2)
    state = initial_state(_array(tmp_path, (2, 3, 4, 64, 48), ["t", "c", "z", "y", "x"]))
    assert (state.y_dim, state.x_dim, state.channel_dim) == (3, 4, None)  # channels offered, not forced


def test_colour_tiles_hold_the_channels_last(tmp_path: Path) -> None:
    data = np.random.default_rng(0).integers(0, 255, (3, 40, 30), dtype="u1")
    zarr.create_array(tmp_path / "rgb", shape=data.shape, chunks=(3, 20, 20), dtype="u1")[...] = data
    h = Harness()
    try:
        state = initial_state(zl.open(tmp_path / "rgb"), colour=True)
        assert state.channel_dim == 0
        scene = h.show(state)
        np.testing.assert_array_equal(scene.detail.values, np.moveaxis(data, 0, -1))  # type: ignore[union-attr]
        assert h.ctl.readout(5, 7) == f"dim 1 5, dim 2 7: ({data[0, 5, 7]}, {data[1, 5, 7]}, {data[2, 5, 7]})"
    finally:
        h.close()


@pytest.mark.parametrize(("value", "text"), [
    (np.uint16(210), "210"), (np.float32(0.5), "0.5"), (np.float64(0.1), "0.1"), (np.complex64(1 + 2j), "(1+2j)"),
    (np.float32(287.31), "287.31"), (np.float16(0.1), "0.1"), (np.float32(1e-8), "1e-08"),  # the type's precision
    (np.datetime64("2020-01-02T03:04"), "2020-01-02T03:04"), (np.datetime64("NaT"), "NaT"), (np.bool_(True), "True"),
    (np.bytes_(b"abc\x00\x00"), "abc"), (np.bytes_(b"\xff\xfe"), "b'\\xff\\xfe'"), (np.str_("café"), "café"),
])
def test_numbers_print_as_numbers(value: object, text: str) -> None:
    assert format_value(value) == text


def test_readout_names_dimensions_and_marks_preview_values(tmp_path: Path) -> None:
    data = np.random.default_rng(1).integers(0, 1000, (2, 2048, 2048), dtype="u2")
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 64, 64), dtype="u2",
                      dimension_names=["t", "y", "x"])[...] = data
    h = Harness(budget=16)
    try:
        state = initial_state(zl.open(tmp_path / "a")).with_(indices=(1, 0, 0))
        scene = h.show(state)
        tile = scene.coarse
        assert tile is not None and scene.detail is None
        r, c = tile.r0 + tile.step_r, tile.c0 + 2 * tile.step_c  # a sampled element: exact even in the preview
        assert h.ctl.readout(r, c) == f"y {r:,}, x {c:,} (t 1): {data[1, r, c]}"
        text = h.ctl.readout(r + 1, c + 1)  # between samples: the nearest sample, marked
        assert text == f"y {r + 1:,}, x {c + 1:,} (t 1): ≈ {data[1, r, c]} (preview; zoom in for the exact value)"
        scene = h.show(state.with_(region=(100, 150, 200, 260), screen_scale=(8.0, 8.0)))
        assert h.ctl.readout(120, 230) == f"y 120, x 230 (t 1): {data[1, 120, 230]}"
        assert h.ctl.readout(5000, 1) == ""
    finally:
        h.close()
