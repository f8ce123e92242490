"""Every node of the open stores as a flat list, for the tree filter: searched in milliseconds.

The filter used to put every group's listing into the tree as the walk read it, so a search of
a 100,000-node hierarchy made 100,000 rows (46 s, 1.2 GB). Now the index is filled either from
consolidated metadata at once (paths only: no node is made for what nobody looks at) or by the
walk as it lists; each keystroke searches it here (a substring of ``name path``, without case,
as the tree's filter matches rows) and only the first matches, with their ancestors, are made
nodes (``chain``, on a worker: it may read their metadata) and put into the tree.

No Qt here. ``add`` runs on the walking thread while ``search`` runs on the GUI thread: entries
are only appended (the entry before its search text), so a search sees a consistent prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..zarrlib import Group, Node, ZarrError


class NodeIndex:
    def __init__(self, roots: Sequence[Group] = ()) -> None:
        #: the group each root entry is below (a store may be open at a group below its root)
        self.roots = list(roots)
        #: (which root, path) in the order they were added (a walk's: shallow first)
        self.entries: list[tuple[int, str]] = []
        self._text: list[str] = []
        self._nodes: dict[tuple[int, str], Node | None] = {}

    def __len__(self) -> int:
        return len(self._text)

    def add(self, which: int, members: Sequence[Node]) -> None:
        """The members of a group listed below root ``which`` (again: nothing twice)."""
        for m in members:
            if self._nodes.get((which, m.path)) is None:
                self._add(which, m.path, m)

    def add_paths(self, which: int, paths: Sequence[str]) -> None:
        """Nodes known by path only (consolidated metadata): made when shown."""
        for p in paths:
            if (which, p) not in self._nodes:
                self._add(which, p, None)

    def _add(self, which: int, path: str, node: Node | None) -> None:
        new = (which, path) not in self._nodes
        self._nodes[(which, path)] = node
        if new:
            self.entries.append((which, path))
            self._text.append(f"{path.rsplit('/', 1)[-1]} {path}".lower())

    def search(self, text: str, limit: int, start: int = 0) -> tuple[list[int], int]:
        """(the positions of the first ``limit`` entries from ``start`` on that match ``text``,
        how many match in all)."""
        needle = text.lower()
        end = len(self._text)
        hits = [i for i, s in enumerate(self._text[start:end], start) if needle in s]
        return hits[:limit], len(hits)

    def chain(self, position: int) -> tuple[int, list[Node]] | None:
        """(which root, the node at ``position`` preceded by its ancestors below the root), made
        where only their paths are known (reads their metadata: not on the GUI thread); None
        where one cannot be made."""
        which, path = self.entries[position]
        root = self.roots[which] if which < len(self.roots) else None
        if root is None:
            return None
        base = [p for p in root.path.split("/") if p]
        parts = [p for p in path.split("/") if p]
        out = []
        for depth in range(len(base) + 1, len(parts) + 1):
            node = self._node(which, root, "/" + "/".join(parts[:depth]), parts[len(base):depth])
            if node is None:
                return None
            out.append(node)
        return which, out

    def _node(self, which: int, root: Group, path: str, rel: list[str]) -> Node | None:
        node = self._nodes.get((which, path))
        if node is None:
            try:
                node = root["/".join(rel)]
            except ZarrError:
                return None
            self._nodes[(which, path)] = node
        return node
