"""Writes SpatialData stores with spatialdata itself (run in the Python 3.12 oracle venv) and
what spatialdata reads back from them: the truth the SpatialData tests compare against.

    python spatialdata_writer.py OUT

OUT/blobs.zarr      spatialdata.datasets.blobs(), written as spatialdata 0.8 writes by default
                    (Zarr v3, OME-NGFF "0.5-dev-spatialdata")
OUT/moved.zarr      the blobs with elements moved: the multiscale image and the labels by
                    sequences of a scale and a translation, points by an affine, polygons by a
                    translation, circles also into a second coordinate system
OUT/v01.zarr        the moved blobs in the older container format (Zarr v2, OME "0.4-dev-spatialdata")
OUT/geoarrow.zarr   the moved blobs with shapes in GeoArrow's native encoding instead of WKB
OUT/expected.json   for each store, from ``spatialdata.read_zarr`` of it: every element by kind,
                    each element's transformations as 3 x 3 matrices over (x, y)
                    (``to_affine_matrix``), points' and shapes' coordinates, radii and rings,
                    and the .npy files of image and label arrays
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import spatialdata as sd
from spatialdata._io.format import SpatialDataContainerFormatV01
from spatialdata.datasets import blobs
from xarray import DataArray
from spatialdata.transformations import Affine, Scale, Sequence, Translation, get_transformation, set_transformation

XY = ("x", "y")


def moved() -> sd.SpatialData:
    s = blobs()
    for element in [*s.points.values(), *s.shapes.values()]:  # blobs() shares one dict among them
        element.attrs["transform"] = dict(element.attrs["transform"])
    set_transformation(s.images["blobs_multiscale_image"],
                       Sequence([Scale([2.0, 2.0], axes=("y", "x")), Translation([3.0, -7.0], axes=("y", "x"))]),
                       "global")
    set_transformation(s.labels["blobs_labels"],
                       Sequence([Scale([2.0, 2.0], axes=("y", "x")), Translation([10.0, -5.0], axes=("y", "x"))]),
                       "global")
    set_transformation(s.points["blobs_points"],
                       Affine(np.array([[0.5, 0.1, 3.0], [0.0, 0.5, 4.0], [0.0, 0.0, 1.0]]), input_axes=XY,
                              output_axes=XY), "global")
    set_transformation(s.shapes["blobs_polygons"], Translation([20.0, 30.0], axes=XY), "global")
    set_transformation(s.shapes["blobs_circles"], Scale([1.5, 1.5], axes=XY), "other")
    return s


def truth(path: Path, out: Path, tag: str) -> dict:
    s = sd.read_zarr(path)
    doc: dict = {"elements": {}, "transforms": {}, "points": {}, "circles": {}, "polygons": {}, "arrays": {}}
    for kind in ("images", "labels", "points", "shapes", "tables"):
        doc["elements"][kind] = sorted(getattr(s, kind).keys())
    for kind in ("images", "labels", "points", "shapes"):
        for name, element in getattr(s, kind).items():
            every = get_transformation(element, get_all=True)
            doc["transforms"][name] = {cs: t.to_affine_matrix(input_axes=XY, output_axes=XY).tolist()
                                       for cs, t in every.items()}
    for kind in ("images", "labels"):
        for name, element in getattr(s, kind).items():
            data = element if isinstance(element, DataArray) else next(iter(element["scale0"].ds.data_vars.values()))
            file = out / f"{tag}-{name}.npy"
            np.save(file, np.asarray(data.values))
            doc["arrays"][name] = file.name
    for name, points in s.points.items():
        frame = points.compute()
        doc["points"][name] = {"x": frame["x"].astype(float).tolist(), "y": frame["y"].astype(float).tolist(),
                               "genes": frame["genes"].astype(str).tolist()}
    for name, shapes in s.shapes.items():
        kinds = set(shapes.geometry.geom_type)
        if kinds == {"Point"}:
            doc["circles"][name] = {"x": shapes.geometry.x.tolist(), "y": shapes.geometry.y.tolist(),
                                    "radius": shapes["radius"].astype(float).tolist()}
        else:
            rings = []
            for geom in shapes.geometry:
                parts = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
                for part in parts:
                    rings.append(np.asarray(part.exterior.coords).tolist())
                    rings += [np.asarray(r.coords).tolist() for r in part.interiors]
            doc["polygons"][name] = rings
    doc["version"] = sd.__version__
    return doc


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    blobs().write(out / "blobs.zarr", overwrite=True)
    moved().write(out / "moved.zarr", overwrite=True)
    moved().write(out / "v01.zarr", overwrite=True, sdata_formats=SpatialDataContainerFormatV01())
    moved().write(out / "geoarrow.zarr", overwrite=True, shapes_geometry_encoding="geoarrow")
    expected = {tag: truth(out / f"{tag}.zarr", out, tag) for tag in ("blobs", "moved", "v01", "geoarrow")}
    (out / "expected.json").write_text(json.dumps(expected))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
