"""Values as CF defines them (CF 2.5.1 and 8.1): what a stored number means before it is drawn.

A packed ``t2m`` drawn as stored is washed out by its ``_FillValue``; drawn as xarray decodes it,
it is a temperature. So the rules here are xarray's, where a store can only be read one way
(which of a Zarr v2 ``fill_value`` or a v3 ``_FillValue`` attribute is the fill, the base64 of a
float fill, ``_Unsigned`` before masking, float32 or float64 for the result), and the spec's
where xarray does not go (``valid_min``/``valid_max``/``valid_range``). Masks are taken on the
stored values, before unpacking. A bad attribute is left out with a note naming it and its value;
the others still apply, and with nothing left the stored values come back as they are.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...zarrlib.errors import short

if TYPE_CHECKING:
    from ...zarrlib import Array

Number = float | int

#: dtype kinds that CF decoding applies to (bool, complex and text arrays are shown as stored)
_NUMERIC = "iuf"


@dataclass(frozen=True)
class ValueCoding:
    """How one array's stored values become CF values. Thresholds are in stored units (a signed
    ``_FillValue`` of an ``_Unsigned`` array stays negative here; ``mask`` reads it as unsigned)."""

    fill_values: tuple[Number, ...]
    valid_min: float | None
    valid_max: float | None
    scale_factor: float | None
    add_offset: float | None
    unsigned: bool
    decoded_dtype: np.dtype[Any]
    notes: tuple[str, ...]
    #: the array's dtype, where known: ``active`` compares the result's dtype with it
    stored_dtype: np.dtype[Any] | None = None

    @property
    def active(self) -> bool:
        """Whether ``decode`` changes anything (a NaN fill of a float array changes nothing)."""
        fills = any(not _is_nan(f) for f in self.fill_values)
        retyped = self.stored_dtype is not None and self.decoded_dtype != self.stored_dtype
        return (fills or retyped or self.unsigned or self.valid_min is not None or self.valid_max is not None
                or self.scale_factor is not None or self.add_offset is not None)

    def mask(self, raw: np.ndarray) -> np.ndarray:
        """True where a value is missing: equal to a fill value (NaN where a fill is NaN) or
        outside the valid range, judged on the stored values."""
        raw = np.asarray(raw)
        masked = self._masked(self._stored_view(raw)) if raw.dtype.kind in _NUMERIC else None
        return np.zeros(raw.shape, bool) if masked is None else masked

    def decode(self, raw: np.ndarray, *, inplace: bool = False) -> np.ndarray:
        """Masked values as NaN, then ``raw * scale_factor + add_offset``, in ``decoded_dtype``.
        ``raw`` comes back itself when there is nothing to do, as an unsigned view when
        ``_Unsigned`` is all there is, else as one new array (with ``inplace``, ``raw`` itself
        where it already has the decoded dtype)."""
        raw = np.asarray(raw)
        if not self.active or raw.dtype.kind not in _NUMERIC:
            return raw
        data = self._stored_view(raw)
        masked = self._masked(data)
        target = self.decoded_dtype
        if target.kind != "f":
            return data  # _Unsigned alone: a view, no copy
        if inplace and data.dtype == target and data.flags.writeable:
            out = data
        else:
            out = data.astype(target)
        if self.scale_factor is not None:
            np.multiply(out, self.scale_factor, out=out)
        if self.add_offset is not None:
            np.add(out, self.add_offset, out=out)
        if masked is not None:
            np.copyto(out, np.nan, where=masked)
        return out

    def decode_scalar(self, raw: Any) -> float | None:
        """One decoded value for the readout: None where it is masked or not a number."""
        value = np.asarray(raw)
        if value.dtype.kind not in _NUMERIC:
            return None
        stored = self.stored_dtype
        if stored is not None and value.dtype != stored and (value.dtype.kind == "f") == (stored.kind == "f"):
            value = value.astype(stored)  # a Python number given for a stored one
        out = self.decode(value.reshape(1))[0]
        if out.dtype.kind == "f":
            return None if math.isnan(out) else float(out)
        return int(out)

    def _stored_view(self, raw: np.ndarray) -> np.ndarray:
        if self.unsigned and raw.dtype.kind == "i":
            return raw.view(raw.dtype.str.replace("i", "u"))
        return raw

    def _masked(self, data: np.ndarray) -> np.ndarray | None:
        """The mask of ``data`` (already seen as unsigned where ``_Unsigned`` says so), or None
        where nothing can be masked."""
        masked: np.ndarray | None = None

        def add(hit: np.ndarray) -> None:
            nonlocal masked
            masked = hit if masked is None else np.logical_or(masked, hit, out=masked)

        bits = data.dtype.itemsize * 8
        for fill in self.fill_values:
            if _is_nan(fill):
                if data.dtype.kind == "f":
                    add(np.isnan(data))
            elif _fits(fill, data.dtype):
                add(data == fill)
            elif self.unsigned and data.dtype.kind == "u" and _fits(fill + (1 << bits), data.dtype):
                add(data == fill + (1 << bits))  # a signed stored fill, read as unsigned
        if self.valid_min is not None:
            add(data < self.as_read(self.valid_min, data.dtype))
        if self.valid_max is not None:
            add(data > self.as_read(self.valid_max, data.dtype))
        return masked

    def as_read(self, bound: float, dtype: np.dtype[Any]) -> float:
        """A bound of an ``_Unsigned`` array written as a negative signed value, read as unsigned."""
        bits = dtype.itemsize * 8
        signed = -(1 << (bits - 1)) <= bound < 0 and float(bound).is_integer()
        return bound + (1 << bits) if self.unsigned and dtype.kind == "u" and signed else bound


def value_coding(arr: Array) -> ValueCoding:
    """The CF coding of ``arr`` from its attributes, dtype, fill value and format. Never raises:
    what cannot be used is left out and described in ``notes``."""
    dtype = np.dtype(arr.dtype)
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    notes: list[str] = []
    if dtype.kind not in _NUMERIC:
        return ValueCoding((), None, None, None, None, False, dtype, (), dtype)
    unsigned = _unsigned(attrs, dtype, notes)
    read_dtype = np.dtype(f"u{dtype.itemsize}") if unsigned else dtype
    fills = _fill_values(arr, attrs, dtype, unsigned, notes)
    vmin, vmax = _valid_bounds(attrs, notes)
    scale, offset = _packing(attrs, notes)
    if scale is not None or offset is not None:
        decoded = _unpacked_dtype(read_dtype, fills)
    elif fills or vmin is not None or vmax is not None:
        decoded = _promoted(read_dtype)  # a float stays itself: a NaN fill of a float changes nothing
    else:
        decoded = read_dtype
    return ValueCoding(tuple(fills), vmin, vmax, scale, offset, unsigned, decoded, tuple(notes), dtype)


def _unpacked_dtype(read_dtype: np.dtype[Any], fills: list[Number]) -> np.dtype[Any]:
    """The dtype xarray unpacks to. Its rule (``_choose_float_dtype``) takes the type of
    ``scale_factor``/``add_offset``, and numbers read from JSON are doubles, so it is float64,
    with one exception in the order xarray decodes: a fill value that masks nothing (NaN, the
    fill of a float array written by xarray) leaves masking to keep the stored float type, and
    unpacking then keeps the type masking chose, so a float32 array with ``scale_factor`` and a
    NaN ``_FillValue`` stays float32."""
    if read_dtype.kind == "f" and fills and all(_is_nan(f) for f in fills):
        return read_dtype
    return np.dtype(np.float64)


def initial_range(arr: Array) -> tuple[float, float] | None:
    """The contrast to start from, in decoded units: ``actual_range`` (CF gives it unpacked),
    else ``valid_range`` or ``valid_min`` and ``valid_max`` unpacked; None where there is none or
    it is not an increasing pair of finite numbers."""
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    actual = _pair(attrs.get("actual_range"))
    if actual is not None:
        return actual if actual[0] < actual[1] else None
    coding = value_coding(arr)
    if coding.valid_min is None or coding.valid_max is None:
        return None
    ends = [coding.as_read(b, np.dtype(f"u{arr.dtype.itemsize}")) if coding.unsigned else b
            for b in (coding.valid_min, coding.valid_max)]
    scale = 1.0 if coding.scale_factor is None else coding.scale_factor
    offset = 0.0 if coding.add_offset is None else coding.add_offset
    lo, hi = sorted(float(b) * scale + offset for b in ends)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo < hi else None


def value_title(arr: Array) -> tuple[str, str | None]:
    """(``long_name``, else ``standard_name``, else the array's name; ``units`` or None)."""
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    title = _text(attrs.get("long_name")) or _text(attrs.get("standard_name")) or arr.name or arr.path
    return title, _text(attrs.get("units"))


# -- attributes ---------------------------------------------------------------------------------


def _fill_values(arr: Array, attrs: dict[str, Any], dtype: np.dtype[Any], unsigned: bool,
                 notes: list[str]) -> list[Number]:
    """``_FillValue`` then ``missing_value``, as xarray finds them: in Zarr v2 the array's
    ``fill_value`` (the attribute only where that is null), in v3 the attribute, a float's
    being the base64 of a little-endian double. A v2 ``fill_value`` counts only in a dataset
    xarray can open (``_ARRAY_DIMENSIONS`` present): zarr-python gives every other v2 array a
    fill value of 0, which is data there, not a mark of missing values."""
    found: list[tuple[str, Any]] = []
    if arr.zarr_format == 2 and arr.fill_value is not None and "_ARRAY_DIMENSIONS" in attrs:
        found.append(("fill_value", arr.fill_value))
    elif "_FillValue" in attrs:
        value = attrs["_FillValue"]
        if arr.zarr_format != 2 and dtype.kind == "f":
            value = _base64_double(value, notes)
        if value is not None:
            found.append(("_FillValue", value))
    if "missing_value" in attrs:
        value = attrs["missing_value"]
        values = value if isinstance(value, list) and value else [value]
        found += [("missing_value", v) for v in values]
    fills: list[Number] = []
    for name, value in found:
        fill = _fill_number(name, value, dtype, unsigned, notes)
        if fill is not None and not any(_same(fill, f) for f in fills):
            fills.append(fill)
    return fills


def _base64_double(value: Any, notes: list[str]) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        notes.append(f"_FillValue {short(value)} is a plain number, not xarray's base64 encoding of a float "
                     "(xarray cannot open it): used as it is")
        return value
    try:
        if not isinstance(value, (str, bytes)):
            raise TypeError
        return struct.unpack("<d", base64.standard_b64decode(value))[0]
    except (TypeError, ValueError, binascii.Error, struct.error):
        notes.append(f"_FillValue {short(value)} is not xarray's base64 encoding of a float: no fill value")
        return None


def _fill_number(name: str, value: Any, dtype: np.dtype[Any], unsigned: bool, notes: list[str]) -> Number | None:
    number = _number(value)
    if number is None:
        notes.append(f"{name} {short(value)} is not a number: not used to mask")
        return None
    if dtype.kind == "f":
        return float(number)
    if _is_nan(number):
        notes.append(f"{name} {short(value)} cannot match a value of an integer array ({dtype}): not used to mask")
        return None
    if not (isinstance(number, int) or number.is_integer()) or not (_fits(int(number), dtype) or (
            unsigned and _fits(int(number), np.dtype(f"u{dtype.itemsize}")))):
        notes.append(f"{name} {short(value)} is not a value of {dtype}: not used to mask")
        return None
    return int(number)


def _unsigned(attrs: dict[str, Any], dtype: np.dtype[Any], notes: list[str]) -> bool:
    if "_Unsigned" not in attrs:
        return False
    value = attrs["_Unsigned"]
    flag = value.strip().lower() if isinstance(value, str) else value
    if flag not in ("true", "false", True, False):
        notes.append(f"_Unsigned {short(value)} is neither 'true' nor 'false': ignored")
        return False
    if dtype.kind not in "iu":
        notes.append(f"_Unsigned {short(value)} is for integer arrays, not {dtype}: ignored")
        return False
    if dtype.kind == "u" and flag in ("false", False):
        notes.append(f"_Unsigned {short(value)} on an unsigned array ({dtype}): values read as unsigned")
    return dtype.kind == "i" and flag in ("true", True)


def _valid_bounds(attrs: dict[str, Any], notes: list[str]) -> tuple[float | None, float | None]:
    if "valid_range" in attrs:
        pair = _pair(attrs["valid_range"])
        if pair is None or pair[0] > pair[1]:
            notes.append(f"valid_range {short(attrs['valid_range'])} is not an increasing pair of numbers: ignored")
            return None, None
        if "valid_min" in attrs or "valid_max" in attrs:
            notes.append("valid_min/valid_max ignored: valid_range is given")
        return pair
    vmin, vmax = (_finite(attrs, name, "ignored", notes) for name in ("valid_min", "valid_max"))
    if vmin is not None and vmax is not None and vmin > vmax:
        notes.append(f"valid_min {short(attrs['valid_min'])} is above valid_max {short(attrs['valid_max'])}: "
                     "both ignored")
        return None, None
    return vmin, vmax


def _packing(attrs: dict[str, Any], notes: list[str]) -> tuple[float | None, float | None]:
    """scale_factor and add_offset, or neither where one of them is bad (half a transform would
    show numbers in no unit at all)."""
    names = ("scale_factor", "add_offset")
    scale, offset = (_finite(attrs, name, "values shown as stored, not unpacked", notes) for name in names)
    if any(name in attrs and value is None for name, value in zip(names, (scale, offset))):
        return None, None
    return (None if scale is None else float(scale)), (None if offset is None else float(offset))


def _finite(attrs: dict[str, Any], name: str, otherwise: str, notes: list[str]) -> Number | None:
    """``attrs[name]`` as a finite number; None where it is absent, or, with a note saying
    ``otherwise``, where it is no such number."""
    if name not in attrs:
        return None
    number = _number(attrs[name])
    if number is None or not math.isfinite(number):
        notes.append(f"{name} {short(attrs[name])} is not a number: {otherwise}")
        return None
    return number


# -- small helpers ------------------------------------------------------------------------------


def _number(value: Any) -> Number | None:
    """A JSON number (or a list holding one, as netCDF writes attributes), never a bool."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        whole = int(value)
        # beyond 64 bits no integer array holds it: as a float, or nothing where even that overflows
        return whole if -(1 << 64) < whole < (1 << 64) else (None if abs(whole) > 1e308 else float(whole))
    if isinstance(value, (float, np.floating)):
        return float(value)
    return None


def _pair(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    numbers = [_number(v) for v in value]
    if any(n is None or not math.isfinite(n) for n in numbers):
        return None
    return float(numbers[0]), float(numbers[1])  # type: ignore[arg-type]


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _is_nan(value: Number) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _same(a: Number, b: Number) -> bool:
    return a == b or (_is_nan(a) and _is_nan(b))


def _fits(value: Number, dtype: np.dtype[Any]) -> bool:
    """Whether ``value`` can be stored in an integer dtype exactly (any number fits a float)."""
    if dtype.kind == "f":
        return True
    info = np.iinfo(dtype)
    return (isinstance(value, int) or value.is_integer()) and info.min <= value <= info.max


def _promoted(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype that can hold NaN, as xarray promotes: floats stay, integers of up to 16 bits
    become float32 (exact up to 24 bits), wider ones float64."""
    if dtype.kind == "f":
        return dtype
    return np.dtype(np.float32 if dtype.itemsize <= 2 else np.float64)
