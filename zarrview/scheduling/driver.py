"""The driver: one request cycle that runs every view model, so no view model owns a lane.

A view model (the image, a line, a series at a point, a projection, a plate, a table, a
listing) is Qt-free and knows nothing of threads. It says what a state needs read
(``request(state) -> Request | None``), what is drawn meanwhile (``waiting(request)``) and what
an answer makes of it (``apply(request, answer) -> Drawn``), as napari's layer slicer splits
``_make_slice_request`` from ``_update_slice_response`` and ndv's views split
``build_slice_requests`` from ``process_request``. The driver does the rest, the same way for
all of them:

- ``show(state)`` asks the model for a request; none (what is loaded shows the state) makes
  whatever is in flight stale; the same read as the one in flight (``Request.read``) is left to
  finish; any other is submitted on the driver's lane, which cancels the read before it.
- Every answer arrives once, on the thread ``post`` runs on. A stale one (a newer request
  replaced it) is dropped here: models never see one. The newest is applied and drawn; if the
  model then wants another read for the same state (a coarse level first, then the level the
  zoom needs), it is submitted at once; otherwise the model's ``ahead(request)`` reads, if it has
  any, are offered to ``defer`` and warmed into the cache unless a newer read was asked meanwhile.
- Partial results (``ctx.emit`` on the worker: the blocks of a long line) go to the model's
  ``part(request, part)`` while the request is the newest, and what it returns is drawn.

Drawing is the view's: ``draw`` gets each value the model returns (None: nothing to draw).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from .answer import Answer
from .job import Job
from .lane import Lane, Post, call_now
from .pool import WorkerPool
from .prefetch import Prefetch, Warm


class Request(Protocol):
    """What a model asks to be read: the job, and what it reads (two requests that read the
    same are one read: the second waits for the first's answer instead of starting again)."""

    @property
    def job(self) -> Job[Any]: ...

    @property
    def read(self) -> Hashable: ...


S = TypeVar("S", contravariant=True)
R = TypeVar("R", bound=Request)
D = TypeVar("D", covariant=True)


class ViewModel(Protocol[S, R, D]):
    def request(self, state: S) -> R | None:
        """What ``state`` needs read, or None where what is loaded already shows it."""
        ...

    def waiting(self, request: R | None) -> D | None:
        """What is drawn as soon as a state is asked for: what is loaded, saying that
        ``request`` is being read (None: nothing is read), or None to draw nothing new."""
        ...

    def apply(self, request: R, answer: Answer[Any]) -> D | None:
        """What the newest answer to ``request`` makes of the view (its value, error or
        cancellation); never given a stale answer."""
        ...


@runtime_checkable
class ReadsAhead(Protocol):
    def ahead(self, request: Any) -> Sequence[Warm]:
        """What is worth reading into the cache after ``request`` was drawn (neighbouring
        planes), asked only while nothing newer was requested."""
        ...


@runtime_checkable
class TakesParts(Protocol):
    def part(self, request: Any, part: Any) -> Any:
        """What a partial result of ``request`` makes of the view (None: nothing to draw)."""
        ...


class Driver(Generic[S, R, D]):
    def __init__(self, model: ViewModel[S, R, D], pool: WorkerPool, draw: Callable[[D], None], *,
                 post: Post = call_now, name: str = "view", on_progress: Callable[[int, int], None] | None = None,
                 defer: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.model = model
        self.draw = draw
        self.lane: Lane[Any] = Lane(pool, post, name)
        self.prefetch = Prefetch(pool)
        self.on_progress = on_progress
        self.defer = defer
        #: the state shown last (the one a follow-up read is asked for)
        self.state: S | None = None
        self.inflight: R | None = None
        #: reads submitted, for tests and benchmarks
        self.requests = 0

    # -- asking ---------------------------------------------------------------------------------
    def show(self, state: S) -> None:
        """Show ``state``: draw what is loaded at once and read what it lacks."""
        self.state = state
        self._ask(self.model.request(state))

    def ask(self, request: R | None) -> None:
        """Read ``request`` (built by the model outside ``show``, as a series at a clicked point)."""
        self._ask(request)

    def cancel(self) -> None:
        """Stop the read in flight: its answer says it was cancelled (the Cancel button)."""
        self.lane.cancel()
        self.prefetch.stop()

    def discard(self) -> None:
        """Nothing in flight is wanted any more: its answers are stale and dropped."""
        self.inflight = None
        self.lane.discard()
        self.prefetch.stop()

    def clear(self) -> None:
        """Nothing is shown: answers still coming are dropped and no state is kept."""
        self.discard()
        self.state = None

    def close(self) -> None:
        self.lane.close()
        self.prefetch.stop()

    def busy(self) -> bool:
        return self.inflight is not None

    # -- the cycle ------------------------------------------------------------------------------
    def _ask(self, request: R | None) -> None:
        inflight = self.inflight
        if request is None:
            if inflight is not None:  # a read for an older state is no longer wanted
                self.discard()
            self._draw(self.model.waiting(None))
            return
        if inflight is not None and request.read == inflight.read:
            self._draw(self.model.waiting(inflight))
            return
        self._submit(request)

    def _submit(self, request: R) -> None:
        self.inflight = request
        self.requests += 1
        self.prefetch.stop()  # reading ahead never delays what is on screen
        self._draw(self.model.waiting(request))
        model = self.model
        on_partial = (lambda part: self._part(request, part)) if isinstance(model, TakesParts) else None
        self.lane.submit(request.job, lambda answer: self._arrive(request, answer), on_progress=self.on_progress,
                         on_partial=on_partial)

    def _part(self, request: R, part: Any) -> None:
        if request is self.inflight and isinstance(self.model, TakesParts):
            self._draw(self.model.part(request, part))

    def _arrive(self, request: R, answer: Answer[Any]) -> None:
        if answer.stale:
            return  # the state it was read for is gone
        self.inflight = None
        self._draw(self.model.apply(request, answer))
        if not answer.ok or self.state is None or self.inflight is not None:
            return
        follow = self.model.request(self.state)
        if follow is not None and follow.read != request.read:
            self._submit(follow)  # the same state wants more: the level the zoom needs after the coarsest
        else:
            self._offer_ahead(request)

    def _offer_ahead(self, request: R) -> None:
        model = self.model
        if self.defer is None or not isinstance(model, ReadsAhead):
            return
        number = self.lane.newest

        def run() -> None:
            if number == self.lane.newest and self.inflight is None:  # nothing newer was asked since
                reads = list(model.ahead(request))
                if reads:
                    self.prefetch.warm(reads)

        self.defer(run)

    def _draw(self, drawn: D | None) -> None:
        if drawn is not None:
            self.draw(drawn)

