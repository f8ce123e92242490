"""AnnData dataframes (obs, var) read a page at a time, against anndata's own reading of the
same stores (its ``DataFrame.to_csv``), for anndata 0.13 (Zarr v3, sharded) and 0.12 (Zarr v2)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from anndata_stores import Written
from store_wrappers import CountingStore, is_chunk_key
from zarrview import zarrlib as zl
from zarrview.viewing.anndata import AnnDataError, encoding_of, encoding_rows, open_frame
from zarrview.viewing.anndata.frame import Frame
from zarrview.viewing.anndata.table_export import export_frame_csv
from zarrview.zarrlib.storage import LocalStore

STORES = ["anndata_v3", "anndata_v2", "anndata_v3_default"]


def table_rows(frame: Frame, page: int) -> list[list[str]]:
    """Every row of ``frame`` as the table shows it, read ``page`` rows at a time, missing
    values empty (as pandas writes them)."""
    rows: list[list[str]] = []
    for start in range(0, frame.rows, page):
        got = frame.read_page(start, start + page)
        rows += [[got.text(r, c, missing="") for c in range(len(frame.headers))] for r in range(got.start, got.stop)]
    return rows


@pytest.mark.parametrize("which", STORES)
def test_obs_pages_equal_anndata(which: str, request: pytest.FixtureRequest) -> None:
    written: Written = request.getfixturevalue(which)
    root = zl.open(written.store)
    assert encoding_of(root) is not None and encoding_of(root).type == "anndata"  # type: ignore[union-attr]
    frame = open_frame(root["obs"])
    truth = written.csv_rows("obs")
    assert frame.headers[1:] == written.expected["obs_columns"] == truth[0][1:]
    assert frame.index_name == written.expected["obs_index_name"] == truth[0][0]
    assert frame.rows == written.expected["n_obs"]
    rows = table_rows(frame, 700)  # pages across chunk and shard boundaries
    assert len(rows) == len(truth) - 1
    assert rows == truth[1:]
    kinds = {c.name: c.kind for c in frame.columns}
    assert kinds["cell_type"] == "categorical" and kinds["n_genes"] == "nullable-integer"
    assert kinds["is_doublet"] == "nullable-boolean"
    assert any(r[1] == "" for r in truth[1:]) and any(r[3] == "" for r in truth[1:])  # missing values occur


@pytest.mark.parametrize("which", STORES)
def test_var_without_index_name_and_categories(which: str, request: pytest.FixtureRequest) -> None:
    written: Written = request.getfixturevalue(which)
    frame = open_frame(zl.open(written.store)["var"])
    truth = written.csv_rows("var")
    assert frame.index_name is None and truth[0][0] == ""
    assert table_rows(frame, 13) == truth[1:]
    obs = open_frame(zl.open(written.store)["obs"])
    for name, labels in written.expected["categories"].items():
        assert [str(x) for x in obs.column(name).labels()] == labels


@pytest.mark.parametrize("which", STORES)
def test_csv_export_equals_to_csv(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    written: Written = request.getfixturevalue(which)
    out = export_frame_csv(open_frame(zl.open(written.store)["obs"]), tmp_path / "obs.csv", page=777)
    with open(out, newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == written.csv_rows("obs")


def test_a_page_reads_only_its_chunks(anndata_v3: Written) -> None:
    """Rows 5,000–5,500 read the shard holding them (rows 4,000–7,999) of each column, a few
    ranges of it, plus a categorical's labels: a fraction of the frame's bytes."""
    store = CountingStore(LocalStore(anndata_v3.store))
    frame = open_frame(zl.open(store)["obs"])  # type: ignore[arg-type]
    store.reset()
    page = frame.read_page(5000, 5500)
    truth = anndata_v3.csv_rows("obs")[5001:5501]
    assert [[page.text(r, c, "") for c in range(len(frame.headers))] for r in range(5000, 5500)] == truth
    keys = store.chunk_keys()
    assert keys
    for key in keys:
        assert key.endswith("/c/1") or "/categories/" in key, key  # shard 1 only, labels excepted
    read = sum(n for k, n in store.bytes.items() if is_chunk_key(k) and "/categories/" not in k)
    stored = sum(p.stat().st_size for p in (anndata_v3.store / "obs").rglob("*") if p.is_file()
                 and "categories" not in p.parts and p.name != "zarr.json")
    assert read < stored / 8, (read, stored)


def test_encoding_rows_name_the_element(anndata_v3: Written) -> None:
    root = zl.open(anndata_v3.store)
    attrs = {n: json.loads((anndata_v3.store / n / "zarr.json").read_text())["attributes"]
             for n in ("obs", "layers/counts", "X")}
    assert encoding_rows(root["obs"])[0] == ("AnnData encoding", f"dataframe {attrs['obs']['encoding-version']} "
                                                                 "(a dataframe)")
    rows = dict(encoding_rows(root["layers/counts"]))
    assert rows["AnnData encoding"].startswith("csr_matrix 0.1.0")
    shape = attrs["layers/counts"]["shape"]
    assert rows["Matrix shape"] == f"{shape[0]:,} × {shape[1]:,}"
    assert encoding_rows(root["X"])[0][1].startswith(attrs["X"]["encoding-type"])


def _broken(src: Path, tmp: Path, node: str, change: dict[str, object]) -> Path:
    dst = tmp / "broken.zarr"
    shutil.copytree(src, dst)
    meta = dst / node / "zarr.json"
    doc = json.loads(meta.read_text())
    doc["attributes"].update(change)
    meta.write_text(json.dumps(doc))
    return dst


def test_bad_dataframes_say_what_is_wrong(anndata_v3_default: Written, tmp_path: Path) -> None:
    store = _broken(anndata_v3_default.store, tmp_path, "obs", {"column-order": ["cell_type", "no_such_column"]})
    with pytest.raises(AnnDataError, match=r"/obs.*no member 'no_such_column'"):
        open_frame(zl.open(store)["obs"])  # type: ignore[arg-type]
    meta = store / "obs" / "zarr.json"
    doc = json.loads(meta.read_text())
    doc["attributes"]["_index"] = 7
    meta.write_text(json.dumps(doc))
    with pytest.raises(AnnDataError, match=r"/obs: a dataframe's attribute _index"):
        open_frame(zl.open(store)["obs"])  # type: ignore[arg-type]
    with pytest.raises(AnnDataError, match=r"/uns is not an AnnData dataframe"):
        open_frame(zl.open(store)["uns"])  # type: ignore[arg-type]
