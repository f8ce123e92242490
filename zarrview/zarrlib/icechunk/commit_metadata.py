"""A commit's metadata (``metadata=`` of ``session.commit``): who wrote it, with what, why.

Each item is a name and a JSON-like value, encoded as FlexBuffers (spec 2) or MessagePack
(spec 1). Both are walked here under a budget of items and depth: a FlexBuffers vector may
reference one child many times, so a few hundred bytes can describe a tree of 10^9 nodes
that a plain decoder would build whole.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from .binary import FbTable, TableVector

__all__ = ["read_items", "decode_value", "BadValueError", "ITEMS", "DEPTH"]

#: the most values (scalars, list and map entries) decoded of one commit's metadata
ITEMS = 10_000
#: the deepest nesting decoded
DEPTH = 32


class BadValueError(ValueError):
    """A value cannot be decoded, or is larger than the budget allows."""


class _Budget:
    def __init__(self) -> None:
        self.left = ITEMS

    def take(self, depth: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise BadValueError(f"more than {ITEMS} values")
        if depth > DEPTH:
            raise BadValueError(f"nested more than {DEPTH} deep")


def _flex(ref: Any, budget: _Budget, depth: int) -> Any:
    budget.take(depth)
    if ref.IsNull:
        return None
    if ref.IsBool:
        return ref.AsBool
    if ref.IsInt:
        return ref.AsInt
    if ref.IsFloat:
        return ref.AsFloat
    if ref.IsString:
        return ref.AsString
    if ref.IsMap:
        m = ref.AsMap
        keys, values = m.Keys, m.Values
        return {str(keys[i].AsKey): _flex(values[i], budget, depth + 1) for i in range(min(len(m), budget.left + 1))}
    if ref.IsVector or ref.IsTypedVector or ref.IsFixedTypedVector:
        v = ref.AsVector if ref.IsVector else ref.AsTypedVector if ref.IsTypedVector else ref.AsFixedTypedVector
        return [_flex(v[i], budget, depth + 1) for i in range(min(len(v), budget.left + 1))]
    if ref.IsBlob:
        return f"<{len(ref.AsBlob)} bytes>"
    raise BadValueError("an unknown FlexBuffers type")


class _Msgpack:
    """MessagePack's JSON-like subset (nil, bool, ints, floats, str, bin, array, map); an
    extension type reads as its size."""

    def __init__(self, data: bytes, budget: _Budget) -> None:
        self.data, self.pos, self.budget = data, 0, budget

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise BadValueError("MessagePack value runs past its end")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def _unpack(self, fmt: str) -> Any:
        return struct.unpack(">" + fmt, self._take(struct.calcsize(fmt)))[0]

    def value(self, depth: int = 0) -> Any:
        self.budget.take(depth)
        b = self._take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self._map(b & 0x0F, depth)
        if 0x90 <= b <= 0x9F:
            return self._array(b & 0x0F, depth)
        if 0xA0 <= b <= 0xBF:
            return self._str(b & 0x1F)
        simple: dict[int, Callable[[], Any]] = {
            0xC0: lambda: None, 0xC2: lambda: False, 0xC3: lambda: True,
            0xC4: lambda: f"<{len(self._take(self._unpack('B')))} bytes>",
            0xC5: lambda: f"<{len(self._take(self._unpack('H')))} bytes>",
            0xC6: lambda: f"<{len(self._take(self._unpack('I')))} bytes>",
            0xCA: lambda: self._unpack("f"), 0xCB: lambda: self._unpack("d"),
            0xCC: lambda: self._unpack("B"), 0xCD: lambda: self._unpack("H"),
            0xCE: lambda: self._unpack("I"), 0xCF: lambda: self._unpack("Q"),
            0xD0: lambda: self._unpack("b"), 0xD1: lambda: self._unpack("h"),
            0xD2: lambda: self._unpack("i"), 0xD3: lambda: self._unpack("q"),
            0xD9: lambda: self._str(self._unpack("B")), 0xDA: lambda: self._str(self._unpack("H")),
            0xDB: lambda: self._str(self._unpack("I")),
            0xDC: lambda: self._array(self._unpack("H"), depth), 0xDD: lambda: self._array(self._unpack("I"), depth),
            0xDE: lambda: self._map(self._unpack("H"), depth), 0xDF: lambda: self._map(self._unpack("I"), depth),
        }
        if b in simple:
            return simple[b]()
        ext = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
        if b in ext:
            self._take(1 + ext[b])
            return f"<extension, {ext[b]} bytes>"
        if b in (0xC7, 0xC8, 0xC9):
            n = self._unpack({0xC7: "B", 0xC8: "H", 0xC9: "I"}[b])
            self._take(1 + n)
            return f"<extension, {n} bytes>"
        raise BadValueError(f"MessagePack type byte 0x{b:02x} is not defined")

    def _str(self, n: int) -> str:
        return self._take(n).decode("utf-8", "replace")

    def _array(self, n: int, depth: int) -> list[Any]:
        return [self.value(depth + 1) for _ in range(n)]  # each takes a byte at least: bounded by the data

    def _map(self, n: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for _ in range(n):
            key = self.value(depth + 1)
            out[str(key)] = self.value(depth + 1)
        return out


def decode_value(raw: bytes, spec: int, budget: _Budget | None = None) -> Any:
    """One item's value; BadValueError where it cannot be decoded within the budget."""
    budget = budget or _Budget()
    if spec >= 2:
        from flatbuffers import flexbuffers

        try:
            return _flex(flexbuffers.GetRoot(raw), budget, 0)
        except BadValueError:
            raise
        except Exception as e:  # noqa: BLE001  # the FlexBuffers reader fails in many ways on a corrupt buffer
            raise BadValueError(f"not FlexBuffers ({type(e).__name__})") from None
    reader = _Msgpack(raw, budget)
    value = reader.value()
    if reader.pos != len(raw):
        raise BadValueError(f"{len(raw) - reader.pos} bytes after the MessagePack value")
    return value


def read_items(vec: TableVector, spec: int) -> dict[str, Any]:
    """``{name: value}`` of a ``[MetadataItem]`` vector; a value that cannot be decoded reads
    as a note saying why, so one bad item does not hide the commit."""
    out: dict[str, Any] = {}
    budget = _Budget()
    for i in range(min(len(vec), ITEMS)):
        item: FbTable = vec[i]
        name, raw = item.string(0), item.raw(1)
        if name is None or raw is None:
            continue
        try:
            out[name] = decode_value(raw, spec, budget)
        except BadValueError as e:
            out[name] = f"<unreadable: {e}>"
        if budget.left <= 0:
            break
    return out
