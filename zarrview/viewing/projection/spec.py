"""What a projection is: a plane of an array, a dimension reduced over a range, an operation.

The plane is chosen as the image view chooses it (``ViewState``: two displayed dimensions, a
colour dimension, an index for every other one); the reduced dimension is one of the fixed ones,
its index replaced by a range. ``max:z[0:100]`` is the text form (``zarrview export --reduce``):
the operation, the dimension by name (its ``dimension_names``, ``_ARRAY_DIMENSIONS``, NCZarr or
OME axis name) or position, and an optional range of indices, the whole dimension without one.
A range is never clamped: one outside the dimension is refused, as ``--slice`` refuses an index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...zarrlib import Array
from ..image.slice_spec import ArgumentError
from .ops import OPS, ProjectionOpError, check_op, result_dtype

if TYPE_CHECKING:
    from ..cf.values import ValueCoding

REDUCE_HELP = ("reduce a dimension before writing: OP:DIM[START:STOP] with OP one of " + ", ".join(OPS)
               + ", DIM a dimension name or position, and an optional range of indices (the whole dimension "
               "without one), like max:z[0:100] or mean:time; NaN is ignored")

_TEXT = re.compile(r"^\s*(?P<op>[A-Za-z]+)\s*:\s*(?P<dim>[^\[\]]+?)\s*(\[(?P<range>[^\]]*)\])?\s*$")


class ProjectionSpecError(ArgumentError):
    """A projection that names no dimension, range or operation of the array; the message is one
    line naming the node and what is wrong."""


@dataclass(frozen=True)
class ReduceText:
    """``--reduce`` as typed, before the array is known: the dimension as a name or a position."""

    op: str
    dim: str | int
    start: int | None = None
    stop: int | None = None


@dataclass(frozen=True, eq=False)
class Projection:
    """One projection, as values: safe to hand to a worker thread or (with the array's location)
    to a cluster."""

    array: Array
    #: the plane, as ``PlaneSpec.selection``: ``slice(None)`` for the displayed and colour
    #: dimensions, an index for the others (the reduced dimension's index is not used)
    selection: tuple[int | slice, ...]
    dim: int
    start: int
    stop: int
    op: str
    #: CF masking and unpacking applied to every slab before it is reduced (None: stored values)
    decoding: ValueCoding | None = None
    ddof: int = 0
    #: the reduced dimension's name where the array's metadata lacks it (an OME axis)
    dim_name: str | None = None

    def __post_init__(self) -> None:
        arr = self.array
        if len(self.selection) != arr.ndim:
            raise ValueError(f"a selection of {len(self.selection)} items for {arr.ndim} dimensions")
        if not 0 <= self.dim < arr.ndim or isinstance(self.selection[self.dim], slice):
            raise ValueError(f"dimension {self.dim} of {arr.path} is not a fixed dimension of the plane")
        if not 0 <= self.start < self.stop <= arr.shape[self.dim]:
            raise ValueError(f"range {self.start}:{self.stop} is not within dimension {self.dim} of {arr.path}")
        check_op(self.op, self.values_dtype)

    @property
    def values_dtype(self) -> np.dtype[Any]:
        """The type of the values reduced: CF-decoded where the projection decodes."""
        return self.decoding.decoded_dtype if self.decoding is not None else np.dtype(self.array.dtype)

    @property
    def dtype(self) -> np.dtype[Any]:
        return result_dtype(self.op, self.values_dtype)

    @property
    def plane_dims(self) -> tuple[int, ...]:
        """The dimensions of the result, in the array's order."""
        return tuple(d for d, s in enumerate(self.selection) if isinstance(s, slice))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape[d] for d in self.plane_dims)

    @property
    def label(self) -> str:
        """``max over z[0:100] of /img[:, :]`` for status lines and error messages."""
        names = self.array.dimension_names or ()
        name = self.dim_name or (names[self.dim] if self.dim < len(names) and names[self.dim] else None)
        name = name or f"dimension {self.dim}"
        rest = ", ".join(":" if isinstance(s, slice) else str(s) for d, s in enumerate(self.selection) if d != self.dim)
        return f"{self.op} over {name}[{self.start}:{self.stop}] of {self.array.path}[{rest}]"


