"""Render the application icon's SVG source to PNGs, a Windows .ico and a macOS .icns.

The PNGs, .ico and .icns are committed, so building a bundle needs neither this script nor
an image library; run it again after editing ``resources/icons/zarrview.svg``. Qt's SVG
renderer draws the PNGs; .ico and .icns are containers of PNG images, written here directly.

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
#: ICNS chunk types that hold PNG data, by pixel size
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def render(svg: Path, size: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    sizes = [s for s in sorted(pngs) if s <= 256]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for s in sizes:
        png = pngs[s]
        entries += struct.pack("<BBBBHHII", s % 256, s % 256, 0, 0, 1, 32, len(png), offset + len(blobs))
        blobs += png
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[s])) + pngs[s] for s, kind in ICNS_TYPES.items())
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    source = ICONS / "zarrview.svg"
    pngs = {size: render(source, size) for size in SIZES}
    for size, png in pngs.items():
        (ICONS / f"zarrview-{size}.png").write_bytes(png)
    (ICONS / "zarrview.ico").write_bytes(ico(pngs))
    (ICONS / "zarrview.icns").write_bytes(icns(pngs))
    del app
    print(f"wrote {len(pngs)} PNGs, zarrview.ico and zarrview.icns to {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
