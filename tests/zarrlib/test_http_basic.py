"""Reading over HTTP from a loopback server that cannot list directories.

The truth is the same store read from disk, itself checked against zarr-python elsewhere;
here we check that listing falls back to consolidated metadata, that direct metadata wins
over a stale consolidated copy, and that sharded reads use byte ranges.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_helpers import walk_nodes
from http_server import Faults, serve

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    g = zarr.open_group(root / "v3.zarr", mode="w", zarr_format=3)
    g.attrs["title"] = "served"
    a = g.create_array("img", shape=(40, 50), chunks=(10, 10), shards=(20, 20), dtype="u2")
    a[...] = np.arange(2000, dtype="u2").reshape(40, 50)
    b = g.create_group("sub").create_array("vals", shape=(7,), chunks=(3,), dtype="f4", fill_value=np.nan)
    b[:5] = np.arange(5)
    zarr.consolidate_metadata(root / "v3.zarr")
    shutil.copytree(DATA / "zarr2" / "v2_consolidated", root / "v2c")
    shutil.copy(DATA / "zarr2" / "v2_zip.zip", root / "v2.zip")
    return root


@pytest.mark.parametrize("name", ["v3.zarr", "v2c", "v2.zip"])
def test_http_matches_local(site: Path, name: str) -> None:
    with serve(site) as (url, _):
        remote = walk_nodes(zl.open(f"{url}/{name}"))
        local = walk_nodes(zl.open(site / name))
        assert sorted(remote) == sorted(local)
        assert len(local) > 2
        for path, node in local.items():
            assert remote[path].kind == node.kind
            assert remote[path].attrs == node.attrs
            if isinstance(node, zl.Array):
                got, want = remote[path][...], node[...]
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)


def test_consolidated_metadata_below_the_root_direct_read_by_path(site: Path, tmp_path: Path) -> None:
    """Below an opened root, a remote store's consolidated copy answers (as zarr-python's does:
    no round trip per node); a location opened by its path reads the node's own document."""
    store = tmp_path / "stale.zarr"
    shutil.copytree(site / "v3.zarr", store)
    doc = json.loads((store / "sub" / "vals" / "zarr.json").read_text())
    doc["attributes"] = {"fresh": True}
    (store / "sub" / "vals" / "zarr.json").write_text(json.dumps(doc))
    reference = zarr.open_group(str(store), mode="r")["sub/vals"].attrs.asdict()
    assert reference != {"fresh": True}
    with serve(tmp_path) as (url, state):
        node = zl.open(f"{url}/stale.zarr")
        state.clear()
        assert node["sub/vals"].attrs == reference  # what zarr-python reads
        assert not state.requests("GET")
        assert [m.name for m in node.members()] == ["img", "sub"]
        assert zl.open(f"{url}/stale.zarr::/sub/vals").attrs == {"fresh": True}


def test_sharded_region_reads_ranges_only(site: Path) -> None:
    with serve(site) as (url, state):
        arr = zl.open(f"{url}/v3.zarr::/img")
        state.clear()
        np.testing.assert_array_equal(arr[0:10, 0:10], np.arange(2000, dtype="u2").reshape(40, 50)[0:10, 0:10])
        gets = state.requests("GET")
        assert gets and all(r[2] is not None for r in gets), gets  # every GET is a byte range
        assert {r[1] for r in gets} == {"/v3.zarr/img/c/0/0"}


def test_keys_are_percent_encoded_per_segment(tmp_path: Path) -> None:
    names = ["run #3", "50% done", "what?", "a+b=c", "Zürich", "%41"]
    g = zarr.open_group(tmp_path / "odd names.zarr", mode="w")
    for i, name in enumerate(names):
        g.create_array(name, shape=(3,), chunks=(2,), dtype="i2")[...] = [i, i + 1, i + 2]
    with serve(tmp_path) as (url, state):
        root = zl.open(f"{url}/odd%20names.zarr")
        for i, name in enumerate(names):
            np.testing.assert_array_equal(root[name][...], [i, i + 1, i + 2])
        paths = {r[1] for r in state.requests()}
        assert "/odd%20names.zarr/run%20%233/c/0" in paths
        assert "/odd%20names.zarr/50%25%20done/zarr.json" in paths
        assert "/odd%20names.zarr/what%3F/c/1" in paths
        assert "/odd%20names.zarr/Z%C3%BCrich/zarr.json" in paths
        assert "/odd%20names.zarr/%2541/zarr.json" in paths


