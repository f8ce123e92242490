"""Which arrays an export writes CF-decoded, and how.

``zarrview export`` writes what xarray would give for the same plane (masked values as NaN,
packed integers unpacked) so a script can compare the two; ``--raw`` writes the stored values.
But a Zarr v2 ``fill_value`` is only CF's ``_FillValue`` in a store written under CF: in a plain
v2 array (microscopy, zarr-python defaults) a fill value of 0 marks unwritten chunks, and masking
every 0 would wreck the data. So decoding applies where the array says it follows CF: a coding
attribute, or named dimensions the way xarray and netCDF-C name them in v2. In v3 the fill value
is never taken for ``_FillValue`` (``cf.values``), so an attribute is what it takes there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .cf.dims import read_dimensions
from .cf.values import ValueCoding, value_coding

if TYPE_CHECKING:
    from ..zarrlib import Array

#: the attributes CF decoding acts on (CF 2.5.1, 8.1; netCDF's _Unsigned)
CODING_KEYS = frozenset(("_FillValue", "missing_value", "valid_min", "valid_max", "valid_range",
                         "scale_factor", "add_offset", "_Unsigned"))


def follows_cf(arr: Array) -> bool:
    """Whether ``arr`` asks for CF decoding: a coding attribute, or (v2) dimension names from
    xarray's ``_ARRAY_DIMENSIONS`` or NCZarr, whose ``fill_value`` then means ``_FillValue``."""
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    if any(key in attrs for key in CODING_KEYS):
        return True
    return arr.zarr_format == 2 and read_dimensions(arr).source != ""


def plane_coding(arr: Array) -> ValueCoding | None:
    """The coding an export applies to ``arr``: None where it writes the stored values (no CF,
    or nothing to decode and nothing to say); else a coding whose ``notes`` name bad attributes."""
    if not follows_cf(arr):
        return None
    coding = value_coding(arr)
    return coding if coding.active or coding.notes else None


def decoded(arr: Array, data: np.ndarray) -> np.ndarray:
    """``data`` read from ``arr`` as CF values (``plane_coding``), or as it is where none applies."""
    coding = plane_coding(arr)
    return data if coding is None else coding.decode(data, inplace=True)


def coding_text(coding: ValueCoding | None) -> str:
    """One line for ``zarrview info``: what decoding does to the stored values."""
    if coding is None or not coding.active:
        return "none: values are used as stored"
    parts: list[str] = []
    if coding.unsigned:
        parts.append("read as unsigned (_Unsigned)")
    if coding.fill_values:
        parts.append("masked where " + " or ".join(_number(f) for f in coding.fill_values))
    if coding.valid_min is not None or coding.valid_max is not None:
        lo = "" if coding.valid_min is None else _number(coding.valid_min)
        hi = "" if coding.valid_max is None else _number(coding.valid_max)
        parts.append(f"valid {lo} … {hi}".replace("  ", " "))
    if coding.scale_factor is not None or coding.add_offset is not None:
        scale = 1.0 if coding.scale_factor is None else coding.scale_factor
        offset = 0.0 if coding.add_offset is None else coding.add_offset
        parts.append(f"unpacked as stored × {_number(scale)} + {_number(offset)}")
    return "; ".join(parts) + f" → {coding.decoded_dtype}"


def _number(x: float | int) -> str:
    return f"{x:.10g}" if isinstance(x, float) else str(x)
