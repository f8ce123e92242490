"""Hatched boxes over the chunks of a plane that could not be read.

A remote read can lose a chunk while the rest arrives; the view shows what it has and marks
the hole, with the key and the error in the tooltip, rather than failing the whole plane.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsRectItem

from ..zarrlib import ChunkFailure


class FailureBoxes:
    def __init__(self, view: pg.ViewBox) -> None:
        self.view = view
        self.items: list[QGraphicsRectItem] = []

    def clear(self) -> None:
        for item in self.items:
            self.view.removeItem(item)
        self.items = []

    def mark(self, failures: tuple[ChunkFailure, ...], y: int, x: int) -> None:
        """One box per failed chunk; ``y`` and ``x`` are the array dimensions shown as rows and columns."""
        for failure in failures:
            (r0, r1), (c0, c1) = failure.box[y], failure.box[x]
            item = QGraphicsRectItem(c0, r0, c1 - c0, r1 - r0)
            pen = pg.mkPen("#ff3b30", width=2)
            pen.setCosmetic(True)
            item.setPen(pen)
            # Qt draws pattern brushes in device pixels: the hatch stays 8 px apart at any zoom,
            # opaque enough to read as a mark over any colour map, never as a tint like NaN
            item.setBrush(QBrush(QColor(255, 59, 48, 235), Qt.BrushStyle.BDiagPattern))
            item.setZValue(20)
            item.setToolTip(f"{failure.key}: {failure.message}")
            self.view.addItem(item)
            self.items.append(item)
