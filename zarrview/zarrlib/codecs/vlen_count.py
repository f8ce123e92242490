"""The item count at the head of numcodecs' variable-length layouts, checked against the data.

``vlen-utf8``, ``vlen-bytes`` and ``vlen-array`` start with a little-endian uint32 item
count, then a 4-byte length before every item. numcodecs allocates an object array of that
many items before it reads any of them: one flipped bit asks for 2**31 items (16 GiB of
pointers) from a chunk of a few bytes. A count the bytes present cannot hold is refused here.

Behind a compressor, the layout bounds what the compressor may inflate to: ``n`` items of at
most ``limits().element_bytes`` each, with their lengths; and its first bytes (the count, the
first length) are checked on a few decoded bytes before the rest is inflated, so a bomb of
zeros behind ``vlen-utf8`` is refused at once instead of after a gigabyte.
"""

from __future__ import annotations

from ..errors import CodecError
from ..limits import limits
from .base import Buffer, as_memoryview


def check_vlen_count(data: Buffer, name: str) -> None:
    n = as_memoryview(data).nbytes
    if n < 4:
        raise CodecError(f"{name}: {n} bytes cannot hold the item count")
    count = int.from_bytes(bytes(as_memoryview(data).cast("B")[:4]), "little")
    if count * 4 > n - 4:
        raise CodecError(f"{name}: the chunk claims {count} items, but its {n} bytes hold at most {(n - 4) // 4}")


#: decoded bytes whose check needs no more than the head of the layout: count, first length
HEAD = 8


def vlen_bound(items: int) -> int:
    """The most bytes ``items`` items of the layout take, within the chunk bound."""
    return min(limits().chunk_bytes, 4 + items * (4 + limits().element_bytes))


def check_vlen_head(head: bytes | None, items: int, name: str) -> None:
    """The decoded layout's first bytes agree with a chunk of ``items`` items."""
    if head is None or len(head) < 4:
        return
    count = int.from_bytes(head[:4], "little")
    if count != items:
        raise CodecError(f"{name}: the chunk holds {count} items, expected {items}")
    if len(head) >= 8 and int.from_bytes(head[4:8], "little") > limits().element_bytes:
        raise CodecError(f"{name}: its first item claims {int.from_bytes(head[4:8], 'little')} bytes, more than "
                         f"the {limits().element_bytes} allowed for one element (limits.element_bytes)")
