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
- States shown under different ``key`` values (the groups of a tree, each listing its pages;
  the stores being opened) are read side by side, each keeping only its newest.

Drawing is the view's: ``draw`` gets each value the model returns (None: nothing to draw).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

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


class ReadOnce:
    """A request read anew each time it is made (a page of a listing, a frame, a projection,
    a one-off task): what it reads is itself, so no other request waits for it."""

    @property
    def read(self) -> Hashable:
        return self


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
        #: what the model does beyond the protocol, looked up once (a runtime protocol check
        #: costs tens of microseconds, once per frame where a view renders on the driver)
        self._parts = isinstance(model, TakesParts)
        self._ahead = isinstance(model, ReadsAhead)
        self.draw = draw
        self.lane: Lane[Any] = Lane(pool, post, name)
        #: where the model's reads ahead are warmed (a lane of its own): only for a model that has any
        self.prefetch: Prefetch | None = Prefetch(pool) if self._ahead else None
        self.on_progress = on_progress
        self.defer = defer
        #: by key: the state shown last (the one a follow-up read is asked for), the read in flight
        self._states: dict[Hashable, S] = {}
        self._inflight: dict[Hashable, R] = {}
        #: reads submitted, for tests and benchmarks
        self.requests = 0

    @property
    def state(self) -> S | None:
        """The state shown last (of the key None)."""
        return self._states.get(None)

    @property
    def inflight(self) -> R | None:
        """The request being read (of the key None), if any."""
        return self._inflight.get(None)

    # -- asking ---------------------------------------------------------------------------------
    def show(self, state: S, key: Hashable = None) -> None:
        """Show ``state``: draw what is loaded at once and read what it lacks (side by side with
        the states of other keys)."""
        self._states[key] = state
        self._ask(self.model.request(state), key)

    def ask(self, request: R | None, key: Hashable = None) -> None:
        """Read ``request`` (built by the model outside ``show``, as a projection the controls
        checked first)."""
        self._ask(request, key)

    def cancel(self) -> None:
        """Stop the read in flight: its answer says it was cancelled (the Cancel button)."""
        self.lane.cancel()
        self._stop_ahead()

    def discard(self) -> None:
        """Nothing in flight is wanted any more: its answers are stale and dropped."""
        self._inflight.clear()
        self.lane.discard()
        self._stop_ahead()

    def clear(self) -> None:
        """Nothing is shown: answers still coming are dropped and no state is kept."""
        self.discard()
        self._states.clear()

    def close(self) -> None:
        self.lane.close()
        self._stop_ahead()

    def busy(self) -> bool:
        """Whether a read of any key is under way."""
        return bool(self._inflight)

    # -- the cycle ------------------------------------------------------------------------------
    def _ask(self, request: R | None, key: Hashable) -> None:
        inflight = self._inflight.get(key)
        if request is None:
            if inflight is not None:  # a read for an older state is no longer wanted
                self._drop(key)
            self._draw(self.model.waiting(None))
            return
        if inflight is not None and request.read == inflight.read:
            self._draw(self.model.waiting(inflight))
            return
        self._submit(request, key)

    def _drop(self, key: Hashable) -> None:
        """The read of ``key`` in flight is not wanted: its answer is dropped as it arrives."""
        if key is None:
            self.discard()  # the view's only read, and with it what it reads ahead
        else:
            self._inflight.pop(key, None)

    def _submit(self, request: R, key: Hashable) -> None:
        self._inflight[key] = request
        self.requests += 1
        self._stop_ahead()  # reading ahead never delays what is on screen
        self._draw(self.model.waiting(request))
        on_partial = (lambda part: self._part(request, part, key)) if self._parts else None
        self.lane.submit(request.job, lambda answer: self._arrive(request, answer, key),
                         on_progress=self.on_progress, on_partial=on_partial, key=key)

    def _part(self, request: R, part: Any, key: Hashable) -> None:
        if request is self._inflight.get(key):
            self._draw(cast(TakesParts, self.model).part(request, part))

    def _arrive(self, request: R, answer: Answer[Any], key: Hashable) -> None:
        if answer.stale or request is not self._inflight.get(key):
            return  # the state it was read for is gone
        del self._inflight[key]
        self._draw(self.model.apply(request, answer))
        state = self._states.get(key)
        if not answer.ok or state is None or key in self._inflight:
            return
        follow = self.model.request(state)
        if follow is not None and follow.read != request.read:
            self._submit(follow, key)  # the same state wants more: the level the zoom needs after the coarsest
        else:
            self._offer_ahead(request)

    def _offer_ahead(self, request: R) -> None:
        if self.defer is None or not self._ahead:
            return
        model = cast(ReadsAhead, self.model)
        number = self.lane.newest

        def run() -> None:
            if number == self.lane.newest and not self._inflight:  # nothing newer was asked since
                reads = list(model.ahead(request))
                if reads and self.prefetch is not None:
                    self.prefetch.warm(reads)

        self.defer(run)

    def _stop_ahead(self) -> None:
        if self.prefetch is not None:
            self.prefetch.stop()

    def _draw(self, drawn: D | None) -> None:
        if drawn is not None:
            self.draw(drawn)

