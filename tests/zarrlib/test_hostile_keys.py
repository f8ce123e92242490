"""Keys from data that point outside the store: consolidated metadata (v2 and v3), OME dataset,
label and well paths, zip member names and reference keys, read over loopback HTTP with a
secret beside the store. Every request the server sees stays inside the store, the secret is
never sent, and each hostile key is a clear error naming it."""

from __future__ import annotations

import json
import posixpath
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_helpers import walk_nodes
from http_server import serve
from zarrview.zarrlib.storage.keys import BadKeyError, key_problem

#: node paths as data may name them, each leading outside the store or holding a character no key may
HOSTILE = ["../secret", "..\\secret", "a\\..\\..\\secret", "/abs/secret", "x//y", "bad\x00name", "tab\tname",
           "./here", "deep/../../secret"]
#: names that look hostile but are ordinary keys: they stay inside the store
BENIGN = ["%2e%2e", "..x", "what?x=1", "#frag", "...."]


@pytest.mark.parametrize("key", HOSTILE)
def test_the_key_check_refuses_what_could_lead_out(key: str) -> None:
    assert key_problem(key) is not None
    with pytest.raises(BadKeyError, match="refusing key"):
        zl.storage.ByteRequest(key + "/zarr.json")


@pytest.mark.parametrize("key", BENIGN + ["", "a/", "c/0/1", "Zürich/zarr.json"])
def test_ordinary_keys_pass(key: str) -> None:
    assert key_problem(key) is None


def _site(root: Path) -> Path:
    """``site/store.zarr`` beside ``site/secret/`` (a group and an array a walk could reach)."""
    secret = zarr.open_group(root / "secret", mode="w", zarr_format=2)
    secret.create_array("a", shape=(2,), chunks=(2,), dtype="u1")[...] = [6, 6]
    (root / "secret" / "password.txt").write_text("hunter2")
    return root


def _inside(state: Any, store: str) -> None:
    """Every request path, decoded once and folded, lies below ``/store``; the secret is never sent."""
    seen = [unquote(p.split("?", 1)[0]) for _, p, _ in state.requests()]
    assert seen, "the test made no request"
    for path in seen:
        assert posixpath.normpath(path).startswith(f"/{store}"), path
        assert "\\" not in path and "\x00" not in path, path
    assert state.sent_to("secret") == 0 and not any("secret" in p and ".." in p for p in seen)


def _ask_each(root: Any) -> None:
    """Open and read every hostile name as a member path: those that lead out are refused by
    name; the others (``/abs/secret``, ``x//y``) are folded into paths inside the store."""
    for name in HOSTILE:
        try:
            root[name][...]
        except zl.ZarrError as e:
            assert repr(name) in str(e) or name.strip("/").replace("//", "/") in str(e), (name, e)
        else:
            assert ".." not in name and "\\" not in name, name
    for name in ("../secret", "..\\secret", "bad\x00name", "tab\tname"):
        with pytest.raises(zl.NodeNotFoundError, match="invalid member path"):
            root[name]


def _consolidated(root: Path, fmt: int = 2) -> Path:
    """A store whose consolidated metadata also lists every hostile and benign name as an array."""
    store = root / "store.zarr"
    g = zarr.open_group(store, mode="w", zarr_format=fmt)
    g.create_array("good", shape=(4,), chunks=(2,), dtype="i2")[...] = [1, 2, 3, 4]
    zarr.consolidate_metadata(store)
    doc_key = ".zmetadata" if fmt == 2 else "zarr.json"
    doc = json.loads((store / doc_key).read_text())
    entries = doc["metadata"] if fmt == 2 else doc["consolidated_metadata"]["metadata"]
    good = "good/.zarray" if fmt == 2 else "good"
    for name in HOSTILE + BENIGN:
        entries[f"{name}/.zarray" if fmt == 2 else name] = entries[good]
    (store / doc_key).write_text(json.dumps(doc))
    return store


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_keys_stay_inside(tmp_path: Path, fmt: int) -> None:
    site = _site(tmp_path)
    _consolidated(site, fmt)
    with serve(site) as (url, state):
        root = zl.open(f"{url}/store.zarr")
        nodes = walk_nodes(root)
        np.testing.assert_array_equal(root["good"][...], [1, 2, 3, 4])
        refused = [n for n in nodes.values() if isinstance(n, zl.ErrorNode) and isinstance(n.error, BadKeyError)]
        for node in nodes.values():
            if isinstance(node, zl.Array):
                node[...]
        _ask_each(root)
        _inside(state, "store.zarr")
    assert len(refused) >= 4, [n.path for n in nodes.values()]  # listed, each an error node naming its key


