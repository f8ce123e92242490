"""The check that replaces Qt's abort on a machine without the X11 libraries by one apt line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from zarrview.app import platform_check as pc

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /x/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
"""


def test_ldd_misses_are_listed_once_in_order():
    assert pc.missing_from_ldd(LDD_OUTPUT) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert pc.missing_from_ldd("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n") == []


@pytest.mark.parametrize("env,expected", [
    ({"DISPLAY": ":0"}, True), ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
    ({"QT_QPA_PLATFORM": "xcb"}, True), ({"WAYLAND_DISPLAY": "wayland-0"}, False),
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, True), ({"QT_QPA_PLATFORM": "wayland;xcb"}, False),
])
def test_which_platform_qt_picks(env, expected):
    assert pc.uses_xcb(env) is (expected and sys.platform.startswith("linux"))


def test_every_missing_library_has_its_package_in_the_apt_line():
    """Debian names a library's package after its soname: libxcb-icccm.so.4 is libxcb-icccm4."""
    packages = set(pc.APT_PACKAGES.split())
    for soname in ("libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0", "libxkbcommon-x11.so.0",
                   "libxcb-image.so.0", "libxcb-randr.so.0", "libxcb-render-util.so.0", "libxcb-shape.so.0",
                   "libxcb-xinerama.so.0", "libxcb-xkb.so.1", "libEGL.so.1", "libGL.so.1"):
        stem, _, version = soname.partition(".so.")
        name = stem.lower() + ("-" if stem[-1].isdigit() else "") + version
        assert name in packages, soname


def test_readme_says_what_the_system_needs():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert f"apt-get install -y {pc.APT_PACKAGES}" in readme


def test_the_app_prints_the_line_instead_of_aborting(tmp_path):
    """With the X11 platform asked for and a library it links against hidden, ``zarrview`` exits
    with the apt line (Qt itself would abort with SIGABRT)."""
    code = ("import sys, zarrview.app.platform_check as pc\n"
            "pc.missing_xcb_libraries = lambda: ['libxcb-icccm.so.4']\n"
            "from zarrview.app.main import run_app\n"
            "sys.exit(run_app(['--demo']))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":99"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    assert "libxcb-icccm.so.4" in out.stderr and pc.APT_LINE in out.stderr


def test_missing_libraries_are_found_by_the_dynamic_linker():
    """On this machine the answer matches what ldd says of the plugin itself (empty when all
    are installed), so the check looks at the real plugin, not a list of guesses."""
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        pytest.skip("this PySide6 has no xcb plugin (not Linux)")
    direct = pc.missing_from_ldd(subprocess.run(["ldd", str(plugin)], capture_output=True, text=True).stdout)
    assert set(direct) <= set(pc.missing_xcb_libraries())
