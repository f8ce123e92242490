"""A read that hands each chunk's part to a callback instead of filling one output array.

A reduction over many chunks (a projection's maximum over a stack) needs each chunk's values
once, and never the whole selection at once: holding it costs as many bytes as the chunks read.
``ChunkReader.visit`` decodes every chunk exactly as ``read`` does (same workers, cache, failure
policy, progress and cancelling) but places each part into a ``ChunkSink``, which calls
``visit(index, values)`` on the worker that decoded it. ``values`` may be a view of that worker's
reused decode buffer or of a cached chunk: it is read-only in spirit and valid only during the
call. A chunk that is not stored or could not be read arrives as its fill value, broadcast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: ``visit(index, values)``: ``index`` is where the part lies in the selection's output before
#: integer indices drop dimensions (one slice per dimension of the array)
Visit = Callable[[tuple[slice, ...], np.ndarray], None]


class ChunkSink:
    """Stands in for a read's output array: ``sink[index] = values`` calls ``visit``."""

    __slots__ = ("dtype", "visit")

    def __init__(self, dtype: np.dtype[Any], visit: Visit) -> None:
        self.dtype = np.dtype(dtype)
        self.visit = visit

    def __setitem__(self, index: tuple[slice, ...], values: Any) -> None:
        if isinstance(values, np.ndarray) and values.ndim == len(index):
            self.visit(index, values if values.dtype == self.dtype else values.astype(self.dtype))
            return
        fill = np.empty((), self.dtype)
        fill[()] = values  # a fill value, cast as numpy casts it into an output array
        self.visit(index, np.broadcast_to(fill, tuple(s.stop - s.start for s in index)))
