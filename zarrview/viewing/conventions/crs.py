"""The coordinate reference system a ``proj:`` convention names, as a person reads it.

``proj:code`` ("EPSG:32633") is the name when it is there; otherwise the name a WKT2 string or a
PROJJSON object gives (with its authority code where it states one). The units of the axes come
from the WKT2 or PROJJSON coordinate system; for a bare code they are known only for the common
families (geographic codes in degrees; UTM, Web Mercator and national grids in metres), since
zarrview carries no CRS database and never looks one up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..ome.doc import Reporter

#: EPSG geographic 2-D/3-D systems seen most (degrees)
GEOGRAPHIC_CODES = frozenset((4326, 4258, 4269, 4267, 4283, 4230, 4617, 4674, 4167, 4979, 4937, 4612, 6318))
#: EPSG projected systems in metres beyond the UTM ranges
METRE_CODES = frozenset((3857, 3395, 3035, 3034, 2154, 27700, 3413, 3031, 3976, 6933, 8857, 3112, 5070, 2056,
                         32661, 32761, 31287, 3006, 25832, 25833))
_UNITS = {"metre": "m", "meter": "m", "metres": "m", "meters": "m", "m": "m", "degree": "°", "degrees": "°",
          "deg": "°", "foot": "ft", "us survey foot": "US ft", "kilometre": "km", "kilometer": "km"}
_WKT_NAME = re.compile(r'^\s*([A-Z]+)\s*\[\s*"([^"]*)"')
_WKT_ID = re.compile(r'(?:ID|AUTHORITY)\s*\[\s*"([^"]+)"\s*,\s*"?(\d+)"?\s*\]\s*\]\s*$')
_WKT_UNIT = re.compile(r'(?:LENGTHUNIT|ANGLEUNIT|UNIT)\s*\[\s*"([^"]+)"')
_GEOGRAPHIC_WKT = ("GEOGCRS", "GEOGRAPHICCRS", "GEOGCS", "GEODCRS", "GEODETICCRS")


@dataclass(frozen=True)
class Crs:
    #: "EPSG:32633"; else the WKT2 or PROJJSON name
    name: str
    #: the WKT2 or PROJJSON name beside a code ("WGS 84 / UTM zone 33N"), or None
    title: str | None
    #: the axes' unit symbol ("m", "°", "ft"), None where the metadata does not say
    units: str | None
    geographic: bool
    #: the attribute it was read from
    source: str

    @property
    def label(self) -> str:
        """``EPSG:32633 (WGS 84 / UTM zone 33N)``: the name, and the title where it adds to it."""
        return f"{self.name} ({self.title})" if self.title and self.title != self.name else self.name


def unit_symbol(name: Any) -> str | None:
    if isinstance(name, dict):
        name = name.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    return _UNITS.get(name.strip().lower(), name.strip())


def _code_facts(code: str) -> tuple[str | None, bool]:
    """(units, geographic) a bare code implies, where it is one zarrview knows."""
    auth, _, number = code.partition(":")
    if code.upper() in ("OGC:CRS84", "OGC:CRS83", "OGC:CRS27"):
        return "°", True
    if auth.upper() != "EPSG" or not number.isdigit():
        return None, False
    n = int(number)
    if n in GEOGRAPHIC_CODES:
        return "°", True
    if 32601 <= n <= 32660 or 32701 <= n <= 32760 or 25828 <= n <= 25838 or 26901 <= n <= 26923 or n in METRE_CODES:
        return "m", False
    return None, False


def _wkt(text: str) -> tuple[str | None, str | None, str | None, bool]:
    """(name, authority code, units, geographic) of a WKT string, read leniently."""
    head = _WKT_NAME.match(text)
    keyword, name = (head.group(1), head.group(2)) if head else (None, None)
    ident = _WKT_ID.search(text.strip())
    code = f"{ident.group(1)}:{ident.group(2)}" if ident else None
    cs = text.rfind("CS[")  # the coordinate system of the CRS itself (after its base CRS)
    units = _WKT_UNIT.findall(text[cs:] if cs >= 0 else text)
    unit = unit_symbol(units[0] if cs >= 0 and units else units[-1] if units else None)
    return name, code, unit, keyword in _GEOGRAPHIC_WKT


def _projjson(obj: dict[str, Any]) -> tuple[str | None, str | None, str | None, bool]:
    name = obj.get("name") if isinstance(obj.get("name"), str) else None
    ident = obj.get("id")
    code = None
    if isinstance(ident, dict) and isinstance(ident.get("authority"), str) and ident.get("code") is not None:
        code = f"{ident['authority']}:{ident['code']}"
    cs = obj.get("coordinate_system")
    axes = cs.get("axis") if isinstance(cs, dict) else None
    unit = None
    if isinstance(axes, list) and axes and isinstance(axes[0], dict):
        unit = unit_symbol(axes[0].get("unit"))
    elif isinstance(cs, dict):
        unit = unit_symbol(cs.get("unit"))
    return name, code, unit, obj.get("type") == "GeographicCRS"


def read_crs(attrs: Any, rep: Reporter) -> Crs | None:
    """The CRS ``proj:`` attributes name, or None; each malformed attribute is a problem."""
    if not isinstance(attrs, dict):
        return None
    code = attrs.get("proj:code")
    if code is not None and not (isinstance(code, str) and ":" in code):
        rep.error("proj:code", f'"proj:code" must be text "AUTHORITY:CODE", not {code!r:.60}')
        code = None
    wkt = attrs.get("proj:wkt2")
    if wkt is not None and not isinstance(wkt, str):
        rep.error("proj:wkt2", f'"proj:wkt2" must be WKT2 text, not {type(wkt).__name__}')
        wkt = None
    pj = attrs.get("proj:projjson")
    if pj is not None and not isinstance(pj, dict):
        rep.error("proj:projjson", f'"proj:projjson" must be a PROJJSON object, not {type(pj).__name__}')
        pj = None
    if wkt:
        name, found, units, geographic = _wkt(wkt)
        source = "proj:wkt2"
    elif pj:
        name, found, units, geographic = _projjson(pj)
        source = "proj:projjson"
    else:
        name = found = units = None
        geographic = False
        source = "proj:code"
    if code:
        code_units, code_geographic = _code_facts(code)
        return Crs(code, name, units or code_units, geographic or code_geographic, "proj:code")
    if name or found:
        return Crs(found or name or "", name, units or (_code_facts(found)[0] if found else None),
                   geographic or (_code_facts(found)[1] if found else False), source)
    if any(k in attrs for k in ("proj:code", "proj:wkt2", "proj:projjson")):
        rep.warning("", "the proj: attributes name no coordinate reference system")
    return None
