"""JSON-schema validation against the specification's own schemas, shipped in ``schemas/``.

References between schemas (``https://ngff.openmicroscopy.org/0.5/schemas/...``) resolve
through a local registry, never the network. A schema error whose place the rules of this
package already reported more precisely is left out, so each fault is said once.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from .model import Problem

#: the schema file for each kind of node (the labels group has none)
SCHEMA_OF = {"image": "image", "label": "label", "plate": "plate", "well": "well", "bioformats2raw": "bf2raw",
             "scene": "scene"}
#: the version the shipped 0.6 schemas accept
SCHEMA_06 = "0.6rc0"
_MAX_PROBLEMS = 20
#: how deep a pre-release document is respelled
_MAX_DEPTH = 64


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[Any, dict[str, dict[str, Any]]]:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    docs: dict[str, dict[str, Any]] = {}
    root = resources.files(__package__).joinpath("schemas")
    for version in ("0.4", "0.5", "0.6"):
        for entry in root.joinpath(version).iterdir():
            if entry.name.endswith(".schema"):
                doc = json.loads(entry.read_text(encoding="utf-8"))
                docs[f"{version}/{entry.name[:-len('.schema')]}"] = doc
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d, default_specification=DRAFT202012)) for d in docs.values() if "$id" in d)
    return registry, docs


def validate(attrs: dict[str, Any], version: str, kind: str, node: str,
             known: list[Problem], *, dialect: bool = False) -> list[Problem]:
    """Problems the schema for ``kind`` finds in ``attrs`` (a group's attributes, the whole
    object: 0.5 schemas start at the ``ome`` key), less those ``known`` already covers.

    A 0.6 pre-release (``dialect``) is checked in 0.6rc0's spelling (see :func:`rc0_spelling`):
    its own spellings were reported where they were read."""
    name = SCHEMA_OF.get(kind)
    if name is None:
        return []
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import best_match

        registry, docs = _registry()
    except (ImportError, OSError, ValueError) as e:  # a bundle without the schemas still reads the image
        return [Problem("warning", node, "$", f"schema validation is not available here ({e})")]
    schema = docs.get(f"{version}/{name}")
    if schema is None:
        return []
    doc = attrs
    said = {"0.5": "0.5", "0.6": SCHEMA_06}.get(version)
    if said is not None and isinstance(attrs.get("ome"), dict) and attrs["ome"].get("version") != said:
        doc = copy.copy(attrs)  # a version read as another is checked as that one (its version was said)
        doc["ome"] = {**attrs["ome"], "version": said}
        if version == "0.6" and dialect:
            doc["ome"] = rc0_spelling(doc["ome"])
    validator = Draft202012Validator(schema, registry=registry)
    out: list[Problem] = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        if error.context:
            error = best_match(error.context) or error
        path = _json_path(error.absolute_path)
        if any(_covers(path, p.path) for p in known + out):
            continue
        out.append(Problem("error", node, path, f"does not match the {version} {name} schema: {_short(error.message)}"))
        if len(out) >= _MAX_PROBLEMS:
            break
    return out


def rc0_spelling(value: Any, *, in_dataset: bool = False, depth: int = 0) -> Any:
    """A copy of a 0.6 pre-release document in 0.6rc0's spelling: references written as strings
    become objects (a dataset transformation's input its ``path``, any other its ``name``),
    ``input_axes`` and ``output_axes`` become ``inputAxes`` and ``outputAxes``, and byDimension
    items written inline are wrapped. Below :data:`_MAX_DEPTH` the document is left as it is."""
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [rc0_spelling(v, in_dataset=in_dataset, depth=depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "byDimension" and isinstance(value.get("transformations"), list):
        value = {**value, "transformations": [_wrapped_item(v) for v in value["transformations"]]}
    out: dict[str, Any] = {}
    for k, v in value.items():
        k = {"input_axes": "inputAxes", "output_axes": "outputAxes"}.get(k, k)
        if k in ("input", "output") and isinstance(v, str):
            v = {"path": v} if k == "input" and in_dataset else {"name": v}
        # a dataset's transformations are those under "datasets" (their own "input" is the array)
        out[k] = rc0_spelling(v, in_dataset=in_dataset or k == "datasets", depth=depth + 1)
    return out


def _wrapped_item(item: Any) -> Any:
    """A byDimension item written inline (0.6.dev2) as 0.6rc0's ``{"transformation": ...}``."""
    if not isinstance(item, dict) or "transformation" in item:
        return item
    axes = ("inputAxes", "outputAxes", "input_axes", "output_axes")
    return {"transformation": {k: v for k, v in item.items() if k not in axes},
            **{k: v for k, v in item.items() if k in axes}}


def _json_path(parts: Any) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _covers(schema_path: str, known: str) -> bool:
    """Whether a problem at ``known`` lies at or below ``schema_path`` (then it says the same more precisely)."""
    return known == schema_path or known.startswith(schema_path + ".") or known.startswith(schema_path + "[")


def _short(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
