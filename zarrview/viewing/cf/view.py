"""What the CF conventions change in a view of one array, gathered once per array on a worker.

The view needs the conventions in several places at once (values decoded on the worker, slider
and axis labels, the readout, the title and colour bar, the first contrast), and finding them
reads the coordinate arrays, which on a remote store is I/O: :func:`read_cf` does it off the
GUI thread and the result rides in ``ViewState.cf`` as one immutable value. Nothing here raises
for bad attributes; they are ``notes``, shown beside the raw values.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ...zarrlib import Array, Group, ZarrError
from .axis_kind import flip_vertical
from .coords import CoordAxis, coordinate_axes, own_axis
from .decoded import Decoding, decoding_of
from .dims import read_dimensions
from .flags import FlagLegend, flag_legend
from .values import ValueCoding, initial_range, value_coding, value_title


@dataclass(frozen=True, eq=False)
class CFView:
    coding: ValueCoding
    #: long_name, else standard_name, else the array's name
    title: str
    units: str | None
    #: the coordinate of each dimension that has one
    axes: Mapping[int, CoordAxis] = field(default_factory=lambda: MappingProxyType({}))
    flags: FlagLegend | None = None
    #: ``actual_range`` (else the valid range), decoded: the first contrast
    range: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()
    #: dimension names from NCZarr where the array's own metadata has none (else ())
    names: tuple[str, ...] = ()
    #: the coordinate reference system the axes' coordinates are in ("EPSG:32633"), where named
    crs: str | None = None
    #: the array itself as its dimension's coordinate variable (a 1-D ``time`` along ``time``)
    own: CoordAxis | None = None
    #: how every view decodes the values (times to dates, numbers as ``coding``)
    decoding: Decoding | None = None

    def place(self, dim: int, index: int) -> str | None:
        """``2001-03-04 06:00``: the coordinate value of ``index`` along ``dim``, or None."""
        axis = self.axes.get(dim)
        if axis is None or not 0 <= index < len(axis):
            return None
        return axis.label(index)

    def value_text(self, value: Any, text: str) -> str:
        """``text`` (the formatted value) with its units, or the flag meaning it stands for."""
        if self.flags is not None:
            try:
                meaning = self.flags.name_of(int(value))
            except (TypeError, ValueError, OverflowError):
                meaning = None
            if meaning:
                return f"{text} ({meaning})"
        if isinstance(value, float | np.floating) and np.isnan(value):
            return f"{text} (missing)"
        own = None if self.decoding is None else self.decoding.text(value)
        text = text if own is None else own  # 14.466, as packed, not the sum's 14.466000000000001
        return f"{text} {self.units}" if self.units and self.units != "1" else text

    def flipped(self, y_dim: int) -> bool:
        """Whether rows are drawn bottom-up (north up, depth down: ``axis_kind.flip_vertical``)."""
        axis = self.axes.get(y_dim)
        return axis is not None and flip_vertical(axis)

    @property
    def heading(self) -> str:
        return f"{self.title} ({self.units})" if self.units and self.units != "1" else self.title


def read_cf(arr: Array, *, executor: ThreadPoolExecutor | None = None) -> CFView | None:
    """The CF view of ``arr`` (reads its coordinate arrays: call it off the GUI thread), or None
    where no convention applies to it. The coordinates decode on ``executor``: a job's, from its
    context, so they decode on the threads of the pool that runs it; None (a script, the
    command line) leaves it to zarrlib's default."""
    notes: list[str] = []
    axes: dict[int, CoordAxis] = {}
    group = _root(arr)
    if group is not None:
        rel = arr.path[len(group.path):].strip("/") if group.path != "/" else arr.path.strip("/")
        try:
            axes, found = coordinate_axes(group, arr, rel, executor=executor)
            notes += found
        except ZarrError as e:  # coordinate_axes notes what it reads; the group itself may fail
            notes.append(f"the coordinates of {arr.path} could not be read: {e}")
    dims = read_dimensions(arr)
    own = None
    if arr.ndim == 1 and dims.names[0] is not None:
        try:
            own = own_axis(arr, dims.names[0], notes, executor=executor)
        except ZarrError as e:
            notes.append(f"{arr.path} could not be read as its coordinate variable: {e}")
    coding = value_coding(arr)
    notes += coding.notes
    title, units = value_title(arr)
    flags, flag_notes = flag_legend(arr.attrs)
    notes += flag_notes
    rng = initial_range(arr)
    attrs = arr.attrs
    names = () if arr.dimension_names or not any(dims.names) else \
        tuple(n or f"dim_{d}" for d, n in enumerate(dims.names))
    if not (axes or own or coding.active or flags or rng or notes or names or "units" in attrs or "long_name" in attrs
            or "standard_name" in attrs):
        return None
    return CFView(coding, title, units, MappingProxyType(axes), flags, rng, tuple(notes), names, own=own,
                  decoding=decoding_of(arr))


class CFOnce:
    """``read_cf`` of one array, read the first time it is asked for and kept, its failure too:
    a command asks for an array's coordinates in several places (matching ``--slice`` names to
    their values, the picture's orientation, a CSV's labels), and every ``read_cf`` reads the
    coordinate arrays again. Made on any thread; called off the GUI thread, where the first call's
    ``executor`` is the one the coordinates decode on (a job's, from its context)."""

    def __init__(self, arr: Array) -> None:
        self.array = arr
        self._lock = threading.Lock()
        self._read = False
        self._view: CFView | None = None
        self._error: ZarrError | None = None

    def __call__(self, *, executor: ThreadPoolExecutor | None = None) -> CFView | None:
        """The CF view (None where no convention applies); raises the ``ZarrError`` of the one
        read each time it is asked for again. ``executor``: ``read_cf``'s, for the first call."""
        with self._lock:
            if not self._read:
                try:
                    self._view = read_cf(self.array, executor=executor)
                except ZarrError as e:
                    self._error = e
                self._read = True
            if self._error is not None:
                raise self._error
            return self._view


def _root(arr: Array) -> Group | None:
    """The highest readable group above ``arr`` (coordinates are searched up to it)."""
    depth = len([p for p in arr.path.split("/") if p])
    for up in range(depth, 0, -1):
        try:
            return arr.ancestor(up)
        except ZarrError:
            continue
    return None
