"""A request for bytes: a whole object, a range of it, or its last bytes.

Byte ranges are the currency of sharding, so they are first-class: a request names a key and
an optional ``(start, stop)`` where a negative ``start`` with ``stop=None`` asks for a suffix.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..limits import limits


@dataclass(frozen=True, slots=True)
class ByteRequest:
    """A whole object (``start is None``), a range ``[start, stop)``, or a suffix (``start < 0``)."""

    key: str
    start: int | None = None
    stop: int | None = None
    #: the most bytes a whole-object read may return (None: ``limits().object_bytes``); a
    #: larger object is refused before it is read, with ``TooLargeError``
    limit: int | None = None

    def max_bytes(self) -> int:
        """The most bytes this request may bring: its range, or the whole-object bound."""
        if self.start is not None and self.start >= 0 and self.stop is not None:
            return max(0, self.stop - self.start)
        return self.limit if self.limit is not None else limits().object_bytes

    def describe(self) -> str:
        if self.start is None:
            return self.key
        if self.start < 0:
            return f"{self.key} (last {-self.start} bytes)"
        return f"{self.key} (bytes {self.start}-{'' if self.stop is None else self.stop})"

    def bound_name(self) -> str:
        """What ``max_bytes`` bounds, for messages."""
        return "a metadata document" if self.limit is not None else "one stored object"
