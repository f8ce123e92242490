"""The Attributes tab: a node's attributes as a tree, with the keys a convention defines marked.

A geoscience array mixes what its author wrote (``history``, ``comment``) with keys that change
what the viewer shows (``scale_factor``, ``_FillValue``, ``_ARRAY_DIMENSIONS``); a small grey tag
beside such a key ("CF", "xarray", "NCZarr", "GeoZarr", "NetCDF") says which is which, and its
tooltip says why it matters. GeoZarr-style metadata (``zarr_conventions``, ``spatial:``,
``proj:``) is summarised in a section of its own above the keys. Everything here comes from the
attributes already in memory: nothing is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QHeaderView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from ..viewing.cf.conventions import convention_of, geo_metadata

#: the item data role holding a key's convention name ("CF", ...), None for others
CONVENTION_ROLE = Qt.ItemDataRole.UserRole + 1
#: the item data role marking the GeoZarr section's rows (True), not attributes
SECTION_ROLE = Qt.ItemDataRole.UserRole + 2
GEO_SECTION = "GeoZarr metadata"
WHY = {
    "CF": "a CF conventions attribute: zarrview reads it (units, names, masking, unpacking, coordinates)",
    "NetCDF": "a netCDF attribute (the netCDF User Guide's conventions, which CF builds on)",
    "xarray": "written by xarray: the dimension names of a Zarr v2 array, or how its text is encoded",
    "NCZarr": "netCDF-C's NCZarr bookkeeping: dimensions, types and the file's structure",
    "GeoZarr": "GeoZarr-style spatial or projection metadata (summarised above the attributes)",
}
_TAG_PAD = 4
_TAG_GAP = 6


class ConventionTagDelegate(QStyledItemDelegate):
    """Paints a key as usual, then its convention's name in a small grey box at its right."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        super().paint(painter, option, index)
        tag = index.data(CONVENTION_ROLE)
        if not tag:
            return
        font = option.font
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        painter.save()
        painter.setFont(font)
        metrics = painter.fontMetrics()
        rect: QRect = option.rect
        width = metrics.horizontalAdvance(tag) + 2 * _TAG_PAD
        height = min(rect.height() - 2, metrics.height() + 2)
        box = QRect(rect.right() - width - 2, rect.center().y() - height // 2, width, height)
        grey = QColor(128, 128, 128)
        painter.setPen(grey)
        painter.setBrush(QColor(128, 128, 128, 40))
        painter.drawRoundedRect(box, 3, 3)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, tag)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        tag = index.data(CONVENTION_ROLE)
        if tag:
            size.setWidth(size.width() + _TAG_GAP + option.fontMetrics.horizontalAdvance(tag) + 2 * _TAG_PAD + 2)
        return size


class AttributesView(QTreeWidget):
    """Key and value columns; top-level keys tagged with their convention."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["Key", "Value"])
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.setItemDelegateForColumn(0, ConventionTagDelegate(self))

    def show_attrs(self, attrs: Any) -> None:
        """``attrs`` (a node's attributes; anything else is shown as a single value)."""
        self.clear()
        root = self.invisibleRootItem()
        if not isinstance(attrs, Mapping):
            root.addChild(QTreeWidgetItem(["(attributes)", _value_text(attrs)]))
            return
        rows = geo_metadata(attrs)
        if rows:
            section = QTreeWidgetItem([GEO_SECTION, ""])
            section.setData(0, SECTION_ROLE, True)
            font = section.font(0)
            font.setItalic(True)
            section.setFont(0, font)
            section.setToolTip(0, "zarr_conventions and the spatial: and proj: keys, in short; their full "
                                  "values are among the attributes below")
            root.addChild(section)
            for key, text in rows:
                row = QTreeWidgetItem([key, text])
                row.setData(0, SECTION_ROLE, True)
                row.setToolTip(1, text)
                section.addChild(row)
        for key, value in attrs.items():
            item = _item(str(key), value)
            tag = convention_of(key)
            if tag is not None:
                item.setData(0, CONVENTION_ROLE, tag)
                item.setToolTip(0, f"{key}: {WHY[tag]}")
            root.addChild(item)
        self.expandToDepth(0)

    def conventions(self) -> dict[str, str]:
        """Top-level attribute key -> convention tag, for the keys that have one."""
        out: dict[str, str] = {}
        for item in _children(self.invisibleRootItem()):
            tag = item.data(0, CONVENTION_ROLE)
            if tag and not item.data(0, SECTION_ROLE):
                out[item.text(0)] = tag
        return out

    def geo_rows(self) -> list[tuple[str, str]]:
        """The GeoZarr section's (name, text) rows as shown; empty where there is none."""
        for section in _children(self.invisibleRootItem()):
            if section.data(0, SECTION_ROLE):
                return [(row.text(0), row.text(1)) for row in _children(section)]
        return []


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    """The items below ``item``: Qt's bindings type each child as optional, though every index
    below ``childCount`` has one."""
    return [child for child in map(item.child, range(item.childCount())) if child is not None]


def _item(key: str, value: Any) -> QTreeWidgetItem:
    item = QTreeWidgetItem([key, _value_text(value)])
    if isinstance(value, dict):
        item.setText(1, f"{{{len(value)} keys}}")
        for k, v in value.items():
            item.addChild(_item(str(k), v))
    elif isinstance(value, list):
        item.setText(1, f"[{len(value)} items]")
        for i, v in enumerate(value):
            item.addChild(_item(str(i), v))
    return item


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else "" if isinstance(value, (dict, list)) else repr(value)
