"""The selected node's metadata: a summary table, the attributes as a tree with convention keys
marked (``attributes_view.py``), the raw JSON, for an array a Storage tab (the audit of how it is
stored, made on a worker when the tab is opened: a listing can take long on a remote store), and
for an OME-Zarr group an OME tab (``ome_panel.py``), shown only for groups whose attributes hold
OME metadata and filled once the window has read that metadata off the GUI thread."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHeaderView,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from ..describe import human_bytes, summary, to_json
from ..viewing.audit import arrays_below, describe as describe_audit
from ..viewing.metadata import MAX_ITEMS, elide
from ..viewing.ome import OmeLabels, OmeNode, marker
from ..scheduling import Context, Done, Driver, Job, Task, Tasks, WorkerPool, call_job
from ..zarrlib import Array, ErrorNode, Group, Node, ReadCancelled, UnsupportedArray
from .attributes_view import AttributesView
from .bridge import post
from .ome_panel import OmePanel, problem_count


#: fields whose values are long enough to need the whole width of the panel
WIDE_FIELDS = frozenset({"Store", "Codecs", "Error", "Path", "Archive", "Archive note", "Repository", "Version",
                         "Commit"})
WIDE_VALUE = 40


class MetadataPanel(QTabWidget):
    #: the node's summary in one line (``summary_line``), for the header of the folded panel
    summary_changed = Signal(str)

    def __init__(self, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: the stored objects of the array shown, and its documents written out: each the newest only
        self._counts: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._counted, post=lambda fn: post(fn, self), name="stored objects")
        self._documents: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._documented, post=lambda fn: post(fn, self), name="metadata document")
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
        self.attrs = AttributesView()
        self.json = QPlainTextEdit()
        self.json.setReadOnly(True)
        self.addTab(self.table, "Metadata")
        self.addTab(self.attrs, "Attributes")
        self.addTab(self.json, "JSON")
        #: the audit of the array shown, made when this tab is opened (the newest only)
        self.storage = QPlainTextEdit()
        self.storage.setReadOnly(True)
        self.storage.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.storage.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.addTab(self.storage, "Storage")
        self.setTabVisible(self.indexOf(self.storage), False)
        self._audits: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._audited, post=lambda fn: post(fn, self), name="storage audit")
        self._audit_for: Node | None = None  # the array or group the Storage tab is about
        self._audited_node: Node | None = None  # the one whose audit was asked for
        self.ome = OmePanel()
        self.addTab(self.ome, "OME")
        self.setTabVisible(self.indexOf(self.ome), False)
        #: the OME tab was the one open when a node without OME metadata hid it: open it again
        #: with the next OME group, unless another tab was chosen meanwhile
        self._ome_wanted = False
        self._json_for: Node | None = None  # the node whose documents the JSON tab is being given
        self._rows: list[list[tuple[str, str]]] = []  # the summary's fields as laid out
        self._hiding = False
        self.currentChanged.connect(self._chosen)

    def show_node(self, node: Node | None, error: str | None = None, path: str | None = None) -> None:
        """``node``'s metadata; or, without a node, ``error`` (about ``path``, when known)."""
        rows: list[tuple[str, str]] = []
        if isinstance(node, UnsupportedArray):  # its document could be read: show it, with the error
            rows = summary(node)
        elif isinstance(node, ErrorNode) or (node is None and error):
            rows = [("Path", node.path if node else path or "—"), ("Error", error or str(getattr(node, "error", "")))]
        elif node is not None:
            rows = summary(node)
        self._counts.discard()  # the count of the node shown before is no longer wanted
        self._audit_tab(node)
        if isinstance(node, Array) and not isinstance(node, UnsupportedArray) and node.store.can_list:
            rows.append(("Stored", "counting…"))
            self._count_stored(node)
        self._fill_table(rows)
        self.attrs.clear()
        if node is not None and (not isinstance(node, ErrorNode) or isinstance(node, UnsupportedArray)):
            self.attrs.show_attrs(elide(node.attrs))
            self._show_json(node)
        else:
            self._json_for = None
            self.json.setPlainText(error or "")
        self._ome_for(node)

    def add_row(self, key: str, value: str) -> None:
        """One more field under the summary (what a worker found after the node was shown)."""
        rows = [(k, v) for line in self._rows for k, v in line] + [(key, value)]
        self._fill_table(rows)

    def _count_stored(self, node: Array) -> None:
        """The stored chunk (or shard) objects of ``node``, counted on a worker by listing what
        is stored (never its grid: 10**12 keys for 10**15 elements), stopped at ``STORED_LIMIT``
        and when another node is shown."""
        def work(ctx: Context) -> Any:
            try:
                return node.stored_objects(cancel=ctx.cancel, limit=STORED_LIMIT)
            except ReadCancelled:
                return None

        self._counts.show(Task(Job(work, f"stored objects of {node.path}"), about=node))

    def _counted(self, done: Done[Any]) -> None:
        """The count of the array still shown (the driver drops a count of one shown before)."""
        answer = done.answer
        if answer.cancelled:
            return
        found, error = answer.value, answer.error
        if error is not None:
            text = f"cannot be counted: {error}"
        elif found is None:
            text = "— (the store cannot list)"
        else:
            more = "" if found.complete else f" (counting stopped at {STORED_LIMIT:,}: there are more)"
            text = f"{found.count:,} object{'s' if found.count != 1 else ''}, {human_bytes(found.nbytes)}{more}"
        self._set_value("Stored", text)

    def _set_value(self, key: str, value: str) -> None:
        for r in range(self.table.rowCount()):
            for c in range(0, self.table.columnCount(), 2):
                item, value_item = self.table.item(r, c), self.table.item(r, c + 1)
                if item is not None and item.text() == key and value_item is not None:
                    value_item.setText(value)
                    value_item.setToolTip(value)
                    self.summary_changed.emit(summary_line(self.fields()))
                    return

    def _show_json(self, node: Node) -> None:
        """The node's documents, written out on a worker: a consolidated root's document is
        parsed only now (50 MB for 100,000 nodes: seconds), and never on the GUI thread."""
        self._json_for = node
        self.json.setPlainText("Reading the metadata document…")

        self._documents.show(Task(call_job(lambda: to_json(elide(_documents(node))), label=f"metadata of {node.path}"),
                                  about=node))

    def _documented(self, done: Done[str]) -> None:
        """The documents of the node still shown; a node shown without documents since (an
        unreadable one) keeps its error."""
        if done.answer.cancelled or self._json_for is not done.task.about:
            return
        error = done.answer.error
        self.json.setPlainText(done.answer.value or "" if error is None
                               else f"The metadata document cannot be read: {error}")

    # -- the OME tab ----------------------------------------------------------------------------
    def _ome_for(self, node: Node | None) -> None:
        """Shown, saying it is reading, for a group whose attributes hold OME metadata; hidden
        for anything else (from the attributes alone: the metadata itself comes later)."""
        if isinstance(node, Group) and not isinstance(node, ErrorNode) and marker(node.attrs):
            self.ome.show_text(f"Reading the OME-Zarr metadata of {node.path}…")
            self._ome_tab(True, "OME")
        else:
            self.ome.show_text("")
            self._ome_tab(False, "OME")

    def show_ome(self, found: OmeNode | None, error: BaseException | None = None) -> None:
        """What ``detect`` found for the group shown (the window reads it off the GUI thread)."""
        if error is not None:
            self.ome.show_text(f"The OME-Zarr metadata cannot be read: {error}")
            self._ome_tab(True, "OME (cannot be read)")
        elif found is None:
            self._ome_for(None)
        else:
            self.ome.show_ome(found)
            self._ome_tab(True, self._ome_title())

    def show_ome_labels(self, labels: OmeLabels | None) -> None:
        """The shown image's ``labels`` group, read after it."""
        self.ome.set_labels(labels)
        if self.ome.node is not None:
            self._ome_tab(True, self._ome_title())

    def _chosen(self, _index: int) -> None:
        if not self._hiding:
            self._ome_wanted = self.currentWidget() is self.ome
        if self.currentWidget() is self.storage:
            self._audit()

    # -- the Storage tab --------------------------------------------------------------------------
    def _audit_tab(self, node: Node | None) -> None:
        """The tab shown for an array or a group (audited now if it is the open tab: a group's
        every array below it), hidden otherwise."""
        self._audits.discard()
        shown = node if isinstance(node, Array | Group) and not isinstance(node, ErrorNode) else None
        self._audit_for, self._audited_node = shown, None
        if shown is None:
            self.storage.setPlainText("")
        else:
            what = "every array below it is" if isinstance(shown, Group) else "it is"
            self.storage.setPlainText(f"How {what} stored ({shown.path}): counted when this tab is open.")
        self._hiding = True
        self.setTabVisible(self.indexOf(self.storage), shown is not None)
        self._hiding = False
        if shown is not None and self.currentWidget() is self.storage:
            self._audit()

    def _audit(self) -> None:
        """The audit of the node shown, on a worker (an array's listing and shard indexes; a
        group's arrays one after the other), cancelled when another node is shown; how far it
        got is shown as it goes."""
        node = self._audit_for
        if node is None or self._audited_node is node:
            return
        self._audited_node = node
        self.storage.setPlainText(f"Auditing {node.path}: listing what is stored…")

        def seen(n: int) -> None:
            post(lambda: self._audit_progress(node, f"{n:,} objects looked at"), self)

        def tell(arrays: int) -> None:
            post(lambda: self._audit_progress(node, f"{arrays:,} arrays audited"), self)

        def work(ctx: Context) -> Any:
            try:
                if isinstance(node, Array):
                    return [node.audit(cancel=ctx.cancel, progress=seen)]
                audits = []
                for array in arrays_below(node):
                    ctx.cancel.raise_if_cancelled()
                    audits.append(array.audit(cancel=ctx.cancel))
                    tell(len(audits))
                return audits
            except ReadCancelled:
                return None

        self._audits.show(Task(Job(work, f"storage audit of {node.path}"), about=node))

    def _audit_progress(self, node: Node, how_far: str) -> None:
        """How far the audit of ``node`` got, while it is still the one under way."""
        if self._audit_for is node and self._audited_node is node and self._audits.busy():
            self.storage.setPlainText(f"Auditing {node.path}: {how_far}…")

    def _audited(self, done: Done[Any]) -> None:
        answer, node = done.answer, self._audit_for
        if answer.cancelled or node is None or done.task.about is not node:
            return
        if answer.error is not None:
            self.storage.setPlainText(f"The storage of {node.path} cannot be audited: {answer.error}")
        elif answer.value is not None:
            self.storage.setPlainText("\n\n".join(describe_audit(a) for a in answer.value) or
                                      f"{node.path} holds no array.")

    def _ome_title(self) -> str:
        severities = self.ome.problem_severities()
        return f"OME ({problem_count(severities)})" if severities else "OME"

    def _ome_tab(self, shown: bool, title: str) -> None:
        index = self.indexOf(self.ome)
        was_visible = self.isTabVisible(index)
        self.setTabText(index, title)
        self._hiding = True  # hiding the open tab opens another: not the user's choice
        self.setTabVisible(index, shown)
        self._hiding = False
        if shown and not was_visible and self._ome_wanted:
            self.setCurrentWidget(self.ome)

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
        lines = self._rows = layout_rows(rows)
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
        self.summary_changed.emit(summary_line(dict(rows)))


#: stored objects counted for the metadata panel before it says "there are more"
STORED_LIMIT = 1_000_000


#: the fields the folded panel's line names, in its order
SUMMARY_FIELDS = ("Kind", "Shape", "Data type", "Stored", "Error")


def summary_line(fields: dict[str, str]) -> str:
    """``/vol · array · (10, 256, 256) · float32 · 40 objects, 1.7 MiB``: what the node is,
    for the panel's header while it is folded."""
    parts = [fields.get("Path", "")] + [fields[key] for key in SUMMARY_FIELDS if fields.get(key)]
    return " · ".join(p for p in parts if p)


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
    # a consolidated root: its first entries only, without parsing the 50 MB of 100,000 nodes
    # (json.loads holds the GIL: on any thread it would stall the window for seconds)
    document = node.metadata_preview(MAX_ITEMS)
    if node.zarr_format == 2:
        own = ".zarray" if node.kind == "array" else ".zgroup"
        return {own: document, ".zattrs": node.attrs}
    return document if document else {"attributes": node.attrs}
