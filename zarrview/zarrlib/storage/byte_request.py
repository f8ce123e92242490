"""A request for bytes: a whole object, a range of it, or its last bytes.

Byte ranges are the currency of sharding, so they are first-class: a request names a key and
an optional ``(start, stop)`` where a negative ``start`` with ``stop=None`` asks for a suffix.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..limits import limits
from .keys import check_key, key_problem


class Bound(int):
    """A request's ``limit`` that names what it bounds, for the message that refuses an object
    past it. It is the ``int`` it is everywhere else, so it travels unchanged through the stores
    that hand a request's limit on without the request."""

    what: str

    def __new__(cls, value: int, what: str) -> Bound:
        bound = super().__new__(cls, value)
        bound.what = what
        return bound


#: what the bound of a chunk's stored object is: the most its codecs store a chunk as
CHUNK_BOUND = "one chunk as this array's codecs store it"


@dataclass(frozen=True, slots=True)
class ByteRequest:
    """A whole object (``start is None``), a range ``[start, stop)``, or a suffix (``start < 0``)."""

    key: str
    start: int | None = None
    stop: int | None = None
    #: the most bytes a whole-object read may return (None: ``limits().object_bytes``), and
    #: the whole object a server that ignores ``Range`` answers a range with (``whole_limit``);
    #: a larger object is refused before it is read, with ``TooLargeError``. A ``Bound`` names
    #: what it bounds; a plain int bounds a metadata document
    limit: int | None = None

    def __post_init__(self) -> None:
        if key_problem(self.key) is not None:  # every read of every store passes here
            check_key(self.key)

    def max_bytes(self) -> int:
        """The most bytes this request may bring: its range, or the whole-object bound."""
        if self.start is not None and self.start >= 0 and self.stop is not None:
            return max(0, self.stop - self.start)
        return self.limit if self.limit is not None else limits().object_bytes

    def ranged_bytes(self) -> int | None:
        """The bytes a range or a suffix asks for; None for a whole object or a range to its end,
        whose size only the answer states."""
        if self.start is None:
            return None
        return -self.start if self.start < 0 else None if self.stop is None else max(0, self.stop - self.start)

    def clip(self, size: int) -> tuple[int, int]:
        """The ``[start, stop)`` this request asks of an object of ``size`` bytes, clipped to it:
        a short answer is the caller's to judge, and a range past the end is empty, never
        negative. A whole object is all of it (whether it may be read is ``max_bytes``'s)."""
        if self.start is None:
            return 0, size
        if self.start < 0:
            return max(0, size + self.start), size
        start = min(self.start, size)
        return start, max(start, size if self.stop is None else min(self.stop, size))

    def whole_limit(self) -> int | None:
        """The bound of the whole object a server that ignores ``Range`` answers this request
        with: its ``limit``, never less than the range it asks for (a range is its own bound);
        None: ``limits().object_bytes``."""
        asked = self.ranged_bytes()
        return self.limit if self.limit is None or asked is None or asked <= self.limit else asked

    def describe(self) -> str:
        return describe_range(self.key, self.start, self.stop)

    def bound_name(self) -> str:
        """What ``max_bytes`` bounds, for messages."""
        if isinstance(self.limit, Bound):
            return self.limit.what
        return "a metadata document" if self.limit is not None else "one stored object"


def describe_range(name: str, start: int | None, stop: int | None) -> str:
    """A key or URL with the range asked of it, for messages."""
    if start is None:
        return name
    if start < 0:
        return f"{name} (last {-start} bytes)"
    return f"{name} (bytes {start}-{'' if stop is None else stop})"
