"""Where the members of a JSON object lie in its text, found without decoding them.

Consolidated metadata puts every node's document in one file: 100,000 nodes make a document
of 50-90 MB, which Python's json decodes in 2-3 s into some 300 MB of objects (most of that
time is the garbage collector walking the objects as they are made). A viewer needs a handful
of those documents at a time, so the document is indexed instead: numpy finds the quotes and
brackets outside strings and their nesting depth (about 0.3 s for 90 MB), which gives each
member's key and the byte span of its value; a value is decoded when it is asked for.

Only object-valued members are indexed (a consolidated entry is an object). The text outside
the indexed values is still decoded by json, so a syntax error there is reported as before;
one inside a value is reported when that value is decoded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..errors import MetadataError
from ..limits import limits

_QUOTE, _BACKSLASH, _OPEN_OBJ, _OPEN_ARR = 0x22, 0x5C, 0x7B, 0x5B
_BLANK_OR_COMMA = np.zeros(256, dtype=bool)
_BLANK_OR_COMMA[list(b" \t\r\n,")] = True
_BLOCK = 1 << 18  # bytes compared at a time: the masks stay in the processor's cache


class NotIndexable(Exception):
    """The text is not well-formed enough to index: decode it whole, for json's own message."""


@dataclass
class Structure:
    """The brackets outside strings of one document: positions, whether each opens, and the
    depth before it; and the positions of the quotes that delimit strings."""

    data: bytes
    pos: np.ndarray
    opens: np.ndarray
    depth_before: np.ndarray
    depth_after: np.ndarray
    quotes: np.ndarray

    def closer(self, i: int) -> int:
        """The index of the bracket closing the one at index ``i``."""
        d = self.depth_before[i]
        found = np.flatnonzero(self.depth_after[i + 1:] == d)
        if not len(found):
            raise NotIndexable("unbalanced brackets")
        return int(found[0]) + i + 1

    def members(self, i: int, only: bool = False) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The object-valued members of the object whose bracket has index ``i``: their keys,
        and the byte spans ``[start, stop)`` of their values, in document order. ``only``: the
        object must hold nothing else, members separated by one comma (every byte between the
        values is then accounted for; NotIndexable otherwise)."""
        j = self.closer(i)
        if self.data[self.pos[i]] != _OPEN_OBJ:
            raise NotIndexable("not an object")
        d = self.depth_before[i] + 1
        inner = slice(i + 1, j)
        first = np.flatnonzero((self.depth_before[inner] == d) & self.opens[inner]) + i + 1
        last = np.flatnonzero((self.depth_after[inner] == d) & ~self.opens[inner]) + i + 1
        if len(first) != len(last):
            raise NotIndexable("unbalanced brackets")
        objects = self.data_codes[self.pos[first]] == _OPEN_OBJ
        if only and not objects.all():
            raise NotIndexable("a member that is not an object")
        first, last = first[objects], last[objects]
        starts, stops = self.pos[first].astype(np.int64), self.pos[last].astype(np.int64) + 1
        keys, key_opens = self._keys(starts)
        if only:
            self._check_between(int(self.pos[i]), int(self.pos[j]), key_opens, stops)
        return keys, starts, stops

    @property
    def data_codes(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.uint8)

    def _keys(self, starts: np.ndarray) -> tuple[list[str], np.ndarray]:
        """Each value's key (the string just before it, with only a colon and blanks between)
        and where its opening quote is. Decoded together: one buffer, NUL between keys (a JSON
        string holds no raw NUL)."""
        k = np.searchsorted(self.quotes, starts)
        if len(k) and k.min() < 2:
            raise NotIndexable("a value without a key")
        opens, closes = self.quotes[k - 2].astype(np.int64), self.quotes[k - 1].astype(np.int64)
        codes = self.data_codes
        self._check_gaps(codes, closes, starts)
        buffer, ends = _gather(codes, opens + 1, closes - opens - 1, sep=True)
        if np.count_nonzero(buffer < 0x20) != len(ends):  # JSON escapes them; only the NULs put between keys
            raise NotIndexable("a raw control character in a key")
        try:
            keys = buffer.tobytes().decode("utf-8").split("\0")[:-1]
        except UnicodeDecodeError as e:
            raise NotIndexable(f"a key that is not UTF-8: {e}") from e
        escaped = np.unique(np.searchsorted(ends, np.flatnonzero(buffer == _BACKSLASH), side="right"))
        for n in escaped.tolist():
            try:
                keys[n] = json.loads(self.data[int(opens[n]):int(closes[n]) + 1])
            except ValueError as e:
                raise NotIndexable(f"a key that cannot be read: {e}") from e
        return keys, opens

    def _check_gaps(self, codes: np.ndarray, closes: np.ndarray, starts: np.ndarray) -> None:
        """Between a key and its value: a colon and blanks only (``: `` checked at once)."""
        gap = starts - closes - 1
        colon = codes[np.minimum(closes + 1, len(codes) - 1)] == ord(":")
        plain = colon & ((gap == 1) | ((gap == 2) & (codes[np.minimum(closes + 2, len(codes) - 1)] == ord(" "))))
        for n in np.flatnonzero(~plain).tolist():
            if self.data[int(closes[n]) + 1:int(starts[n])].strip(b" \t\r\n") != b":":
                raise NotIndexable("a value without a key")

    def _check_between(self, open_at: int, close_at: int, key_opens: np.ndarray, stops: np.ndarray) -> None:
        """Blanks and one comma between one value and the next key; blanks only after the
        opening bracket and before the closing one."""
        begins = np.concatenate(([open_at + 1], stops))
        ends = np.concatenate((key_opens, [close_at]))
        if (ends < begins).any():
            raise NotIndexable("overlapping members")
        gaps, bounds = _gather(self.data_codes, begins, ends - begins)
        if not _BLANK_OR_COMMA[gaps].all():
            raise NotIndexable("something between the members")
        owner = np.searchsorted(bounds, np.flatnonzero(gaps == ord(",")), side="right")
        commas = np.bincount(owner, minlength=len(begins))
        expected = np.ones(len(begins), dtype=commas.dtype)
        expected[0] = expected[-1] = 0  # none after "{", none before "}"
        if (commas != expected).any():
            raise NotIndexable("members not separated by one comma")


def _gather(codes: np.ndarray, begins: np.ndarray, lengths: np.ndarray, sep: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The bytes ``codes[b:b + n]`` of every (begin, length) one after another (with a NUL
    after each where ``sep``), and where each ends in that buffer."""
    sizes = lengths + (1 if sep else 0)
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if len(ends) else 0
    buffer = np.zeros(total, dtype=np.uint8)
    if total:
        shift = np.repeat(begins - (ends - sizes), sizes)  # source minus destination, per byte
        text = np.ones(total, dtype=bool)
        if sep:
            text[ends - 1] = False
        buffer[text] = codes[(np.arange(total, dtype=np.int64) + shift)[text]]
    return buffer, ends