def test_ome_paths_stay_inside(tmp_path: Path) -> None:
    from zarrview.viewing.ome.detect import detect

    site = _site(tmp_path)
    g = zarr.open_group(site / "store.zarr", mode="w", zarr_format=2)
    g.create_array("0", shape=(8, 8), chunks=(4, 4), dtype="u1")[...] = 1
    datasets = [{"path": p, "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0]}]}
                for p in ["0", *HOSTILE]]
    g.attrs["multiscales"] = [{"version": "0.4", "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
                               "datasets": datasets}]
    labels = g.create_group("labels")
    labels.attrs["labels"] = HOSTILE
    plate = zarr.open_group(site / "store.zarr" / "plate", mode="w", zarr_format=2)
    plate.attrs["plate"] = {"version": "0.4", "columns": [{"name": "1"}], "rows": [{"name": "A"}],
                            "wells": [{"path": p, "rowIndex": 0, "columnIndex": 0} for p in HOSTILE]}
    with serve(site) as (url, state):
        image = detect(zl.open(f"{url}/store.zarr"))
        assert image is not None
        text = " ".join(str(p) for p in image.problems)
        assert "../secret" in text or "cannot be opened" in text
        detect(zl.open(f"{url}/store.zarr::/plate"))
        _inside(state, "store.zarr")


def test_zip_member_names_are_keys_like_any_other(tmp_path: Path) -> None:
    site = _site(tmp_path)
    inner = tmp_path / "inner.zarr"
    zarr.create_array(inner, shape=(3,), chunks=(3,), dtype="u1")[...] = [4, 5, 6]
    with zipfile.ZipFile(site / "store.zip", "w") as z:
        for f in sorted(inner.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(inner).as_posix())
        for name in ("../secret/a/.zarray", "..\\secret\\a\\.zarray", "/abs/zarr.json"):
            z.writestr(zipfile.ZipInfo(name), b"{}")
    with serve(site) as (url, state):
        root = zl.open(f"{url}/store.zip")
        np.testing.assert_array_equal(root[...], [4, 5, 6])
        for name in ("../secret/a/.zarray", "..\\secret\\a\\.zarray", "/abs/zarr.json"):
            with pytest.raises(BadKeyError):
                root.store.get(name)
        paths = {p for _, p, _ in state.requests()}
    assert paths == {"/store.zip"}, paths


def test_reference_keys_are_keys_like_any_other(tmp_path: Path) -> None:
    site = _site(tmp_path)
    zarr.create_array(tmp_path / "src.zarr", shape=(4,), chunks=(4,), dtype="u1", compressors=None,
                      zarr_format=2)[...] = [1, 2, 3, 4]
    (site / "data.bin").write_bytes((tmp_path / "src.zarr" / "0").read_bytes())
    zarray = (tmp_path / "src.zarr" / ".zarray").read_text()
    refs = {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}', "a/.zarray": zarray, "a/0": ["data.bin", 0, 4]}}
    for name in HOSTILE:
        refs["refs"][f"{name}/.zarray"] = zarray
        refs["refs"][f"{name}/0"] = ["data.bin", 0, 4]  # targets are the access policy's (tested elsewhere)
    (site / "refs.json").write_text(json.dumps(refs))
    with serve(site) as (url, state):
        root = zl.open(f"reference::{url}/refs.json")
        np.testing.assert_array_equal(root["a"][...], [1, 2, 3, 4])
        _ask_each(root)
        paths = {unquote(p) for _, p, _ in state.requests()}
    assert paths == {"/refs.json", "/data.bin"}, paths


def test_a_local_store_refuses_them_too(tmp_path: Path) -> None:
    store = zl.open(_consolidated(_site(tmp_path))).store
    for name in HOSTILE:
        with pytest.raises(BadKeyError, match="refusing key"):
            store.get(f"{name}/.zarray")
        with pytest.raises(BadKeyError):
            store.size(f"{name}/.zarray")
