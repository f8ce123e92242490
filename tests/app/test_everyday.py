"""Everyday handling: headless runs, screenshots that leave the user's window alone, and Open
Recent entries that reopen from any working folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from zarrview.app.recent import absolute_location


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return subprocess.run([sys.executable, "-m", "zarrview", *args], env={**base, **env}, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY and WAYLAND_DISPLAY are Linux's")
def test_without_a_display_the_window_says_so_in_one_line(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--demo")
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display" in lines[0] and "QT_QPA_PLATFORM=offscreen" in lines[0], proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY and WAYLAND_DISPLAY are Linux's")
def test_a_headless_screenshot_needs_no_variable_and_saves_no_geometry(tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    config = tmp_path / "config" / "zarrview" / "zarrview.conf"
    config.parent.mkdir(parents=True)
    config.write_text("[General]\ngeometry=@ByteArray(kept)\n")
    out = tmp_path / "shot.png"
    proc = _run(tmp_path, "--demo", "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert QImage(str(out)).width() == 1280
    text = config.read_text()
    assert "geometry=@ByteArray(kept)" in text and "splitter" not in text, text
    assert "metadata_shown" not in text and "side_panel" not in text, text  # nor which panels were open


def test_recent_locations_are_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    here = os.fspath(tmp_path)
    assert absolute_location("a.zarr") == f"{here}/a.zarr"
    assert absolute_location("sub/a.zarr::/g/x") == f"{here}/sub/a.zarr::/g/x"
    assert absolute_location("zip::x.zip::/n") == f"zip::{here}/x.zip::/n"
    assert absolute_location("reference::refs.json") == f"reference::{here}/refs.json"
    assert absolute_location("repo.icechunk@tag.v1") == f"{here}/repo.icechunk@tag.v1"
    assert absolute_location("~/b.zarr") == f"{Path.home()}/b.zarr"
    for url in ("https://h/x.zarr::/a", "s3://b/x.zarr", "zip::https://h/x.zip", f"{here}/abs.zarr"):
        assert absolute_location(url) == url
