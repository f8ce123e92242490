"""``.ozx`` files written by the writers that make them (ngff-zarr, bioio-ome-zarr), read by
zarrview: values equal to the writer's input array at full resolution, and to what the
writer's own reader (ngff-zarr) or zarr-python's ZipStore (bioio-ome-zarr) reads at every level;
the comment each writer leaves is the one ``ZipStore.archive`` reports.

The writers pull in dask, itkwasm, scikit-image and more, which the test environment does not
carry, so they run in a cached virtual environment of their own (pinned versions, this
interpreter, the test environment's packages visible under it), built once by ``writers_python``
and skipped, with the reason, where it cannot be built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import ZipStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

#: the writers and the versions whose .ozx output these tests were written against
WRITERS = ("ngff-zarr==0.50.0", "bioio-ome-zarr==3.8.1")
_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "zarrview-tests"


def writers_python() -> Path:
    """The interpreter of a virtual environment holding ``WRITERS``, built on first use and
    kept (keyed by the interpreter and the pins); skips the test where pip cannot install them."""
    key = f"ozx-writers-py{sys.version_info[0]}{sys.version_info[1]}-" + "-".join(w.replace("==", "_") for w in WRITERS)
    env = _CACHE / key
    python = env / "bin" / "python"
    done = env / ".complete"
    if done.is_file() and python.is_file():
        return python
    env.parent.mkdir(parents=True, exist_ok=True)
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--clear", str(env)],
                          capture_output=True, text=True, timeout=120)
    if made.returncode != 0:
        pytest.skip(f"cannot make a virtual environment for the .ozx writers: {made.stderr.strip()[-300:]}")
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *WRITERS],
                         capture_output=True, text=True, timeout=540)
    if pip.returncode != 0:
        pytest.skip(f"cannot install {', '.join(WRITERS)}: {pip.stderr.strip()[-300:]}")
    done.write_text("\n".join(WRITERS))
    return python


def run_writer(script: str, *args: str) -> str:
    out = subprocess.run([str(writers_python()), "-c", textwrap.dedent(script), *args], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


NGFF_ZARR = """
    import json, sys
    import numpy as np
    import ngff_zarr as nz

    out, truth = sys.argv[1], sys.argv[2]
    data = np.random.default_rng(3).integers(0, 4000, (2, 70, 90), dtype="uint16")
    np.save(truth + "/input.npy", data)
    image = nz.to_ngff_image(data, dims=["c", "y", "x"], scale={"y": 0.5, "x": 0.5})
    multiscales = nz.to_multiscales(image, scale_factors=[2], chunks=16)
    nz.to_ngff_zarr(out, multiscales, version="0.5")
    back = nz.from_ngff_zarr(out)
    paths = [d.path for d in back.metadata.datasets]
    for i, img in enumerate(back.images):
        np.save(f"{truth}/level{i}.npy", np.asarray(img.data))
    print(json.dumps(paths))
"""

BIOIO = """
    import json, sys
    import numpy as np
    from bioio_ome_zarr.writers import OMEZarrWriter

    out, truth = sys.argv[1], sys.argv[2]
    data = np.random.default_rng(4).integers(0, 4000, (2, 70, 90), dtype="uint16")
    np.save(truth + "/input.npy", data)
    writer = OMEZarrWriter(out, level_shapes=[(2, 70, 90), (2, 35, 45)], dtype="uint16", chunk_shape=(1, 16, 16),
                           shard_shape=(1, 32, 32), zarr_format=3, axes_names=["c", "y", "x"],
                           axes_types=["channel", "space", "space"])
    writer.write_full_volume(data)
    writer.close()
    print(json.dumps(["0", "1"]))
"""


def _zip_truth(path: Path, level: str) -> np.ndarray:
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        return np.asarray(zarr.open_array(store, path=level, mode="r")[...])
    finally:
        store.close()


def _check(path: Path, truth: Path, paths: list[str], own_reader: bool) -> ZipStore:
    root = zl.open(path)
    assert isinstance(root, zl.Group) and isinstance(root.store, ZipStore)
    assert root.attrs["ome"]["version"] == "0.5"
    np.testing.assert_array_equal(root[paths[0]][...], np.load(truth / "input.npy"))
    for i, level in enumerate(paths):
        expected = np.load(truth / f"level{i}.npy") if own_reader else _zip_truth(path, level)
        np.testing.assert_array_equal(zl.open(f"{path}::/{level}")[...], expected)
    return root.store


def _comment(path: Path) -> dict:
    return json.loads(zipfile.ZipFile(path).comment)


def test_ngff_zarr_writes_an_ozx_zarrview_reads(tmp_path: Path) -> None:
    path = tmp_path / "ngff.ozx"
    paths = json.loads(run_writer(NGFF_ZARR, str(path), str(tmp_path)))
    store = _check(path, tmp_path, paths, own_reader=True)
    archive = store.archive
    assert archive.comment == _comment(path) and archive.ome_version == "0.5" and archive.json_first
    names = [i.filename for i in zipfile.ZipFile(path).infolist()]
    assert names[0] == "zarr.json"
    # what departs from the recommendations is said, and only that
    expected = [] if archive.zip64 else ["does not use the ZIP64 format"]
    assert len(archive.notes) == len(expected) and all(e in n for e, n in zip(expected, archive.notes)), \
        archive.notes


def test_bioio_ome_zarr_writes_an_ozx_zarrview_reads(tmp_path: Path) -> None:
    path = tmp_path / "bioio.ozx"
    paths = json.loads(run_writer(BIOIO, str(path), str(tmp_path)))
    store = _check(path, tmp_path, paths, own_reader=False)
    archive = store.archive
    assert archive.comment == _comment(path) and archive.ome_version == _comment(path)["ome"]["version"]
    assert archive.is_ozx
    names = [i.filename for i in zipfile.ZipFile(path).infolist()]
    repeated = len(names) - len(set(names))  # this writer appends a shard again each time it is written to
    assert any("listed more than once in the directory" in n for n in archive.notes) == (repeated > 0), archive.notes
