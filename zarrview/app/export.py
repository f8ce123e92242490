"""The screenshot: what the data view draws, pixel for pixel, as PNG bytes.

Grabbed on the GUI thread (a widget can only be painted there) and encoded from a QImage,
which, unlike a QPixmap, may be encoded and written on a worker thread.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget


def grab(widget: QWidget) -> QImage:
    return widget.grab().toImage()


def png_bytes(image: QImage) -> bytes:
    """Encode on any thread; an empty result means Qt could not encode the image."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    ok = image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; the binding takes str only
    return bytes(buffer.data().data()) if ok else b""
