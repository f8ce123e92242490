"""Chunk manifests: where each chunk of an array lives (a chunk file, inline, or another file).

A manifest is decompressed once and kept, and its references are found by binary search
(they are sorted by node id, then by chunk index), so a read of a few chunks of an array with
millions never decodes the rest.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..codecs.libzstd import decompress_with_dictionary
from ..errors import CodecError
from ..storage.base import Store
from . import ids
from .binary import FbTable, FileType, IcechunkFormatError, TableVector, read_file


#: the longest virtual chunk URL read from a compressed location
LOCATION_BYTES = 64 << 10
#: decompressed locations kept per manifest
LOCATIONS_KEPT = 4096

#: what a manifest is sorted by: node ids, then each node's chunk indexes
_K = TypeVar("_K", bytes, tuple[int, ...])


@dataclass(frozen=True)
class ChunkRef:
    """One chunk: ``inline`` bytes, a native ``chunk_id``, or a virtual ``location``."""

    index: tuple[int, ...]
    offset: int = 0
    length: int = 0
    inline: bytes | None = None
    chunk_id: str | None = None
    location: str | None = None
    etag: str | None = None
    last_modified: int = 0

    @property
    def size(self) -> int:
        return len(self.inline) if self.inline is not None else self.length


class Manifest:
    def __init__(self, manifest_id: str, buf: bytes, where: str) -> None:
        self.id = manifest_id
        self.where = where
        self._root = FbTable.root(buf, where)
        self._arrays = self._root.tables(1)
        self._per_node: dict[bytes, TableVector | None] = {}
        self._locations: dict[bytes, str] = {}

    def _refs_of(self, node_id: bytes) -> TableVector | None:
        if node_id not in self._per_node:
            self._per_node[node_id] = self._search_node(node_id)
        return self._per_node[node_id]

    def _search_node(self, node_id: bytes) -> TableVector | None:
        i = _search(len(self._arrays), self._node_id, node_id)
        return None if i is None else self._arrays[i].tables(1)

    def _node_id(self, i: int) -> bytes:
        t = self._arrays[i]
        nid = t.inline(0, 8)
        t.require(nid, "ArrayManifest.node_id")
        assert nid is not None
        return nid

    def find(self, node_id: bytes, index: tuple[int, ...]) -> ChunkRef | None:
        refs = self._refs_of(node_id)
        if refs is None:
            return None
        i = _search(len(refs), lambda j: refs.u32s(j, 0), index)
        return None if i is None else self._ref(refs[i], index)

    def sizes(self, node_id: bytes) -> list[tuple[tuple[int, ...], int]]:
        """(index, stored size) of every chunk of the array, without resolving locations."""
        refs = self._refs_of(node_id)
        if refs is None:
            return []
        out = []
        for i in range(len(refs)):
            t = refs[i]
            inline = t.raw(1)
            out.append((refs.u32s(i, 0), len(inline) if inline is not None else t.scalar(3, "Q")))
        return out

    def _location(self, compressed: bytes, index: tuple[int, ...]) -> str:
        """A virtual chunk's URL, compressed with the manifest's zstd dictionary (kept: many
        chunks lie in the same few files)."""
        known = self._locations.get(compressed)
        if known is not None:
            return known
        if self._root.scalar(3, "B", 1) != 1:
            raise IcechunkFormatError(f"{self.where}: chunk {index}: unknown location compression "
                                      f"{self._root.scalar(3, 'B', 1)}")
        try:
            raw = decompress_with_dictionary(compressed, self._root.raw(2) or b"", LOCATION_BYTES)
            location = raw.decode("utf-8")
        except (CodecError, UnicodeDecodeError) as e:
            raise IcechunkFormatError(f"{self.where}: chunk {index}: cannot decompress its location ({e})") from None
        if len(self._locations) < LOCATIONS_KEPT:
            self._locations[compressed] = location
        return location

    def _ref(self, t: FbTable, index: tuple[int, ...]) -> ChunkRef:
        inline = t.raw(1)
        if inline is not None:
            return ChunkRef(index, inline=inline)
        offset, length = t.scalar(2, "Q"), t.scalar(3, "Q")
        raw_id = t.inline(4, 12)
        if raw_id is not None:
            return ChunkRef(index, offset, length, chunk_id=ids.encode(raw_id))
        location = t.string(5)
        if location is None and t.has(8):
            location = self._location(t.raw(8) or b"", index)
        if location is None:
            raise IcechunkFormatError(f"{self.where}: chunk {index} is neither inline, native nor virtual")
        return ChunkRef(index, offset, length, location=location, etag=t.string(6),
                        last_modified=t.scalar(7, "I"))


def _search(n: int, key: Callable[[int], _K], target: _K) -> int | None:
    """The position of ``target`` among ``n`` sorted keys (``key(i)`` reads the i-th from the
    buffer), or None where it is not one of them."""
    i = bisect_left(range(n), target, key=key)
    return i if i < n and key(i) == target else None


def read_manifest(store: Store, manifest_id: str) -> Manifest:
    key = f"manifests/{manifest_id}"
    where = store.key_url(key)
    found = read_file(store, key, FileType.MANIFEST)
    if found is None:
        raise IcechunkFormatError(f"{where}: the manifest the snapshot names does not exist")
    return Manifest(manifest_id, found[1], where)
