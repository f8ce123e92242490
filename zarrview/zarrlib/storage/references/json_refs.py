"""A JSON reference set (kerchunk spec versions 0 and 1), parsed once, decoded per key.

Version 1 adds ``templates`` (strings that URLs name as ``{{name}}``) and ``gen`` (keys made
from a product of integer ranges, with ``{{i * 100}}``-style arithmetic in the key, URL, offset
and length). kerchunk evaluates these with jinja2; here a small evaluator takes names, integers
and ``+ - * // %`` only, and the number of generated keys is bounded by
``limits().chunks_per_read``, so a hostile ``gen`` costs an error, not the machine.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from ...codecs.bounded import inflate
from ...errors import CodecError
from ...limits import limits
from .entries import MAX_URL, BadReferenceError, Entry, decode_entry, expand_templates

__all__ = ["JsonReferences", "looks_like_references", "JSON_SUFFIXES", "is_json_name"]

#: names a JSON reference set goes by: plain, or gzip-compressed as kerchunk's users store large ones
JSON_SUFFIXES = (".json", ".json.gz")
_GZIP = b"\x1f\x8b"


def is_json_name(name: str) -> bool:
    """Whether a file name or URL (its query left out) names a JSON reference set."""
    return name.lower().split("?", 1)[0].endswith(JSON_SUFFIXES)

_EXPR = re.compile(r"{{(.*?)}}")
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def looks_like_references(doc: Any) -> bool:
    """Whether a parsed JSON document is a reference set rather than Zarr metadata: version 1
    has ``"refs"`` (and ``"version"``); version 0 maps keys such as ``.zgroup`` to strings."""
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("refs"), dict) and ("version" in doc or "templates" in doc or "gen" in doc or not doc.keys() - {"refs"}):
        return True
    return any(isinstance(k, str) and k.rsplit("/", 1)[-1] in (".zgroup", ".zarray", "zarr.json")
               and isinstance(v, str) for k, v in doc.items())


class JsonReferences:
    """Every key of a JSON reference set, its value decoded when the key is read."""

    def __init__(self, raw: bytes | Mapping[str, Any], name: str, require: bool = False) -> None:
        """``raw``: the file's bytes (gzip-compressed or not), or the set already parsed (fsspec's
        ``fo`` as a dict). ``require``: the document must look like a reference set (a ``.json``
        URL opened without ``reference::``), not merely parse."""
        if isinstance(raw, Mapping):
            doc: Any = dict(raw)
        else:
            if raw[:2] == _GZIP:
                try:
                    raw = bytes(inflate(raw, limits().metadata_bytes))
                except CodecError as e:
                    raise BadReferenceError(f"{name} is not a JSON reference set: {e}") from None
            try:
                doc = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise BadReferenceError(f"{name} is not a JSON reference set: {e}") from None
        if not isinstance(doc, dict):
            raise BadReferenceError(f"{name} is not a JSON reference set: its top level is not an object")
        if require and not looks_like_references(doc):
            raise BadReferenceError(f"{name} is JSON but not a reference set (no 'refs' or 'version', no "
                                    ".zgroup, .zarray or zarr.json keys); to open a Zarr store, name its folder")
        version = doc.get("version", 0 if "refs" not in doc else 1)
        if version == 1 or "refs" in doc:
            if version not in (0, 1):
                raise BadReferenceError(f"{name}: reference spec version {version!r} is not supported (0 and 1 are)")
            refs = doc.get("refs", {})
            templates = doc.get("templates", {}) or {}
            gen = doc.get("gen", []) or []
        else:
            refs, templates, gen = doc, {}, []
        if not isinstance(refs, dict) or not isinstance(templates, dict) or not isinstance(gen, list):
            raise BadReferenceError(f"{name}: 'refs' and 'templates' must be objects and 'gen' a list")
        for k, v in templates.items():
            if not isinstance(v, str) or len(v) > MAX_URL:
                raise BadReferenceError(f"{name}: template {k!r} must be a string of at most {MAX_URL} characters")
        self.name = name
        self.templates: dict[str, str] = templates
        self._values: dict[str, Any] = {}
        budget = limits().chunks_per_read  # keys all ``gen`` entries together may make
        for spec_index, spec in enumerate(gen):
            for key, value in _generate(spec, spec_index, name, templates, budget):
                self._values[key] = value
                budget -= 1
        self._values.update((k.lstrip("/"), v) for k, v in refs.items() if isinstance(k, str))

    def keys(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def lookup(self, key: str) -> Entry | None:
        """The entry of ``key``, None where the set has none (a chunk never written)."""
        if key not in self._values:
            return None
        return decode_entry(key, self._values[key], self.templates)


def _generate(spec: Any, index: int, name: str, templates: Mapping[str, str], bound: int) -> Iterator[tuple[str, Any]]:
    """The keys of one ``gen`` entry, after checking that their number is bounded."""
    what = f"{name}: gen[{index}]"
    if not isinstance(spec, dict) or not all(isinstance(spec.get(f), str | int) for f in ("key", "url")):
        raise BadReferenceError(f"{what} needs 'key', 'url' and 'dimensions'")
    dims = spec.get("dimensions")
    if not isinstance(dims, dict) or not dims:
        raise BadReferenceError(f"{what} needs 'dimensions', an object of ranges")
    axes: list[tuple[str, range | list[int]]] = []
    for dim, r in dims.items():
        if isinstance(r, dict):
            try:
                axis: range | list[int] = range(int(r.get("start", 0)), int(r["stop"]), int(r.get("step", 1)))
            except (KeyError, TypeError, ValueError):
                raise BadReferenceError(f"{what}: dimension {dim!r} needs integer start, stop and step") from None
        elif isinstance(r, list) and all(isinstance(v, int) for v in r):
            axis = r
        else:
            raise BadReferenceError(f"{what}: dimension {dim!r} must be a range object or a list of integers")
        axes.append((dim, axis))
    count = math.prod(len(a) for _, a in axes)
    if count > bound:
        raise BadReferenceError(f"{what} makes {count} keys, more than the {bound} left of the "
                                f"{limits().chunks_per_read} allowed (limits.chunks_per_read)")
    names = [d for d, _ in axes]
    for values in itertools.product(*(a for _, a in axes)):
        env = dict(zip(names, values))
        key = _render(str(spec["key"]), env, what)
        url = expand_templates(_render(str(spec["url"]), env, what), templates, key)
        if "offset" in spec or "length" in spec:
            offset = _number(spec.get("offset", 0), env, what)
            length = _number(spec.get("length", 0), env, what)
            yield key.lstrip("/"), [url, offset, length]
        else:
            yield key.lstrip("/"), [url]


def _render(text: str, env: Mapping[str, int], what: str) -> str:
    if len(text) > MAX_URL:
        raise BadReferenceError(f"{what}: a template longer than {MAX_URL} characters")
    return _EXPR.sub(lambda m: str(_evaluate(m.group(1), env, what)) if m.group(1).strip() in env
                     or not m.group(1).strip().isidentifier() else m.group(0), text)


def _number(value: Any, env: Mapping[str, int], what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise BadReferenceError(f"{what}: offset and length must be integers or templates")
    text = _render(value, env, what).strip()
    try:
        return int(text)
    except ValueError:
        raise BadReferenceError(f"{what}: {value!r} is not an integer") from None


def _evaluate(expr: str, env: Mapping[str, int], what: str) -> int:
    """An integer expression of names, integers and ``+ - * // %`` (nothing else runs)."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise BadReferenceError(f"{what}: cannot evaluate {{{{{expr}}}}}") from None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            a, b = ev(node.left), ev(node.right)
            if abs(a) > 1 << 64 or abs(b) > 1 << 64:
                raise BadReferenceError(f"{what}: {{{{{expr}}}}} is out of range")
            try:
                return int(_OPS[type(node.op)](a, b))
            except ZeroDivisionError:
                raise BadReferenceError(f"{what}: {{{{{expr}}}}} divides by zero") from None
        raise BadReferenceError(f"{what}: cannot evaluate {{{{{expr}}}}} (names, integers and + - * // % only)")

    return ev(tree)
