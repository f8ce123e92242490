"""Fill values from their JSON encodings to numpy scalars.

Both formats spell special floats as strings; v3 adds raw bit patterns (``"0x7fc00000"``)
and byte lists; v2 encodes byte-like and structured fills as base64. A missing chunk is
painted with the value parsed here, so getting a bit pattern wrong would be silent: each
branch is exact.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from . import mltypes
from .dtypes import DataType
from .errors import MetadataError, short

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def parse_v3_fill(dt: DataType, value: Any, where: str) -> Any:
    if dt.kind == "str":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise MetadataError(f"fill_value {short(value)} in {where} must be a string for {dt.name}")
        return value
    if dt.kind == "bytes":
        return _bytes_value(value, where, allow_text=False) if value is not None else b""
    if value is None:
        return np.zeros((), dt.dtype)[()]
    if dt.storage is not None:
        return _ml_scalar(dt, value, where)
    return _scalar(dt.dtype, value, where, v3=True)


def _ml_scalar(dt: DataType, value: Any, where: str) -> Any:
    """A fill value of an ML or sub-byte type: a number of its own, or a [real, imaginary]
    pair for its complex form."""
    storage = dt.storage
    assert storage is not None
    try:
        if storage.components == 1:
            return mltypes.fill_component(storage, value)
        if not (isinstance(value, (list, tuple)) and len(value) == 2):
            raise ValueError("expected a [real, imaginary] pair")
        re, im = (float(mltypes.fill_component(storage, v)) for v in value)
        return dt.dtype.type(complex(re, im))
    except (ValueError, TypeError, OverflowError) as e:
        raise MetadataError(f"fill_value {short(value)} in {where} is not valid for {dt.name}: {e}") from e


def parse_v2_fill(dt: DataType, value: Any, where: str) -> Any:
    """None stays None: v2's ``null`` means 'no fill value' (read as zeros / empty)."""
    if value is None:
        return None
    if dt.kind == "bytes":
        if isinstance(value, str):
            return _bytes_value(value, where, allow_text=True)
        if isinstance(value, int):
            return b""  # zarr 2 wrote 0 for object arrays: no meaningful bytes value
    if dt.kind != "fixed":
        if isinstance(value, (str, int)):
            return value if isinstance(value, str) else str(value)
        raise MetadataError(f"fill_value {short(value)} in {where} is not valid for an object array")
    return _scalar(dt.dtype, value, where, v3=False)


def fill_array_value(dt: DataType, fill: Any) -> Any:
    """The value to paint missing chunks with (None becomes zero / empty)."""
    if fill is not None:
        return fill
    if dt.kind == "str":
        return ""
    if dt.kind == "bytes":
        return b""
    if dt.dtype.kind == "O":
        return None
    return np.zeros((), dt.dtype)[()]


def _scalar(dtype: np.dtype[Any], value: Any, where: str, v3: bool) -> Any:
    kind = dtype.kind
    try:
        if kind == "b":
            if not isinstance(value, (bool, int)):
                raise ValueError("expected true or false")
            return np.bool_(bool(value))
        if kind in "iu":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError("expected an integer")
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise ValueError(f"out of range for {dtype}")
            return dtype.type(value)
        if kind == "f":
            return _float(dtype, value)
        if kind == "c":
            if isinstance(value, (list, tuple)) and len(value) == 2:
                half = np.dtype(f"f{dtype.itemsize // 2}")
                return dtype.type(complex(_float(half, value[0]), _float(half, value[1])))
            if isinstance(value, (int, float)) and not v3:
                return dtype.type(value)
            raise ValueError("expected a [real, imaginary] pair")
        if kind in "mM":
            native = dtype.newbyteorder("=")
            if value == "NaT":
                return np.array(np.iinfo(np.int64).min, "i8").view(native).astype(dtype)[()]
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError("expected an integer or 'NaT'")
            return np.array(value, "i8").view(native).astype(dtype)[()]
        if kind == "U":
            if not isinstance(value, str):
                raise ValueError("expected a string")
            if len(value) > dtype.itemsize // 4:
                raise ValueError(f"longer than {dtype.itemsize // 4} characters")
            return np.array(value, dtype)[()]
        if kind == "S":
            return np.array(_bytes_value(value, where, allow_text=True), dtype)[()]
        if kind == "V" and dtype.names is None:
            raw = _bytes_value(value, where, allow_text=False)
            if len(raw) != dtype.itemsize:
                raise ValueError(f"{len(raw)} bytes for a {dtype.itemsize}-byte value")
            return np.frombuffer(raw, dtype)[0]
        if dtype.names is not None:
            return _structured(dtype, value, where, v3)
    except (ValueError, TypeError, OverflowError) as e:
        raise MetadataError(f"fill_value {short(value)} in {where} is not valid for {dtype}: {e}") from e
    raise MetadataError(f"fill_value {short(value)} in {where}: unsupported dtype {dtype}")


def _float(dtype: np.dtype[Any], value: Any) -> Any:
    if isinstance(value, str):
        if value in _SPECIAL:
            return dtype.type(_SPECIAL[value])
        if value.startswith("0x"):
            bits = int(value, 16)
            if bits >= 1 << (8 * dtype.itemsize):
                raise ValueError(f"bit pattern wider than {dtype.itemsize} bytes")
            return np.array(bits, f"u{dtype.itemsize}").view(dtype.newbyteorder("="))[()]
        raise ValueError("expected a number, 'NaN', 'Infinity', '-Infinity' or '0x...'")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("expected a number")
    return dtype.type(value)


def _bytes_value(value: Any, where: str, allow_text: bool) -> bytes:
    if isinstance(value, list):
        if not all(isinstance(b, int) and 0 <= b < 256 for b in value):
            raise MetadataError(f"fill_value {short(value)} in {where}: byte values must be 0-255")
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as e:
            if allow_text:
                return value.encode("utf-8")
            raise MetadataError(f"fill_value {short(value)} in {where} is not base64: {e}") from e
    if isinstance(value, int) and allow_text:
        return str(value).encode()
    raise MetadataError(f"fill_value {short(value)} in {where} must be base64 text or a list of bytes")


def _structured(dtype: np.dtype[Any], value: Any, where: str, v3: bool) -> Any:
    if isinstance(value, str):
        raw = _bytes_value(value, where, allow_text=False)
        if len(raw) != dtype.itemsize:
            raise ValueError(f"{len(raw)} bytes for a {dtype.itemsize}-byte record")
        return np.frombuffer(raw, dtype.newbyteorder("<") if v3 else dtype)[0].astype(dtype)
    if isinstance(value, dict):
        out = np.zeros((), dtype)
        assert dtype.names is not None and dtype.fields is not None
        for name in dtype.names:
            if name not in value:
                raise ValueError(f"field {short(name)} missing")
            sub = dtype.fields[name][0]
            out[name] = _scalar(sub, value[name], where, v3)
        return out[()]
    if isinstance(value, (list, tuple)) and dtype.fields is not None and len(value) == len(dtype.names or ()):
        out = np.zeros((), dtype)
        for name, v in zip(dtype.names or (), value):
            out[name] = _scalar(dtype.fields[name][0], v, where, v3)
        return out[()]
    if value == 0:
        return np.zeros((), dtype)[()]
    raise ValueError("expected an object of fields or base64 bytes")
