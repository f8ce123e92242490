"""Numbers to colours, as the screen and a PNG export show them: one mapping for both.

Levels (black, white) scale a value to an entry of a lookup table (``n`` entries, clipped at
both ends), or to 0..255 per channel without one (grey; a colour plane's channels); a NaN takes
:data:`~.contrast.NAN_RGBA`. The screen gets the colours as 32-bit premultiplied ARGB words, the
layout Qt paints without converting; an export gets RGBA bytes. Small integers (8 and 16 bits)
go through a table of every possible value, one lookup per pixel instead of a scaling pass.
"""

from __future__ import annotations

import numpy as np

from .contrast import NAN_RGBA

__all__ = ["argb", "grey_table", "indices", "lookup", "pack", "rgba", "unpack"]

#: integer types mapped through a table of every value they can hold
_TABLED = {np.dtype(t) for t in ("u1", "i1", "u2", "i2")}


def grey_table(n: int = 256) -> np.ndarray:
    """(n, 4) uint8: black to white, opaque."""
    ramp = np.linspace(0, 255, n).round().astype(np.uint8)
    return np.stack([ramp, ramp, ramp, np.full(n, 255, np.uint8)], axis=1)


def _scale(levels: tuple[float, float], top: float) -> tuple[float, float]:
    lo, hi = float(levels[0]), float(levels[1])
    return lo, top / ((hi - lo) or 1.0)


def indices(values: np.ndarray, levels: tuple[float, float], n: int, top: float | None = None) -> np.ndarray:
    """The table entry of every value: ``(v - lo) * top / (hi - lo)`` clipped to 0..n-1 and
    truncated (``top`` is ``n`` for a table; 255 for the 256 greys without one); ``n`` for a NaN."""
    lo, scale = _scale(levels, float(n if top is None else top))
    v = np.asarray(values)
    if v.dtype in _TABLED:
        return lookup(v, levels, n, top, np.arange(n + 1, dtype=np.intp))
    t = np.subtract(v, lo, dtype=np.float64)
    t *= scale
    np.clip(t, 0, n - 1, out=t)
    if v.dtype.kind == "f":
        t[np.isnan(t)] = n
    return t.astype(np.intp)


def lookup(values: np.ndarray, levels: tuple[float, float], n: int, top: float | None, colours: np.ndarray
           ) -> np.ndarray:
    """``colours[indices(values, ...)]`` (``colours``: n entries and the NaN one): small integers
    through a table of every value their type holds, one gather per pixel."""
    v = np.asarray(values)
    if v.dtype in _TABLED:
        every = np.arange(1 << (8 * v.dtype.itemsize), dtype=f"u{v.dtype.itemsize}")
        per_value = np.take(colours, indices(every.view(v.dtype).astype(np.float64), levels, n, top), axis=0)
        return np.take(per_value, v.view(every.dtype), axis=0)
    return np.take(colours, indices(v, levels, n, top), axis=0)


def pack(table: np.ndarray) -> np.ndarray:
    """(n, 3|4) uint8 RGB(A) to (n,) uint32 premultiplied ARGB words."""
    t = np.asarray(table, dtype=np.uint32)
    a = t[:, 3] if t.shape[1] > 3 else np.full(len(t), 255, np.uint32)
    r, g, b = ((t[:, k] * a + 127) // 255 for k in range(3))
    return (a << 24) | (r << 16) | (g << 8) | b


def unpack(words: np.ndarray) -> np.ndarray:
    """Premultiplied ARGB words to (..., 4) RGBA bytes (opaque colours come back as they were)."""
    w = np.asarray(words, dtype=np.uint32)
    return np.stack([(w >> 16) & 255, (w >> 8) & 255, w & 255, w >> 24], axis=-1).astype(np.uint8)


def _with_nan(table: np.ndarray) -> np.ndarray:
    t = np.asarray(table, dtype=np.uint8)
    if t.shape[1] == 3:
        t = np.concatenate([t, np.full((len(t), 1), 255, np.uint8)], axis=1)
    return np.concatenate([t, np.asarray([NAN_RGBA], np.uint8)])


def _channel_bytes(values: np.ndarray, levels: tuple[float, float]) -> np.ndarray:
    """(rows, columns, channels) values to bytes per channel through the levels (NaN: 0)."""
    return lookup(values, levels, 256, 255.0, np.append(np.arange(256), 0).astype(np.uint8))


def rgba(values: np.ndarray, levels: tuple[float, float], table: np.ndarray | None) -> np.ndarray:
    """(rows, columns[, channels]) numbers to (rows, columns, 4) RGBA bytes; a value NaN in any
    channel is the NaN colour; a colour plane keeps its own fourth channel as alpha."""
    v = np.asarray(values)
    if v.ndim == 3:
        out = np.full(v.shape[:2] + (4,), 255, np.uint8)
        k = min(4, v.shape[2])
        out[..., :k] = _channel_bytes(v[..., :k], levels)
        if v.dtype.kind == "f":
            out[np.isnan(v).any(axis=-1)] = NAN_RGBA
        return out
    if table is None:
        return lookup(v, levels, 256, 255.0, _with_nan(grey_table()))
    return lookup(v, levels, len(table), None, _with_nan(table))


def argb(values: np.ndarray, levels: tuple[float, float], table: np.ndarray | None) -> np.ndarray:
    """What :func:`rgba` gives, as (rows, columns) premultiplied ARGB words for the screen."""
    v = np.asarray(values)
    if v.ndim == 3:
        return pack(rgba(v, levels, None).reshape(-1, 4)).reshape(v.shape[:2])
    if table is None:
        return lookup(v, levels, 256, 255.0, pack(_with_nan(grey_table())))
    return lookup(v, levels, len(table), None, pack(_with_nan(table)))