def read_reduce(text: str) -> ReduceText:
    """``"max:z[0:100]"`` -> ``ReduceText("max", "z", 0, 100)``, without opening anything."""
    m = _TEXT.match(text or "")
    if m is None:
        raise ProjectionSpecError(f"zarrview: --reduce {text!r}: give OP:DIM or OP:DIM[START:STOP], like max:z[0:100]")
    op = m["op"].lower()
    if op not in OPS:
        raise ProjectionSpecError(f"zarrview: --reduce {text!r}: unknown operation {m['op']!r} (one of {', '.join(OPS)})")
    dim_text = m["dim"]
    dim: str | int = int(dim_text) if re.fullmatch(r"[+-]?\d+", dim_text) else dim_text
    start = stop = None
    if m["range"] is not None:
        lo, colon, hi = m["range"].partition(":")
        if not colon:
            raise ProjectionSpecError(f"zarrview: --reduce {text!r}: a range is [START:STOP], like [0:100]")
        start, stop = _bound(text, lo), _bound(text, hi)
    return ReduceText(op, dim, start, stop)


def _bound(text: str, part: str) -> int | None:
    part = part.strip()
    if not part:
        return None
    try:
        return int(part)
    except ValueError:
        raise ProjectionSpecError(f"zarrview: --reduce {text!r}: the range takes indices, not {part!r}") from None


def resolve_dim(dim: str | int, names: Sequence[str | None], path: str, ndim: int) -> int:
    """The position of ``dim`` (a name among ``names``, or a position) in an array at ``path``."""
    if isinstance(dim, int):
        if not 0 <= dim < ndim:
            raise ProjectionSpecError(f"zarrview: --reduce: {path} has no dimension {dim} (it has {ndim}: 0 to {ndim - 1})")
        return dim
    if dim in names:
        return list(names).index(dim)
    known = ", ".join(str(n) for n in names if n)
    have = f"its dimensions: {known}" if known else "its dimensions have no names: give a position, like max:0"
    raise ProjectionSpecError(f"zarrview: --reduce: {path} has no dimension {dim!r} ({have})")


def projection(arr: Array, selection: Sequence[int | slice], request: ReduceText,
               names: Sequence[str | None] | None = None, decoding: ValueCoding | None = None,
               shown: Sequence[int] = ()) -> Projection:
    """``request`` applied to the plane ``selection`` of ``arr``; ``names`` are its dimension names
    (the array's own by default), ``shown`` the dimensions the plane displays (as rows, columns,
    colour), for the message that refuses to reduce one. Raises ``ProjectionSpecError``."""
    from ..cf.dims import dimension_names

    names = tuple(names) if names is not None else dimension_names(arr)
    dim = resolve_dim(request.dim, names, arr.path, arr.ndim)
    label = names[dim] if dim < len(names) and names[dim] else f"dimension {dim}"
    if isinstance(selection[dim], slice) or dim in shown:
        raise ProjectionSpecError(f"zarrview: --reduce: {label} of {arr.path} is an axis of the plane; reducing it "
                                  "leaves no plane (choose the plane's axes with --slice, like 5,:,:)")
    n = arr.shape[dim]
    start = 0 if request.start is None else request.start
    stop = n if request.stop is None else request.stop
    if not 0 <= start < stop <= n:
        raise ProjectionSpecError(f"zarrview: --reduce: range [{start}:{stop}] is outside {label} of {arr.path} "
                                  f"(size {n}: 0 <= START < STOP <= {n})")
    try:
        return Projection(arr, tuple(selection), dim, start, stop, request.op, decoding,
                          dim_name=names[dim] if dim < len(names) else None)
    except ProjectionOpError as e:
        raise ProjectionSpecError(f"zarrview: --reduce {request.op}: {arr.path}: {e}") from None
