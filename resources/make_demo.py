"""Writes resources/demo.zarr, the sample hierarchy behind ``zarrview --demo``.

Run by developers with zarr-python installed (a test extra, never a run-time dependency);
the output is committed so the app ships it as data. Deterministic: same bytes every run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import zarr

OUT = Path(__file__).parent / "demo.zarr"


def cells(shape: tuple[int, int, int]) -> np.ndarray:
    """A synthetic fluorescence stack: blobs drifting through z on a dim, noisy background."""
    rng = np.random.default_rng(7)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float32) for n in shape), indexing="ij")
    img = 120 + 8 * rng.standard_normal(shape).astype(np.float32)
    for _ in range(40):
        cy, cx, cz = rng.uniform(0, shape[1]), rng.uniform(0, shape[2]), rng.uniform(0, shape[0])
        r = rng.uniform(6, 18)
        bright = rng.uniform(800, 3000)
        img += bright * np.exp(-(((y - cy - 2 * (z - cz)) ** 2 + (x - cx) ** 2) / (2 * r * r) + (z - cz) ** 2 / 18))
    return np.clip(img, 0, 65535).astype(np.uint16)


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    root = zarr.open_group(OUT, mode="w", zarr_format=3)
    root.attrs.update({"title": "zarrview demo", "description": "A small hierarchy showing what zarrview reads."})
    img = root.create_array("cells", shape=(24, 256, 256), chunks=(1, 64, 64), shards=(8, 128, 128),
                            dtype="u2", dimension_names=["z", "y", "x"],
                            compressors=[zarr.codecs.ZstdCodec(level=5)])
    img[...] = cells((24, 256, 256))
    img.attrs.update({"units": "counts", "voxel_size_um": [2.0, 0.5, 0.5]})

    # a v2, xarray-style dataset beside the v3 image: named dimensions through _ARRAY_DIMENSIONS
    weather = zarr.open_group(OUT / "weather", mode="w", zarr_format=2)
    weather.attrs.update({"Conventions": "CF-1.8", "title": "synthetic surface temperature"})
    t, lat, lon = 12, 90, 180
    lats = np.linspace(-89, 89, lat, dtype="f4")
    lons = np.linspace(-179, 179, lon, dtype="f4")
    months = np.arange(t)
    temp = (15 + 25 * np.cos(np.deg2rad(lats))[None, :, None]
            - 10 * np.sin(2 * np.pi * months / 12)[:, None, None] * np.sign(lats)[None, :, None]
            + 3 * np.sin(np.deg2rad(3 * lons))[None, None, :]).astype("f4")
    for name, data, dims, attrs in [
        ("temperature", temp, ["time", "lat", "lon"], {"units": "degC", "long_name": "air temperature"}),
        ("lat", lats, ["lat"], {"units": "degrees_north"}),
        ("lon", lons, ["lon"], {"units": "degrees_east"}),
        ("time", _mid_months(t), ["time"], {"units": "days since 2020-01-01", "calendar": "standard",
                                             "standard_name": "time"}),
    ]:
        a = weather.create_array(name, shape=data.shape, chunks=tuple(min(s, 45) for s in data.shape),
                                 dtype=data.dtype, fill_value=np.nan if data.dtype.kind == "f" else None)
        a[...] = data
        a.attrs.update({"_ARRAY_DIMENSIONS": dims, **attrs})
    stations = weather.create_array("station", shape=(6,), chunks=(6,), dtype=str)
    stations[...] = np.array(["Reykjavík", "Nairobi", "São Paulo", "Tromsø", "Ushuaia", "Ōsaka"], dtype=object)
    stations.attrs["_ARRAY_DIMENSIONS"] = ["station"]
    root.create_array("scalar", shape=(), dtype="f8", fill_value=0.0)[()] = 6.02214076e23
    labels = root.create_array("labels", shape=(5,), chunks=(5,), dtype=str)
    labels[...] = np.array(["nucleus", "cytoplasm", "membrane", "mitochondrion", "background"], dtype=object)


def _mid_months(n: int) -> np.ndarray:
    """Days since 2020-01-01 of the 15th of each of ``n`` months (CF: "months" are not calendar months)."""
    months = np.datetime64("2020-01", "M") + np.arange(n)
    return ((months.astype("datetime64[D]") + 14) - np.datetime64("2020-01-01", "D")).astype("i4")


if __name__ == "__main__":
    main()
