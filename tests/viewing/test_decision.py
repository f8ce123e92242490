"""What a node is shown as, decided once (``viewing.decision``), without Qt: the kind, the
problems and the refusals for every kind of node, and ``zarrview export`` and ``info`` printing
exactly what the decision says. The window's side is ``tests/app/test_decision_app.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from decision_stores import decision_stores
from zarrview.cli import main
from zarrview.viewing.anndata.element import EMBEDDING, FRAME
from zarrview.viewing.decision import DRAWN, Kind, decide, looked_at


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return decision_stores(tmp_path_factory.mktemp("decision"))


KINDS = [
    ("vol", Kind.PLANE), ("flat", Kind.PLANE), ("xy", Kind.PLANE), ("line", Kind.TABLE), ("records", Kind.TABLE),
    ("image", Kind.IMAGE), ("label image", Kind.LABEL_IMAGE), ("broken image", Kind.IMAGE),
    ("pyramid", Kind.PYRAMID), ("sub", Kind.GROUP), ("bad", Kind.ERROR), ("dataframe", Kind.ANNDATA),
    ("plate", Kind.PLATE), ("well", Kind.WELL),
]


@pytest.mark.parametrize("name,kind", KINDS)
def test_each_node_is_decided_once_as_what_it_is(stores: dict[str, str], name: str, kind: Kind) -> None:
    node = zl.open(stores[name])
    shown = decide(node)
    assert shown.kind is kind and shown.node is node and not shown.pending
    if kind in (Kind.PLANE, Kind.TABLE):
        assert shown.array is node and shown.found is None and shown.coordinates is not None
    if kind in DRAWN and name != "broken image":
        assert shown.refused is None, shown.refused
        assert shown.array is not None and shown.names is not None and len(shown.names) == shown.array.ndim
    # a first view where a plane is drawn, none for a table or a line
    assert (shown.state is not None) == (kind in DRAWN - {Kind.TABLE} and name != "broken image")


def test_the_first_view_is_the_windows_orientation(stores: dict[str, str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An array stored (x, y) with spatial:dimensions is shown Y as rows, and export draws it so."""
    from png_decode import decode_png

    shown = decide(zl.open(stores["xy"]))
    assert shown.state is not None and (shown.state.y_dim, shown.state.x_dim) == (1, 0)
    code, _, err = _run(capsys, "export", stores["xy"], "-o", str(tmp_path / "xy.png"))
    assert code == 0, err
    assert decode_png((tmp_path / "xy.png").read_bytes()).shape[:2] == (4, 6)  # rows are y (4), columns x (6)
    vol = decide(zl.open(stores["vol"]), {0: 2})
    assert vol.state is not None and (vol.state.y_dim, vol.state.x_dim) == (1, 2) and vol.state.indices[0] == 2


def test_an_image_names_its_axes_and_first_level(stores: dict[str, str]) -> None:
    node = zl.open(stores["image"])
    shown = decide(node, {0: 3})
    assert shown.image is not None and shown.pyramid is None and shown.names == ("z", "y", "x")
    assert shown.array is not None and shown.array.shape == (4, 30, 50)
    assert shown.state is not None and shown.state.pyramid is not None and len(shown.state.pyramid) == 2
    assert shown.state.indices[0] == 3
    assert shown.problems == shown.image.problems


def test_a_pyramid_has_its_levels_and_no_problems(stores: dict[str, str]) -> None:
    shown = decide(zl.open(stores["pyramid"]))
    assert shown.pyramid is not None and shown.ome is None and shown.problems == ()
    assert shown.names == ("band", "y", "x") and shown.array is not None and shown.array.shape == (2, 120, 90)


def test_a_broken_image_is_refused_with_its_errors(stores: dict[str, str]) -> None:
    shown = decide(zl.open(stores["broken image"]))
    why = shown.refused
    assert why is not None and why.request is None and not why.spends_level
    assert why.text == "/ holds OME-Zarr image metadata that names no readable pyramid"
    assert why.window == ("The OME-Zarr metadata of / names no pyramid that can be read: see its problems in "
                          "the OME tab.")
    assert any('"datasets" must be a list' in line for line in why.listed)
    assert [str(p) for p in shown.problems if p.severity == "error"] == list(why.listed)


