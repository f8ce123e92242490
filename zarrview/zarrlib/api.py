"""The entry point: ``open(location)`` returns the node at a path, URL or zip file."""

from __future__ import annotations

import os
from typing import Any

from .errors import NodeNotFoundError, StoreNotFoundError, ZarrError
from .icechunk.locate import as_repository
from .hierarchy import Hierarchy
from .nodes import Node, make_node
from .storage import Store, open_store, split_node_path


def open(location: str | os.PathLike[str] | Store, path: str | None = None, **storage_options: Any) -> Node:  # noqa: A001
    """Open a store and return its root (or the node at ``path``, or after ``::/a/b``).

    ``location`` may also be a ``Store`` object, for callers that wrap stores (tests, caches).
    """
    if isinstance(location, Store):
        store, node_path = location, "/"
    else:
        loc, node_path = split_node_path(os.fspath(location))
        store = open_store(loc, **storage_options)
    if path is not None:
        node_path = "/" + path.strip("/") if path.strip("/") else "/"
    if node_path != "/":
        node_path = "/" + "/".join(p for p in node_path.split("/") if p)
    try:
        try:
            h = Hierarchy(store)
            return make_node(h, h.load(node_path))
        except (StoreNotFoundError, NodeNotFoundError):
            # no Zarr metadata: a remote Icechunk repository not named *.icechunk holds none either
            repository = as_repository(store, storage_options) if not isinstance(location, Store) else None
            if repository is None:
                raise
            store = repository
            h = Hierarchy(store)
            return make_node(h, h.load(node_path))
    except ZarrError:
        store.close()  # nothing will hold this store: release its file or session
        raise
