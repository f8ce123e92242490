"""Data types of both formats mapped onto numpy dtypes, with their descriptions.

v3 names a data type abstractly (endianness belongs to the ``bytes`` codec), so v3 types map
to native-order numpy dtypes; v2 names a numpy dtype string, kept as written (``>i4`` stays
big-endian, as zarr-python returns it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import mltypes
from .errors import MetadataError, UnsupportedDataTypeError, UnsupportedFeatureError, short
from .limits import human, limits
from .mltypes import Storage

Kind = Literal["fixed", "str", "bytes"]

_CORE = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16", "complex_float32": "c8", "complex_float64": "c16",
}
_VLEN_STR = {"string", "str", "utf8", "vlen-utf8"}
_VLEN_BYTES = {"bytes", "variable_length_bytes", "binary", "vlen-bytes"}
_RAW = re.compile(r"r[0-9]{1,12}", re.ASCII)
_TIME_UNITS = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"}


@dataclass(frozen=True)
class DataType:
    """``dtype`` is the in-memory numpy dtype; ``kind`` tells fixed-size from variable-length."""

    dtype: np.dtype[Any]
    kind: Kind
    name: str
    #: how the registry's ML and sub-byte types sit in stored bytes (``mltypes``); None for
    #: types whose stored bytes are numpy's own
    storage: Storage | None = None

    @property
    def variable_length(self) -> bool:
        return self.kind != "fixed"


def parse_v3_dtype(spec: Any, where: str) -> DataType:
    name, config = _name_and_config(spec, where)
    if name in _CORE:
        return DataType(np.dtype(_CORE[name]), "fixed", name)
    if name in _VLEN_STR:
        return DataType(np.dtype(object), "str", name)
    if name in _VLEN_BYTES:
        return DataType(np.dtype(object), "bytes", name)
    if _RAW.fullmatch(name):
        bits = int(name[1:])
        if bits <= 0 or bits % 8:
            raise MetadataError(f"data type {short(name)} in {where}: raw bits must be a positive multiple of 8")
        return DataType(_sized(f"V{bits // 8}", bits // 8, name, where), "fixed", name)
    if name[:1] == "r" and name[1:].isdigit():  # superscripts, thousands of digits: a raw type written wrong
        raise MetadataError(f"data type {short(name)} in {where}: raw bits must be 1 to 12 ASCII digits")
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit = config.get("unit")
        scale = config.get("scale_factor", 1)
        if not isinstance(unit, str) or unit not in _TIME_UNITS or not isinstance(scale, int) \
                or isinstance(scale, bool) or not 1 <= scale < 2**31:
            raise MetadataError(f"data type {name} in {where} has a bad configuration {short(config)}")
        code = "M8" if name.endswith("datetime64") else "m8"
        unit = "us" if unit == "μs" else unit
        return DataType(np.dtype(code if unit == "generic" else f"{code}[{scale}{unit}]"), "fixed", name)
    if name in ("fixed_length_utf32", "null_terminated_bytes", "raw_bytes", "fixed_length_bytes"):
        n = config.get("length_bytes")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1 or (name == "fixed_length_utf32" and n % 4):
            raise MetadataError(f"data type {name} in {where} has a bad length_bytes {short(n)}")
        code = {"fixed_length_utf32": f"U{n // 4}", "null_terminated_bytes": f"S{n}"}.get(name, f"V{n}")
        return DataType(_sized(code, n, name, where), "fixed", name)
    if name in ("struct", "structured"):
        return DataType(_struct_dtype(config, where), "fixed", name)
    ml = mltypes.parse(name)
    if ml is not None:
        return DataType(ml[0], "fixed", name, ml[1])
    raise UnsupportedDataTypeError(f"data type {short(name)} in {where} is not supported (supported: "
                                   f"{', '.join(sorted(_CORE))}, string, bytes, r<bits>, numpy.datetime64, "
                                   "numpy.timedelta64, fixed_length_utf32, null_terminated_bytes, struct, "
                                   "bfloat16, float8_*, float6_*, float4_e2m1fn, int2, int4, uint2, uint4, "
                                   "complex_*)")


def _name_and_config(spec: Any, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, dict) and isinstance(spec.get("name"), str):
        config = spec.get("configuration", {})
        if not isinstance(config, dict):
            raise MetadataError(f"data type configuration in {where} must be an object")
        return spec["name"], config
    raise MetadataError(f"data_type in {where} must be a name or an object with a name, found {short(spec)}")


def _struct_dtype(config: dict[str, Any], where: str) -> np.dtype[Any]:
    fields = config.get("fields")
    if not isinstance(fields, list) or not fields:
        raise MetadataError(f"struct data type in {where} needs a non-empty 'fields' list")
    parts: list[tuple[Any, ...]] = []
    for field in fields:
        if isinstance(field, dict):
            fname, ftype = field.get("name"), field.get("data_type")
        elif isinstance(field, list) and len(field) == 2:
            fname, ftype = field
        else:
            raise MetadataError(f"bad struct field {short(field)} in {where}")
        if not isinstance(fname, str) or not fname:
            raise MetadataError(f"struct field name {short(fname)} in {where} must be a non-empty string")
        sub = parse_v3_dtype(ftype, where)
        if sub.variable_length:
            raise MetadataError(f"struct field {short(fname)} in {where} has variable-length type {sub.name}")
        parts.append((fname, sub.dtype))
    try:
        dtype = np.dtype(parts)
    except (TypeError, ValueError, OverflowError, MemoryError) as e:
        raise MetadataError(f"struct data type in {where}: {e}") from e
    return _checked(dtype, "struct", where)


def parse_v2_dtype(spec: Any, where: str) -> DataType:
    try:
        dtype = np.dtype(_v2_descr(spec, 0))
    except (TypeError, ValueError, SyntaxError, OverflowError, MemoryError, RecursionError) as e:
        raise MetadataError(f"dtype {short(spec)} in {where} is not a valid zarr v2 dtype: {e}") from e
    _checked(dtype, short(spec), where)
    if dtype.kind == "O" and dtype.fields is not None:
        raise UnsupportedFeatureError(f"dtype {short(spec)} in {where}: object fields in a structured dtype are not supported")
    if dtype.kind == "O":
        return DataType(dtype, "str", "object")
    return DataType(dtype, "fixed", str(spec) if isinstance(spec, str) else "structured")


def _v2_descr(spec: Any, depth: int) -> Any:
    if isinstance(spec, str):
        if len(spec) > 64:
            raise ValueError("longer than any numpy type string")
        return spec
    if isinstance(spec, list) and depth < 8:
        fields = []
        for f in spec:
            if not isinstance(f, list) or len(f) not in (2, 3) or not isinstance(f[0], str):
                raise ValueError(f"bad field {short(f)}")
            item: tuple[Any, ...] = (f[0], _v2_descr(f[1], depth + 1))
            if len(f) == 3:
                if not isinstance(f[2], list) or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**31
                                                         for n in f[2]) or len(f[2]) > 32:
                    raise ValueError(f"bad field shape {short(f[2])}")
                item += (tuple(f[2]),)
            fields.append(item)
        return fields
    raise ValueError("expected a type string or a list of fields (at most 8 levels deep)")


def _sized(code: str, nbytes: int, name: str, where: str) -> np.dtype[Any]:
    """A dtype whose element size the store chose: refused above the bound before numpy
    allocates anything of that size (a fill value, a chunk)."""
    _check_element_size(nbytes, short(name), where)
    return np.dtype(code)


def _check_element_size(nbytes: int, name: str, where: str) -> None:
    bound = limits().element_bytes
    if nbytes > bound:
        raise UnsupportedFeatureError(f"data type {name} in {where}: elements of {human(nbytes)} "
                                      f"are more than the {human(bound)} allowed")


def _checked(dtype: np.dtype[Any], name: str, where: str) -> np.dtype[Any]:
    _check_element_size(dtype.itemsize, name, where)
    if dtype.itemsize == 0 and dtype.kind in "USV":
        raise UnsupportedFeatureError(f"data type {name} in {where}: zero-length elements ({dtype.str}) "
                                      "cannot be held by numpy, which widens them to one character")
    return dtype

