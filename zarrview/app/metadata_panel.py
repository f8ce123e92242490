"""The selected node's metadata: a summary table, the attributes as a tree, the raw JSON."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QHeaderView,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from ..describe import summary, to_json
from ..zarrlib import ErrorNode, Node, UnsupportedArray


class MetadataPanel(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Field", "Value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.attrs = QTreeWidget()
        self.attrs.setHeaderLabels(["Key", "Value"])
        self.attrs.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.json = QPlainTextEdit()
        self.json.setReadOnly(True)
        self.addTab(self.table, "Metadata")
        self.addTab(self.attrs, "Attributes")
        self.addTab(self.json, "JSON")

    def show_node(self, node: Node | None, error: str | None = None, path: str | None = None) -> None:
        """``node``'s metadata; or, without a node, ``error`` (about ``path``, when known)."""
        rows: list[tuple[str, str]] = []
        if isinstance(node, UnsupportedArray):  # its document could be read: show it, with the error
            rows = summary(node)
        elif isinstance(node, ErrorNode) or (node is None and error):
            rows = [("Path", node.path if node else path or "—"), ("Error", error or str(getattr(node, "error", "")))]
        elif node is not None:
            rows = summary(node)
        self.table.setRowCount(len(rows))
        for r, (k, v) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(k))
            item = QTableWidgetItem(v)
            item.setToolTip(v)
            self.table.setItem(r, 1, item)
        self.attrs.clear()
        if node is not None and (not isinstance(node, ErrorNode) or isinstance(node, UnsupportedArray)):
            _fill(self.attrs.invisibleRootItem(), node.attrs)
            self.attrs.expandToDepth(0)
            self.json.setPlainText(to_json(_documents(node)))
        else:
            self.json.setPlainText(error or "")


def _documents(node: Node) -> dict[str, Any]:
    """What the store holds for ``node``: v2 keeps attributes in a document of their own
    (``.zattrs``) beside ``.zarray``/``.zgroup``, so both are shown, under their key names."""
    if node.zarr_format == 2:
        own = ".zarray" if node.kind == "array" else ".zgroup"
        return {own: node.metadata, ".zattrs": node.attrs}
    return node.metadata if node.metadata else {"attributes": node.attrs}


def _fill(parent: QTreeWidgetItem, value: Any) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, v in items:
        child = QTreeWidgetItem([str(key), "" if isinstance(v, (dict, list)) else repr(v) if not isinstance(v, str) else v])
        parent.addChild(child)
        if isinstance(v, (dict, list)):
            child.setText(1, f"{{{len(v)} keys}}" if isinstance(v, dict) else f"[{len(v)} items]")
            _fill(child, v)
