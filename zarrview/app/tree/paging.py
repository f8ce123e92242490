"""The tree view of the hierarchy: a group's further pages of members are read when the user
scrolls to the end of its rows, not because the view laid itself out.

Qt's tree view asks the model to fetch more for every expanded row each time it lays out, and
again after each page arrives, so a group of 100,000 children would be read to the end at once.
The model (``HierarchyModel.canFetchMore``) offers a further page only while this view says the
user scrolled to the end (``paging_asked``); the first page of a group is read on expanding it.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel
from PySide6.QtWidgets import QTreeView

from .model import HierarchyModel


class HierarchyTree(QTreeView):
    def __init__(self, proxy: QSortFilterProxyModel, model: HierarchyModel) -> None:
        super().__init__()
        self.hierarchy = model
        self.setModel(proxy)
        self.setUniformRowHeights(True)

    def verticalScrollbarValueChanged(self, value: int) -> None:  # noqa: N802 - Qt's name
        self.hierarchy.paging_asked = True
        try:
            super().verticalScrollbarValueChanged(value)
        finally:
            self.hierarchy.paging_asked = False

    def rowsInserted(self, parent: QModelIndex | QPersistentModelIndex, start: int, end: int) -> None:  # noqa: N802
        """A hint row ("the server cannot list: File ▸ Go to Path…") spans the three columns, so
        its words are read whole rather than cut at the name column's edge."""
        super().rowsInserted(parent, start, end)
        proxy = self.model()
        if not isinstance(proxy, QSortFilterProxyModel):
            return
        for row in range(start, end + 1):
            shown = proxy.index(row, 0, parent)
            if self.hierarchy.item(proxy.mapToSource(shown)).hint:
                self.setFirstColumnSpanned(row, shown.parent(), True)
