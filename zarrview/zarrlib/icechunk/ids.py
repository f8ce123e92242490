"""Object ids as Icechunk spells them: Crockford base 32, upper case, no padding.

Snapshots, manifests and chunk files are named by their 12-byte ids (20 characters), and a
user names a snapshot the same way (``repo.icechunk@1CECHNKREP0F1RSTCMT0``).
"""

from __future__ import annotations

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_VALUES = {c: i for i, c in enumerate(_ALPHABET)}


def encode(raw: bytes) -> str:
    bits = len(raw) * 8
    value = int.from_bytes(raw, "big") << (-bits % 5)
    n = -(-bits // 5)
    return "".join(_ALPHABET[(value >> (5 * (n - 1 - i))) & 31] for i in range(n))


def decode(text: str, size: int = 12) -> bytes:
    """The id's bytes; ``ValueError`` for a string that is not one."""
    n = -(-size * 8 // 5)
    if len(text) != n or any(c not in _VALUES for c in text.upper()):
        raise ValueError(f"{text!r} is not an Icechunk object id")
    value = 0
    for c in text.upper():
        value = value << 5 | _VALUES[c]
    return (value >> (n * 5 - size * 8)).to_bytes(size, "big")
