"""Writes GeoZarr stores whose CRS is given as WKT2 and as PROJJSON (run under Python 3.12 by
tests/geozarr_stores.py): pyproj, which geozarr-toolkit 0.1.2 depends on, writes the WKT2 and
PROJJSON of an EPSG code and says what they mean (name, code, axis unit, geographic); the
toolkit builds the proj: and spatial: attributes; zarr-python writes the arrays and reads them back.

Usage: python geozarr_crs_writer.py FOLDER
"""

import json
import sys
from pathlib import Path

import numpy as np
import pyproj
import zarr
from geozarr_toolkit import create_geozarr_attrs, create_multiscales_layout, create_proj_attrs, create_zarr_conventions
from geozarr_toolkit.conventions import MultiscalesConventionMetadata, ProjConventionMetadata, SpatialConventionMetadata

folder = Path(sys.argv[1])
truth = {}


def facts(crs: pyproj.CRS) -> dict:
    return {"name": crs.name, "code": f"EPSG:{crs.to_epsg()}", "unit": crs.axis_info[0].unit_name,
            "geographic": crs.is_geographic}


# a geographic grid stored (lon, lat): spatial:dimensions names Y first, whatever the storage order
geographic = pyproj.CRS("EPSG:4326")
transform = [2.0, 0.0, -180.0, 0.0, -2.0, 90.0]
attrs = create_geozarr_attrs(["lat", "lon"], crs=geographic.to_wkt(), transform=transform, shape=[90, 180])
group = zarr.open_group(str(folder / "wkt.zarr"), mode="w", zarr_format=3)
data = np.add.outer(np.arange(180), np.arange(90) * 1000).astype("int32")
arr = group.create_array("temperature", shape=data.shape, dtype=data.dtype, chunks=(64, 64),
                         dimension_names=("lon", "lat"), attributes=attrs)
arr[...] = data
np.save(folder / "wkt.npy", np.asarray(zarr.open_array(str(folder / "wkt.zarr" / "temperature"), mode="r")[...]))
truth["wkt"] = {**facts(geographic), "transform": transform, "attrs": attrs}

# a projected pyramid whose CRS is PROJJSON, each level's transform in the level group
projected = pyproj.CRS("EPSG:32610")
root_attrs = {"zarr_conventions": create_zarr_conventions(MultiscalesConventionMetadata(), ProjConventionMetadata(),
                                                          SpatialConventionMetadata()),
              **create_multiscales_layout([{"asset": "a"}, {"asset": "b", "derived_from": "a",
                                                             "transform": {"scale": [4.0, 4.0]}}]),
              **create_proj_attrs(projjson=projected.to_json_dict())}
group = zarr.open_group(str(folder / "projjson.zarr"), mode="w", zarr_format=3, attributes=root_attrs)
base = np.arange(64 * 96, dtype="float32").reshape(64, 96)
levels = {"a": base, "b": base.reshape(16, 4, 24, 4).mean(axis=(1, 3))}
transforms = {}
for name, level in levels.items():
    f = 1 if name == "a" else 4
    transforms[name] = [30.0 * f, 0.0, 550000.0, 0.0, -30.0 * f, 4100000.0]
    a = group.create_array(name, shape=level.shape, dtype=level.dtype, chunks=(32, 32), dimension_names=("y", "x"),
                           attributes=create_geozarr_attrs(["y", "x"], transform=transforms[name],
                                                           shape=list(level.shape)))
    a[...] = level
truth["projjson"] = {**facts(projected), "transforms": transforms}
(folder / "crs.json").write_text(json.dumps(truth))
