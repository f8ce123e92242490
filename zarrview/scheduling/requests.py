"""What the view asks for, frozen at the moment it asks.

A request holds everything the worker needs (array, selection, level), built on the GUI
thread, so the worker never reads widget state; the generation, numbered by whoever asks
(the view model's controller), lets the receiver drop any result that is no longer the newest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..zarrlib import Array, ChunkFailure


@dataclass(frozen=True)
class ReadRequest:
    array: Array
    selection: tuple[Any, ...]
    generation: int
    #: resolution level of a multiscale pyramid (0 = full resolution); a later issue plugs levels in
    level: int = 0
    #: a label for the status bar ("plane 5 of /img")
    label: str = ""
    #: preview requests read a strided subset; the receiver shows them until the full one lands
    preview: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: work to run instead of a plain read (a reduction such as a plot's min/max envelope):
    #: ``compute(cancel, cache, progress, failures)`` returns the result's data
    compute: Callable[..., Any] | None = field(default=None, compare=False)
    #: applied to the values read, on the worker (CF masking and unpacking); a ``compute``
    #: applies it itself to what it reads
    decode: Callable[[np.ndarray], np.ndarray] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ReadResult:
    request: ReadRequest
    data: np.ndarray | None
    error: BaseException | None
    seconds: float
    #: chunks that could not be read; ``data`` holds the fill value there
    failures: tuple[ChunkFailure, ...] = ()
    #: the request was cancelled (superseded or by the user) before its data was complete:
    #: delivered all the same, so a receiver never waits for an answer that will not come
    cancelled: bool = False
