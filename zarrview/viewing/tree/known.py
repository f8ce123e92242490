"""The members a group's own metadata names, for a store that cannot list (a plain HTTP server
without consolidated metadata): an OME-Zarr image's levels and labels, a plate's rows and wells,
a well's fields, a GeoZarr pyramid's levels, an AnnData element's parts, a SpatialData store's
element folders. Names only, from attributes already read; each is then opened like a listed
member, and one that holds no node is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...zarrlib import Group, ZarrError
from ...zarrlib.storage.keys import key_problem

__all__ = ["known_members"]

#: the members an AnnData object may hold (each opened only if it is there)
ANNDATA = ("X", "obs", "var", "obsm", "varm", "obsp", "varp", "layers", "uns", "raw")
#: the members an AnnData element of each encoding holds
PARTS = {"csr_matrix": ("data", "indices", "indptr"), "csc_matrix": ("data", "indices", "indptr"),
         "categorical": ("codes", "categories"), "nullable-integer": ("values", "mask"),
         "nullable-boolean": ("values", "mask"), "nullable-string-array": ("values", "mask")}
SPATIALDATA = ("images", "labels", "points", "shapes", "tables")
#: names taken from one group's metadata at most (a document may list a million wells)
MAX_KNOWN = 10_000


def known_members(group: Group) -> list[str]:
    """Member names the metadata of ``group`` (and, for a plate's row, its plate) gives, in the
    order given, without duplicates; a name that is not a plain key is left out."""
    attrs = group.attrs if isinstance(group.attrs, dict) else {}
    ome = attrs["ome"] if isinstance(attrs.get("ome"), dict) else attrs
    found: list[str] = []
    found += _ome(ome)
    found += _geozarr(attrs)
    found += _anndata(attrs)
    if isinstance(attrs.get("spatialdata_attrs"), dict):
        found += SPATIALDATA
    if "bioformats2raw.layout" in ome:
        found += ["OME", "0"]
    if group.path != "/" and not found:
        found += _plate_row(group)
    out: dict[str, None] = {}
    for name in found[:MAX_KNOWN]:
        if name and key_problem(name) is None and "/" not in name:
            out.setdefault(name, None)
    return list(out)


def _items(value: Any) -> list[Any]:
    return value[:MAX_KNOWN] if isinstance(value, list) else []


def _first(paths: Iterable[Any]) -> list[str]:
    """The first segment of each path (a level "0", a well "A/1" -> its row "A")."""
    return [p.strip("/").split("/", 1)[0] for p in paths if isinstance(p, str)]


def _ome(ome: dict[str, Any]) -> list[str]:
    found: list[str] = []
    multiscales = [m for m in _items(ome.get("multiscales")) if isinstance(m, dict)]
    for ms in multiscales:
        found += _first(d.get("path") for d in _items(ms.get("datasets")) if isinstance(d, dict))
    if multiscales:
        found.append("labels")  # an image's label images live there, if it has any
    found += _first(_items(ome.get("labels")))
    plate, well = ome.get("plate"), ome.get("well")
    if isinstance(plate, dict):
        found += _first(w.get("path") for w in _items(plate.get("wells")) if isinstance(w, dict))
    if isinstance(well, dict):
        found += _first(i.get("path") for i in _items(well.get("images")) if isinstance(i, dict))
    return found


def _geozarr(attrs: dict[str, Any]) -> list[str]:
    ms = attrs.get("multiscales")
    if not isinstance(ms, dict):
        return []
    return _first(level.get("asset") for level in _items(ms.get("layout")) if isinstance(level, dict))


def _anndata(attrs: dict[str, Any]) -> list[str]:
    kind = attrs.get("encoding-type")
    if kind == "anndata":
        return list(ANNDATA)
    if kind == "dataframe":
        index = attrs.get("_index")
        return [*([index] if isinstance(index, str) else []), *(c for c in _items(attrs.get("column-order"))
                                                                 if isinstance(c, str))]
    return list(PARTS.get(kind, ())) if isinstance(kind, str) else []


def _plate_row(group: Group) -> list[str]:
    """A plate's row group names its columns nowhere: the plate above it does, in its wells."""
    try:
        parent = group.ancestor()
    except ZarrError:
        return []
    attrs = parent.attrs if isinstance(parent.attrs, dict) else {}
    plate = (attrs["ome"] if isinstance(attrs.get("ome"), dict) else attrs).get("plate")
    if not isinstance(plate, dict):
        return []
    wells = (w.get("path") for w in _items(plate.get("wells")) if isinstance(w, dict))
    return [p.strip("/").split("/")[1] for p in wells
            if isinstance(p, str) and p.strip("/").count("/") == 1 and p.strip("/").split("/")[0] == group.name]
