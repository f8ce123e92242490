"""The image's view box, which lets a measuring tool take left drags to draw with.

pyqtgraph's view box pans on a left drag. While a tool that draws is in use (a line for a
profile, a rectangle for statistics), ``drawing`` is that tool's handler: it gets each drag
event, start to finish, and says whether it took it; the middle button and the wheel still
pan and zoom. Without a tool, drags pan as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt


class DrawBox(pg.ViewBox):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the drawing tool's drag handler (True: the drag is its own), or None: drags pan
        self.drawing: Callable[[Any], bool] | None = None

    def mouseDragEvent(self, ev: Any, axis: Any = None) -> None:  # noqa: N802 - pyqtgraph's name
        if axis is None and ev.button() == Qt.MouseButton.LeftButton and self.drawing is not None \
                and self.drawing(ev):
            ev.accept()
            return
        super().mouseDragEvent(ev, axis)
