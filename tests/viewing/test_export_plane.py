"""Export writes exactly the displayed plane at full resolution, whatever is on screen: the
truth is what zarr-python wrote, read back with zarr-python and numpy (no Qt here)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from png_decode import decode_png
from zarrview.viewing.export.errors import ExportCancelled, ExportError, ReadFailed, UnsupportedExport, WriteFailed
from zarrview.viewing.export.plane import PlaneSpec, default_spec, export_plane, plane_nbytes
from zarrview.viewing.image.contrast import NAN_RGBA
from zarrview.viewing.image.planning import plan_plane

VALUES = (np.arange(5 * 37 * 41, dtype="i4") * 7919 % 100_003).reshape(5, 37, 41).astype("f4") - 5000


def write(tmp_path: Path, kind: str, values: np.ndarray = VALUES) -> Path:
    path = tmp_path / f"{kind}.zarr"
    if kind == "v2":
        a = zarr.create_array(path, shape=values.shape, chunks=(2, 16, 16), dtype=values.dtype, zarr_format=2)
    elif kind == "sharded":
        a = zarr.create_array(path, shape=values.shape, chunks=(1, 8, 8), shards=(2, 16, 16), dtype=values.dtype)
    else:
        a = zarr.create_array(path, shape=values.shape, chunks=(2, 16, 16), dtype=values.dtype,
                              dimension_names=["z", "y", "x"])
    a[...] = values
    return path


@pytest.mark.parametrize("kind", ["v2", "v3", "sharded"])
def test_npy_is_the_plane_zarr_reads(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind)
    spec = default_spec(zl.open(path), {0: 3})
    assert spec.selection == (3, slice(None), slice(None)) and spec.dims == (1, 2)
    export_plane(spec, tmp_path / "p.npy")
    back = np.load(tmp_path / "p.npy")
    truth = zarr.open_array(path, mode="r")[3]
    assert back.dtype == truth.dtype and back.shape == (37, 41)
    np.testing.assert_array_equal(back, truth)


def test_an_xz_plane_keeps_the_arrays_index_order(tmp_path: Path) -> None:
    path = write(tmp_path, "v3")
    arr = zl.open(path)
    spec = default_spec(arr, {1: 7})  # --slice :,7,:
    assert spec.dims == (0, 2) and spec.selection == (slice(None), 7, slice(None))
    export_plane(spec, tmp_path / "xz.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "xz.npy"), zarr.open_array(path, mode="r")[:, 7, :])
    # shown transposed (x as rows): the values keep (z, x); only the picture is turned
    turned = PlaneSpec(arr, (slice(None), 7, slice(None)), (2, 0), levels=(-5000.0, 95003.0))
    export_plane(turned, tmp_path / "xz2.npy")
    export_plane(turned, tmp_path / "xz2.png")
    np.testing.assert_array_equal(np.load(tmp_path / "xz2.npy"), VALUES[:, 7, :])
    assert decode_png((tmp_path / "xz2.png").read_bytes()).shape == (41, 5, 3)


def test_full_resolution_where_the_view_can_only_preview(tmp_path: Path) -> None:
    values = (np.arange(600 * 700, dtype="u4") % 65521).reshape(1, 600, 700).astype("u2")
    a = zarr.create_array(tmp_path / "big", shape=values.shape, chunks=(1, 20, 20), dtype="u2")
    a[...] = values
    arr = zl.open(tmp_path / "big")
    spec = default_spec(arr)
    view = plan_plane(arr.shape, arr.chunks, spec.dims, {0: 0}, None, 16)
    assert view.preview and view.step_r > 1  # the window shows one sample in several
    seen: list[tuple[int, int]] = []
    export_plane(spec, tmp_path / "all.npy", progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_array_equal(np.load(tmp_path / "all.npy"), values[0])  # every value
    assert seen[-1] == (1050, 1050)  # every chunk of the plane, counted


def test_size_estimate_needs_no_read(tmp_path: Path) -> None:
    zarr.create_array(tmp_path / "huge", shape=(3, 65536, 65536), chunks=(1, 4096, 4096), dtype="u2")
    spec = default_spec(zl.open(tmp_path / "huge"), {0: 1})
    assert plane_nbytes(spec) == 65536 * 65536 * 2


def test_csv_round_trip_in_index_order(tmp_path: Path) -> None:
    path = write(tmp_path, "v3")
    spec = default_spec(zl.open(path), {1: 7})
    export_plane(spec, tmp_path / "xz.csv")
    head, *rows = list(csv.reader(open(tmp_path / "xz.csv", encoding="utf-8", newline="")))
    names = zl.open(path).dimension_names or (None, None, None)
    assert head == [f"{names[0] or 'dim_0'} \\ {names[2] or 'dim_2'}", *map(str, range(VALUES.shape[2]))]
    assert [r[0] for r in rows] == [str(i) for i in range(VALUES.shape[0])]  # no coordinates: indices
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype="f4"), VALUES[:, 7, :])


def test_csv_floats_strings_and_records_exactly(tmp_path: Path) -> None:
    floats = np.array([[0.1, 1e-300], [np.nan, -2.5]], dtype="f8")
    zarr.create_array(tmp_path / "f", shape=floats.shape, chunks=(1, 2), dtype="f8")[...] = floats
    export_plane(default_spec(zl.open(tmp_path / "f")), tmp_path / "f.csv")
    head, *rows = list(csv.reader(open(tmp_path / "f.csv", encoding="utf-8", newline="")))
    assert head == ["dim_0 \\ dim_1", "0", "1"]
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype="f8"), floats)
    text = np.array(["São Paulo", "a,b", 'quote"d', "line\nbreak"], dtype=object)
    zarr.create_array(tmp_path / "s", shape=text.shape, chunks=(3,), dtype=str)[...] = text
    export_plane(default_spec(zl.open(tmp_path / "s")), tmp_path / "s.csv")
    assert [r[1] for r in csv.reader(open(tmp_path / "s.csv", encoding="utf-8", newline=""))] == ["value", *text]
    export_plane(default_spec(zl.open(tmp_path / "s")), tmp_path / "s.npy")
    loaded = np.load(tmp_path / "s.npy")  # fixed-width unicode: no pickle needed to load it
    assert loaded.dtype == np.dtype("<U10") and list(loaded) == list(text)
    rec = np.array([(1, 2.5), (3, 4.0)], dtype=[("id", "i4"), ("v", "f8")])
    zarr.create_array(tmp_path / "r", shape=(2,), chunks=(1,), dtype=rec.dtype, zarr_format=2)[...] = rec
    export_plane(default_spec(zl.open(tmp_path / "r")), tmp_path / "r.csv")
    assert list(csv.reader(open(tmp_path / "r.csv", encoding="utf-8"))) == [["id", "v"], ["1", "2.5"], ["3", "4.0"]]
    with pytest.raises(UnsupportedExport, match="not a plane of numbers"):
        export_plane(default_spec(zl.open(tmp_path / "s")), tmp_path / "s.png")
    assert not (tmp_path / "s.png").exists()


def test_zero_and_one_dimensional_arrays_export_whole(tmp_path: Path) -> None:
    zarr.create_array(tmp_path / "one", shape=(50,), chunks=(7,), dtype="i8")[...] = np.arange(50) ** 3
    zarr.create_array(tmp_path / "zero", shape=(), dtype="f8")[...] = 2.5
    export_plane(default_spec(zl.open(tmp_path / "one")), tmp_path / "one.npy")
    export_plane(default_spec(zl.open(tmp_path / "zero")), tmp_path / "zero.npy")
    export_plane(default_spec(zl.open(tmp_path / "zero")), tmp_path / "zero.csv")
    np.testing.assert_array_equal(np.load(tmp_path / "one.npy"), np.arange(50) ** 3)
    assert np.load(tmp_path / "zero.npy").shape == () and np.load(tmp_path / "zero.npy") == 2.5
    assert (tmp_path / "zero.csv").read_bytes() == b"2.5\r\n"


def expected_pixels(values: np.ndarray, levels: tuple[float, float], lut: np.ndarray) -> np.ndarray:
    """The display's mapping, written out: N entries spread evenly over the levels, clipped."""
    lo, hi = levels
    idx = np.floor((np.nan_to_num(values, nan=lo) - lo) * len(lut) / (hi - lo))
    return lut[np.clip(idx, 0, len(lut) - 1).astype(int)]


