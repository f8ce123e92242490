"""GeoZarr stores written by the convention libraries themselves, with the truth to compare to.

``zarr_cm_pyramid`` writes a three-level pyramid whose attributes zarr-cm 0.5 builds (its
``insert`` for the multiscales, proj and spatial conventions) and whose arrays zarr-python writes;
``toolkit_pyramid`` runs ``geozarr_toolkit_writer.py`` under Python 3.12 with geozarr-toolkit
0.1.2, which builds the attributes, and zarr-python there writes and reads back the levels.
Each returns the levels as zarr reads them and each level's declared transform.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import py312_env

TOOLKIT = py312_env.ORACLES
WRITER = Path(__file__).with_name("geozarr_toolkit_writer.py")
CRS = "EPSG:32633"
BASE = (10.0, 0.0, 500000.0, 0.0, -10.0, 5000000.0)
#: level factors along Y and X (not powers of two, and not the same along both axes)
FACTORS = ((1, 1), (2, 3), (6, 6))


@dataclass
class Written:
    root: Path
    #: level path (relative to the root) -> the level's values as zarr reads them
    levels: dict[str, np.ndarray]
    #: level path -> its spatial:transform as written
    transforms: dict[str, list[float]]
    attrs: dict
    #: another band's levels (level groups with several arrays), by path
    other: dict[str, np.ndarray] | None = None


def source_data(shape: tuple[int, ...] = (2, 120, 90), seed: int = 7) -> np.ndarray:
    """Level 0: (band, y, x) uint16 with a gradient (so placement errors show) and noise."""
    rng = np.random.default_rng(seed)
    bands, h, w = shape
    base = np.add.outer(np.arange(h) * 40, np.arange(w) * 7)[None, :, :] + np.arange(bands)[:, None, None] * 5000
    return (base + rng.integers(0, 30, shape)).astype("uint16")


def downsample(data: np.ndarray, fy: int, fx: int) -> np.ndarray:
    """Block means over fy × fx pixels (the shape cut to whole blocks)."""
    b, h, w = data.shape
    cut = data[:, : h // fy * fy, : w // fx * fx].astype("float64")
    return cut.reshape(b, h // fy, fy, w // fx, fx).mean(axis=(2, 4)).astype(data.dtype)


def level_transform(fy: int, fx: int, base: tuple[float, ...] = BASE) -> list[float]:
    a, b, c, d, e, f = base
    return [a * fx, b, c, d, e * fy, f]


def zarr_cm_pyramid(root: Path, base: tuple[float, ...] = BASE) -> Written:
    """Array assets "0", "1", "2" directly in the root group (the COG-like layout); ``base`` is
    level 0's transform."""
    import zarr
    from zarr_cm import multiscales, proj, spatial

    data = source_data()
    layout, arrays = [], {}
    for i, (fy, fx) in enumerate(FACTORS):
        level = downsample(data, fy, fx)
        arrays[str(i)] = level
        item = {"asset": str(i), "transform": {"scale": [float(fy), float(fx)], "translation": [0.0, 0.0]},
                "spatial:transform": level_transform(fy, fx, base), "spatial:shape": list(level.shape[1:])}
        if i:
            item["derived_from"] = "0"
        layout.append(item)
    attrs = multiscales.insert({}, {"layout": layout, "resampling_method": "average"})
    attrs = proj.insert(attrs, {"proj:code": CRS})
    attrs = spatial.insert(attrs, {"spatial:dimensions": ["y", "x"], "spatial:transform": list(base),
                                   "spatial:bbox": [500000.0, 4998800.0, 500900.0, 5000000.0]})
    group = zarr.open_group(str(root), mode="w", zarr_format=3, attributes=attrs)
    for name, level in arrays.items():
        arr = group.create_array(name, shape=level.shape, dtype=level.dtype, chunks=(1, 32, 32),
                                 dimension_names=("band", "y", "x"))
        arr[...] = level
    back = zarr.open_group(str(root), mode="r")
    return Written(root, {n: np.asarray(back[n][...]) for n in arrays},
                   {it["asset"]: it["spatial:transform"] for it in layout}, dict(back.attrs))


def toolkit_pyramid(root: Path) -> Written:
    """Level groups "r10m", "r20m", "r60m" each holding "b02" (the Sentinel-2 layout), written
    under Python 3.12 by geozarr-toolkit and zarr-python; skips where that cannot be set up."""
    python = py312_env.require(TOOLKIT)
    py312_env.run(python, WRITER, str(root), timeout=300)
    truth = json.loads((root.parent / "truth.json").read_text())
    levels = {p: np.load(root.parent / f"{p.replace('/', '_')}.npy") for p in truth["levels"]}
    return Written(root, levels, truth["transforms"], truth["attrs"],
                   {p: np.load(root.parent / f"{p.replace('/', '_')}.npy")
                    for p in (q.replace("b02", "b03") for q in truth["levels"])})


CRS_WRITER = Path(__file__).with_name("geozarr_crs_writer.py")


def crs_stores(folder: Path) -> dict:
    """``wkt.zarr`` (EPSG:4326 as WKT2, a (lon, lat) array) and ``projjson.zarr`` (EPSG:32610 as
    PROJJSON, a two-level pyramid) written under Python 3.12; what pyproj says of each CRS."""
    python = py312_env.require(TOOLKIT)
    py312_env.run(python, CRS_WRITER, str(folder), timeout=300)
    return json.loads((folder / "crs.json").read_text())
