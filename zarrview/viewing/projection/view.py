"""The projection's view model: ``request(state) -> job`` and ``apply(request, answer) -> plane``.

The window asks for a projection of what it shows: the image view's state gives the plane (its
displayed and colour dimensions, the index of every other one, the CF decoding it shows), the
caller the dimension to reduce, the operation and a range. ``request`` builds the job on the
GUI thread from those values alone; the job runs on a worker of the shared pool (or sends its
slabs to a dask.distributed cluster) and ``apply`` turns its answer into what to draw: the
plane oriented as displayed, a status line, or why there is none. ``export_job`` writes the
same projection as a file, through the export of planes (.npy, .csv, .png).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...scheduling import Answer, Context, Job, ReadOnce
from ...zarrlib import CancelToken, ChunkCache, ChunkFailure
from ..export.plane import PlaneSpec, export_plane, oriented
from ..image.state import ViewState
from .cluster import Source, project_on_cluster
from .reduce import project
from .spec import Projection, ReduceText, projection

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Engine:
    """Where the slabs are reduced: here (``scheduler`` None) or on a dask.distributed cluster
    (its address or ``distributed.Client``), whose workers open ``source``."""

    scheduler: Any = None
    source: Source | None = None


@dataclass(frozen=True, eq=False)
class ProjectionValues:
    """The projection as the values of a plane (``export.plane.PlaneValues``)."""

    projection: Projection
    engine: Engine = Engine()

    @property
    def label(self) -> str:
        return self.projection.label

    def __call__(self, cancel: CancelToken | None, progress: Progress | None, cache: ChunkCache | None = None,
                 failures: list[ChunkFailure] | None = None, executor: ThreadPoolExecutor | None = None) -> np.ndarray:
        engine = self.engine
        if engine.scheduler is None:
            return project(self.projection, cancel=cancel, cache=cache, progress=progress, failures=failures,
                           executor=executor)
        if engine.source is None:
            raise ValueError("a projection on a cluster needs the array's location (Engine.source)")
        return project_on_cluster(self.projection, engine.scheduler, engine.source, cancel=cancel, progress=progress)


def projection_of(state: ViewState, dim: int | str, op: str, start: int | None = None, stop: int | None = None,
                  ddof: int = 0) -> Projection:
    """The projection of the plane ``state`` shows (at full resolution, level 0, decoded as the
    view decodes it) over ``dim`` (a position, or a name of the array or of ``state.axis_names``)
    ``start:stop`` (the whole dimension by default). Raises ``spec.ProjectionSpecError``."""
    names = state.axis_names
    p = projection(state.array, state.plane_selection(), ReduceText(op, dim, start, stop), names,
                   state.decoding, state.plane_dims)
    return p if ddof == 0 else replace(p, ddof=ddof)


def plane_spec(p: Projection, dims: tuple[int, int], channel_dim: int | None = None,
               complex_mode: str = "magnitude") -> PlaneSpec:
    """The plane the projection stands for, as the export writes planes (rows ``dims[0]``,
    columns ``dims[1]``, an optional colour dimension)."""
    selection = tuple(p.start if d == p.dim else s for d, s in enumerate(p.selection))
    return PlaneSpec(p.array, selection, dims, channel_dim, complex_mode)


@dataclass(frozen=True, eq=False)
class ProjectionRequest(ReadOnce):
    projection: Projection
    #: the displayed (rows, columns) dimensions and the colour one, to orient the answer
    dims: tuple[int, int]
    channel_dim: int | None
    job: Job[Any]

    @property
    def label(self) -> str:
        return self.projection.label



@dataclass(frozen=True)
class ProjectedPlane:
    """What the view shows of a projection."""

    #: the projected values, rows by columns (by colour channels) as displayed; None: nothing to show
    image: np.ndarray | None = None
    label: str = ""
    status: str = ""
    #: why nothing is shown (an error); None otherwise
    message: str | None = None
    #: one line per chunk that could not be read (it counted as the fill value)
    failures: tuple[str, ...] = ()


def request(state: ViewState, dim: int | str, op: str, start: int | None = None, stop: int | None = None, *,
            engine: Engine = Engine()) -> ProjectionRequest:
    """The job that computes the projection of ``state``'s plane (see ``projection_of``)."""
    p = projection_of(state, dim, op, start, stop)
    values = ProjectionValues(p, engine)

    def run(ctx: Context) -> np.ndarray:
        return values(ctx.cancel, ctx.progress, ctx.cache, ctx.failures, ctx.executor)

    return ProjectionRequest(p, (state.y_dim, state.x_dim), state.channel_dim, Job(run, p.label))


def apply(req: ProjectionRequest, answer: Answer[Any]) -> ProjectedPlane | None:
    """What to draw for ``answer``; None for a stale one (a newer projection replaced it)."""
    if answer.stale:
        return None
    if answer.cancelled:
        return ProjectedPlane(label=req.label, status=f"Cancelled {req.label}")
    if answer.error is not None:
        return ProjectedPlane(label=req.label, status=f"Error: {answer.error}",
                              message=f"Cannot compute {req.label}:\n{answer.error}")
    assert answer.value is not None
    image = oriented(plane_spec(req.projection, req.dims, req.channel_dim), np.asarray(answer.value))
    lost = tuple(f.message for f in answer.failures)
    status = f"{req.label} in {answer.seconds * 1000:.0f} ms"
    if lost:
        status += f"; {len(lost)} chunk{'s' if len(lost) > 1 else ''} could not be read (counted as the fill value)"
    return ProjectedPlane(image, req.label, status, failures=lost)


def export_job(req: ProjectionRequest, path: str | Path, *, engine: Engine = Engine()) -> Job[Path]:
    """A job that writes ``req``'s projection to ``path`` (.npy, .csv, .png), as planes are written."""
    spec = plane_spec(req.projection, req.dims, req.channel_dim)
    values = ProjectionValues(req.projection, engine)
    return Job(lambda ctx: export_plane(spec, path, progress=ctx.progress, cancel=ctx.cancel, values=values,
                                        executor=ctx.executor), f"export {req.label}")


@dataclass(frozen=True, eq=False)
class ProjectionAsk:
    """The state of a projection view: the plane shown, and what the controls say to reduce."""

    state: ViewState
    dim: int | str
    op: str
    start: int | None = None
    stop: int | None = None
    engine: Engine = Engine()


class ProjectionModel:
    """One projection at a time, run by a driver (``scheduling.Driver``): a new one cancels the
    one before, and only the newest answer is applied."""

    def __init__(self) -> None:
        self._asked: ProjectionAsk | None = None

    def request(self, ask: ProjectionAsk) -> ProjectionRequest | None:
        """The projection ``ask`` says (raises ``spec.ProjectionSpecError`` for one that names
        no range or dimension of the plane, before anything is submitted); None once asked."""
        if ask is self._asked:
            return None
        req = request(ask.state, ask.dim, ask.op, ask.start, ask.stop, engine=ask.engine)
        self._asked = ask
        return req

    def waiting(self, request: ProjectionRequest | None) -> ProjectedPlane | None:
        """Nothing is drawn while a projection is computed: the plane stays until it lands."""
        return None

    def apply(self, req: ProjectionRequest, answer: Answer[Any]) -> ProjectedPlane | None:
        return apply(req, answer)
