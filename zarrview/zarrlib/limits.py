"""The bounds that keep a hostile or corrupt store from exhausting memory or time.

A store written by someone else decides how large a metadata document, a chunk or a shard
index claims to be, and decoders trust their headers. Every allocation whose size comes from
the store is checked against one of these bounds first, so the worst a store can do is cost
a ``ZarrError`` that names the key and the bound. The defaults are far above what real data
needs; ``configure`` changes them process-wide (the app's preferences, a test, a fuzzer).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from dataclasses import dataclass

import numpy as np


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 16 << 30


#: numpy's own limit on dimensions (32 before numpy 2, 64 since)
NUMPY_MAXDIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


@dataclass(frozen=True)
class Limits:
    #: bytes of one metadata document (zarr.json, .zarray, .zmetadata, ...); consolidated
    #: metadata of 100,000 nodes is about 60 MiB
    metadata_bytes: int = 256 << 20
    #: nesting depth of a metadata document
    json_depth: int = 128
    #: bytes of one stored object read whole (a chunk, or a shard read at once)
    object_bytes: int = 2 << 30
    #: bytes of a remote zip archive read whole because its server answers no range requests
    #: (held in memory while it is open)
    whole_archive_bytes: int = 256 << 20
    #: bytes one chunk decodes to, and the most a decoder may produce when the chunk's
    #: decoded size is not known in advance (variable-length data, v2 filters)
    chunk_bytes: int = 1 << 30
    #: bytes of one element of a data type (fixed-length strings, raw bytes, structs)
    element_bytes: int = 16 << 20
    #: entries one dimension of a rectilinear chunk grid may list (edges or runs of them)
    grid_edges: int = 1 << 22
    #: bytes of the result of one read; more than the machine holds cannot succeed
    read_bytes: int = dataclasses.field(default_factory=_physical_memory)
    #: chunks one read may touch: each costs a planning record and a lookup (15 us on a slow
    #: core even when it is missing), so 2**20 chunks are about 15 s; a viewer reads thousands
    chunks_per_read: int = 1 << 20
    #: seconds one remote request may take, all its tries together: a server that drips its
    #: answers or times out again and again is abandoned then, not after every try's timeout
    request_seconds: int = 60
    #: bytes the answers of one remote read may hold while they arrive, all together: what
    #: each answer's range or stated size says it brings is held from the budget before its
    #: body is read (an unstated one piece by piece), so a read of many large objects waits for the earlier ones
    #: instead of taking each one's own bound at once (the oldest answer always proceeds)
    inflight_bytes: int = 256 << 20
    #: dimensions of an array: as many as numpy allows (a sharded array's index adds one, so
    #: sharding takes one fewer)
    ndim: int = NUMPY_MAXDIMS


ENV = "ZARRVIEW_LIMITS"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def from_environment(text: str | None = None) -> Limits:
    """The defaults, changed by ``ZARRVIEW_LIMITS`` (``"chunk_bytes=4G,metadata_bytes=512M"``),
    so a user of the app or the command line can raise a bound that their data needs."""
    text = os.environ.get(ENV, "") if text is None else text
    changes: dict[str, int] = {}
    names = {f.name for f in dataclasses.fields(Limits)}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        value = value.strip().upper().removesuffix("IB").removesuffix("B")
        unit = value[-1:] if value[-1:] in _UNITS and not value[-1:].isdigit() else ""
        number = value[: len(value) - len(unit)]
        if name.strip() not in names or not number.isdigit() or int(number) < 1:
            raise ValueError(f"{ENV}: cannot use {part!r} (names: {', '.join(sorted(names))}; "
                             "values like 512M or 4G)")
        changes[name.strip()] = int(number) * _UNITS[unit]
    return dataclasses.replace(Limits(), **changes)


def _initial() -> Limits:
    try:
        return from_environment()
    except ValueError as e:  # a typo in the environment must not stop the app from starting
        warnings.warn(f"{e}; using the default limits", RuntimeWarning, stacklevel=2)
        return Limits()


_current = _initial()
_lock = threading.Lock()


def limits() -> Limits:
    """The bounds in force."""
    return _current


def configure(**changes: int) -> Limits:
    """Change some bounds process-wide (``configure(chunk_bytes=64 << 20)``); returns the old ones."""
    global _current
    with _lock:
        old = _current
        unknown = set(changes) - {f.name for f in dataclasses.fields(Limits)}
        if unknown:
            raise TypeError(f"unknown limits {sorted(unknown)}")
        for name, value in changes.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {name} must be a positive integer, not {value!r}")
        _current = dataclasses.replace(old, **changes)
        return old


def restore(old: Limits) -> None:
    """Put back bounds returned by ``configure``."""
    global _current
    with _lock:
        _current = old


def human(n: int) -> str:
    """``1073741824`` -> ``1 GiB``, for messages; exact below 10 KiB."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 10 << shift or (n >= 1 << shift and n % (1 << shift) == 0):
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"