@pytest.mark.parametrize("alpha", [False, True])
def test_png_is_the_plane_through_levels_and_lut(tmp_path: Path, alpha: bool) -> None:
    path = write(tmp_path, "v3")
    lut = np.random.default_rng(3).integers(0, 255, size=(7, 4 if alpha else 3), dtype=np.uint8)
    levels = (1000.0, 60000.0)
    spec = PlaneSpec(zl.open(path), (2, slice(None), slice(None)), (1, 2), levels=levels, lut=lut)
    export_plane(spec, tmp_path / "p.png")
    img = decode_png((tmp_path / "p.png").read_bytes())
    assert img.shape == (37, 41, 4 if alpha else 3)
    np.testing.assert_array_equal(img, expected_pixels(VALUES[2], levels, lut))
    assert len({tuple(p) for p in img.reshape(-1, img.shape[-1])}) == 7  # every entry used: a real mapping


def test_nan_is_a_colour_of_its_own_and_grey_levels_come_from_the_data(tmp_path: Path) -> None:
    values = np.linspace(0, 1000, 20 * 30, dtype="f4").reshape(20, 30)
    values[3, 4] = np.nan
    values[5, 6] = np.inf
    zarr.create_array(tmp_path / "n", shape=values.shape, chunks=(8, 8), dtype="f4")[...] = values
    spec = default_spec(zl.open(tmp_path / "n"))
    export_plane(spec, tmp_path / "n.png")
    img = decode_png((tmp_path / "n.png").read_bytes())
    assert tuple(img[3, 4]) == NAN_RGBA[:3]
    grey = img[..., 0].astype(int)
    numbers = ~np.isnan(values)
    assert (img[numbers][:, 0] == img[numbers][:, 1]).all() and (img[numbers][:, 1] == img[numbers][:, 2]).all()
    assert tuple(img[0, 0]) == (0, 0, 0)  # below the 0.5 percentile of the finite values
    assert tuple(img[5, 6]) == (255, 255, 255) and tuple(img[-1, -1]) == (255, 255, 255)
    finite = np.isfinite(values)
    assert (np.diff(grey[finite]) >= 0).all() and len(set(grey[finite])) > 200  # a ramp, in the values' order


