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
SCHEMA_OF = {"image": "image", "label": "label", "plate": "plate", "well": "well", "bioformats2raw": "bf2raw"}
_MAX_PROBLEMS = 20


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[Any, dict[str, dict[str, Any]]]:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    docs: dict[str, dict[str, Any]] = {}
    root = resources.files(__package__).joinpath("schemas")
    for version in ("0.4", "0.5"):
        for entry in root.joinpath(version).iterdir():
            if entry.name.endswith(".schema"):
                doc = json.loads(entry.read_text(encoding="utf-8"))
                docs[f"{version}/{entry.name[:-len('.schema')]}"] = doc
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d, default_specification=DRAFT202012)) for d in docs.values() if "$id" in d)
    return registry, docs


def validate(attrs: dict[str, Any], version: str, kind: str, node: str,
             known: list[Problem]) -> list[Problem]:
    """Problems the schema for ``kind`` finds in ``attrs`` (a group's attributes, the whole
    object: 0.5 schemas start at the ``ome`` key), less those ``known`` already covers."""
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
    if version == "0.5" and isinstance(attrs.get("ome"), dict) and attrs["ome"].get("version") != "0.5":
        doc = copy.copy(attrs)  # a later version read as 0.5 is checked as 0.5 (its version was said)
        doc["ome"] = {**attrs["ome"], "version": "0.5"}
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
