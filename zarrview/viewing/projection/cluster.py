"""Running a projection's slabs on a dask.distributed cluster (``pip install zarrview[dask]``).

An open ``Array`` holds its store (file descriptors, sessions) and is not sent anywhere: each
task carries the location as typed, the node's path and the storage options, and its worker
opens the array itself through zarrlib (``zarrlib.open``), reads its slab of whole chunks and
reduces it there (``reduce.fold``). Only partial results come back (``ops.Partial``, one per
chunk footprint on the plane: one to three planes in all), and the client merges them as they
arrive, with at most ``in_flight`` tasks submitted at a time, so the client holds a bounded number of planes whatever
the range. The cancel token is looked at every quarter second; cancelling drops the tasks left.

The workers must be able to open the location: a path on a shared file system or a URL, with
zarrview importable on them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...zarrlib import Array, CancelToken, ReadCancelled, ZarrError
from ...zarrlib import open as open_node
from .ops import Partial
from .reduce import SLAB_BYTES, Key, Piece, assemble, fold, plan
from .spec import Projection

Progress = Callable[[int, int], None]
#: how often the client looks at the cancel token while tasks run
POLL_SECONDS = 0.25


class ClusterError(RuntimeError):
    """The cluster cannot be used: dask.distributed is not installed or the scheduler does not answer."""


@dataclass(frozen=True)
class Source:
    """Where a worker finds the array: what ``zarrlib.open`` takes, as plain values."""

    location: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)
    widen_ml_types: bool = False

    def open(self) -> Array:
        node = open_node(self.location, path=self.path, **self.options)
        if not isinstance(node, Array):
            raise ClusterError(f"{self.location} :: {self.path} is not an array on the worker")
        node.hierarchy.widen_ml_types = self.widen_ml_types
        return node


def source_of(arr: Array, location: str, options: dict[str, Any] | None = None) -> Source:
    """The ``Source`` of an array opened from ``location`` (with or without its ``::/node``)."""
    return Source(location, arr.path, dict(options or {}), arr.hierarchy.widen_ml_types)


def recipe(p: Projection) -> tuple[Any, ...]:
    """``p`` without its array, as plain values a task carries: ``Projection(array, *recipe(p))``."""
    return p.selection, p.dim, p.start, p.stop, p.op, p.decoding, p.ddof, p.dim_name


def reduce_pieces(source: Source, fields: tuple[Any, ...], pieces: Sequence[Piece]) -> dict[Key, Partial]:
    """A task: the partial results of ``pieces`` of the projection ``fields`` (``recipe``), read
    on the worker from the array at ``source``."""
    partials: dict[Key, Partial] = {}
    fold(Projection(source.open(), *fields), pieces, partials)
    return partials


def _client(scheduler: Any, timeout: float) -> tuple[Any, bool]:
    """A client of ``scheduler`` (an address or a ``distributed.Client``) and whether it is ours to close."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("a --scheduler needs dask.distributed: pip install 'zarrview[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, set_as_default=False, timeout=timeout), True
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the dask scheduler {scheduler}: {e}") from None


def project_on_cluster(p: Projection, scheduler: Any, source: Source, *, cancel: CancelToken | None = None,
                       progress: Progress | None = None, slab_bytes: int = SLAB_BYTES,
                       in_flight: int | None = None, connect_timeout: float = 30.0) -> np.ndarray:
    """The projected plane of ``p``, its slabs reduced on the cluster at ``scheduler`` (a
    ``tcp://`` address or a ``distributed.Client``), equal to ``reduce.project(p)``.
    ``progress(done, total)`` counts chunks as tasks finish. A chunk that cannot be read raises
    its ``ZarrError``; a task that fails otherwise (a worker lost) is a ``ClusterError``."""
    if math.prod(p.shape) == 0:
        return np.empty(p.shape, p.dtype)
    layout = plan(p, slab_bytes)
    tasks = _by_slab(layout.pieces)
    total = layout.chunks
    client, owned = _client(scheduler, connect_timeout)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        limit = in_flight or 2 * workers
        shipped = recipe(p)
        partials: dict[Key, Partial] = {}
        pending: dict[Any, int] = {}
        ready = threading.Event()  # set by any task that finishes
        done = 0
        queue = list(reversed(tasks))
        while queue or pending:
            _check(cancel, client, pending)
            while queue and len(pending) < limit:
                pieces = queue.pop()
                future = client.submit(reduce_pieces, source, shipped, pieces, pure=False)
                pending[future] = sum(piece.chunks for piece in pieces)
                future.add_done_callback(lambda _f: ready.set())
            ready.wait(POLL_SECONDS)
            ready.clear()
            finished = [f for f in pending if f.done()]
            _check(cancel, client, pending)
            for future in finished:
                chunks = pending.pop(future)
                for key, part in _result(future).items():
                    partials.setdefault(key, Partial(p.op)).merge(part)
                done += chunks
                if progress is not None:
                    progress(done, total)
        return assemble(p, partials)
    finally:
        if owned:
            client.close()


def _check(cancel: CancelToken | None, client: Any, pending: dict[Any, int]) -> None:
    """Raise ``ReadCancelled`` once ``cancel`` is set, dropping the tasks still on the cluster."""
    if cancel is not None and cancel.cancelled:
        client.cancel(list(pending))
        raise ReadCancelled("projection cancelled")


def _result(future: Any) -> dict[Key, Partial]:
    try:
        parts: dict[Key, Partial] = future.result()
    except (ZarrError, ReadCancelled):
        raise
    except Exception as e:  # the worker's exception or the cluster's, brought back by the client
        raise ClusterError(f"a task on the cluster failed: {type(e).__name__}: {e}") from e
    return parts


def _by_slab(pieces: Sequence[Piece]) -> list[tuple[Piece, ...]]:
    """The pieces of each slab together: one task reads one slab (all its tiles)."""
    out: dict[int, list[Piece]] = {}
    for piece in pieces:
        out.setdefault(piece.r0, []).append(piece)
    return [tuple(v) for v in out.values()]
