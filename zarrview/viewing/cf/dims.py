"""Dimension names, whichever of the three ways a store gives them.

Zarr v3 has ``dimension_names``; xarray's v2 stores carry ``_ARRAY_DIMENSIONS`` (zarrlib maps
both to ``Array.dimension_names``); netCDF-C's NCZarr names dimensions by path, in an
``_NCZARR_ARRAY``/``_nczarr_array`` object whose place and keys changed over netCDF-C releases:

* 4.8: ``"_NCZARR_ARRAY": {"dimrefs": ["/lat", ...]}`` inside ``.zarray``, the group's
  ``"_NCZARR_GROUP": {"dims": {"lat": 721}}`` inside ``.zgroup`` (what xarray reads too);
* 4.9: the same objects with lower-case keys (``_nczarr_array``, ``_nczarr_group``);
* 2024 and later: ``_nczarr_array`` among the attributes (``.zattrs``/``zarr.json``) with
  ``"dimension_references"``, and ``_nczarr_group`` with ``"dimensions": [{"name", "size"}]``.

All are read here so that the coordinates and the view do not care which one a store used; a
value that cannot be used becomes a note and the dimension stays unnamed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...zarrlib.errors import ZarrError, short

#: where NCZarr keeps an array's annotation, oldest spelling first
_NCZARR_ARRAY_KEYS = ("_NCZARR_ARRAY", "_nczarr_array")
_NCZARR_GROUP_KEYS = ("_NCZARR_GROUP", "_nczarr_group")


@dataclass(frozen=True)
class Dimensions:
    """An array's dimension names with where they came from.

    ``refs`` holds NCZarr's fully qualified dimension paths ("/grp/lat") where the store gave them,
    else None per dimension; ``source`` is "dimension_names", "_ARRAY_DIMENSIONS", "NCZarr" or "".
    """

    names: tuple[str | None, ...]
    refs: tuple[str | None, ...]
    source: str
    notes: tuple[str, ...]


def dimension_names(arr: Any) -> tuple[str | None, ...]:
    """The name of each dimension of ``arr`` (None where unnamed); see ``read_dimensions``."""
    return read_dimensions(arr).names


def read_dimensions(arr: Any) -> Dimensions:
    """Names from v3 ``dimension_names``, v2 ``_ARRAY_DIMENSIONS`` or NCZarr dimension references,
    in that order; an unusable value gives a note, never an exception."""
    ndim = len(arr.shape)
    notes: list[str] = []
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    refs, nc_notes = nczarr_dimension_refs(arr)
    declared = arr.dimension_names
    if declared is not None and any(n is not None for n in declared):
        source = "dimension_names" if arr.zarr_format == 3 else "_ARRAY_DIMENSIONS"
        names = tuple(declared)
        if refs is not None:
            base = tuple(_basename(r) for r in refs)
            if base != names:
                notes.append(f"NCZarr dimension references {list(refs)} disagree with {source} {list(names)}; "
                             f"{source} is used")
                refs = None
        return Dimensions(names, refs or (None,) * ndim, source, tuple(notes + nc_notes))
    if "_ARRAY_DIMENSIONS" in attrs and arr.zarr_format == 2:
        notes.append(f"_ARRAY_DIMENSIONS {short(attrs['_ARRAY_DIMENSIONS'])} is not a list of {ndim} "
                     "names; the dimensions are unnamed")
    notes.extend(nc_notes)
    if refs is not None:
        return Dimensions(tuple(_basename(r) for r in refs), refs, "NCZarr", tuple(notes))
    return Dimensions((None,) * ndim, (None,) * ndim, "", tuple(notes))


def nczarr_dimension_refs(arr: Any) -> tuple[tuple[str, ...] | None, list[str]]:
    """NCZarr's dimension paths for ``arr`` (None where it has none) and notes on bad ones."""
    found = _nczarr_object(arr.metadata, arr.attrs, _NCZARR_ARRAY_KEYS)
    if found is None:
        return None, []
    key, obj = found
    if not isinstance(obj, dict):
        return None, [f"{key} {short(obj)} is not an object; its dimension references are ignored"]
    for ref_key in ("dimension_references", "dimrefs"):
        if ref_key in obj:
            break
    else:
        return None, []
    refs = obj[ref_key]
    ndim = len(arr.shape)
    if obj.get("storage") == "scalar" or obj.get("scalar"):
        return None, []  # a netCDF scalar stored with shape [1]: it has no dimension
    if not isinstance(refs, list) or not all(isinstance(r, str) and _basename(r) for r in refs):
        return None, [f"{key}.{ref_key} {short(refs)} is not a list of dimension paths; ignored"]
    if len(refs) != ndim:
        return None, [f"{key}.{ref_key} {short(refs)} names {len(refs)} dimensions for {ndim}; ignored"]
    return tuple(refs), []


def nczarr_group_dims(group: Any) -> tuple[dict[str, int], list[str]]:
    """The shared dimensions an NCZarr group defines, name -> size (4.8/4.9 ``dims`` object or
    the newer ``dimensions`` list), and notes on entries that cannot be used."""
    found = _nczarr_object(group.metadata, group.attrs, _NCZARR_GROUP_KEYS)
    if found is None:
        return {}, []
    key, obj = found
    if not isinstance(obj, dict):
        return {}, [f"{key} {short(obj)} is not an object; ignored"]
    out: dict[str, int] = {}
    notes: list[str] = []
    if "dims" in obj:
        dims = obj["dims"]
        entries = list(dims.items()) if isinstance(dims, dict) else None
        where = f"{key}.dims"
    else:
        dims = obj.get("dimensions", [])
        entries = ([(d.get("name"), d.get("size")) if isinstance(d, dict) else (None, None) for d in dims]
                   if isinstance(dims, list) else None)
        where = f"{key}.dimensions"
    if entries is None:
        return {}, [f"{where} {short(dims)} cannot be read; ignored"]
    for name, size in entries:
        if isinstance(name, str) and isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            out[name] = size
        else:
            notes.append(f"{where}: entry {short(name)}: {short(size)} is not a name and a size; ignored")
    return out, notes


def nczarr_size_notes(group: Any, dims: Dimensions, shape: tuple[int, ...]) -> list[str]:
    """Notes where an NCZarr dimension's size in its group's ``_nczarr_group`` differs from the
    array's length along it (groups outside ``group`` are not looked at)."""
    notes: list[str] = []
    for ref, length in zip(dims.refs, shape):
        if not ref:
            continue
        rel = under(group, ref.rpartition("/")[0] or "/")
        try:
            home = group if rel == "" else group[rel] if rel else None
        except ZarrError:
            continue
        if home is None or home.kind != "group":
            continue
        sizes, group_notes = nczarr_group_dims(home)
        notes.extend(n for n in group_notes if n not in notes)
        size = sizes.get(_basename(ref))
        if size is not None and size != length:
            notes.append(f"NCZarr dimension {ref} has size {size} but the array has {length} along it")
    return notes


def under(group: Any, path: str) -> str | None:
    """The absolute ``path`` relative to ``group`` ("" for the group itself), or None where it is
    not below it; a relative path is returned as it is."""
    if not path.startswith("/"):
        return path
    base = group.path.rstrip("/")
    path = path.rstrip("/")
    if path == base:
        return ""
    return path[len(base) + 1:] if path.startswith(base + "/") else None


def _nczarr_object(document: Any, attrs: Any, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    for place in (document, attrs):
        if isinstance(place, dict):
            for key in keys:
                if key in place:
                    return key, place[key]
    return None


def _basename(ref: str) -> str:
    return ref.rstrip("/").rsplit("/", 1)[-1]