@pytest.mark.parametrize("name,plane,level,overlays,flag,words", [
    ("vol", {}, 1, None, "--level", "--level is for an OME-Zarr image group; /vol is an array"),
    ("vol", {}, None, "", "--labels", "--labels is for an OME-Zarr image group; /vol is an array"),
    ("vol", {0: 9}, None, None, "--slice", "--slice index 9 is out of range for z of /vol (size 4)"),
    ("image", {0: 4}, None, None, "--slice", "--slice index 4 is out of range for dimension 0 of /0 (size 4)"),
    ("image", {}, 5, None, "--level", "--level 5: the image at / has no such level (its readable levels are 0, 1)"),
    ("image", {}, None, "nuclei", "--labels", "--labels nuclei: / has no such label image (its label images: "
                                              "none that can be read)"),
    ("pyramid", {}, None, "", "--labels", "--labels is for an OME-Zarr image; / is a multiscales pyramid"),
    ("pyramid", {}, 7, None, "--level", "--level 7: the image at / has no such level (its readable levels are 0, 1, 2)"),
    ("sub", {}, None, None, None, "/sub is a group, not an array or an OME-Zarr image: name one with ::/path"),
    ("dataframe", {}, None, None, None, "/ is a group (AnnData dataframe), not an array or an OME-Zarr image"),
])
def test_a_request_that_names_nothing_is_refused_in_one_sentence(
        stores: dict[str, str], name: str, plane: dict[int, int], level: int | None, overlays: str | None,
        flag: str | None, words: str) -> None:
    shown = decide(zl.open(stores[name]), plane, level, overlays=overlays)
    assert shown.refused is not None and shown.refused.request == flag
    assert shown.refused.text.startswith(words), shown.refused.text
    assert shown.state is None
    assert shown.refused.spends_level == (flag == "--level")


def test_an_unreadable_node_says_its_error(stores: dict[str, str]) -> None:
    root = zl.open(stores["bad"].split("::")[0])
    bad = next(m for m in root.members() if m.name == "bad")
    shown = decide(bad)
    assert shown.kind is Kind.ERROR and shown.refused is not None
    assert "nonexistent_codec" in shown.refused.window and shown.refused.window == str(bad.error)  # type: ignore[attr-defined]
    assert shown.refused.text == f"/bad cannot be read: {bad.error}"  # type: ignore[attr-defined]


def test_deciding_without_reading_leaves_a_group_pending(stores: dict[str, str]) -> None:
    """The window decides an array at once on the GUI thread; a group's metadata is read on a lane."""
    image = zl.open(stores["image"])
    now = decide(image, read=False)
    assert now.kind is Kind.GROUP and now.pending and now.found is None
    assert now.message == "/ is a group: select an array to see its data."
    frame = decide(zl.open(stores["dataframe"]), read=False)
    assert frame.kind is Kind.ANNDATA and frame.anndata == FRAME and not frame.pending
    vol = decide(zl.open(stores["vol"]), read=False)
    assert vol.kind is Kind.PLANE and not vol.pending and vol.state is not None


def test_an_embedding_is_anndatas_to_draw_and_an_array_to_export(tmp_path: Path) -> None:
    import zarr

    g = zarr.open_group(str(tmp_path / "a.zarr"), mode="w", zarr_format=2)
    g.create_group("obsm").create_array("X_umap", shape=(5, 2), dtype="f4")[...] = 1.0
    shown = decide(zl.open(f"{tmp_path / 'a.zarr'}::/obsm/X_umap"))
    assert shown.anndata == EMBEDDING and shown.kind is Kind.PLANE and shown.refused is None


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name,args,code", [
    ("broken image", [], 1),
    ("sub", [], 1),
    ("well", [], 1),
    ("vol", ["--level", "1"], 2),
    ("vol", ["--slice", "9,:,:"], 2),
    ("image", ["--level", "5"], 2),
    ("pyramid", ["--labels"], 2),
    ("bad", [], 1),
])
def test_export_prints_the_decisions_refusal(stores: dict[str, str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str], name: str, args: list[str],
                                             code: int) -> None:
    location = stores[name]
    got, _, err = _run(capsys, "export", location, *args, "-o", str(tmp_path / "p.npy"))
    assert got == code, err
    level = int(args[args.index("--level") + 1]) if "--level" in args else None
    plane = {0: 9} if "--slice" in args else {}
    shown = decide(zl.open(location), plane, level, overlays="" if "--labels" in args else None)
    assert shown.refused is not None
    lines = err.strip().splitlines()
    assert lines[0] == f"zarrview: {shown.refused.text}"
    assert [line.strip() for line in lines[1:]] == list(shown.refused.listed[:10])