def structure(data: bytes, where: str) -> Structure:
    """Index ``data``; raises NotIndexable for text that is not a well-formed object, and
    MetadataError for nesting deeper than ``limits().json_depth`` (as ``load_json_object``)."""
    codes = np.frombuffer(data, dtype=np.uint8)
    pos = _tokens(codes)
    chars = codes[pos]
    pos, chars = _unescape(pos, chars)
    quote = chars == _QUOTE
    in_string = np.bitwise_xor.accumulate(quote.view(np.uint8)).view(bool)  # odd quotes so far
    bracket = ~(quote | in_string)  # a quote that closes a string is counted in, so it is not "inside"
    quotes = pos[quote]
    pos, chars = pos[bracket], chars[bracket]
    del in_string, bracket, quote
    opens = (chars == _OPEN_OBJ) | (chars == _OPEN_ARR)
    step = opens.astype(np.int32) * 2 - 1
    depth_after = np.cumsum(step, dtype=np.int32)
    depth_before = depth_after - step
    if not len(pos) or chars[0] != _OPEN_OBJ or depth_after[-1] != 0 or depth_after.min() < 0 \
            or np.count_nonzero(depth_after == 0) != 1 or data[:pos[0]].strip() or data[pos[-1] + 1:].strip():
        raise NotIndexable("not one object")
    if depth_after.max() > limits().json_depth:
        raise MetadataError(f"{where} is nested more than {limits().json_depth} levels deep")
    return Structure(data, pos, opens, depth_before, depth_after, quotes)


def _tokens(codes: np.ndarray) -> np.ndarray:
    """Positions of every quote, bracket and backslash, block by block (compares measured
    2.5x faster than a lookup table: 0.06 s for 90 MB)."""
    kind = np.uint32 if len(codes) < 2**31 else np.int64
    parts = []
    hit = np.empty(min(len(codes), _BLOCK), dtype=bool)
    tmp = np.empty_like(hit)
    for lo in range(0, len(codes), _BLOCK):
        block = codes[lo:lo + _BLOCK]
        m, t = hit[:len(block)], tmp[:len(block)]
        np.equal(block, _QUOTE, out=m)
        for c in (_OPEN_OBJ, 0x7D, _OPEN_ARR, 0x5D, _BACKSLASH):
            np.equal(block, c, out=t)
            m |= t
        parts.append(np.flatnonzero(m).astype(kind) + lo)
    return np.concatenate(parts) if parts else np.zeros(0, kind)


def _unescape(pos: np.ndarray, chars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tokens without backslashes and without the quotes they escape (a quote right after
    an odd run of backslashes)."""
    slash = chars == _BACKSLASH
    if not slash.any():
        return pos, chars
    keep = ~slash
    after = np.flatnonzero((chars[1:] == _QUOTE) & slash[:-1] & (pos[1:] == pos[:-1] + 1)) + 1
    for i in after.tolist():
        run, j = 0, i - 1
        while j >= 0 and slash[j] and pos[j] == pos[i] - (i - j):
            run += 1
            j -= 1
        if run % 2:
            keep[i] = False
    return pos[keep], chars[keep]


def member(st: Structure, i: int, key: str) -> int | None:
    """The bracket index of member ``key``'s object value in the object at index ``i``."""
    keys, starts, _ = st.members(i)
    for k, s in zip(reversed(keys), reversed(starts.tolist())):  # json keeps the last of duplicates
        if k == key:
            return int(np.searchsorted(st.pos, s))
    return None
