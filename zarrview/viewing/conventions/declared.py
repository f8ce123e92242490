"""Which Zarr conventions a node's attributes follow: those its ``zarr_conventions`` declares,
and those whose documented attributes it carries.

A convention is identified as the conventions framework says: by its ``uuid``, else by its
``schema_url``, else by its ``spec_url``; never by ``name``, which is free text. The URLs are
compared as text and never fetched, so a dead ``schema_url`` costs nothing. Several conventions
share key names with older ones: the multiscales convention's ``multiscales`` is an object with
a ``layout``, OME-NGFF 0.4's is a list of objects with ``datasets``. :func:`ome_attributes` gives
OME-NGFF detection only the keys no other convention claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: OME-NGFF detection imports this module
    from ..ome.model import Problem

MULTISCALES = "multiscales"
PROJ = "proj:"
SPATIAL = "spatial:"


@dataclass(frozen=True)
class Known:
    """A registered convention: its uuid and the repositories its URLs point into."""

    key: str
    uuid: str
    repositories: tuple[str, ...]
    #: attributes that mark a node as following it even where ``zarr_conventions`` is missing
    keys: tuple[str, ...]


KNOWN = (
    Known(MULTISCALES, "d35379db-88df-4056-af3a-620245f8e347",
          ("zarr-conventions/multiscales", "zarr-experimental/multiscales"), ()),
    Known(PROJ, "f17cb550-5864-4468-aeb7-f3180cfb622f",
          ("zarr-conventions/proj", "zarr-conventions/geo-proj", "zarr-experimental/geo-proj",
           "zarr-experimental/proj"), ("proj:code", "proj:wkt2", "proj:projjson")),
    Known(SPATIAL, "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4",
          ("zarr-conventions/spatial", "zarr-experimental/spatial"),
          ("spatial:transform", "spatial:dimensions", "spatial:bbox", "spatial:shape")),
)
#: the fields a convention metadata object may hold (the framework forbids others)
CMO_FIELDS = frozenset(("uuid", "schema_url", "spec_url", "name", "description"))


@dataclass(frozen=True)
class Declaration:
    """One entry of ``zarr_conventions``: what identifies it, and the known convention it is."""

    identity: str          # the uuid, else the schema_url, else the spec_url
    name: str | None       # for display only
    known: str | None      # MULTISCALES, PROJ, SPATIAL, or None for a convention zarrview does not read


@dataclass(frozen=True)
class Conventions:
    """The conventions a node follows (declared or recognised by their attributes), and what is
    wrong with its ``zarr_conventions``."""

    declared: tuple[Declaration, ...]
    applied: frozenset[str]
    problems: tuple[Problem, ...]

    def __contains__(self, key: str) -> bool:
        return key in self.applied

    def names(self) -> tuple[str, ...]:
        """Every convention named for a person: the known ones by key, others by name or identity."""
        out = [k.key for k in KNOWN if k.key in self.applied]
        out += [d.name or d.identity for d in self.declared if d.known is None]
        return tuple(out)


def _identify(cmo: Mapping[str, Any]) -> str | None:
    uuid = cmo.get("uuid")
    if isinstance(uuid, str):
        return next((k.key for k in KNOWN if k.uuid == uuid.strip().lower()), None)
    for field in ("schema_url", "spec_url"):
        url = cmo.get(field)
        if isinstance(url, str):
            return next((k.key for k in KNOWN if any(f"/{r}/" in url or url.endswith(f"/{r}") for r in k.repositories)),
                        None)
    return None


def declarations(attrs: Mapping[str, Any], node: str = "") -> tuple[tuple[Declaration, ...], tuple[Problem, ...]]:
    """The entries of ``zarr_conventions`` (those that identify a convention) and its problems."""
    from ..ome.model import Problem  # one problem type for every convention's metadata

    value = attrs.get("zarr_conventions")
    if value is None:
        return (), ()
    problems: list[Problem] = []
    if not isinstance(value, list):
        return (), (Problem("error", node, "$.zarr_conventions",
                            f'"zarr_conventions" MUST be a list of convention objects, not {type(value).__name__}'),)
    out = []
    for i, cmo in enumerate(value):
        where = f"$.zarr_conventions[{i}]"
        if not isinstance(cmo, dict):
            problems.append(Problem("error", node, where, f"a convention MUST be an object, not {cmo!r:.60}"))
            continue
        ids = [cmo[f] for f in ("uuid", "schema_url", "spec_url") if isinstance(cmo.get(f), str)]
        if not ids:
            problems.append(Problem("error", node, where,
                                    'a convention MUST have a "uuid", "schema_url" or "spec_url" (text)'))
            continue
        extra = sorted(set(cmo) - CMO_FIELDS)
        if extra:
            problems.append(Problem("warning", node, where, f"fields {extra} are not convention metadata fields"))
        name = cmo.get("name") if isinstance(cmo.get("name"), str) else None
        out.append(Declaration(ids[0], name, _identify(cmo)))
    return tuple(out), tuple(problems)


def conventions(attrs: Any, node: str = "") -> Conventions:
    """The conventions ``attrs`` follow. The multiscales convention is recognised undeclared by
    its documented attribute, a ``multiscales`` object with a ``layout`` (OME-NGFF's is a list of
    objects with ``datasets``); ``proj:`` and ``spatial:`` by their prefixed keys."""
    if not isinstance(attrs, Mapping):
        return Conventions((), frozenset(), ())
    declared, problems = declarations(attrs, node)
    applied = {d.known for d in declared if d.known is not None}
    ms = attrs.get("multiscales")
    if isinstance(ms, dict) and "layout" in ms:
        applied.add(MULTISCALES)
    for known in KNOWN:
        if any(k in attrs for k in known.keys):
            applied.add(known.key)
    return Conventions(declared, frozenset(applied), problems)


def ome_attributes(attrs: Any) -> Any:
    """``attrs`` without the keys another convention claims: what OME-NGFF detection may read.
    A ``multiscales`` that the multiscales convention claims (declared, or an object with a
    ``layout``) is not OME-NGFF's; any other is left to OME-NGFF, which reports what is wrong."""
    if not isinstance(attrs, Mapping) or "multiscales" not in attrs or MULTISCALES not in conventions(attrs):
        return attrs
    return {k: v for k, v in attrs.items() if k != "multiscales"}
