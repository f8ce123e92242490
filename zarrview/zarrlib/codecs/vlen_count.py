"""The item count at the head of numcodecs' variable-length layouts, checked against the data.

``vlen-utf8``, ``vlen-bytes`` and ``vlen-array`` start with a little-endian uint32 item
count, then a 4-byte length before every item. numcodecs allocates an object array of that
many items before it reads any of them: one flipped bit asks for 2**31 items (16 GiB of
pointers) from a chunk of a few bytes. A count the bytes present cannot hold is refused here.
"""

from __future__ import annotations

from ..errors import CodecError
from .base import Buffer, as_memoryview


def check_vlen_count(data: Buffer, name: str) -> None:
    n = as_memoryview(data).nbytes
    if n < 4:
        raise CodecError(f"{name}: {n} bytes cannot hold the item count")
    count = int.from_bytes(bytes(as_memoryview(data).cast("B")[:4]), "little")
    if count * 4 > n - 4:
        raise CodecError(f"{name}: the chunk claims {count} items, but its {n} bytes hold at most {(n - 4) // 4}")
