"""The registry's machine-learning and sub-byte data types, held by ``ml_dtypes``' numpy types.

``bfloat16``, the ``float8_*``/``float6_*``/``float4_*`` formats and ``int2``/``int4``/``uint2``/
``uint4`` decode to ``ml_dtypes`` arrays: their values exactly, as the field's own package
defines them. The ``complex_*`` types whose components numpy lacks decode to ``complex64``
(every such component is exactly a float32), so a reader sees a complex number, not a pair.

A :class:`Storage` says how elements sit in stored bytes: per component, ``bits`` wide in a
byte or two (the ``bytes`` codec ignores the bits above), or packed (``packbits``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

#: real types: registry name -> (ml_dtypes type name, bits per element)
_REAL = {
    "bfloat16": ("bfloat16", 16), "float8_e3m4": ("float8_e3m4", 8), "float8_e4m3": ("float8_e4m3", 8),
    "float8_e4m3fn": ("float8_e4m3fn", 8), "float8_e4m3b11fnuz": ("float8_e4m3b11fnuz", 8),
    "float8_e4m3fnuz": ("float8_e4m3fnuz", 8), "float8_e5m2": ("float8_e5m2", 8),
    "float8_e5m2fnuz": ("float8_e5m2fnuz", 8), "float8_e8m0fnu": ("float8_e8m0fnu", 8),
    "float6_e2m3fn": ("float6_e2m3fn", 6), "float6_e3m2fn": ("float6_e3m2fn", 6),
    "float4_e2m1fn": ("float4_e2m1fn", 4), "int2": ("int2", 2), "int4": ("int4", 4),
    "uint2": ("uint2", 2), "uint4": ("uint4", 4),
}
#: complex types of two such components (complex_float32/64 are numpy's complex64/128)
_COMPLEX = {f"complex_{name}": name for name in _REAL if name.startswith(("float", "bfloat"))
            and name != "float8_e4m3fn"} | {"complex_float16": "float16"}
_SIGNED_INTS = {"int2", "int4"}
#: formats with neither NaN nor infinity: a fill value of "NaN" has nothing to be
_NO_NAN = {"float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"}


@dataclass(frozen=True)
class Storage:
    """One component's stored form: ``dtype`` (in memory), ``bits`` that hold it, signedness
    for sign extension, and how many components an element has (2 for complex)."""

    dtype: np.dtype[Any]
    bits: int
    signed: bool
    components: int
    #: the name of the component type, for messages and fill values
    name: str

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize


def ml_dtype(name: str) -> np.dtype[Any]:
    return np.dtype(getattr(ml_dtypes, _REAL[name][0]))


def parse(name: str) -> tuple[np.dtype[Any], Storage] | None:
    """(in-memory dtype, storage) of a registry name this module holds; None for any other."""
    if name in _REAL:
        dtype = ml_dtype(name)
        return dtype, Storage(dtype, _REAL[name][1], name in _SIGNED_INTS, 1, name)
    if name in _COMPLEX:
        comp = _COMPLEX[name]
        if comp == "float16":
            return np.dtype("c8"), Storage(np.dtype("f2"), 16, False, 2, comp)
        return np.dtype("c8"), Storage(ml_dtype(comp), _REAL[comp][1], False, 2, comp)
    return None


def component_storage(dtype: np.dtype[Any], storage: Storage | None) -> Storage:
    """How ``packbits`` sees an element of any fixed-size numeric type: its components' bits."""
    if storage is not None:
        return storage
    if dtype.kind == "c":
        half = np.dtype(f"f{dtype.itemsize // 2}")
        return Storage(half, 8 * half.itemsize, False, 2, str(half))
    if dtype.kind not in "biuf":
        raise ValueError(f"{dtype} has no fixed bit layout")
    return Storage(dtype, 1 if dtype.kind == "b" else 8 * dtype.itemsize, dtype.kind == "i", 1, str(dtype))


def unsigned(nbytes: int) -> np.dtype[Any]:
    return np.dtype(f"u{nbytes}")


def from_bits(raw: np.ndarray, storage: Storage) -> np.ndarray:
    """Unsigned integers holding each component's low ``bits`` (higher bits ignored) as the
    component type. ``ml_dtypes`` holds a sub-byte value in its byte's low bits (its sign
    included), so masking is all a sub-byte type needs."""
    holder = unsigned(storage.itemsize)
    values = raw.astype(holder, copy=False)
    if storage.bits < 8 * storage.itemsize:
        values = values & holder.type((1 << storage.bits) - 1)
    if storage.dtype.kind == "b":
        return values.astype(bool)
    return np.ascontiguousarray(values).view(storage.dtype)


def combine(components: np.ndarray, storage: Storage, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """Elements from their components in store order (real then imaginary for complex)."""
    if storage.components == 1:
        return components.reshape(shape)
    pairs = components.reshape(*shape, 2).astype(np.float32 if dtype == np.complex64 else np.float64)
    out = np.empty(shape, dtype)
    out.real = pairs[..., 0]
    out.imag = pairs[..., 1]
    return out


def fill_component(storage: Storage, value: Any) -> Any:
    """One component's fill value from its JSON: numbers, the special-value names and ``"0x..."``
    bit patterns, each checked against what the format can hold."""
    dtype = storage.dtype
    name = storage.name
    if name in ("int2", "int4", "uint2", "uint4"):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError("expected an integer")
        info = ml_dtypes.iinfo(dtype)
        if not int(info.min) <= value <= int(info.max):
            raise ValueError(f"out of range for {name}")
        return dtype.type(value)
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16)
        if bits >= 1 << storage.bits:
            raise ValueError(f"bit pattern wider than {storage.bits} bits")
        return from_bits(np.array([bits], unsigned(storage.itemsize)), storage)[0]
    special = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    if isinstance(value, str):
        if value not in special:
            raise ValueError("expected a number, 'NaN', 'Infinity', '-Infinity' or '0x...'")
        number = special[value]
        if np.isnan(number) and name in _NO_NAN:
            raise ValueError(f"{name} has no NaN")
        if np.isinf(number) and (name in _NO_NAN or "fn" in name.split("_")[-1]):
            raise ValueError(f"{name} has no infinity")
        return dtype.type(number)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("expected a number")
    out = np.array(value, np.float64).astype(dtype)
    if np.isfinite(value) and not np.isfinite(out.astype(np.float64)):
        raise ValueError(f"{value} is beyond the range of {name}")
    return out[()]


def widened(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The numpy type a display shows a data type as: float32 for ``ml_dtypes`` types (exact
    for every one of them), the type itself for any other."""
    return np.dtype(np.float32) if is_ml(dtype) else dtype


def is_ml(dtype: np.dtype[Any]) -> bool:
    return dtype.type.__module__.startswith("ml_dtypes")
