"""Opening a node of an open store by its path: the Go to Path dialog, the ``::/path`` of a
location, a plate's well. The tree is expanded down to the node as each level is listed, or the
nodes on the way are read directly where the store cannot list them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtWidgets import QInputDialog

from .. import zarrlib as zl
from ..scheduling import Answer, call_job
from .bridge import gui_lane
from .tree.columns import NAME_COLUMN

if TYPE_CHECKING:
    from .window import MainWindow


class PathNavigator:
    """Selects nodes of ``window``'s tree by path."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self._lane = gui_lane(window.pool, window, "go to path")
        self._pending: tuple[int, list[str]] | None = None
        # after the proxy has seen the new rows: queued to the next event-loop turn
        self._timer = QTimer(window)  # owned: cannot fire on a deleted window
        self._timer.setSingleShot(True)  # interval 0: the next turn of the event loop
        self._timer.timeout.connect(self._resolve)
        window.model.rowsInserted.connect(lambda *_: self._timer.start())

    def ask(self) -> None:
        """Open a node by its path in the current store: how to reach children of a store that
        cannot list (plain HTTP without consolidated metadata)."""
        index = self.window.proxy.mapToSource(self.window.tree.currentIndex())
        if not index.isValid() and self.window.model.rowCount() > 0:
            index = self.window.model.index(self.window.model.rowCount() - 1, NAME_COLUMN)
        if not index.isValid():
            self.window.status_label.setText("Open a store first")
            return
        node = self.window.model.node(index)
        start = node.path if isinstance(node, zl.Group) and node.path != "/" else ""
        path, ok = QInputDialog.getText(self.window, "Go to Path", "Path of a group or array in this store:", text=start + "/")
        if ok and path.strip("/ "):
            self.go_to(index, path.strip())

    def go_to(self, index: QModelIndex, path: str) -> None:
        top = index
        while top.parent().isValid():
            top = top.parent()
        root = self.window.model.node(top)
        if not isinstance(root, zl.Group):
            self.window.status_label.setText("Only a group has paths below it")
            return
        row = top.row()
        self.window.pending_opens += 1

        def done(answer: Answer[list[zl.Node]]) -> None:
            self.window.pending_opens -= 1
            if answer.stale or answer.cancelled:
                return  # another path asked for meanwhile
            if answer.error is not None:
                self.window.status_label.setText(f"Cannot open {path}: {answer.error}")
                return
            chain = answer.value
            assert chain is not None
            if self.window.model.index(row, NAME_COLUMN).isValid() and self.window.model.node(self.window.model.index(row, NAME_COLUMN)) is root:
                self.window.tree.setCurrentIndex(self.window.proxy.mapFromSource(self.window.model.insert_path(row, chain)))

        self._lane.submit(call_job(lambda: path_chain(root, path), label=f"go to {path}"), done)

    def select(self, row: int, node_path: str) -> None:
        """Select the node at ``node_path`` below the store in top row ``row``: the tree expands
        down to it as each level is listed (a node opened by its location, a plate's well)."""
        self._pending = (row, [p for p in node_path.split("/") if p])
        self._resolve()

    def _resolve(self) -> None:
        """Expand the tree down to a node opened by path, as its parents' children arrive."""
        if self._pending is None:
            return
        row, parts = self._pending
        index = self.window.model.index(row, NAME_COLUMN)
        for name in parts:
            self.window.tree.expand(self.window.proxy.mapFromSource(index))
            item = self.window.model.item(index)
            if item.children is None or item.loading:
                return  # wait for the listing
            found = next((i for i, c in enumerate(item.children) if c.node is not None and c.node.name == name), None)
            if found is None:
                self._pending = None
                return
            index = self.window.model.index(found, NAME_COLUMN, index)
        self._pending = None
        self.window.tree.setCurrentIndex(self.window.proxy.mapFromSource(index))


def path_chain(root: zl.Group, path: str) -> list[zl.Node]:
    """The nodes from ``root`` down to ``path`` (each one read directly)."""
    parts = [p for p in path.strip("/").split("/") if p]
    return [root["/".join(parts[: i + 1])] for i in range(len(parts))]
