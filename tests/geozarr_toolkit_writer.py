"""Writes a GeoZarr pyramid with geozarr-toolkit 0.1.2 (run under Python 3.12 by
tests/geozarr_stores.py): the toolkit builds every attribute (zarr_conventions, the multiscales
layout, proj: and spatial: per level group) and validates them; zarr-python writes the arrays and
reads them back, saved beside the store as the truth, with truth.json naming the levels of band
"b02" and their transforms (band "b03" is written beside it in each level group).

Usage: python geozarr_toolkit_writer.py ROOT
"""

import json
import sys
from pathlib import Path

import numpy as np
import zarr
from geozarr_toolkit import (
    create_geozarr_attrs,
    create_multiscales_layout,
    create_proj_attrs,
    create_zarr_conventions,
    validate_attrs,
)
from geozarr_toolkit.conventions import (
    MultiscalesConventionMetadata,
    ProjConventionMetadata,
    SpatialConventionMetadata,
)

root = Path(sys.argv[1])
rng = np.random.default_rng(11)
h, w = 180, 240
data = (np.add.outer(np.arange(h) * 30, np.arange(w) * 11) + rng.integers(0, 50, (h, w))).astype("float32")
levels = {"r10m": 1, "r20m": 2, "r60m": 6}
base = [10.0, 0.0, 300000.0, 0.0, -10.0, 4200000.0]

layout = create_multiscales_layout(
    [{"asset": name} if f == 1 else
     {"asset": name, "derived_from": "r10m", "transform": {"scale": [float(f), float(f)], "translation": [0.0, 0.0]}}
     for name, f in levels.items()],
    resampling_method="average")
attrs = {
    "zarr_conventions": create_zarr_conventions(MultiscalesConventionMetadata(), ProjConventionMetadata(),
                                                SpatialConventionMetadata()),
    **layout,
    **create_proj_attrs(code="EPSG:32610"),
    "spatial:dimensions": ["y", "x"],
}
problems = {"/": validate_attrs(attrs)}  # the toolkit's own verdict: every convention's list of errors
group = zarr.open_group(str(root), mode="w", zarr_format=3, attributes=attrs)
transforms = {}
for name, f in levels.items():
    level = data.reshape(h // f, f, w // f, f).mean(axis=(1, 3)).astype("float32")
    transform = [base[0] * f, 0.0, base[2], 0.0, base[4] * f, base[5]]
    level_attrs = create_geozarr_attrs(["y", "x"], crs="EPSG:32610", transform=transform,
                                       shape=list(level.shape),
                                       bbox=[base[2], base[5] + base[4] * h, base[2] + base[0] * w, base[5]])
    problems[name] = validate_attrs(level_attrs)
    sub = group.create_group(name, attributes=level_attrs)
    arr = sub.create_array("b02", shape=level.shape, dtype=level.dtype, chunks=(64, 64), dimension_names=("y", "x"))
    arr[...] = level
    transforms[f"{name}/b02"] = transform
    # a second band in each level group: a pyramid of its own
    sub.create_array("b03", shape=level.shape, dtype=level.dtype, chunks=(64, 64), dimension_names=("y", "x"))[...] = \
        level * 2 + 1
back = zarr.open_group(str(root), mode="r")
for path in [*transforms, *(p.replace("b02", "b03") for p in transforms)]:
    np.save(root.parent / f"{path.replace('/', '_')}.npy", np.asarray(back[path][...]))
(root.parent / "truth.json").write_text(json.dumps({"levels": list(transforms), "transforms": transforms,
                                                    "attrs": dict(back.attrs), "problems": problems}))
