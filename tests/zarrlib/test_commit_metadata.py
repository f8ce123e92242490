"""Commit metadata values decoded within a budget: FlexBuffers (flatbuffers' own encoder is the
truth) and MessagePack (msgpack's), and hostile values that would expand without one."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from zarrview.zarrlib.icechunk.commit_metadata import DEPTH, ITEMS, BadValueError, decode_value

VALUES: list[Any] = [None, True, False, 0, -1, 127, -33, 300, -40000, 2**40, -(2**40), 1.5, -2.25, "", "Zürich",
                     [], [1, "a", None, [2.5, False]], {}, {"author": "x", "n": {"deep": [1, 2, {"k": "v"}]}}]


@pytest.mark.parametrize("value", VALUES)
def test_flexbuffers_values_read_as_written(value: Any) -> None:
    from flatbuffers import flexbuffers

    assert decode_value(bytes(flexbuffers.Dumps(value)), spec=2) == value


@pytest.mark.parametrize("value", VALUES + [2**64 - 1, "x" * 70000, list(range(5000))])
def test_messagepack_values_read_as_written(value: Any) -> None:
    msgpack = pytest.importorskip("msgpack")
    assert decode_value(msgpack.packb(value), spec=1) == value


def _shared_children(n: int, levels: int) -> bytes:
    """FlexBuffers vectors whose ``n`` elements all point at one child vector, ``levels`` deep
    above a typed vector of ``n`` ints: ``n ** (levels + 1)`` values in a few KiB."""
    buf = bytearray(struct.pack("<H", n))
    child, child_type = len(buf), (11 << 2) | 1  # a typed vector of 16-bit ints
    buf += b"".join(struct.pack("<h", i) for i in range(n))
    for _ in range(levels):
        buf += struct.pack("<H", n)
        start = len(buf)
        buf += b"".join(struct.pack("<H", start + 2 * i - child) for i in range(n))
        buf += bytes([child_type]) * n + b"\0" * (n % 2)
        child, child_type = start, (10 << 2) | 1  # a vector of offsets, 16-bit
    pos = len(buf)
    return bytes(buf + struct.pack("<H", pos - child) + bytes([child_type, 2]))


def test_vectors_that_share_one_child_cost_an_error() -> None:
    from flatbuffers import flexbuffers

    small = _shared_children(3, 2)
    assert decode_value(small, spec=2) == flexbuffers.Loads(small) == [[[0, 1, 2]] * 3] * 3
    big = _shared_children(200, 4)  # 200**5 values in about 3 KiB
    assert len(big) < 4096
    with pytest.raises(BadValueError, match=f"more than {ITEMS} values"):
        decode_value(big, spec=2)


def test_deep_nesting_and_truncation_cost_errors() -> None:
    deep = bytes([0x91]) * (DEPTH + 5) + b"\x00"  # fixarrays of one element, nested
    with pytest.raises(BadValueError, match="nested more than"):
        decode_value(deep, spec=1)
    with pytest.raises(BadValueError, match="runs past its end"):
        decode_value(b"\xdb" + struct.pack(">I", 1 << 30) + b"abc", spec=1)
    with pytest.raises(BadValueError, match="past its end"):
        decode_value(b"\xdd" + struct.pack(">I", 1 << 31), spec=1)  # an array of 2**31 with no elements
    with pytest.raises(BadValueError, match="0xc1 is not defined"):
        decode_value(b"\xc1", spec=1)
    with pytest.raises(BadValueError):
        decode_value(b"\x01\x02", spec=2)
