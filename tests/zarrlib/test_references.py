"""Reference sets (kerchunk JSON and Parquet) read through ``zarrlib.open``: every spelling of
the location, against h5py reading the HDF5 file the references point into."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from zarrview import zarrlib as zl
from zarrview.zarrlib.storage import split_node_path, store_identity, store_url
from zarrview.zarrlib.storage.references import MissingExtraError, ReferenceStore

pytest.importorskip("kerchunk")
pytest.importorskip("h5py")

from reference_sets import DATASETS, kerchunk_json, kerchunk_parquet, truth, write_hdf5  # noqa: E402


@pytest.fixture(scope="module")
def refs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("refs")
    h5 = write_hdf5(root / "data.h5")
    doc = kerchunk_json(h5, root / "refs.json")
    kerchunk_json(h5, root / "inline.json", inline=300)  # small chunks held inline (base64 or text)
    kerchunk_parquet(doc, root / "refs.parq", record_size=5)
    (root / "refs.json.gz").write_bytes(gzip.compress((root / "refs.json").read_bytes()))
    return root


def spellings(root: Path) -> list[tuple[str, dict]]:
    return [
        (f"reference::{root}/refs.json", {}),
        (f"reference::file://{root}/refs.json", {}),
        (f"{root}/refs.json", {}),  # a .json that is a reference set
        ("reference://", {"fo": f"{root}/refs.json"}),
        (f"reference::{root}/inline.json", {}),
        (f"reference::{root}/refs.parq", {}),
        (f"reference::file://{root}/refs.parq", {}),
        (f"{root}/refs.parq", {}),  # a Parquet reference folder opened as a folder
        ("reference://", {"fo": f"{root}/refs.parq"}),
        (f"reference::{root}/refs.json.gz", {}),  # gzip-compressed
        (f"{root}/refs.json.gz", {}),
        # the set itself: it lives nowhere, so its targets are read where the caller allows
        ("reference://", {"fo": json.loads((root / "refs.json").read_text()), "authorize": [f"file://{root}/"]}),
    ]


SPELLINGS = 12


@pytest.mark.parametrize("index", range(SPELLINGS))
def test_every_spelling_reads_what_h5py_reads(refs: Path, index: int) -> None:
    location, options = spellings(refs)[index]
    root = zl.open(location, **options)
    assert isinstance(root.store, ReferenceStore)
    assert root.attrs["title"] == "reference test"
    for name in DATASETS:
        arr = root[name]
        np.testing.assert_array_equal(arr[...], truth(refs / "data.h5", name), err_msg=f"{location} {name}")
        assert arr.dtype == truth(refs / "data.h5", name).dtype
    assert root["temp"].attrs["units"] == "K"
    root.store.close()


@pytest.mark.parametrize("index", range(SPELLINGS))
def test_every_spelling_opens_a_node_after_double_colon(refs: Path, index: int) -> None:
    location, options = spellings(refs)[index]
    node = zl.open(f"{location}::/grp/deep", **options)
    assert node.path == "/grp/deep"
    np.testing.assert_array_equal(node[0:2, 1:, 1:3], truth(refs / "data.h5", "grp/deep")[0:2, 1:, 1:3])


def test_store_url_is_what_the_store_reports(refs: Path) -> None:
    assert len(spellings(refs)) == SPELLINGS
    for location, options in spellings(refs):
        store_loc, _ = split_node_path(location)
        assert zl.open(location, **options).store.url == store_url(store_loc, **options), location


def test_a_mapping_reads_only_where_the_caller_allows(refs: Path) -> None:
    doc = json.loads((refs / "refs.json").read_text())
    with pytest.raises(zl.ZarrError, match=rf"reading from file://{refs}/ is not authorised"):
        zl.open("reference://::/counts", fo=doc)[...]
    assert store_identity("reference://", {"fo": doc}) != store_identity("reference://", {"fo": dict(doc)})


def test_a_corrupt_or_huge_gzip_set_is_a_clear_error(refs: Path, tmp_path: Path) -> None:
    (tmp_path / "cut.json.gz").write_bytes((refs / "refs.json.gz").read_bytes()[:200])
    with pytest.raises(zl.ZarrError, match="cut.json.gz is not a JSON reference set: gzip"):
        zl.open(f"reference::{tmp_path}/cut.json.gz")
    (tmp_path / "bomb.json.gz").write_bytes(gzip.compress(b" " * (300 << 20)))
    with pytest.raises(zl.ZarrError, match="bomb.json.gz is not a JSON reference set: .*more than"):
        zl.open(f"reference::{tmp_path}/bomb.json.gz")


def test_two_reference_sets_are_two_stores(refs: Path) -> None:
    a = store_identity("reference://", {"fo": f"{refs}/refs.json"})
    b = store_identity("reference://", {"fo": f"{refs}/inline.json"})
    assert a != b and a == store_identity(f"reference::{refs}/refs.json", {})
    assert store_identity("s3://b/x.zarr", {"endpoint_url": "http://127.0.0.1:1"}) != store_identity("s3://b/x.zarr", {})


@pytest.mark.parametrize(("location", "store", "node"), [
    ("reference::/abs/refs.json", "reference::/abs/refs.json", "/"),
    ("reference::/abs/refs.json::/a/b", "reference::/abs/refs.json", "/a/b"),
    ("reference::file:///abs/refs.json::/a", "reference::file:///abs/refs.json", "/a"),
    ("reference::https://h/refs.json::/a", "reference::https://h/refs.json", "/a"),
    ("reference://::/a", "reference://", "/a"),
    ("zip::/abs/x.zip", "zip::/abs/x.zip", "/"),
    ("zip::/abs/x.zip::/node", "zip::/abs/x.zip", "/node"),
    ("/abs/s.zarr::/n", "/abs/s.zarr", "/n"),
    ("/abs/s.zarr", "/abs/s.zarr", "/"),
])
def test_split_node_path(location: str, store: str, node: str) -> None:
    assert split_node_path(location) == (store, node)


def test_zip_with_an_absolute_path_is_a_file(tmp_path: Path) -> None:
    import zarr

    zarr.open_group(tmp_path / "s.zarr", mode="w").create_array("a", data=np.arange(5, dtype="i2"))
    shutil.make_archive(str(tmp_path / "s"), "zip", tmp_path / "s.zarr")
    assert store_url(f"zip::{tmp_path}/s.zip") == store_url(f"zip::file://{tmp_path}/s.zip") == str(tmp_path / "s.zip")
    np.testing.assert_array_equal(zl.open(f"zip::{tmp_path}/s.zip::/a")[...], np.arange(5, dtype="i2"))


def test_fsspec_spelling_without_fo_says_how(refs: Path) -> None:
    with pytest.raises(zl.StoreError, match="fo="):
        zl.open("reference://")


def test_a_json_that_is_not_a_reference_set_is_not_opened_as_one(tmp_path: Path) -> None:
    (tmp_path / "plain.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    with pytest.raises(zl.StoreError, match="plain.json is JSON but not a reference set"):
        zl.open(tmp_path / "plain.json")


def test_parquet_without_the_extra_names_it(refs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_fastparquet(name: str, *args, **kw):  # type: ignore[no-untyped-def]
        if name == "fastparquet":
            raise ImportError("No module named 'fastparquet'")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_fastparquet)
    for location in (f"reference::{refs}/refs.parq", str(refs / "refs.parq")):
        with pytest.raises(MissingExtraError, match=r"zarrview\[references\]"):
            zl.open(location)


def test_fsspec_and_zarr_python_agree(refs: Path) -> None:
    """zarr-python through fsspec's ReferenceFileSystem, a second reader of the same references."""
    import fsspec
    import zarr

    fs = fsspec.filesystem("reference", fo=str(refs / "refs.json"))
    group = zarr.open_group(zarr.storage.FsspecStore(fs, read_only=True, path=""), mode="r", zarr_format=2)
    ours = zl.open(f"reference::{refs}/refs.json")
    for name in ("temp", "counts", "level"):
        np.testing.assert_array_equal(ours[name][...], group[name][...])


def test_listing_and_sizes(refs: Path) -> None:
    root = zl.open(f"reference::{refs}/refs.json")
    assert {"temp", "counts", "mask", "level", "scalar", "grp"} <= set(root.member_names())
    doc = json.loads((refs / "refs.json").read_text())["refs"]
    assert root.store.size("temp/0.0") == doc["temp/0.0"][2]


@pytest.mark.parametrize("name", ["refs.json", "refs.parq"])
def test_stored_chunks_are_counted_from_the_references(refs: Path, name: str) -> None:
    doc = json.loads((refs / "refs.json").read_text())["refs"]
    for array in ("temp", "grp/deep", "mask"):
        stored = [k for k, v in doc.items() if k.startswith(array + "/") and isinstance(v, list)]
        count, nbytes = zl.open(f"reference::{refs}/{name}::/{array}").stored_objects()
        assert count == len(stored) > 0
        assert nbytes == sum(doc[k][2] for k in stored)
