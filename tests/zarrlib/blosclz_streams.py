"""BloscLZ streams for the guard's tests: the crafted frame of the match-length wrap, and a
token walker written from the decoder's rules, independent of the guard under test.

The walker reads a stream token by token as c-blosc 1.21's ``blosclz_decompress`` does,
checks every literal and match against the input and the output size, and reports how many
bytes it decoded and the longest run of 0xFF length bytes in one match; with ``decode`` it
also rebuilds the bytes, so a test can compare them with c-blosc's own output.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from zarrview.zarrlib.codecs.blosc_frame import WRAP_RUN

#: the byte the crafted match repeats: a literal "AB" copied from two bytes back
PATTERN = b"AB"


def crafted_stream(ext: int = WRAP_RUN, last: int = 119) -> bytes:
    """A literal "AB", then a match with length code 7 whose length goes on in ``ext`` bytes of
    0xFF and ends in ``last``, at a distance of 2 (the copy is c-blosc's ``copy_match``), then
    one more literal so the decoder performs the copy. With the defaults the length is
    6 + 255 * ext + last + 3 = 2**31: it wraps to -2**31."""
    return bytes([0x01, *PATTERN, 0xE0]) + b"\xff" * ext + bytes([last, 0x01, 0x00, 0x41])


def crafted_frame(nbytes: int, ext: int = WRAP_RUN, last: int = 119) -> bytes:
    """One block of ``nbytes`` (type size 1, not split, no shuffle) holding ``crafted_stream``."""
    stream = crafted_stream(ext, last)
    body = struct.pack("<i", len(stream)) + stream
    start = 16 + 4
    return struct.pack("<BBBBiiii", 2, 1, 0x10, 1, nbytes, nbytes, start + len(body), start) + body


class StreamError(ValueError):
    """The stream is one c-blosc refuses (or one that would take it out of bounds)."""


@dataclass(frozen=True)
class Walk:
    decoded: int
    longest_ff: int
    output: bytes | None


def walk(stream: bytes, maxout: int, decode: bool = False) -> Walk:
    ip, op, n, longest = 1, 0, len(stream), 0
    out = bytearray() if decode else None
    if not n:
        raise StreamError("empty stream")
    ctrl = stream[0] & 31
    while True:
        if ctrl >= 32:
            length, high = (ctrl >> 5) - 1, (ctrl & 31) << 8
            if length == 6:
                run = 0
                while True:
                    if ip + 1 >= n:
                        raise StreamError("length runs past the input")
                    code = stream[ip]
                    ip += 1
                    length += code
                    if code != 255:
                        break
                    run += 1
                longest = max(longest, run)
            elif ip + 1 >= n:
                raise StreamError("match past the input")
            code = stream[ip]
            ip += 1
            length += 3
            distance = high + code + 1
            if code == 255 and high == 31 << 8:
                if ip + 1 >= n:
                    raise StreamError("far distance past the input")
                distance = (stream[ip] << 8 | stream[ip + 1]) + 8192
                ip += 2
            if op + length > maxout:
                raise StreamError(f"match of {length} at {op} past the output ({maxout})")
            if distance > op:
                raise StreamError(f"match {distance} back from {op}")
            if ip >= n:
                break  # the decoder stops here without copying
            ctrl = stream[ip]
            ip += 1
            if out is not None:
                for _ in range(length):
                    out.append(out[-distance])
            op += length
        else:
            size = ctrl + 1
            if op + size > maxout or ip + size > n:
                raise StreamError("literal past the output or the input")
            if out is not None:
                out += stream[ip:ip + size]
            ip += size
            op += size
            if ip >= n:
                break
            ctrl = stream[ip]
            ip += 1
    return Walk(op, longest, bytes(out) if out is not None else None)
