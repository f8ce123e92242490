"""Opening a node of an open store by its path: the Go to Path dialog, the ``::/path`` of a
location, a plate's well. The tree is expanded down to the node as each level is listed, or the
nodes on the way are read directly where the store cannot list them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtWidgets import QInputDialog

from .. import zarrlib as zl
from ..scheduling import Done, Driver, Task, Tasks, call_job
from .bridge import post
from .tree.columns import NAME_COLUMN

if TYPE_CHECKING:
    from .window_host import NavigatorHost


class PathNavigator:
    """Selects nodes of ``host``'s tree by path; ``reading`` says whether a path is being read."""

    def __init__(self, host: NavigatorHost) -> None:
        self.host = host
        owner = host.window()
        #: the newest path asked for, read node by node
        self.driver: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), host.pool, self._read, post=lambda fn: post(fn, owner), name="go to path")
        self._pending: tuple[int, list[str]] | None = None
        # after the proxy has seen the new rows: queued to the next event-loop turn
        self._timer = QTimer(host.window())  # owned: cannot fire on a deleted window
        self._timer.setSingleShot(True)  # interval 0: the next turn of the event loop
        self._timer.timeout.connect(self._resolve)
        host.model.rowsInserted.connect(lambda *_: self._timer.start())

    @property
    def reading(self) -> int:
        """1 while a path is being read (a path asked for meanwhile replaces it), else 0."""
        return int(self.driver.busy())

    def ask(self) -> None:
        """Open a node by its path in the current store: how to reach children of a store that
        cannot list (plain HTTP without consolidated metadata)."""
        index = self.host.proxy.mapToSource(self.host.tree.currentIndex())
        if not index.isValid() and self.host.model.rowCount() > 0:
            index = self.host.model.index(self.host.model.rowCount() - 1, NAME_COLUMN)
        if not index.isValid():
            self.host.say("Open a store first")
            return
        node = self.host.model.node(index)
        start = node.path if isinstance(node, zl.Group) and node.path != "/" else ""
        path, ok = QInputDialog.getText(self.host.window(), "Go to Path", "Path of a group or array in this store:", text=start + "/")
        if ok and path.strip("/ "):
            self.go_to(index, path.strip())

    def go_to(self, index: QModelIndex, path: str) -> None:
        top = index
        while top.parent().isValid():
            top = top.parent()
        root = self.host.model.node(top)
        if not isinstance(root, zl.Group):
            self.host.say("Only a group has paths below it")
            return
        self.driver.show(Task(call_job(lambda: path_chain(root, path), label=f"go to {path}"), about=(path, root, top.row())))

    def _read(self, done: Done[list[zl.Node]]) -> None:
        """The nodes down to the newest path asked for: selected, if its store is still open
        in the same row."""
        path, root, row = done.task.about
        answer = done.answer
        if answer.cancelled:
            return  # the window closing
        if answer.error is not None:
            self.host.say(f"Cannot open {path}: {answer.error}")
            return
        chain = answer.value
        assert chain is not None
        if self.host.model.index(row, NAME_COLUMN).isValid() and self.host.model.node(self.host.model.index(row, NAME_COLUMN)) is root:
            self.host.tree.setCurrentIndex(self.host.proxy.mapFromSource(self.host.model.insert_path(row, chain)))

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
        index = self.host.model.index(row, NAME_COLUMN)
        for name in parts:
            self.host.tree.expand(self.host.proxy.mapFromSource(index))
            item = self.host.model.item(index)
            if item.children is None or item.loading:
                return  # wait for the listing
            found = next((i for i, c in enumerate(item.children) if c.node is not None and c.node.name == name), None)
            if found is None:
                self._pending = None
                return
            index = self.host.model.index(found, NAME_COLUMN, index)
        self._pending = None
        self.host.tree.setCurrentIndex(self.host.proxy.mapFromSource(index))


def path_chain(root: zl.Group, path: str) -> list[zl.Node]:
    """The nodes from ``root`` down to ``path`` (each one read directly)."""
    parts = [p for p in path.strip("/").split("/") if p]
    return [root["/".join(parts[: i + 1])] for i in range(len(parts))]
