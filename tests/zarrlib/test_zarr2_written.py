"""Stores written by the real zarr-python 2.18 (committed: it cannot be installed beside zarr 3).

Covers what only zarr 2.x writes: every v2 dtype and filter, object codecs, undeclared nested
keys, implicit groups, and the 2022 draft v3 layout with its sharding storage transformer.
The truth is the numpy data the generator wrote (tests/data/zarr2_expected).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from conformance_helpers import transport  # noqa: F401  (autouse: every test also runs over HTTP)

DATA = Path(__file__).parents[1] / "data"
MANIFEST = json.loads((DATA / "zarr2_expected" / "MANIFEST.json").read_text())


def _cases() -> list[Any]:
    out = []
    for store in MANIFEST["stores"]:
        for arr in store["arrays"]:
            out.append(pytest.param(store, arr, id=f"{store['name']}/{arr['path']}"))
    return out


def _assert_same(got: np.ndarray, expected: Any) -> None:
    if not isinstance(expected, np.ndarray) or expected.dtype.kind == "O" and expected.ndim == 0:
        expected = np.array(expected, dtype=got.dtype) if expected.__class__ is not np.ndarray else expected
    assert got.shape == expected.shape
    if expected.dtype.kind == "O":
        for g, e in zip(got.reshape(-1), expected.reshape(-1)):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(g, e)
            else:
                assert g == e
        return
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_array_equal(got, expected)  # NaN == NaN here
    else:
        assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("store", "arr"), _cases())
def test_array_values(store: dict[str, Any], arr: dict[str, Any]) -> None:
    root = zl.open(DATA / store["path"])
    if arr.get("must_refuse"):
        with pytest.raises(zl.UnsupportedFeatureError, match="pickle"):
            root[arr["path"]][...]
        return
    node = root[arr["path"]]
    assert node.kind == "array"
    assert node.path == "/" + arr["path"].strip("/")
    assert list(node.shape) == arr["shape"]
    expected = np.load(DATA / arr["expected"], allow_pickle=True)
    _assert_same(node[...], expected)
    if expected.ndim >= 1 and expected.shape[0] > 2:
        _assert_same(node[1:-1], expected[1:-1])
        _assert_same(node[::2], expected[::2])
        _assert_same(node[-1], expected[-1])


def test_draft_v3_sharding_reports_shards() -> None:
    root = zl.open(DATA / "zarr2" / "v3draft")
    sharded = [a for s in MANIFEST["stores"] if s["name"] == "v3draft" for a in s["arrays"] if a.get("storage_transformers")]
    assert sharded
    for arr in sharded:
        node = root[arr["path"]]
        assert node.chunks == tuple(arr["chunks"])
        assert node.shards is not None
        assert node.format_name == "v3 (2022 draft)"


@pytest.mark.needs_listing  # implicit groups are folders: only a listing shows them
def test_groups_and_implicit_groups() -> None:
    for store in MANIFEST["stores"]:
        if store["path"].endswith(".zip"):
            continue
        root = zl.open(DATA / store["path"])
        for group in store.get("groups", []):
            node = root[group["path"]] if group["path"] else root
            assert node.kind == "group", (store["name"], group["path"])
            assert _specials_as_text(node.attrs) == group["attributes"]
            if group.get("implicit"):
                assert node.implicit
        names = {a["path"].split("/")[0] for a in store["arrays"]} | {
            g["path"].split("/")[0] for g in store.get("groups", []) if g["path"]}
        assert set(root.member_names()) == names, store["name"]


def _specials_as_text(value: Any) -> Any:
    """The manifest spells bare NaN/Infinity attribute tokens as strings."""
    if isinstance(value, dict):
        return {k: _specials_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_specials_as_text(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value
