"""Which attribute keys belong to a convention, so the attributes view can mark them.

A geoscience array's attributes mix what its author wrote (``long_name``, ``history``) with keys
a convention gives a meaning to and a reader acts on (``scale_factor``, ``_ARRAY_DIMENSIONS``,
NCZarr's bookkeeping, GeoZarr's ``proj:code``); marking the latter tells a person which keys
change what the viewer shows. GeoZarr-style metadata is also summarised as short text for the
metadata panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: CF 1.12 appendix A (every attribute of Table A.1)
CF_ATTRIBUTES = frozenset((
    "actual_range", "add_offset", "aggregated_data", "aggregated_dimensions", "algorithm",
    "ancillary_variables", "axis", "bounds", "calendar", "cell_measures", "cell_methods", "cf_role",
    "climatology", "comment", "compress", "computed_standard_name", "Conventions",
    "coordinate_interpolation", "coordinates", "_FillValue", "featureType", "flag_masks", "flag_meanings",
    "flag_values", "formula_terms", "geometry", "geometry_type", "grid_mapping", "history",
    "implementation", "instance_dimension", "institution", "interior_ring", "leap_month", "leap_year",
    "location", "location_index_set", "long_name", "mesh", "missing_value", "month_lengths",
    "node_coordinates", "node_count", "nodes", "part_node_count", "positive", "quantization",
    "quantization_nsb", "quantization_nsd", "references", "sample_dimension", "scale_factor", "select",
    "source", "standard_error_multiplier", "standard_name", "title", "units", "units_metadata",
    "valid_max", "valid_min", "valid_range",
))
#: CF appendix F: the attributes of grid mapping variables (appendix A leaves them out)
CF_GRID_MAPPING_ATTRIBUTES = frozenset((
    "azimuth_of_central_line", "crs_wkt", "earth_radius", "false_easting", "false_northing",
    "fixed_angle_axis", "geographic_crs_name", "geoid_name", "geopotential_datum_name", "grid_mapping_name",
    "grid_north_pole_latitude", "grid_north_pole_longitude", "horizontal_datum_name", "inverse_flattening",
    "latitude_of_projection_origin", "longitude_of_central_meridian", "longitude_of_prime_meridian",
    "longitude_of_projection_origin", "north_pole_grid_longitude", "perspective_point_height",
    "prime_meridian_name", "projected_crs_name", "reference_ellipsoid_name", "scale_factor_at_central_meridian",
    "scale_factor_at_projection_origin", "semi_major_axis", "semi_minor_axis", "standard_parallel",
    "straight_vertical_longitude_from_pole", "sweep_angle_axis", "towgs84",
))
#: netCDF User Guide conventions that CF builds on but does not list
NETCDF_ATTRIBUTES = frozenset(("_Unsigned", "_ChunkSizes", "_Storage", "_Endianness", "_NoFill",
                               "_DeflateLevel", "_Shuffle", "_Fletcher32", "_Netcdf4Dimid",
                               "_QuantizeBitGroomNumberOfSignificantDigits",
                               "_QuantizeGranularBitRoundNumberOfSignificantDigits",
                               "_QuantizeBitRoundNumberOfSignificantBits"))
#: xarray's own encodings (the dimension names of v2 stores, char arrays' text encoding)
XARRAY_ATTRIBUTES = frozenset(("_ARRAY_DIMENSIONS", "_Encoding"))
GEOZARR_PREFIXES = ("spatial:", "proj:")
_TEXT_LIMIT = 80


def convention_of(key: str) -> str | None:
    """"CF", "NetCDF", "xarray", "NCZarr" or "GeoZarr" for an attribute key a convention defines,
    else None. Case matters as CF's does (``Conventions``, ``featureType``), except NCZarr's
    keys, which netCDF-C wrote in upper case before 4.9 and in lower case since."""
    if not isinstance(key, str):
        return None
    if key.lower().startswith("_nczarr"):
        return "NCZarr"
    if key in XARRAY_ATTRIBUTES:
        return "xarray"
    if key in CF_ATTRIBUTES or key in CF_GRID_MAPPING_ATTRIBUTES:
        return "CF"
    if key in NETCDF_ATTRIBUTES:
        return "NetCDF"
    if key == "zarr_conventions" or key.startswith(GEOZARR_PREFIXES):
        return "GeoZarr"
    return None


def geo_metadata(attrs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """GeoZarr-style metadata as (name, short text) rows for the metadata panel: the conventions
    declared in ``zarr_conventions`` (by name), then every ``spatial:*`` and ``proj:*`` key in the
    order written. Empty where there is none; any value is shown, whatever its type."""
    if not isinstance(attrs, Mapping):
        return []
    rows: list[tuple[str, str]] = []
    if "zarr_conventions" in attrs:
        rows.append(("zarr_conventions", _conventions_text(attrs["zarr_conventions"])))
    for key, value in attrs.items():
        if isinstance(key, str) and key.startswith(GEOZARR_PREFIXES):
            rows.append((key, short_text(value)))
    return rows


def _conventions_text(value: Any) -> str:
    if not isinstance(value, list):
        return short_text(value)
    names = []
    for entry in value:
        if isinstance(entry, dict):
            label = entry.get("name") or entry.get("uuid") or entry.get("spec_url") or entry.get("schema_url")
            names.append(str(label) if label else short_text(entry))
        else:
            names.append(short_text(entry))
    return _clip(", ".join(names))


def short_text(value: Any) -> str:
    """A JSON value in a line: numbers to ten significant digits, lists joined with commas, an
    object (a PROJJSON CRS) by its ``name`` where it has one; clipped to 80 characters."""
    return _clip(_text(value))


def _text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, dict):
        name = value.get("name")
        kind = value.get("type")
        if isinstance(name, str):
            return f"{name} ({kind})" if isinstance(kind, str) else name
        return "{" + ", ".join(str(k) for k in value) + "}"
    return repr(value)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT - 1] + "…"
