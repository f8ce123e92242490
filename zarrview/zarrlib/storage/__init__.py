"""Read-only stores: one module per kind of storage."""

from .base import ByteRequest, Store
from .fsspec_store import FsspecStore
from .local import LocalStore
from .location import open_store, split_node_path, store_identity, store_url
from .memory import MemoryStore
from .zip import ZipStore

__all__ = ["ByteRequest", "Store", "FsspecStore", "LocalStore", "MemoryStore", "ZipStore",
           "open_store", "split_node_path", "store_identity", "store_url"]
