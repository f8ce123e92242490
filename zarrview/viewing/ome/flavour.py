"""OME-NGFF as spatialdata writes it: the images and labels of a SpatialData store.

spatialdata marks every element with ``spatialdata_attrs`` and writes OME-NGFF 0.4 or 0.5 with
its own extensions, which are its format rather than mistakes:

- the version ``0.4-dev-spatialdata`` or ``0.5-dev-spatialdata`` (read as 0.4 or 0.5);
- a multiscale's ``coordinateTransformations`` map the image into named coordinate systems
  (each with ``input`` and ``output``, of any type spatialdata has: identity, affine,
  sequence...); ``viewing.spatialdata`` reads them, and here they are only checked for the
  shape spatialdata gives them (a type, and an output coordinate system with a name);
- ``omero`` channels carry only a ``label``, often the channel's number.

Everything else is checked as the specification says: a level without a scale, a label image of
floats or axes that do not match the arrays are still errors.
"""

from __future__ import annotations

import copy
from typing import Any

from .model import Problem

SUFFIX = "-dev-spatialdata"
NAME = "spatialdata"


def of(attrs: dict[str, Any]) -> str | None:
    """The dialect a group's attributes are written in (``"spatialdata"``), or None."""
    return NAME if isinstance(attrs.get("spatialdata_attrs"), dict) else None


def plain_version(declared: str | None) -> str | None:
    """``0.5`` for spatialdata's ``0.5-dev-spatialdata``; None for any other version string."""
    if isinstance(declared, str) and declared.endswith(SUFFIX) and declared[: -len(SUFFIX)] in ("0.4", "0.5"):
        return declared[: -len(SUFFIX)]
    return None


def names_systems(value: Any) -> bool:
    """Whether a multiscale's transformations are spatialdata's, leading to named coordinate
    systems (every entry states an ``output``)."""
    return isinstance(value, list) and bool(value) and all(isinstance(t, dict) and "output" in t for t in value)


def check_systems(value: list[Any], path: str, node: str) -> list[Problem]:
    """What breaks the shape spatialdata gives its transformations (a type, a named output)."""
    out = []
    for i, t in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(t.get("type"), str):
            out.append(Problem("error", node, f"{where}.type", f"a transformation needs a type, not {t.get('type')!r}"))
        target = t.get("output")
        name = target.get("name") if isinstance(target, dict) else target
        if not isinstance(name, str) or not name:
            out.append(Problem("error", node, f"{where}.output",
                               "a transformation MUST name the coordinate system it leads to"))
    return out


def schema_document(attrs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The attributes as the specification's schema is to see them: spatialdata's coordinate
    system transformations and its channels that carry only a label left out (both are checked
    by this package's own rules), its version strings read as the versions they extend."""
    doc = copy.deepcopy(attrs)
    holder: dict[str, Any] = doc["ome"] if prefix == "$.ome" and isinstance(doc.get("ome"), dict) else doc
    for ms in holder.get("multiscales") or []:
        if isinstance(ms, dict) and names_systems(ms.get("coordinateTransformations")):
            del ms["coordinateTransformations"]
        if isinstance(ms, dict) and plain_version(ms.get("version")):
            ms["version"] = plain_version(ms["version"])
    omero = holder.get("omero")
    channels = omero.get("channels") if isinstance(omero, dict) else None
    if isinstance(channels, list) and channels and all(isinstance(c, dict) and set(c) <= {"label"} for c in channels):
        del holder["omero"]  # labels alone (the 0.4 schema wants windows): checked by parse_omero
    return doc
