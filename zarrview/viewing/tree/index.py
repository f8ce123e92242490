"""Every node of the open stores as a flat list, for the tree filter: searched in milliseconds.

The filter used to put every group's listing into the tree as the walk read it, so a search of
a 100,000-node hierarchy made 100,000 rows (46 s, 1.2 GB). Now the index is filled either from
consolidated metadata at once (paths only: no node is made for what nobody looks at) or by the
walk as it lists; each keystroke searches it here (a substring of the path, without case: the
tree's filter matches a row by its name or path, and a name is the end of its path) and only the first matches, with their ancestors, are made
nodes (``chain``, on a worker: it may read their metadata) and put into the tree.

No Qt here. ``add`` runs on the walking thread while ``search`` runs on the GUI thread: entries
are only appended (the entry before its search text), so a search sees a consistent prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...zarrlib import Group, Node, ZarrError


class NodeIndex:
    def __init__(self, roots: Sequence[Group] = ()) -> None:
        #: the group each root entry is below (a store may be open at a group below its root)
        self.roots = list(roots)
        #: (which root, path) in the order they were added (a walk's: shallow first)
        self.entries: list[tuple[int, str]] = []
        self._text: list[str] = []
        self._nodes: dict[tuple[int, str], Node | None] = {}

    @classmethod
    def from_consolidated(cls, roots: Sequence[Group]) -> NodeIndex | None:
        """Every node below ``roots`` by path, where each root's consolidated metadata names them
        all (no node made; 0.1 s for 100,000); None where a root has none (then a walk lists them)."""
        known = [r.descendant_paths() for r in roots]
        if not roots or any(paths is None for paths in known):
            return None
        index = cls(roots)
        for which, paths in enumerate(known):
            index.add_paths(which, paths)  # type: ignore[arg-type]
        return index

    def __len__(self) -> int:
        return len(self._text)

    def add(self, which: int, members: Sequence[Node]) -> None:
        """The members of a group listed below root ``which`` (again: nothing twice)."""
        for m in members:
            if self._nodes.get((which, m.path)) is None:
                self._add(which, m.path, m)

    def add_paths(self, which: int, paths: Sequence[str]) -> None:
        """Nodes known by path only (consolidated metadata): made when shown. In bulk (100,000
        paths in tens of milliseconds): this runs on the first keystroke."""
        known = self._nodes
        new = [p for p in paths if (which, p) not in known] if known else list(paths)
        known.update(dict.fromkeys([(which, p) for p in new]))
        self.entries.extend([(which, p) for p in new])
        self._text.extend([p.lower() for p in new])

    def _add(self, which: int, path: str, node: Node | None) -> None:
        new = (which, path) not in self._nodes
        self._nodes[(which, path)] = node
        if new:
            self.entries.append((which, path))
            self._text.append(path.lower())  # a node's name is the end of its path

    def search(self, text: str, limit: int, start: int = 0) -> tuple[list[int], int]:
        """(the positions of the first ``limit`` entries from ``start`` on that match ``text``,
        how many match in all)."""
        needle = text.lower()
        end = len(self._text)
        hits = [i for i, s in enumerate(self._text[start:end], start) if needle in s]
        return hits[:limit], len(hits)

    def chains(self, positions: Sequence[int]) -> dict[int, list[list[Node]]]:
        """For each root, the nodes at ``positions`` each preceded by its ancestors below the
        root; those known only by path are made, a group's at once (``Group.load_members``: from
        consolidated metadata, or one batch of requests), so this reads metadata: not on the GUI
        thread. A node that cannot be made is left out."""
        out: dict[int, list[list[str]]] = {}
        for position in positions:
            which, path = self.entries[position]
            root = self.roots[which] if which < len(self.roots) else None
            if root is None:
                continue
            base = [p for p in root.path.split("/") if p]
            parts = [p for p in path.split("/") if p]
            out.setdefault(which, []).append(["/" + "/".join(parts[:d]) for d in range(len(base) + 1, len(parts) + 1)])
        made: dict[int, list[list[Node]]] = {}
        for which, path_chains in out.items():
            self._make(which, [p for chain in path_chains for p in chain])
            for chain in path_chains:
                nodes = [self._nodes.get((which, p)) for p in chain]
                if all(n is not None for n in nodes):
                    made.setdefault(which, []).append(nodes)  # type: ignore[arg-type]
        return made

    def _make(self, which: int, paths: list[str]) -> None:
        """Make the nodes of ``paths`` not made yet, shallow first, per parent group at once."""
        root = self.roots[which]
        for depth in sorted({p.count("/") for p in paths}):
            wanted: dict[str, list[str]] = {}
            for p in paths:
                if p.count("/") == depth and self._nodes.get((which, p)) is None:
                    parent, _, name = p.rpartition("/")
                    wanted.setdefault(parent or "/", []).append(name)
            for parent_path, names in wanted.items():
                group = root if parent_path == root.path else self._nodes.get((which, parent_path))
                if not isinstance(group, Group):
                    continue
                try:
                    members = group.load_members(sorted(set(names)))
                except ZarrError:
                    continue
                for m in members:
                    self._nodes[(which, m.path)] = m
