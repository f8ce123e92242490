"""What Qt's X11 platform plugin needs from the system, checked before Qt aborts without it.

PySide6's wheels carry Qt but not the X11 libraries its xcb plugin links against. On a fresh
Debian or Ubuntu several are missing, and Qt then prints a plugin error and aborts the process
(SIGABRT, no Python exception to catch). Asking the dynamic linker (``ldd``) which of the
plugin's libraries it cannot find, before the first ``QApplication``, lets the app print the
one ``apt-get`` line that fixes it instead.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
import re
import shutil
import subprocess
from pathlib import Path

#: every system package the window needs on Debian/Ubuntu (the README's line)
APT_PACKAGES = (
    "libgl1 libegl1 libfontconfig1 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 "
    "libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 "
    "libxcb-xfixes0 libxcb-xinerama0 libxcb-xkb1 libzstd1"
)
APT_LINE = f"sudo apt-get install -y {APT_PACKAGES}"
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.M)
#: loaded by Qt at run time (dlopen), so ldd cannot see it missing
_DLOPENED = {"xcb-cursor": "libxcb-cursor.so.0"}


def no_display(env: dict[str, str] | None = None) -> bool:
    """Whether Qt would find no screen: on Linux, no X11 or Wayland display and no platform
    asked for (Qt aborts the process then, with a page about plugins)."""
    env = dict(os.environ) if env is None else env
    if not sys.platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return False
    return not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY")


def uses_xcb(env: dict[str, str] | None = None) -> bool:
    """Whether Qt will pick its X11 plugin: on Linux, unless another platform is asked for or
    only a Wayland session is there."""
    env = dict(os.environ) if env is None else env
    if not sys.platform.startswith("linux"):
        return False
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":", 1)[0].split(";", 1)[0] == "xcb"
    return not (env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"))


def missing_from_ldd(output: str) -> list[str]:
    """The library names ``ldd`` reports as not found, each once, in order."""
    seen: dict[str, None] = {}
    for name in _NOT_FOUND.findall(output):
        seen.setdefault(name, None)
    return list(seen)


def missing_xcb_libraries() -> list[str]:
    """Libraries the xcb plugin needs that the dynamic linker cannot find (empty when all are
    there, or when this cannot be told: no PySide6 plugin file, no ``ldd``)."""
    try:
        import PySide6
    except ImportError:
        return []
    qt = Path(PySide6.__file__).parent / "Qt"
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    ldd = shutil.which("ldd")
    if not plugin.exists() or ldd is None:
        return []
    missing: list[str] = []
    for target in (plugin, *sorted((qt / "lib").glob("libQt6XcbQpa.so*"))[:1]):
        try:
            out = subprocess.run([ldd, str(target)], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        missing += [m for m in missing_from_ldd(out) if m not in missing]
    missing += [soname for name, soname in _DLOPENED.items() if ctypes.util.find_library(name) is None]
    return missing


def explain(missing: list[str]) -> str:
    return (f"zarrview: Qt's X11 platform plugin cannot load: the system lacks {', '.join(missing)}.\n"
            f"On Debian or Ubuntu install what the window needs with:\n    {APT_LINE}\n"
            "(or run headless with QT_QPA_PLATFORM=offscreen)")
