"""The entry point: ``open(location)`` returns the node at a path, URL or zip file."""

from __future__ import annotations

import os
from typing import Any

from .hierarchy import Hierarchy
from .nodes import Node, make_node
from .storage import open_store, split_node_path


def open(location: str | os.PathLike[str], path: str | None = None, **storage_options: Any) -> Node:  # noqa: A001
    """Open a store and return its root (or the node at ``path``, or after ``::/a/b``)."""
    loc, node_path = split_node_path(os.fspath(location))
    if path is not None:
        node_path = "/" + path.strip("/") if path.strip("/") else "/"
    store = open_store(loc, **storage_options)
    h = Hierarchy(store)
    if node_path != "/":
        node_path = "/" + "/".join(p for p in node_path.split("/") if p)
    try:
        return make_node(h, h.load(node_path))
    except Exception:
        store.close()
        raise
