"""High-content screening: ``plate`` (rows, columns, wells, acquisitions) and ``well`` (fields).

``plate.version`` is not required: files in the wild omit it.
"""

from __future__ import annotations

import re
from typing import Any

from .doc import Reporter, kind_of
from .model import Acquisition, PlateWell, WellImage

_ALNUM = re.compile(r"[A-Za-z0-9]+")
_FIELD_06 = re.compile(r"[A-Za-z0-9._-]+")


def _names(value: Any, key: str, rep: Reporter) -> tuple[str, ...]:
    items = rep.get_list(value, key, "plate", required=True) or []
    names: list[str] = []
    for i, item in enumerate(items):
        where = f"plate.{key}[{i}]"
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str):
            rep.error(where, f'each of the {key} MUST have a string "name", not {item!r:.60}')
            names.append(f"?{i}")
            continue
        if not _ALNUM.fullmatch(name):
            rep.error(f"{where}.name", f"{key[:-1]} name {name!r} MUST contain only alphanumeric characters")
        if name in names:
            rep.error(f"{where}.name", f"{key[:-1]} name {name!r} MUST NOT repeat")
        names.append(name)
    return tuple(names)


def parse_plate(value: Any, rep: Reporter) -> tuple[str | None, tuple[str, ...], tuple[str, ...],
                                                    tuple[PlateWell, ...], tuple[Acquisition, ...], int | None]:
    """(name, rows, columns, wells, acquisitions, field count)."""
    if not isinstance(value, dict):
        rep.error("plate", f'"plate" must be an object, not {kind_of(value)}')
        return None, (), (), (), (), None
    rows = _names(value, "rows", rep)
    columns = _names(value, "columns", rep)
    wells: list[PlateWell] = []
    seen: set[str] = set()
    for i, w in enumerate(rep.get_list(value, "wells", "plate", required=True) or []):
        well = _well(w, f"plate.wells[{i}]", rows, columns, rep)
        if well is None:
            continue
        if well.path in seen:
            rep.error(f"plate.wells[{i}].path", f"well {well.path!r} is listed twice")
            continue
        seen.add(well.path)
        wells.append(well)
    acquisitions: list[Acquisition] = []
    for i, a in enumerate(rep.get_list(value, "acquisitions", "plate") or []):
        where = f"plate.acquisitions[{i}]"
        if not isinstance(a, dict):
            rep.error(where, f"an acquisition must be an object, not {kind_of(a)}")
            continue
        ident = rep.get_int(a, "id", where, required=True, minimum=0)
        if ident is None:
            continue
        if any(x.id == ident for x in acquisitions):
            rep.error(f"{where}.id", f"acquisition id {ident} MUST be unique")
        acquisitions.append(Acquisition(ident, rep.get_str(a, "name", where),
                                        rep.get_int(a, "maximumfieldcount", where, minimum=1),
                                        rep.get_int(a, "starttime", where), rep.get_int(a, "endtime", where)))
    field_count = rep.get_int(value, "field_count", "plate", minimum=1)
    name = rep.get_str(value, "name", "plate")
    return name, rows, columns, tuple(wells), tuple(acquisitions), field_count


def _well(w: Any, where: str, rows: tuple[str, ...], columns: tuple[str, ...], rep: Reporter) -> PlateWell | None:
    if not isinstance(w, dict):
        rep.error(where, f"a well must be an object, not {kind_of(w)}")
        return None
    path = rep.get_str(w, "path", where, required=True)
    if path is None:
        return None
    parts = path.split("/")
    if len(parts) != 2:
        rep.error(f"{where}.path", f"well path {path!r} MUST be a row name, '/', and a column name")
        return None
    found = [_index(w, key, what, name, names, where, path, rep)
             for key, what, name, names in (("rowIndex", "row", parts[0], rows),
                                            ("columnIndex", "column", parts[1], columns))]
    r, c = found
    if r is None or c is None:
        return None
    return PlateWell(path, r, c)


def _index(w: dict[str, Any], key: str, what: str, name: str, names: tuple[str, ...], where: str, path: str,
           rep: Reporter) -> int | None:
    """A well's row (or column) index, checked against the name its path gives."""
    i = rep.get_int(w, key, where, required=True, minimum=0)
    if name not in names:
        rep.error(f"{where}.path", f"well {path!r}: {name!r} is not one of the {what}s")
    if i is None:
        return names.index(name) if name in names else None
    if i >= len(names):  # the path's name places the well, if it can
        rep.error(f"{where}.{key}", f"well {path!r}: {key} {i} is past the {len(names)} {what}s")
        return names.index(name) if name in names else None
    if names[i] != name:
        rep.error(f"{where}.{key}", f"well {path!r}: {key} {i} is {what} {names[i]!r}; path and {key} "
                                    f"MUST name the same {what}")
    return i


def parse_well(value: Any, rep: Reporter, version: str = "0.5") -> tuple[WellImage, ...]:
    """A well's fields; from 0.6 a field's path may hold ``-``, ``_`` and ``.`` besides letters and digits."""
    if not isinstance(value, dict):
        rep.error("well", f'"well" must be an object, not {kind_of(value)}')
        return ()
    images: list[WellImage] = []
    for i, im in enumerate(rep.get_list(value, "images", "well", required=True) or []):
        where = f"well.images[{i}]"
        if not isinstance(im, dict):
            rep.error(where, f"a field must be an object, not {kind_of(im)}")
            continue
        path = rep.get_str(im, "path", where, required=True)
        if path is None:
            continue
        if version == "0.6" and not _FIELD_06.fullmatch(path):
            rep.error(f"{where}.path", f"field path {path!r} MUST use only a-z, A-Z, 0-9, '-', '_' and '.'")
        elif version != "0.6" and not _ALNUM.fullmatch(path):
            rep.error(f"{where}.path", f"field path {path!r} MUST contain only alphanumeric characters")
        if any(x.path == path for x in images):
            rep.error(f"{where}.path", f"field path {path!r} MUST NOT repeat")
            continue
        images.append(WellImage(path, rep.get_int(im, "acquisition", where)))
    return tuple(images)
