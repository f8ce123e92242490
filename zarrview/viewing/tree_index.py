"""Every node of the open stores as a flat list, for the tree filter: searched in milliseconds.

The filter used to put every group's listing into the tree as the walk read it, so a search of
a 100,000-node hierarchy made 100,000 rows (46 s, 1.2 GB). The walk now fills this index on its
thread, and each keystroke searches it here (a substring of ``name path``, without case, as the
tree's filter matches rows) and puts only the first matches, with their ancestors, in the tree.

No Qt here. ``add`` runs on the walking thread while ``search`` runs on the GUI thread: entries
are only appended (the node list before the search text), so a search sees a consistent prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..zarrlib import Node


class NodeIndex:
    def __init__(self, roots: Sequence[str] = ()) -> None:
        #: the path of each root (a store may be open at a group below its own root)
        self.roots = list(roots)
        #: (which root, node) in the order the walk listed them (shallow first)
        self.entries: list[tuple[int, Node]] = []
        self._text: list[str] = []
        self._paths: dict[tuple[int, str], Node] = {}

    def __len__(self) -> int:
        return len(self._text)

    def add(self, which: int, members: Sequence[Node]) -> None:
        """The members of a group listed below root ``which`` (again: nothing twice)."""
        for m in members:
            key = (which, m.path)
            if key in self._paths:
                continue
            self._paths[key] = m
            self.entries.append((which, m))
            self._text.append(f"{m.name} {m.path}".lower())

    def search(self, text: str, limit: int, start: int = 0) -> tuple[list[int], int]:
        """(the positions of the first ``limit`` entries from ``start`` on that match ``text``,
        how many match in all)."""
        needle = text.lower()
        end = len(self._text)
        hits = [i for i, s in enumerate(self._text[start:end], start) if needle in s]
        return hits[:limit], len(hits)

    def chain(self, position: int) -> tuple[int, list[Node]] | None:
        """(which root, the node at ``position`` preceded by its ancestors below the root), or
        None where an ancestor was not listed."""
        which, node = self.entries[position]
        base = [p for p in (self.roots[which] if which < len(self.roots) else "/").split("/") if p]
        parts = [p for p in node.path.split("/") if p]
        out = []
        for depth in range(len(base) + 1, len(parts)):
            ancestor = self._paths.get((which, "/" + "/".join(parts[:depth])))
            if ancestor is None:
                return None
            out.append(ancestor)
        return which, out + [node]
