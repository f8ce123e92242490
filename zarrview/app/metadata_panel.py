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


#: fields whose values are long enough to need the whole width of the panel
WIDE_FIELDS = frozenset({"Store", "Codecs", "Error", "Path"})
WIDE_VALUE = 40


class MetadataPanel(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 4)
        self.table.horizontalHeader().hide()
        header = self.table.horizontalHeader()
        for col in (0, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        for col in (1, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setWordWrap(False)
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
        self._fill_table(rows)
        self.attrs.clear()
        if node is not None and (not isinstance(node, ErrorNode) or isinstance(node, UnsupportedArray)):
            _fill(self.attrs.invisibleRootItem(), node.attrs)
            self.attrs.expandToDepth(0)
            self.json.setPlainText(to_json(_documents(node)))
        else:
            self.json.setPlainText(error or "")

    def fields(self) -> dict[str, str]:
        """The fields shown, by name (what a reader of the table sees)."""
        out: dict[str, str] = {}
        for r in range(self.table.rowCount()):
            for c in (0, 2):
                name, value = self.table.item(r, c), self.table.item(r, c + 1)
                if name is not None and value is not None:
                    out[name.text()] = value.text()
        return out

    def _fill_table(self, rows: list[tuple[str, str]]) -> None:
        lines = layout_rows(rows)
        self.table.clearSpans()
        self.table.clearContents()
        self.table.setRowCount(len(lines))
        bold = self.table.font()
        bold.setBold(True)
        for r, line in enumerate(lines):
            for i, (key, value) in enumerate(line):
                name = QTableWidgetItem(key)
                name.setFont(bold)
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                self.table.setItem(r, 2 * i, name)
                self.table.setItem(r, 2 * i + 1, item)
            if len(line) == 1:
                self.table.setSpan(r, 1, 1, 3)


def layout_rows(rows: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Fields two to a line, so a node's summary fits the panel without scrolling; a long value
    (a store URL, a codec chain) gets a line of its own."""
    lines: list[list[tuple[str, str]]] = []
    pending: list[tuple[str, str]] = []
    for key, value in rows:
        if key in WIDE_FIELDS or len(value) > WIDE_VALUE:
            lines.append([(key, value)])
        else:
            pending.append((key, value))
            if len(pending) == 2:
                lines.append(pending)
                pending = []
    if pending:
        lines.append(pending)
    return lines


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
