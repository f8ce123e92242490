"""A store whose server cannot list: an OME-Zarr image's levels and labels, a plate's rows, wells
and fields, found from their metadata over loopback HTTP, equal what listing the same store on
disk finds (ome-zarr-py writes both)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import zarrview.zarrlib as zl
from conformance_helpers import walk_nodes
from http_server import serve
from ome_stores import ome_zarr_image, ome_zarr_plate
from zarrview.viewing.tree.known import known_members
from zarrview.viewing.tree.walk import walk
from zarrview.zarrlib import CancelToken

pytest.importorskip("ome_zarr")


@pytest.fixture(scope="module", params=["0.4", "0.5"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp(f"known{request.param}")
    rng = np.random.default_rng(3)
    ome_zarr_image(root / "image.zarr", request.param, rng.integers(0, 500, (2, 64, 64)).astype("u2"), "cyx",
                   scale_factors=(2, 4), labels={"cells": rng.integers(0, 5, (1, 64, 64)).astype("u1"),
                                                 "nuclei": rng.integers(0, 3, (1, 64, 64)).astype("u1")})
    ome_zarr_plate(root / "plate.zarr", request.param, ["A", "B"], ["1", "2"], ["A/1", "A/2", "B/2"], fields=2)
    for store in ("image.zarr", "plate.zarr"):  # no consolidated metadata: nothing to list from
        for meta in (root / store).rglob(".zmetadata"):
            meta.unlink()
    return root


def _unlisted(root: zl.Group) -> dict[str, str]:
    found: dict[str, str] = {}

    def seen(_which: int, group: zl.Group, members: list[zl.Node]) -> None:
        found.update({m.path: m.kind for m in members})

    walk([root], seen, CancelToken())
    return found


@pytest.mark.parametrize("store", ["image.zarr", "plate.zarr"])
def test_members_named_by_metadata_are_what_listing_finds(site: Path, store: str) -> None:
    truth = {p: n.kind for p, n in walk_nodes(zl.open(site / store)).items() if p != "/"}
    assert len(truth) > 5
    with serve(site) as (url, state):
        root = zl.open(f"{url}/{store}")
        assert not root.can_list_members
        assert _unlisted(root) == truth
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            from zarrview import cli

            assert cli.main(["tree", f"{url}/{store}"]) == 0
        assert "cannot list" not in out.getvalue()
        for path in truth:
            assert f" {path.rsplit('/', 1)[-1]} " in f" {out.getvalue()} ".replace("── ", " ").replace("\n", " \n ")
        assert not any(".zmetadata" not in p and p.endswith("/") for _, p, _ in state.requests())


def test_names_from_data_are_plain_keys(tmp_path: Path) -> None:
    import zarr

    g = zarr.open_group(tmp_path / "g.zarr", mode="w")
    g.attrs["multiscales"] = [{"datasets": [{"path": "0"}, {"path": "../up"}, {"path": "a\\b"}, {"path": 5},
                                            {"path": "s/deep"}]}]
    g.attrs["labels"] = ["x", "..", "x"]
    assert known_members(zl.open(tmp_path / "g.zarr")) == ["0", "s", "labels", "x"]