@pytest.mark.parametrize("form", ["zip::{url}/v2.zip", "{url}/v2.zip", "zip::{url}/v2.zip::/"])
def test_zip_over_http_in_each_spelling(site: Path, form: str) -> None:
    local = walk_nodes(zl.open(site / "v2.zip"))
    with serve(site) as (url, state):
        remote = walk_nodes(zl.open(form.format(url=url)))
        assert sorted(remote) == sorted(local)
        for path, node in local.items():
            if isinstance(node, zl.Array):
                np.testing.assert_array_equal(remote[path][...], node[...])
        assert all(r[2] is not None for r in state.requests("GET")), "a zip is read by ranges, never whole"


def test_a_zip_is_read_through_the_transport_that_retries(site: Path) -> None:
    """A remote archive's end, directory and members are range requests of its folder's store:
    a server's passing 503s are retried as for any object, and nothing is read whole."""
    local = walk_nodes(zl.open(site / "v2.zip"))
    with serve(site, Faults(fail_5xx=2, fail_match="v2.zip", fail_status=503)) as (url, state):
        remote = walk_nodes(zl.open(f"zip::{url}/v2.zip"))
        assert sorted(remote) == sorted(local)
        for path, node in local.items():
            if isinstance(node, zl.Array):
                np.testing.assert_array_equal(remote[path][...], node[...])
        gets = [r for r in state.requests("GET") if r[1].endswith("v2.zip")]
        assert state.faults.fail_5xx == 0 and gets and all(r[2] is not None for r in gets), gets


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_signed_archive_url_is_read_by_ranges_each_carrying_its_query(site: Path, backend: str) -> None:
    """A signed URL names one archive, not a folder: its end, directory and members are range
    requests of that object, each with the URL's query (the server refuses any without it), and
    a server's passing 503 is retried as for any object."""
    from http_server import Faults

    token = "X-Amz-Signature=ab%2Fcd&X-Amz-Expires=300"
    local = walk_nodes(zl.open(site / "v2.zip"))
    with serve(site, Faults(signed={"v2.zip": token}, fail_5xx=1, fail_match="v2.zip", fail_status=503)) as (url, state):
        remote = walk_nodes(zl.open(f"{url}/v2.zip?{token}", backend=backend))
        assert sorted(remote) == sorted(local)
        for path, node in local.items():
            if isinstance(node, zl.Array):
                np.testing.assert_array_equal(remote[path][...], node[...])
        gets = [r for r in state.requests("GET") if "v2.zip" in r[1]]
        assert gets and all(r[1].endswith(f"v2.zip?{token}") and r[2] is not None for r in gets), gets
        assert state.faults.fail_5xx == 0
        with pytest.raises(zl.StoreError) as e:
            zl.open(f"{url}/v2.zip?{token}x", backend=backend)  # a signature the server refuses
        assert "X-Amz-Signature" not in str(e.value)


def test_zip_on_a_server_without_ranges_is_read_whole_under_the_bound(tmp_path: Path) -> None:
    """A server that answers every Range with the whole object: an archive under the bound is
    read once and then from memory; one over it is refused with its size and the bound."""
    values = np.random.default_rng(3).integers(0, 2**31, (300, 300), dtype="i4")  # ~360 KB incompressible
    z = zarr.open_array(tmp_path / "a.zarr", mode="w", shape=values.shape, chunks=(100, 100), dtype="i4",
                        zarr_format=2)
    z[...] = values
    shutil.make_archive(str(tmp_path / "site" / "big"), "zip", tmp_path / "a.zarr")
    size = (tmp_path / "site" / "big.zip").stat().st_size
    with serve(tmp_path / "site", Faults(ignore_range=True)) as (url, state):
        old = zl.limits.configure(whole_archive_bytes=size)
        try:
            np.testing.assert_array_equal(zl.open(f"zip::{url}/big.zip")[...], values)
            whole = [r for r in state.requests("GET") if r[2] is None]
            assert len(whole) == 1, state.requests()  # the archive once; its members from memory
            zl.limits.configure(whole_archive_bytes=size - 1)
            with pytest.raises(zl.TooLargeError, match=rf"big.zip: its server answers no range requests.*{size:,} bytes"):
                zl.open(f"zip::{url}/big.zip")
        finally:
            zl.limits.restore(old)


