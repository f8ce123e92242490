"""Data types of both formats mapped onto numpy dtypes, with their descriptions.

v3 names a data type abstractly (endianness belongs to the ``bytes`` codec), so v3 types map
to native-order numpy dtypes; v2 names a numpy dtype string, kept as written (``>i4`` stays
big-endian, as zarr-python returns it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .errors import MetadataError, UnsupportedFeatureError

Kind = Literal["fixed", "str", "bytes"]

_CORE = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16",
}
_VLEN_STR = {"string", "str", "utf8", "vlen-utf8"}
_VLEN_BYTES = {"bytes", "variable_length_bytes", "binary", "vlen-bytes"}
_TIME_UNITS = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"}


@dataclass(frozen=True)
class DataType:
    """``dtype`` is the in-memory numpy dtype; ``kind`` tells fixed-size from variable-length."""

    dtype: np.dtype[Any]
    kind: Kind
    name: str

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
    if len(name) > 1 and name[0] == "r" and name[1:].isdigit():
        bits = int(name[1:])
        if bits <= 0 or bits % 8:
            raise MetadataError(f"data type {name!r} in {where}: raw bits must be a positive multiple of 8")
        return DataType(np.dtype(f"V{bits // 8}"), "fixed", name)
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit = config.get("unit")
        scale = config.get("scale_factor", 1)
        if unit not in _TIME_UNITS or not isinstance(scale, int) or not 1 <= scale < 2**31:
            raise MetadataError(f"data type {name} in {where} has a bad configuration {config!r}")
        code = "M8" if name.endswith("datetime64") else "m8"
        unit = "us" if unit == "μs" else unit
        return DataType(np.dtype(code if unit == "generic" else f"{code}[{scale}{unit}]"), "fixed", name)
    if name in ("fixed_length_utf32", "null_terminated_bytes", "raw_bytes", "fixed_length_bytes"):
        n = config.get("length_bytes")
        if not isinstance(n, int) or n < 0 or (name == "fixed_length_utf32" and n % 4):
            raise MetadataError(f"data type {name} in {where} has a bad length_bytes {n!r}")
        code = {"fixed_length_utf32": f"U{n // 4}", "null_terminated_bytes": f"S{n}"}.get(name, f"V{n}")
        return DataType(np.dtype(code), "fixed", name)
    if name in ("struct", "structured"):
        return DataType(_struct_dtype(config, where), "fixed", name)
    raise UnsupportedFeatureError(f"unknown data type {name!r} in {where}")


def _name_and_config(spec: Any, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, dict) and isinstance(spec.get("name"), str):
        config = spec.get("configuration", {})
        if not isinstance(config, dict):
            raise MetadataError(f"data type configuration in {where} must be an object")
        return spec["name"], config
    raise MetadataError(f"data_type in {where} must be a name or an object with a name, found {spec!r}")


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
            raise MetadataError(f"bad struct field {field!r} in {where}")
        if not isinstance(fname, str) or not fname:
            raise MetadataError(f"struct field name {fname!r} in {where} must be a non-empty string")
        sub = parse_v3_dtype(ftype, where)
        if sub.variable_length:
            raise MetadataError(f"struct field {fname!r} in {where} has variable-length type {sub.name}")
        parts.append((fname, sub.dtype))
    try:
        return np.dtype(parts)
    except (TypeError, ValueError) as e:
        raise MetadataError(f"struct data type in {where}: {e}") from e


def parse_v2_dtype(spec: Any, where: str) -> DataType:
    try:
        dtype = np.dtype(_v2_descr(spec))
    except (TypeError, ValueError, SyntaxError) as e:
        raise MetadataError(f"dtype {spec!r} in {where} is not a valid zarr v2 dtype: {e}") from e
    if dtype.kind == "O":
        return DataType(dtype, "str", "object")
    return DataType(dtype, "fixed", str(spec) if isinstance(spec, str) else "structured")


def _v2_descr(spec: Any) -> Any:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, list):
        fields = []
        for f in spec:
            if not isinstance(f, list) or len(f) not in (2, 3) or not isinstance(f[0], str):
                raise ValueError(f"bad field {f!r}")
            item: tuple[Any, ...] = (f[0], _v2_descr(f[1]))
            if len(f) == 3:
                item += (tuple(f[2]),)
            fields.append(item)
        return fields
    raise ValueError("expected a string or a list of fields")
