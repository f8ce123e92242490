"""Chunk key encodings: grid coordinates to store keys."""

from __future__ import annotations

from .model import KeyFn


def default_key(prefix: str, separator: str) -> KeyFn:
    """v3 ``default``: ``c/1/2`` (``c`` alone for a 0-d array)."""
    def key(coords: tuple[int, ...]) -> str:
        return prefix + "c" + "".join(separator + str(c) for c in coords)
    return key


def v2_key(prefix: str, separator: str) -> KeyFn:
    """v2 and v3 ``v2``: ``1.2`` (``0`` for a 0-d array)."""
    def key(coords: tuple[int, ...]) -> str:
        return prefix + (separator.join(map(str, coords)) if coords else "0")
    return key


def prefinal_key(prefix: str, separator: str) -> KeyFn:
    """The 2022 draft: ``data/root/<path>/c1/2``."""
    def key(coords: tuple[int, ...]) -> str:
        return prefix + "c" + (separator.join(map(str, coords)) if coords else "0")
    return key