def test_colour_channels_are_rgb(tmp_path: Path) -> None:
    rgb = np.random.default_rng(1).integers(0, 256, size=(3, 20, 30), dtype="u1")
    zarr.create_array(tmp_path / "rgb", shape=rgb.shape, chunks=(1, 16, 16), dtype="u1")[...] = rgb
    arr = zl.open(tmp_path / "rgb")
    spec = PlaneSpec(arr, (slice(None),) * 3, (1, 2), channel_dim=0, levels=(0.0, 255.0))
    export_plane(spec, tmp_path / "rgb.png")
    np.testing.assert_array_equal(decode_png((tmp_path / "rgb.png").read_bytes()), np.moveaxis(rgb, 0, -1))


def test_complex_planes_draw_the_chosen_part(tmp_path: Path) -> None:
    values = (np.arange(12, dtype="f8") - 6).reshape(3, 4) + 1j * np.arange(12).reshape(3, 4)
    zarr.create_array(tmp_path / "c", shape=values.shape, chunks=(2, 2), dtype="c16")[...] = values
    spec = PlaneSpec(zl.open(tmp_path / "c"), (slice(None),) * 2, (0, 1), complex_mode="real", levels=(-6.0, 6.0),
                     lut=np.arange(12, dtype=np.uint8).repeat(3).reshape(12, 3))
    export_plane(spec, tmp_path / "c.png")
    export_plane(spec, tmp_path / "c.npy")
    assert (decode_png((tmp_path / "c.png").read_bytes())[..., 0] == np.clip(np.arange(12), 0, 11).reshape(3, 4)).all()
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), values)  # the values themselves, not the part drawn


