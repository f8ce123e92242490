"""Desktop integration files validate with Debian's tools, agree with the app, and the bundle
builds, runs the demo offscreen and leaves the test-only packages out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from configparser import ConfigParser
from pathlib import Path

import pytest

from zarrview import __version__
from zarrview.app.icons import APP_ID
from zarrview.app.resources import demo_path, icon_path

ROOT = Path(__file__).resolve().parents[1]
LINUX = ROOT / "packaging" / "linux"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
MIME = LINUX / "zarrview-mime.xml"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:  # .ci/run installs them; a developer machine may not have them
        pytest.skip(f"{name} is not installed (apt-get install desktop-file-utils appstream shared-mime-info)")
    return path


def test_desktop_file_validates() -> None:
    result = subprocess.run([_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_metainfo_validates() -> None:
    result = subprocess.run([_tool("appstreamcli"), "validate", "--no-net", "--explain", str(METAINFO)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "W:" not in result.stdout and "E:" not in result.stdout, result.stdout


def test_mime_definition_installs(tmp_path: Path) -> None:
    (tmp_path / "packages").mkdir()
    shutil.copy(MIME, tmp_path / "packages")
    result = subprocess.run([_tool("update-mime-database"), "-V", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    globs = (tmp_path / "globs2").read_text()
    assert "inode/x-zarr-store:*.zarr" in globs
    assert "application/x-ome-zarr-zip:*.ozx" in globs


def test_desktop_metainfo_mime_and_app_agree() -> None:
    entry = ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(DESKTOP)
    d = entry["Desktop Entry"]
    assert d["Exec"] == "zarrview %U"
    assert d["Icon"] == APP_ID
    assert d["Categories"].split(";")[:3] == ["Science", "DataVisualization", "Qt"]
    mimes = d["MimeType"].rstrip(";").split(";")
    assert "application/zip" in mimes
    mime_types = [m.get("type") for m in ET.parse(MIME).getroot()]
    assert set(mime_types) <= set(mimes)
    provided = {m.text for m in ET.parse(METAINFO).getroot().iter("mediatype")}
    assert set(mime_types) <= provided
    meta = ET.parse(METAINFO).getroot()
    assert meta.findtext("id") == APP_ID
    assert meta.find("launchable").text == DESKTOP.name  # type: ignore[union-attr]
    assert [r.get("version") for r in meta.iter("release")][0] == __version__
    shot = meta.find("screenshots/screenshot/image").text  # type: ignore[union-attr]
    assert shot.endswith("resources/screenshots/main.png") and (ROOT / "resources/screenshots/main.png").is_file()


def test_icons_exist_at_every_size() -> None:
    from PySide6.QtGui import QImage

    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        image = QImage(str(icon_path(f"zarrview-{size}.png")))
        assert (image.width(), image.height()) == (size, size)
    for name in ("zarrview.svg", "group.svg", "array.svg", "sharded.svg", "error.svg", "zarrview.ico",
                 "zarrview.icns"):
        assert icon_path(name).is_file(), name
    assert icon_path("zarrview.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert icon_path("zarrview.icns").read_bytes()[:4] == b"icns"


def test_resources_come_from_the_installed_package() -> None:
    """The editable (or wheel) install maps resources/ to zarrview.resources."""
    from importlib import resources

    files = resources.files("zarrview.resources")
    assert files.joinpath("icons", "zarrview.svg").is_file()
    assert (demo_path() / "zarr.json").is_file()


def test_version_flag() -> None:
    out = subprocess.run([sys.executable, "-m", "zarrview", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"zarrview {__version__}"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_bundle_builds_runs_the_demo_and_leaves_test_packages_out(tmp_path: Path) -> None:
    pytest.importorskip("PyInstaller", reason="pyinstaller is part of the test extras")
    env = {**os.environ, "ZARRVIEW_DIST": str(tmp_path / "dist"), "ZARRVIEW_WORK": str(tmp_path / "work"),
           "PYTHON": sys.executable}
    build = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh"), "--here"], env=env,
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    bundle = tmp_path / "dist" / "zarrview"
    exe = bundle / ("zarrview.exe" if sys.platform == "win32" else "zarrview")
    assert exe.is_file()
    internal = bundle / "_internal"
    names = {p.name.lower() for p in internal.iterdir()}
    for banned in ("zarr", "tensorstore", "pytest", "hypothesis", "moto"):
        assert not {n for n in names if n == banned or n.startswith(banned + "-")}, banned
    assert (internal / "zarrview" / "resources" / "demo.zarr" / "zarr.json").is_file()

    run_env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=run_env, timeout=60)
    assert version.stdout.strip() == f"zarrview {__version__}"
    tree = subprocess.run([str(exe), "tree", str(internal / "zarrview" / "resources" / "demo.zarr")],
                          capture_output=True, text=True, env=run_env, timeout=60)
    assert tree.returncode == 0 and "cells" in tree.stdout and "weather" in tree.stdout, tree.stderr
    assert "Warning" not in tree.stderr, tree.stderr
    shot = tmp_path / "bundle.png"
    demo = subprocess.run([str(exe), "--demo", "--screenshot", str(shot)], capture_output=True, text=True,
                          env=run_env, timeout=120)
    assert demo.returncode == 0, demo.stderr[-3000:]

    from PySide6.QtGui import QImage

    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1280, 820)
    # the demo plane is drawn: the image area holds many distinct grey levels, not a blank panel
    colours = {image.pixel(x, y) for x in range(520, 1000, 7) for y in range(360, 760, 7)}
    assert len(colours) > 50
    size_mib = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20
    print(f"bundle size: {size_mib:.0f} MiB")


def test_install_desktop_script_places_every_file(tmp_path: Path) -> None:
    env = {**os.environ, "PREFIX": str(tmp_path)}
    subprocess.run(["bash", str(ROOT / "packaging" / "install-desktop.sh")], env=env, check=True,
                   capture_output=True, text=True)
    share = tmp_path / "share"
    assert (share / "applications" / f"{APP_ID}.desktop").read_bytes() == DESKTOP.read_bytes()
    assert (share / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    assert (share / "mime" / "packages" / f"{APP_ID}.xml").is_file()
    for size in (16, 48, 256, 512):
        assert (share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_wheel_carries_the_resources(tmp_path: Path) -> None:
    import zipfile

    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                    "-w", str(out)], check=True, capture_output=True, text=True, timeout=300)
    [wheel] = list(out.glob("zarrview-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert f"zarrview/resources/icons/zarrview-{size}.png" in names
    for icon in ("group.svg", "array.svg", "sharded.svg", "error.svg", "zarrview.ico", "zarrview.icns"):
        assert f"zarrview/resources/icons/{icon}" in names
    demo = [n for n in names if n.startswith("zarrview/resources/demo.zarr/")]
    expected = [p for p in (ROOT / "resources" / "demo.zarr").rglob("*") if p.is_file()]
    assert len(demo) == len(expected)  # dot files (.zarray, .zattrs, .zgroup) included
    assert "zarrview/resources/demo.zarr/weather/.zgroup" in names
    for version in ("0.4", "0.5", "0.6"):
        assert f"zarrview/viewing/ome/schemas/{version}/image.schema" in names
    assert "zarrview/viewing/ome/schemas/0.6/scene.schema" in names


def test_pyproject_lists_every_package() -> None:
    """setuptools is given the packages by name: one left out would be missing from the wheel
    (an in-tree ``build/`` left by an earlier build can hide that from a wheel's contents)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "zarrview").rglob("__init__.py")}
    assert not found - listed, f"add {sorted(found - listed)} to [tool.setuptools] packages"
