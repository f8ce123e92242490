"""OME-Zarr stores for tests/viewing/test_ome_*.py, written at test time.

Three sources: ome-zarr-py (``ome_zarr_image``, ``ome_zarr_plate``: 0.4 on Zarr v2, 0.5 on v3),
the examples of the specification (``spec_example``, copied into tests/data/ome/), and stores
built by hand for what no writer makes (``hand_image``, ``bioformats2raw``, ``write_group``):
anisotropic and non-2 factors, Z-downsampled levels, translations, several multiscales, sparse
plates, broken metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import zarr

DATA = Path(__file__).resolve().parent / "data" / "ome"
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def spec_example(version: str, name: str) -> dict[str, Any]:
    """An example document of the specification (``"multiscales_strict/multiscales_example"``):
    its attributes (0.4: the ``.zattrs`` object; 0.5: the ``attributes`` of ``zarr.json``)."""
    doc = json.loads(_COMMENT.sub("", (DATA / version / f"{name}.json").read_text()))
    return doc["attributes"] if version in ("0.5", "0.6") else doc


def zarr_format(version: str) -> int:
    return 3 if version in ("0.5", "0.6") else 2


def ome_attrs(version: str, **keys: Any) -> dict[str, Any]:
    """Attributes holding OME ``keys`` the way ``version`` places them."""
    return {"ome": {"version": version, **keys}} if version in ("0.5", "0.6") else dict(keys)


def pattern(shape: Sequence[int], dtype: str = "uint16") -> np.ndarray:
    """Distinct values, so a misplaced read shows."""
    n = int(np.prod(shape))
    return (np.arange(n) % (np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else n + 1)).astype(dtype).reshape(shape)


def write_group(path: Path, version: str, attrs: dict[str, Any],
                arrays: dict[str, dict[str, Any]] | None = None, groups: Sequence[str] = ()) -> Path:
    """A group with ``attrs`` and arrays (``name -> {shape, chunks?, dtype?, dimension_names?,
    shards?, data?}``; a ``dimension_names`` of None leaves them out) and empty subgroups."""
    fmt = zarr_format(version)
    root = zarr.open_group(str(path), mode="w", zarr_format=fmt)
    root.attrs.update(attrs)
    for g in groups:
        root.require_group(g)
    for name, spec in (arrays or {}).items():
        shape = tuple(spec["shape"])
        kw: dict[str, Any] = {"shape": shape, "dtype": spec.get("dtype", "uint16"),
                              "chunks": tuple(spec.get("chunks") or shape)}
        if fmt == 3 and spec.get("dimension_names") is not None:
            kw["dimension_names"] = spec["dimension_names"]
        if fmt == 3 and spec.get("shards") is not None:
            kw["shards"] = tuple(spec["shards"])
        arr = root.create_array(name, **kw)
        data = spec.get("data")
        arr[...] = pattern(shape, kw["dtype"]) if data is None else data
    return path


def axes_list(names: str, units: dict[str, str] | None = None) -> list[dict[str, Any]]:
    kinds = {"t": "time", "c": "channel", "z": "space", "y": "space", "x": "space"}
    out = []
    for n in names:
        axis: dict[str, Any] = {"name": n, "type": kinds[n]}
        if units and n in units:
            axis["unit"] = units[n]
        out.append(axis)
    return out


def hand_image(path: Path, version: str, levels: Sequence[tuple[Sequence[int], Sequence[float], Sequence[float] | None]],
               axes: str | list[dict[str, Any]] = "zyx", *, chunks: Sequence[int] | None = None,
               units: dict[str, str] | None = None, multiscale_transforms: list[dict[str, Any]] | None = None,
               name: str = "hand", extra: dict[str, Any] | None = None,
               more_multiscales: Sequence[dict[str, Any]] = (), dimension_names: bool = True,
               dtype: str = "uint16", paths: Sequence[str] | None = None) -> Path:
    """An image whose levels are ``(shape, scale, translation or None)``, written as numbered
    arrays (or ``paths``); ``more_multiscales`` are further entries of ``multiscales`` that
    name arrays of their own (``{"name", "levels": [(path, shape, scale)]}``)."""
    axes_doc = axes_list(axes, units) if isinstance(axes, str) else axes
    names = [a["name"] for a in axes_doc]
    paths = list(paths) if paths is not None else [str(i) for i in range(len(levels))]
    datasets, arrays = [], {}
    for p, (shape, scale, shift) in zip(paths, levels):
        transforms: list[dict[str, Any]] = [{"type": "scale", "scale": list(scale)}]
        if shift is not None:
            transforms.append({"type": "translation", "translation": list(shift)})
        datasets.append({"path": p, "coordinateTransformations": transforms})
        arrays[p] = {"shape": shape, "chunks": chunks, "dtype": dtype,
                     "dimension_names": names if dimension_names else None}
    ms: dict[str, Any] = {"name": name, "axes": axes_doc, "datasets": datasets}
    if version == "0.4":
        ms["version"] = "0.4"
    if multiscale_transforms is not None:
        ms["coordinateTransformations"] = multiscale_transforms
    multiscales = [ms]
    for other in more_multiscales:
        ds = []
        for p, shape, scale in other["levels"]:
            ds.append({"path": p, "coordinateTransformations": [{"type": "scale", "scale": list(scale)}]})
            arrays[p] = {"shape": shape, "chunks": chunks, "dtype": dtype,
                         "dimension_names": names if dimension_names else None}
        entry = {"name": other["name"], "axes": axes_doc, "datasets": ds}
        if version == "0.4":
            entry["version"] = "0.4"
        multiscales.append(entry)
    return write_group(path, version, ome_attrs(version, multiscales=multiscales, **(extra or {})), arrays)


def bioformats2raw(path: Path, version: str, series: int, *, series_attr: bool, names: Sequence[str] | None = None) -> Path:
    """A bioformats2raw collection of ``series`` small 2-D images, with or without ``OME/series``."""
    names = list(names) if names is not None else [str(i) for i in range(series)]
    write_group(path, version, ome_attrs(version, **{"bioformats2raw.layout": 3}))
    ome = {"series": names} if series_attr else {}
    write_group(path / "OME", version, ome_attrs(version, **ome) if ome else {})
    for n in names:
        hand_image(path / n, version, [((16, 16), (1.0, 1.0), None)], "yx", name=f"series {n}")
    return path


# -- ome-zarr-py ----------------------------------------------------------------------------------
def _fmt(version: str) -> Any:
    from ome_zarr.format import FormatV04, FormatV05

    return FormatV05() if version == "0.5" else FormatV04()


def ome_zarr_image(path: Path, version: str, data: np.ndarray, axes: str, *, scale_factors: Sequence[Any] = (2, 4),
                   chunks: Sequence[int] | None = None, scale: dict[str, float] | None = None,
                   units: dict[str, str] | None = None, omero: dict[str, Any] | None = None,
                   labels: dict[str, np.ndarray] | None = None,
                   label_metadata: dict[str, Any] | None = None) -> Path:
    """An image written by ome-zarr-py's ``write_image`` (and ``write_labels`` for ``labels``)."""
    from ome_zarr.writer import write_image, write_labels

    fmt = _fmt(version)
    root = zarr.open_group(str(path), mode="w", zarr_format=zarr_format(version))
    kw: dict[str, Any] = {}
    if omero is not None:
        kw["omero"] = omero  # ome-zarr-py 0.18 takes it as a keyword of its own
    write_image(data, root, scale_factors=list(scale_factors), axes=axes, fmt=fmt,
                storage_options={"chunks": tuple(chunks)} if chunks else None, scale=scale, axes_units=units, **kw)
    for name, label in (labels or {}).items():
        write_labels(label, root, name=name, scaler=None, scale_factors=list(scale_factors), axes=axes, fmt=fmt,
                     label_metadata=label_metadata, scale=scale, axes_units=units)
    return path