def test_a_write_into_a_missing_folder_fails_naming_it(tmp_path: Path) -> None:
    spec = default_spec(zl.open(write(tmp_path, "v3")))
    with pytest.raises(WriteFailed, match="does not exist") as info:
        export_plane(spec, tmp_path / "nope" / "p.npy")
    assert str(tmp_path / "nope" / "p.npy") in str(info.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match=str(tmp_path / "file" / "p.npy")):
        export_plane(spec, tmp_path / "file" / "p.npy")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_fails_and_leaves_nothing(tmp_path: Path) -> None:
    spec = default_spec(zl.open(write(tmp_path, "v3")))
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o555)
    try:
        with pytest.raises(WriteFailed, match="permission denied"):
            export_plane(spec, out / "p.npy")
        assert os.listdir(out) == []
    finally:
        out.chmod(0o755)


@pytest.mark.parametrize("fmt", [".npy", ".csv", ".png"])
def test_a_write_that_fails_midway_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      fmt: str) -> None:
    spec = default_spec(zl.open(write(tmp_path, "v3")))
    target = tmp_path / "out" / f"p{fmt}"
    target.parent.mkdir()
    target.write_bytes(b"the previous export")

    class FullDisk:
        def __init__(self, f):  # type: ignore[no-untyped-def]
            self.f, self.written = f, 0

        def write(self, data):  # type: ignore[no-untyped-def]
            self.written += len(data)
            if self.written > 500:
                raise OSError(28, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self.f, name)

    import zarrview.viewing.export.plane as ex

    real_fdopen = ex.os.fdopen
    monkeypatch.setattr(ex.os, "fdopen", lambda fd, mode: _Wrapped(real_fdopen(fd, mode), FullDisk))
    with pytest.raises(WriteFailed, match="the disk is full"):
        export_plane(spec, target)
    assert target.read_bytes() == b"the previous export"
    assert os.listdir(target.parent) == [target.name]  # no temporary file left beside it


class _Wrapped:
    """A file object whose writes go through a failing stand-in, usable as a context manager."""

    def __init__(self, f, wrapper):  # type: ignore[no-untyped-def]
        self.f, self.inner = f, wrapper(f)

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self.inner

    def __exit__(self, *exc):  # type: ignore[no-untyped-def]
        self.f.close()


def test_cancel_and_read_errors_leave_no_file(tmp_path: Path) -> None:
    path = write(tmp_path, "v3")
    spec = default_spec(zl.open(path))
    before = zl.CancelToken()
    before.cancel()
    with pytest.raises(ExportCancelled):
        export_plane(spec, tmp_path / "c.npy", cancel=before)
    for fmt in (".npy", ".csv", ".png"):  # cancelled once the read is done: nothing is written either
        token = zl.CancelToken()
        with pytest.raises(ExportCancelled, match="cancelled"):
            export_plane(spec, tmp_path / f"c{fmt}", cancel=token, progress=lambda d, t, token=token: token.cancel() if d == t else None)
    (path / "c" / "0" / "1" / "1").write_bytes(b"not a chunk")
    with pytest.raises(ReadFailed, match=r"cannot read /\[0, :, :\]"):
        export_plane(default_spec(zl.open(path)), tmp_path / "r.npy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v3.zarr"]


def test_a_file_name_without_a_known_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedExport, match=r"\.npy, \.csv, \.png"):
        export_plane(default_spec(zl.open(write(tmp_path, "v3"))), tmp_path / "p.tiff")


def test_text_is_saved_fixed_width_unless_that_would_not_fit() -> None:
    from zarrview.viewing.export.plane import fixed_width
    from zarrview.zarrlib import limits

    words = np.array([["a", "bbb"], ["", "Zürich"]], dtype=object)
    out = fixed_width(words)
    assert out.dtype == np.dtype("<U6") and out.shape == (2, 2) and out.tolist() == words.tolist()
    raw = np.array([b"x", b"yz"], dtype=object)
    assert fixed_width(raw).dtype == np.dtype("S2") and fixed_width(raw).tolist() == [b"x", b"yz"]
    mixed = np.array(["a", 1], dtype=object)
    assert fixed_width(mixed) is mixed
    old = limits.configure(read_bytes=1000)
    try:
        uneven = np.array(["x" * 300, "y", "z"], dtype=object)
        assert fixed_width(uneven) is uneven  # 3 x 300 x 4 bytes is more than a read may return
    finally:
        limits.restore(old)
