"""One store of each kind a node can be shown as, for the decision of what is shown
(``zarrview.viewing.decision``) and for the window and the commands that act on it: plain arrays
of 1, 2 and 3 dimensions, records, an array whose storage order is (X, Y), an OME-Zarr image and
label image, an OME group whose metadata names no pyramid, a GeoZarr pyramid, a plain group, an
array with a codec zarrview does not have, an OME-Zarr image whose level 0 has such a codec, an AnnData dataframe, a plate and a well. Each is a
location as a person types it (``PATH::/node``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import zarr

import geozarr_stores as gs
from ome_stores import hand_image, ome_attrs, write_group

#: the 3-D array's values (z, y, x)
VOLUME = (np.arange(4 * 30 * 50, dtype="i4") * 31 % 9973).reshape(4, 30, 50).astype("u2")


def decision_stores(folder: Path) -> dict[str, str]:
    """Every store, by the name of what it holds, as the location of its node."""
    out: dict[str, str] = {}
    plain = zarr.open_group(str(folder / "plain.zarr"), mode="w", zarr_format=3)
    plain.create_array("vol", shape=VOLUME.shape, chunks=(1, 16, 16), dtype="u2",
                       dimension_names=["z", "y", "x"])[...] = VOLUME
    plain.create_array("flat", shape=(20, 30), chunks=(20, 30), dtype="f4")[...] = 1.5
    plain.create_array("line", shape=(10,), chunks=(10,), dtype="f4")[...] = np.arange(10)
    plain.create_array("xy", shape=(6, 4), dtype="f4", dimension_names=["x", "y"],
                       attributes={"spatial:dimensions": ["y", "x"]})[...] = np.arange(24).reshape(6, 4)
    plain.create_array("bad", shape=(6, 7), chunks=(3, 7), dtype="i2")[...] = 1
    doc = folder / "plain.zarr" / "bad" / "zarr.json"
    meta = json.loads(doc.read_text())
    meta["codecs"].append({"name": "nonexistent_codec"})
    doc.write_text(json.dumps(meta))
    sub = plain.create_group("sub")
    sub.create_array("x", shape=(2,), dtype="i4")[...] = [7, 8]
    out.update({name: f"{folder / 'plain.zarr'}::/{name}" for name in ("vol", "flat", "line", "xy", "bad", "sub")})

    records = zarr.open_group(str(folder / "records.zarr"), mode="w", zarr_format=2)
    rec = records.create_array("rec", shape=(4, 5), dtype=[("a", "<i4"), ("b", "<f4")], fill_value=None)
    rec[...] = np.zeros((4, 5), dtype=[("a", "<i4"), ("b", "<f4")])
    out["records"] = f"{folder / 'records.zarr'}::/rec"

    out["image"] = str(hand_image(folder / "image.zarr", "0.4",
                                  [((4, 30, 50), (1, 1, 1), None), ((4, 15, 25), (1, 2, 2), None)], "zyx"))
    out["image without level 0"] = str(hand_image(folder / "no0.zarr", "0.4",
                                                  [((4, 30, 50), (1, 1, 1), None), ((4, 15, 25), (1, 2, 2), None)],
                                                  "zyx"))
    level0 = folder / "no0.zarr" / "0" / ".zarray"
    meta = json.loads(level0.read_text())
    meta["compressor"] = {"id": "nonexistent_codec"}
    level0.write_text(json.dumps(meta))
    out["label image"] = str(hand_image(folder / "label.zarr", "0.4", [((30, 50), (1, 1), None)], "yx",
                                        dtype="uint8", extra={"image-label": {"colors": []}}))
    out["broken image"] = str(write_group(folder / "broken.zarr", "0.4",
                                          {"multiscales": [{"version": "0.4", "datasets": "0"}]},
                                          {"0": {"shape": (20, 30), "dtype": "uint8"}}))
    out["pyramid"] = str(gs.zarr_cm_pyramid(folder / "geo.zarr").root)

    frame = zarr.open_group(str(folder / "frame.zarr"), mode="w", zarr_format=2)
    frame.attrs.update({"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index",
                        "column-order": []})
    frame.create_array("_index", shape=(3,), dtype=str)[...] = np.array(["a", "b", "c"], dtype=object)
    out["dataframe"] = str(folder / "frame.zarr")

    plate = {"rows": [{"name": "A"}], "columns": [{"name": "1"}],
             "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0}]}
    root = write_group(folder / "plate.zarr", "0.4", ome_attrs("0.4", plate=plate))
    write_group(root / "A", "0.4", {})
    write_group(root / "A" / "1", "0.4", ome_attrs("0.4", well={"images": [{"path": "0"}]}))
    hand_image(root / "A" / "1" / "0", "0.4", [((30, 50), (1, 1), None)], "yx")
    out["plate"] = str(root)
    out["well"] = f"{root}::/A/1"
    return out