@pytest.mark.parametrize("name", ["image", "label image", "pyramid", "plate", "well", "sub"])
def test_info_describes_what_the_decision_found(stores: dict[str, str], capsys: pytest.CaptureFixture[str],
                                                name: str) -> None:
    from zarrview.viewing.conventions.text import describe as describe_pyramid
    from zarrview.viewing.ome import describe as describe_ome

    code, out, _ = _run(capsys, "info", stores[name])
    assert code == 0
    shown = looked_at(zl.open(stores[name]), labels=True)
    if shown.pyramid is not None:
        assert "\n".join(describe_pyramid(shown.pyramid)) in out
    elif shown.ome is not None:
        assert "\n".join(describe_ome(shown.ome)) in out
    else:
        assert shown.kind is Kind.GROUP and "OME-NGFF" not in out and "multiscales" not in out.split("Attributes:")[0]


def test_export_reads_the_cf_coordinates_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """--slice by a coordinate's value, the picture's orientation and the CSV's labels all use the
    coordinates: read once, with every coordinate array's chunk fetched once."""
    from cf_coord_stores import cf_dataset, write_xarray
    from zarrview.viewing.cf import view as cf_view
    from zarrview.zarrlib.storage.local import LocalStore

    path = write_xarray(cf_dataset(), tmp_path / "cf.zarr", 3, consolidated=False)
    reads: list[str] = []
    real_read_cf = cf_view.read_cf

    def counted(arr: Any, **read: Any) -> Any:
        reads.append(arr.path)
        return real_read_cf(arr, **read)

    keys: list[str] = []  # every object the store is asked for, whichever way it is read
    for method in ("get", "get_range", "read_group"):
        real = getattr(LocalStore, method)

        def counted_read(self: LocalStore, what: Any, *rest: Any, _real: Any = real) -> Any:
            keys.append(what if isinstance(what, str) else what.key)
            return _real(self, what, *rest)

        monkeypatch.setattr(LocalStore, method, counted_read)

    monkeypatch.setattr(cf_view, "read_cf", counted)
    out = tmp_path / "t.csv"
    code, _, err = _run(capsys, "export", f"{path}::/t", "--slice", "time=#1,level=#0", "-o", str(out))
    assert code == 0, err
    assert reads == ["/t"]
    lat_chunks = [k for k in keys if k.startswith("lat/c")]
    assert len(lat_chunks) == len(set(lat_chunks)) >= 1, keys
    rows = out.read_text().splitlines()
    assert rows[0].startswith("lat \\ lon,") and len(rows) == 1 + np.asarray(cf_dataset()["lat"]).size


def test_an_image_whose_level_0_is_unreadable_exports_its_finest_readable_level(
        stores: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The window shows such an image from level 1; export writes that level's plane and says so,
    rather than refuse a --level 0 nobody asked for."""
    import zarr

    location = stores["image without level 0"]
    shown = decide(zl.open(location))
    assert shown.refused is None and shown.state is not None and shown.first_level == 1
    assert shown.array is not None and shown.array.path == "/1"
    z = shown.state.indices[0]
    code, _, err = _run(capsys, "export", location, "-o", str(tmp_path / "p.npy"))
    assert code == 0, err
    assert err.strip() == "zarrview: level 0 of / cannot be read; writing level 1, the finest that can be"
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), zarr.open_array(f"{location}/1", mode="r")[z])
    code, _, err = _run(capsys, "export", location, "--level", "0", "-o", str(tmp_path / "q.npy"))
    assert code == 2 and "--level 0: the image at / has no such level (its readable levels are 1)" in err