def test_scheme_without_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import fsspec

    real = fsspec.get_filesystem_class

    def missing(protocol: str):  # type: ignore[no-untyped-def]
        if protocol == "s3":
            raise ImportError(f"Install s3fs to access {protocol}")
        return real(protocol)

    monkeypatch.setattr(fsspec, "get_filesystem_class", missing)
    with pytest.raises(zl.UnsupportedSchemeError, match=r"no driver for 's3://'; install zarrview\[cloud\] \(s3fs\)"):
        zl.open("s3://bucket/x.zarr")
    with pytest.raises(zl.UnsupportedSchemeError, match=r"no driver for 'nosuch://'"):
        zl.open("nosuch://bucket/x.zarr")


def test_tree_says_how_to_reach_children_a_server_cannot_list(site: Path, tmp_path: Path) -> None:
    """Without listing or consolidated metadata, ``zarrview tree`` shows the
    root and says that children are reached by their path, rather than an empty tree."""
    import contextlib
    import io

    from zarrview import cli

    plain = tmp_path / "plain.zarr"
    shutil.copytree(site / "v3.zarr", plain)
    zarr_json = json.loads((plain / "zarr.json").read_text())
    zarr_json.pop("consolidated_metadata", None)
    (plain / "zarr.json").write_text(json.dumps(zarr_json))
    with serve(tmp_path) as (url, _):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["tree", f"{url}/plain.zarr"]) == 0
        assert "cannot list" in out.getvalue() and f"'{url}/plain.zarr::/NAME'" in out.getvalue()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):  # a child group, the same way down
            assert cli.main(["tree", f"{url}/plain.zarr::/sub"]) == 0
        assert f"'{url}/plain.zarr::/sub/NAME'" in out.getvalue()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):  # and the path it names works
            assert cli.main(["tree", f"{url}/plain.zarr::/sub/vals"]) == 0
        assert "vals" in out.getvalue() and "float32" in out.getvalue()


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_query_in_the_url_goes_with_every_request_and_into_no_message(site: Path, backend: str) -> None:
    """A SAS token or signature in a store URL is sent with each request; a key whose request
    lacks it is refused by the server, and messages name the URL without it."""
    from http_server import Faults

    token = "sv=2024-11-04&sig=a%2Fb%2Bc%3D&se=2030-01-01"
    with serve(site, Faults(signed={"/v3.zarr": token})) as (url, state):
        with pytest.raises(zl.StoreError):
            zl.open(f"{url}/v3.zarr", backend=backend)  # unsigned: every request is refused
        root = zl.open(f"{url}/v3.zarr?{token}", backend=backend)
        assert token not in root.store.url
        np.testing.assert_array_equal(root["img"][...], np.arange(2000, dtype="u2").reshape(40, 50))
        np.testing.assert_array_equal(root["sub/vals"][:5], np.arange(5, dtype="f4"))
        signed = [p for _, p, _ in state.requests() if p.endswith(f"?{token}")]
        assert any("/img/c/0/0" in p for p in signed)
        with pytest.raises(zl.ZarrError) as e:
            zl.open(f"{url}/v3.zarr?{token}::/missing", backend=backend)
        assert "sig=" not in str(e.value)


@pytest.mark.parametrize("header,start,stop,ok", [
    ("bytes 10-19/100", 10, 20, True),  # the range asked
    ("bytes 90-99/100", 90, 120, True),  # its part the object holds: the object ends inside it
    ("bytes 90-99/100", -10, None, True),  # the last 10 bytes
    ("bytes 95-99/100", -10, None, True),  # a suffix longer than the object's tail is cut
    ("bytes 0-0/0", -10, None, True),  # an empty object, as servers answer its suffix
    ("bytes 11-20/100", 10, 20, False),  # other bytes, well framed
    ("bytes 10-18/100", 10, 20, False),  # fewer, though the object goes on
    ("bytes 10-29/100", 10, 20, False),  # more
    ("bytes 80-89/100", -10, None, False),  # not the object's end
    ("bytes 10-19/*", 10, 20, True),  # the range asked, the size unknown
    ("bytes 10-18/*", 10, 20, False),
    ("bytes 19-10/100", 10, 20, False),  # not a range at all
    ("bytes 10-19/15", 10, 20, False),
    (None, 10, 20, False),  # a part that does not say which
    ("items 10-19/100", 10, 20, False),
    ("bytes 0-9/100", None, None, False),  # a part, to a request for the whole object
])
def test_a_part_is_the_range_asked_or_where_the_object_ends(header: str | None, start: int | None, stop: int | None,
                                                            ok: bool) -> None:
    from zarrview.zarrlib.storage.http_store import range_answered

    assert (range_answered(header, start, stop) is None) == ok, range_answered(header, start, stop)
