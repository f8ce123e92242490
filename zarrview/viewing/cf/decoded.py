"""An array's values as every view shows them: the one decoding the table, the line, the readout
and the export share with the image.

The image decodes numbers (``values.ValueCoding``: fill values masked, packing undone); an array
whose ``units`` read ``"<unit> since <date>"`` holds times, which xarray decodes to dates. A table
or a CSV of ``time`` that shows ``8760`` where the slider says ``2001-03-04 00:00`` shows two
datasets, so both go through :class:`Decoding`: numbers through the coding, times through
``time.time_axis`` (every CF calendar; the fill values it masks are xarray's). Nothing here reads
the store: the attributes are the array's own, and each call decodes the stored values it is
given (on a worker).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ...zarrlib import Array
from .time import TimeAxis, time_attrs, time_axis
from .values import ValueCoding, value_coding

#: a position on a plot's axis in words ("2001-03-04 06:00")
Format = Callable[[float], str]
#: more decimals than this in a packing's numbers: its values are shown as any float
MAX_DECIMALS = 12


@dataclass(frozen=True, eq=False)
class Decoding:
    """How the stored values of one array become the values a person reads."""

    coding: ValueCoding
    #: the attributes that make the values times (``units`` "<unit> since <date>", calendar, fill
    #: values), as ``time_axis`` reads them; None for values that are not times
    times: Mapping[str, Any] | None = None

    @property
    def active(self) -> bool:
        """Whether the values read differ from the values stored."""
        return self.times is not None or self.coding.active

    @cached_property
    def decimals(self) -> int | None:
        """The decimals unpacked values are exact to (those of ``scale_factor`` and ``add_offset``:
        ``0.001`` gives 3), or None for values that are not packed."""
        coding = self.coding
        if coding.scale_factor is None and coding.add_offset is None:
            return None
        parts = [np.format_float_positional(float(x), trim="-") for x in (coding.scale_factor or 1.0,
                                                                          coding.add_offset or 0.0)]
        d = max(len(p.partition(".")[2]) for p in parts)
        return d if d <= MAX_DECIMALS else None

    def text(self, value: Any) -> str | None:
        """An unpacked value as the packing wrote it (``14.466``, not the float sum's
        ``14.466000000000001``), or None where the value is no packed float (formatted as any)."""
        d = self.decimals
        if d is None or not isinstance(value, float | np.floating) or not np.isfinite(value):
            return None
        return np.format_float_positional(float(value), precision=d, unique=False, trim="-")

    def time_axis(self, raw: np.ndarray) -> TimeAxis | None:
        """The times of the stored values ``raw`` (flattened), or None for values that are no times
        or attributes that cannot be understood (the stored values are shown then)."""
        if self.times is None:
            return None
        return time_axis(np.asarray(raw).reshape(-1), self.times)[0]

    def values(self, raw: np.ndarray, *, text: bool = False, inplace: bool = False) -> np.ndarray:
        """``raw`` as xarray decodes it: numbers masked (NaN) and unpacked; times as datetime64
        (NaT where missing; in nanoseconds where they fit them, as xarray gives them) in a
        Gregorian calendar and as their labels ("2001-03-04 06:00", "—" where missing) in the
        others, or with ``text`` in every calendar (a CSV, a table)."""
        raw = np.asarray(raw)
        axis = self.time_axis(raw)
        if axis is None:
            return self.coding.decode(raw, inplace=inplace)
        dates = None if text else axis.datetimes()
        out = dates if dates is not None else np.array(axis.labels(), dtype=object)
        return out.reshape(raw.shape)

    def plotted(self, raw: np.ndarray) -> tuple[np.ndarray, Format | None]:
        """float64 positions of the decoded values on a plot's axis (NaN where missing) and the
        words for a position: times as days since their ``units``' date, named by their calendar's
        dates; numbers as themselves (no format)."""
        raw = np.asarray(raw)
        axis = self.time_axis(raw)
        if axis is not None:
            return axis.numeric().reshape(raw.shape), axis.format
        values = self.coding.decode(raw)
        if values.dtype.kind not in "iuf":
            raise TypeError(f"{values.dtype} values are not numbers to plot")
        return np.asarray(values, dtype=np.float64), None


def decoding_of(arr: Array) -> Decoding:
    """The decoding of ``arr`` from its attributes, dtype and fill value (no I/O)."""
    coding = value_coding(arr)
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    units = attrs.get("units")
    timed = isinstance(units, str) and " since " in f" {units.lower()} " and np.dtype(arr.dtype).kind in "iuf"
    return Decoding(coding, time_attrs(arr, attrs) if timed else None)
