"""The ``crc32c`` bytes->bytes codec: a little-endian checksum after the data, verified.

google-crc32c is what numcodecs uses too (it warns at import when only the older ``crc32c``
package is present), so one hardware-accelerated implementation serves both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import google_crc32c

from ..errors import ChecksumError, CodecError
from .base import Buffer, BytesBytesCodec


class Crc32cCodec(BytesBytesCodec):
    name = "crc32c"

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> Crc32cCodec:
        return cls()

    def encoded_size(self, decoded_size: int) -> int | None:
        return decoded_size + 4

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        view = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8).data
        if len(view) < 4:
            raise CodecError(f"crc32c: {len(view)} bytes cannot hold a checksum")
        body = view[:-4]
        stored = int.from_bytes(view[-4:], "little")
        actual = google_crc32c.value(bytes(body))  # it takes only bytes, not views
        if stored != actual:
            raise ChecksumError(f"crc32c: checksum mismatch (stored {stored:#010x}, computed {actual:#010x})")
        return body
