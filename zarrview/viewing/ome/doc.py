"""Where a group's OME metadata is, which version it claims, and how problems are recorded.

0.4 keeps its keys at the top of ``.zattrs`` (a version per ``multiscales`` entry, ``plate``,
``well``, ``image-label``); 0.5 keeps everything under ``attributes["ome"]`` with
``ome["version"] == "0.5"``; 0.6 too, with ``"0.6"``, ``"0.6rc0"`` or a pre-release dialect
(``"0.6.dev2"`` ... ``"0.6.dev4"``, read with its own spellings). Versions after 0.6 are read as
0.6 with a warning; an unknown version as 0.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..conventions.declared import ome_attributes
from .flavour import of as writer_of
from .flavour import plain_version
from .model import Problem, Severity

#: keys that make a group OME metadata (``series`` alone does not: it belongs to the OME group)
OME_KEYS = ("multiscales", "plate", "well", "labels", "image-label", "bioformats2raw.layout", "scene")
#: the 0.6 versions written with the specification's final spellings; other 0.6 tags are dialects
V06_FINAL = ("0.6", "0.6rc0")


@dataclass
class Reporter:
    """Collects the problems of one group; paths are JSON paths below ``prefix``."""

    node: str
    prefix: str
    problems: list[Problem] = field(default_factory=list)

    def at(self, path: str) -> str:
        if not path:
            return self.prefix
        return self.prefix + ("" if path.startswith("[") else ".") + path

    def add(self, severity: Severity, path: str, message: str) -> None:
        self.problems.append(Problem(severity, self.node, self.at(path), message))

    def error(self, path: str, message: str) -> None:
        self.add("error", path, message)

    def warning(self, path: str, message: str) -> None:
        self.add("warning", path, message)

    # -- typed access: a value of the wrong type is reported and read as missing ---------------
    def _get(self, obj: dict[str, Any], key: str, path: str, required: bool, ok: Any, what: str) -> Any:
        value = obj.get(key)
        where = f"{path}.{key}" if path else key
        if value is None:
            if required:
                self.error(where, f'"{key}" is required and missing')
            return None
        if not ok(value):
            shown = kind_of(value) if what in ("a list", "a string") else repr(value)
            self.error(where, f'"{key}" must be {what}, not {shown}')
            return None
        return value

    def get_list(self, obj: dict[str, Any], key: str, path: str, *, required: bool = False) -> list[Any] | None:
        return self._get(obj, key, path, required, lambda v: isinstance(v, list), "a list")

    def get_str(self, obj: dict[str, Any], key: str, path: str, *, required: bool = False) -> str | None:
        return self._get(obj, key, path, required, lambda v: isinstance(v, str), "a string")

    def get_int(self, obj: dict[str, Any], key: str, path: str, *, required: bool = False,
                minimum: int | None = None) -> int | None:
        value = self._get(obj, key, path, required, is_int, "an integer")
        if value is not None and minimum is not None and value < minimum:
            self.error(f"{path}.{key}" if path else key, f'"{key}" must be at least {minimum}, not {value}')
            return None
        return value

def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> TypeGuard[int | float]:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


@dataclass(frozen=True)
class Namespace:
    """A group's OME metadata: the object the keys are in, its version and its JSON path."""

    version: str           # "0.4", "0.5" or "0.6" (what the reader follows)
    declared: str | None   # the version the document states, if any
    keys: dict[str, Any]   # the object holding "multiscales", "plate", ...
    prefix: str            # "$" (0.4) or "$.ome" (0.5, 0.6)
    #: the program whose own flavour of the format this is ("spatialdata": ``flavour.py``), or None
    writer: str | None = None

    @property
    def dialect(self) -> bool:
        """Whether this is a 0.6 pre-release (``0.6.devN``) with its own spellings."""
        return self.version == "0.6" and self.declared not in V06_FINAL


def namespace(attrs: dict[str, Any], node: str, problems: list[Problem]) -> Namespace | None:
    """The OME metadata in a group's attributes, or None where there is none. Keys that
    another Zarr convention claims (a multiscales convention's ``multiscales``) are not OME's."""
    attrs = ome_attributes(attrs)
    ome = attrs.get("ome")
    if isinstance(ome, dict) and (any(k in ome for k in OME_KEYS) or "version" in ome):
        declared = ome.get("version")
        read = _read_as(declared) if isinstance(declared, str) else "0.5"
        if declared is None:  # ome-zarr-py 0.18 writes the labels group so
            problems.append(Problem("warning", node, "$.ome", '"version" is missing from "ome"; read as 0.5'))
        elif not isinstance(declared, str):
            problems.append(Problem("error", node, "$.ome.version",
                                    f'"version" must be the string "0.5", not {declared!r}; read as 0.5'))
            declared = None
        elif _is_dialect(declared):
            problems.append(Problem("warning", node, "$.ome.version",
                                    f"version {declared!r} is a pre-release of 0.6; read with its own spellings"))
        elif declared not in ("0.5",) + V06_FINAL and plain_version(declared) != "0.5":
            known = _newer(declared, (0, 5))
            problems.append(Problem("warning", node, "$.ome.version",
                                    f'version {declared!r} is {"read as " + read if known else "not known; read as 0.5"}'))
        if not any(k in ome for k in OME_KEYS):
            return None
        for key in OME_KEYS:  # a 0.4 key beside the 0.5 namespace is ignored, but said
            if key in attrs:
                problems.append(Problem("warning", node, f"$.{key}",
                                        f'"{key}" outside "ome" is 0.4 metadata; the 0.5 "ome" namespace is read'))
        return Namespace(read, declared, ome, "$.ome", writer_of(attrs))
    if not any(k in attrs for k in OME_KEYS):
        return None
    declared = _declared_04(attrs)
    if declared is not None and declared != "0.4" and plain_version(declared) != "0.4":
        problems.append(Problem("warning", node, "$", f"version {declared!r} is read as 0.4"))
    return Namespace("0.4", declared, attrs, "$", writer_of(attrs))


def _newer(version: str, than: tuple[int, int]) -> bool:
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) > than


def _is_dialect(version: str) -> bool:
    return version.startswith("0.6") and version not in V06_FINAL and version[3:4] in (".", "d")


def _read_as(version: str) -> str:
    """The version a declared one is read as: 0.6 for the 0.6 family and later, else 0.5."""
    if version in V06_FINAL or _is_dialect(version) or _newer(version, (0, 6)):
        return "0.6"
    return "0.5"


def _declared_04(attrs: dict[str, Any]) -> str | None:
    ms = attrs.get("multiscales")
    candidates: list[Any] = []
    if isinstance(ms, list) and ms and isinstance(ms[0], dict):
        candidates.append(ms[0].get("version"))
    for key in ("plate", "well", "image-label"):
        if isinstance(attrs.get(key), dict):
            candidates.append(attrs[key].get("version"))
    return next((v for v in candidates if isinstance(v, str)), None)