def ome_zarr_plate(path: Path, version: str, rows: list[str], columns: list[str], wells: list[str], *,
                   fields: int = 2, shape: Sequence[int] = (1, 16, 16), axes: str = "cyx") -> Path:
    """A plate written by ome-zarr-py: ``fields`` single-level images in each of ``wells``."""
    from ome_zarr.writer import write_image, write_plate_metadata, write_well_metadata

    fmt = _fmt(version)
    root = zarr.open_group(str(path), mode="w", zarr_format=zarr_format(version))
    write_plate_metadata(root, rows, columns, wells, fmt=fmt, field_count=fields, name="test plate",
                         acquisitions=[{"id": 0, "name": "first"}])
    for w in wells:
        row, col = w.split("/")
        well = root.require_group(row).require_group(col)
        write_well_metadata(well, [{"path": str(f), "acquisition": 0} for f in range(fields)], fmt=fmt)
        for f in range(fields):
            write_image(pattern(shape), well.require_group(str(f)), scale_factors=[], axes=axes, fmt=fmt)
    return path


def ome_zarr_nodes(path: Path) -> list[Any]:
    """What ome-zarr-py's reader finds at ``path`` (its nodes: the truth for the image tests)."""
    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader

    location = parse_url(str(path))
    assert location is not None, path
    return list(Reader(location)())
