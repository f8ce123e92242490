"""HDF5 files written with h5py and the kerchunk reference sets of them (JSON and Parquet), for
the reference tests: h5py reading the same file is the truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

RNG = np.random.default_rng(7)
#: name -> (values, h5py create_dataset options)
DATASETS: dict[str, tuple[np.ndarray, dict[str, Any]]] = {
    "temp": (RNG.normal(size=(40, 30)).astype("f4"), {"chunks": (10, 15), "compression": "gzip", "shuffle": True}),
    "counts": (np.arange(120, dtype="<i8").reshape(6, 20) * 3 - 50, {}),  # contiguous
    "mask": ((np.arange(64) % 3 == 0).astype("u1"), {"chunks": (16,), "compression": "gzip"}),
    "level": (np.arange(50, dtype=">i2") - 25, {"chunks": (20,), "shuffle": True}),
    "scalar": (np.array(6.25, dtype="f8"), {}),
    "grp/deep": (np.linspace(0, 1, 24, dtype="f8").reshape(2, 3, 4), {"chunks": (1, 3, 2), "compression": "gzip"}),
    "names": (np.array([b"alpha", b"beta", b"gamma"], dtype="S6"), {}),  # fixed-length strings
    "wave": ((np.arange(12) + 0.5j).astype("c8"), {"chunks": (5,)}),
}


def write_hdf5(path: Path) -> Path:
    import h5py

    with h5py.File(path, "w") as f:
        for name, (values, options) in DATASETS.items():
            ds = f.create_dataset(name, data=values, **options)
            ds.attrs["units"] = "K" if name == "temp" else "1"
        f.attrs["title"] = "reference test"
        f.attrs["version"] = 3
    return path


def kerchunk_json(h5: Path, out: Path, inline: int = 0) -> dict[str, Any]:
    """kerchunk's references of ``h5`` (targets as absolute paths), written to ``out``."""
    from kerchunk.hdf import SingleHdf5ToZarr

    refs = SingleHdf5ToZarr(str(h5), inline_threshold=inline).translate()
    out.write_text(json.dumps(refs))
    return refs


def kerchunk_parquet(refs: dict[str, Any], out: Path, record_size: int = 5) -> Path:
    from kerchunk.df import refs_to_dataframe

    refs_to_dataframe(refs, str(out), record_size=record_size)
    return out


def truth(h5: Path, name: str) -> np.ndarray:
    import h5py

    with h5py.File(h5, "r") as f:
        return np.asarray(f[name][()])
