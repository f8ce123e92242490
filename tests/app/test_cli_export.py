"""``zarrview export`` as a person types it, headless: the plane the window would show for a
``--slice``, at full resolution and in the array's own index order; malformed arguments are
one line and exit status 2, read and write failures one line naming the node or file and 1."""

from __future__ import annotations

import csv
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from png_decode import decode_png

VALUES = (np.arange(4 * 30 * 50, dtype="i4") * 31 % 9973).reshape(4, 30, 50).astype("u2")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "s.zarr"
    g = zarr.open_group(root, mode="w")
    a = g.create_array("vol", shape=VALUES.shape, chunks=(1, 16, 16), dtype="u2", dimension_names=["z", "y", "x"])
    a[...] = VALUES
    g.create_array("text", shape=(3,), chunks=(2,), dtype=str)[...] = np.array(["a", "b,c", "ü"], dtype=object)
    broken = g.create_array("broken", shape=(20, 20), chunks=(10, 10), dtype="f4")
    broken[...] = 1.0
    (root / "broken" / "c" / "1" / "0").write_bytes(b"garbage")
    return root


def run(*args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # a real full disk: writes past the limit fail with EFBIG
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, "-m", "zarrview", "export", *args], capture_output=True, text=True,
                          timeout=60, preexec_fn=limit if limit_bytes else None)


def test_default_plane_is_the_windows_first(store: Path, tmp_path: Path) -> None:
    out = run(f"{store}::/vol", "-o", str(tmp_path / "p.npy"))
    assert out.returncode == 0, out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), VALUES[0])  # fixed dimensions at 0, the last two shown


def test_an_xz_slice_keeps_the_arrays_index_order(store: Path, tmp_path: Path) -> None:
    out = run(f"{store}::/vol", "--slice", ":,17,:", "-o", str(tmp_path / "xz.npy"))
    assert out.returncode == 0, out.stderr
    back = np.load(tmp_path / "xz.npy")
    assert back.dtype == np.dtype("u2")
    np.testing.assert_array_equal(back, zarr.open_array(store / "vol", mode="r")[:, 17, :])
    assert run(f"{store}::/vol", "--slice", "2,:,:", "-o", str(tmp_path / "p.csv")).returncode == 0
    head, *rows = list(csv.reader(open(tmp_path / "p.csv", encoding="utf-8", newline="")))
    assert head[0].count("\\") == 1 and head[1:] == [str(i) for i in range(VALUES.shape[2])]
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype="u2"), VALUES[2])


def test_png_is_grey_through_percentile_levels(store: Path, tmp_path: Path) -> None:
    assert run(f"{store}::/vol", "--slice", "3,:,:", "-o", str(tmp_path / "p.png")).returncode == 0
    img = decode_png((tmp_path / "p.png").read_bytes())
    assert img.shape == (30, 50, 3) and (img[..., 0] == img[..., 2]).all()
    lo, hi = np.percentile(VALUES[3], (0.5, 99.5))
    assert (img[VALUES[3] <= lo, 0] == 0).all() and (img[VALUES[3] >= hi, 0] == 255).all()
    inside = (VALUES[3] > lo) & (VALUES[3] < hi)
    expect = np.clip((VALUES[3][inside] - lo) * 255 / (hi - lo), 0, 255).astype("u1")
    np.testing.assert_array_equal(img[inside, 0], expect)


def test_strings_write_to_npy_and_csv(store: Path, tmp_path: Path) -> None:
    assert run(f"{store}::/text", "-o", str(tmp_path / "t.csv")).returncode == 0
    assert [r[1] for r in csv.reader(open(tmp_path / "t.csv", encoding="utf-8", newline=""))] == ["value", "a", "b,c", "ü"]
    out = run(f"{store}::/text", "-o", str(tmp_path / "t.png"))
    assert out.returncode == 2 and "write .npy or .csv" in out.stderr and not (tmp_path / "t.png").exists()


@pytest.mark.parametrize("args,words", [
    (["--slice", "5,x,:"], "--slice takes integers"),
    (["--slice", "9,:,:"], "out of range for z of /vol (size 4)"),
    (["--slice", "0,0,0,0"], "gives 4 dimensions; /vol has 3"),
    (["--slice", "2,:"], "gives 2 dimensions; /vol has 3"),
    (["--slice", ":,:,:"], "shows 3 dimensions; a plane shows two"),
    (["-o", "p.tiff"], "must end in .npy, .csv, .png"),
    ([], "required: -o/--output"),
    (["-o", "p.npy", "--colour"], "unrecognized arguments: --colour"),
])
def test_malformed_arguments_are_one_line_and_status_2(store: Path, tmp_path: Path, args: list[str],
                                                       words: str) -> None:
    if "-o" not in args and args:
        args = [*args, "-o", str(tmp_path / "p.npy")]
    out = run(f"{store}::/vol", *args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("zarrview: "), out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("node,words", [
    ("::/broken", "cannot read /broken[:, :]"), ("::/missing", "missing"), ("", "is a group"),
])
def test_read_errors_name_the_node_with_status_1(store: Path, tmp_path: Path, node: str, words: str) -> None:
    out = run(f"{store}{node}", "-o", str(tmp_path / "p.npy"))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in out.stderr, out.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_fails_and_leaves_no_file(store: Path, tmp_path: Path) -> None:
    out = run(f"{store}::/vol", "-o", str(tmp_path / "p.csv"), limit_bytes=1000)
    assert out.returncode == 1
    assert out.stderr.strip() == f"zarrview: cannot write {tmp_path / 'p.csv'}: File too large"
    assert list(tmp_path.iterdir()) == []


def test_export_imports_no_qt(store: Path, tmp_path: Path) -> None:
    script = ("import json, sys; from zarrview.cli import main; code = main(sys.argv[1:]); "
              "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in "
              "('PySide6', 'shiboken6', 'pyqtgraph'))]))")
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)
    out = subprocess.run([sys.executable, "-c", script, "export", f"{store}::/vol", "-o", str(tmp_path / "p.png")],
                         capture_output=True, text=True, timeout=60, env=env)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, []], out.stderr
    assert (tmp_path / "p.png").stat().st_size > 0
