""""Copy as Python": each snippet, run as it is, leaves in ``data`` exactly the array ``zarrview
export`` writes to .npy for the same location, ``--slice``, ``--level`` and ``--raw`` (dtype,
shape and values, NaN in the same places), for zarr-python, xarray, TensorStore and zarrlib, on
local folders, zip archives, HTTP, S3 (moto), Icechunk versions and reference sets; where a
library cannot read the array the snippet is refused in one line, and no secret is written."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import py312_env
import snippet_stores as stores
from zarrview import __version__
from zarrview.cli import main
from zarrview.cli_export import chosen_spec
from zarrview.viewing.decision import looked_at
from zarrview.viewing.image.slice_spec import read_slice
from zarrview.viewing.snippets import KINDS, LibraryCannotRead, NotADataset, SnippetError, snippet, source_of
import zarrview.zarrlib as zl

pytestmark = [pytest.mark.timeout(600),
              pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated"),
              pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")]

_count = itertools.count()


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("snippet-out")


def _cli(*args: str) -> tuple[int, str, str]:
    """``zarrview ARGS`` in this process: (status, stdout, stderr)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            status = main(list(args))
        except SystemExit as e:  # the parser's one line
            status = int(e.code or 0)
    return status, stdout.getvalue(), stderr.getvalue()


def exported(out: Path, location: str, *args: str) -> np.ndarray:
    """What ``zarrview export LOCATION ARGS -o x.npy`` writes."""
    path = out / f"export-{next(_count)}.npy"
    status, _, err = _cli("export", location, *args, "-o", str(path))
    assert status == 0, err
    return np.load(path, allow_pickle=True)


def snippet_for(location: str, kind: str, *args: str) -> str:
    status, text, err = _cli("snippet", location, *args, "--for", kind)
    assert status == 0, err
    return text


def refused(location: str, kind: str, *args: str) -> str:
    """The one line ``zarrview snippet`` says where the library cannot read the array (status 2)."""
    status, text, err = _cli("snippet", location, *args, "--for", kind)
    assert status == 2 and not text and err.count("\n") == 1 and err.startswith("zarrview: "), (status, text, err)
    return err


def executed(code: str) -> np.ndarray:
    """The snippet run as it is, in a fresh namespace: its ``data``."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    return namespace["data"]


def assert_same(got: Any, want: np.ndarray) -> None:
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)  # NaN (and NaT) where the other has them


def check(out: Path, location: str, kind: str, *args: str) -> str:
    """The snippet for ``kind`` reads what export writes; returns the snippet."""
    code = snippet_for(location, kind, *args)
    assert_same(executed(code), exported(out, location, *args))
    return code


def window_snippet(location: str, kind: str, options: Mapping[str, Any], slice_text: str | None = None,
                   level: int | None = None, raw: bool = False) -> str:
    """The snippet as the window makes it: from the spec of its view, opened with ``options``."""
    node = zl.open(location, **options)
    node.hierarchy.widen_ml_types = True
    _, spec = chosen_spec(looked_at(node), read_slice(slice_text), level, raw=raw)
    assert spec is not None
    return snippet(spec, location, options, kind)


# -- stores on disk ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("snippets")
    stores.write_plain(root / "plain.zarr")
    stores.write_v2(root / "v2.zarr")
    stores.zip_folder(root / "plain.zarr", root / "plain.zip")
    for fmt in (2, 3):
        stores.write_cf_cube(root / f"cf{fmt}.zarr", fmt)
    stores.folder_references(root / "cf2.zarr", root / "cf2refs.json")
    return root


PLAIN_CASES = [
    ("plain.zarr::/v4", ("--slice", "1,:,:,5")),  # 4-D, a (c, y) plane
    ("plain.zarr::/v4", ()),  # the window's first plane
    ("plain.zarr::/v4", ("--slice", "2,3,7,:")),  # a line
    ("plain.zarr::/sh", ()),  # sharded
    ("plain.zarr::/sh", ("--slice", "17,4")),  # one value
    ("plain.zarr::/text", ()),
    ("v2.zarr::/big", ("--slice", "3,:")),  # big-endian
    ("v2.zarr::/text", ()),
]
#: what each library is refused on: text in TensorStore
PLAIN_REFUSED = {("plain.zarr::/text", "tensorstore"), ("v2.zarr::/text", "tensorstore")}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("node", "args"), PLAIN_CASES)
def test_local_arrays(local: Path, out: Path, node: str, args: tuple[str, ...], kind: str) -> None:
    location = f"{local}/{node}"
    if (node, kind) in PLAIN_REFUSED:
        assert "TensorStore" in refused(location, kind, *args)
        return
    code = check(out, location, kind, *args)
    assert code.startswith(f"# zarrview {__version__}: {local}/{node.split('::')[0]}::/")


def test_the_selection_is_written_as_an_index_tuple(local: Path) -> None:
    code = snippet_for(f"{local}/plain.zarr::/v4", "zarr", "--slice", "1,:,:,5")
    assert "data = arr[1, :, :, 5]\n" in code and "/plain.zarr::/v4[1, :, :, 5]" in code.splitlines()[0]
    code = snippet_for(f"{local}/plain.zarr::/v4", "xarray", "--slice", "1,:,:,5")
    assert 'data = ds["v4"].isel(t=1, x=5).values' in code
    code = snippet_for(f"{local}/plain.zarr::/v4", "tensorstore", "--slice", "1,:,:,5")
    assert "data = arr[1, :, :, 5].read().result()" in code


def test_a_zip_archive(local: Path, out: Path) -> None:
    for kind in KINDS:
        check(out, f"{local}/plain.zip::/v4", kind, "--slice", "0,:,3,:")
        check(out, f"{local}/plain.zip::/sh", kind)


def test_a_group_without_dimension_names_is_no_xarray_dataset(local: Path, out: Path) -> None:
    assert "no dimension names" in refused(f"{local}/plain.zarr::/bare/plane", "xarray")
    for kind in ("zarr", "tensorstore", "zarrlib"):
        check(out, f"{local}/plain.zarr::/bare/plane", kind)


# -- CF: xarray's encodings, decoded and raw ---------------------------------------------------------

CF_VARIABLES = ["t2m", "sst", "rain", "small", "count", "twofills", "ranged", "above", "u8", "u8raw", "plain", "qc",
                "status"]


@pytest.mark.parametrize("raw", [False, True], ids=["decoded", "raw"])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_cf_variables_by_coordinate_value(local: Path, out: Path, kind: str, fmt: int, raw: bool) -> None:
    flags = ("--raw",) if raw else ()
    for name in CF_VARIABLES:
        location = f"{local}/cf{fmt}.zarr::/{name}"
        code = check(out, location, kind, "--slice", "time=2001-03-02", *flags)
        if kind == "xarray":
            assert ".isel(time=1)" in code


@pytest.mark.parametrize("kind", KINDS)
def test_cf_a_line_by_coordinate_values(local: Path, out: Path, kind: str) -> None:
    code = check(out, f"{local}/cf3.zarr::/t2m", kind, "--slice", "lat=20,lon=#3")
    if kind in ("zarr", "tensorstore"):  # decoded by hand, as the view decodes
        assert "*= 0.01" in code and "+= 273.15" in code and "data[missing] = np.nan" in code
    if kind == "xarray":
        assert "mask_and_scale=True" in code


def test_cf_the_valid_range_is_applied_where_xarray_does_not(local: Path) -> None:
    code = snippet_for(f"{local}/cf3.zarr::/ranged", "xarray", "--slice", "time=#0")
    assert "mask_and_scale=False" in code and "(data < 0.0) | (data > 1000.0)" in code


@pytest.mark.parametrize("fmt", [2, 3])
def test_cf_times(local: Path, out: Path, fmt: int) -> None:
    location = f"{local}/cf{fmt}.zarr::/time"
    for kind in ("xarray", "zarrlib"):
        check(out, location, kind)
    for kind in ("zarr", "tensorstore"):
        assert "CF times" in refused(location, kind)
        check(out, location, kind, "--raw")
    assert exported(out, location).dtype == np.dtype("datetime64[ns]")


def test_cf_through_a_reference_set(local: Path, out: Path) -> None:
    for kind in ("zarr", "xarray", "zarrlib"):
        for raw in ((), ("--raw",)):
            check(out, f"reference::{local}/cf2refs.json::/t2m", kind, "--slice", "lon=100", *raw)
    assert "reference sets" in refused(f"reference::{local}/cf2refs.json::/t2m", "tensorstore")


# -- OME-Zarr levels ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ome(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from ome_stores import ome_zarr_image, pattern

    root = tmp_path_factory.mktemp("ome")
    data = pattern((4, 64, 48))
    return {v: ome_zarr_image(root / f"img{v}.zarr", v, data, "zyx", scale_factors=(2, 4), chunks=(1, 16, 16))
            for v in ("0.4", "0.5")}


@pytest.mark.parametrize("version", ["0.4", "0.5"])
@pytest.mark.parametrize("kind", ["zarr", "tensorstore", "zarrlib"])
def test_ome_levels(ome: dict[str, Path], out: Path, version: str, kind: str) -> None:
    location = str(ome[version])
    check(out, location, kind)
    code = check(out, location, kind, "--level", "1")
    attrs = zl.open(location).attrs
    level1 = attrs.get("ome", attrs)["multiscales"][0]["datasets"][1]["path"]
    assert f"{location}::/{level1}[" in code.splitlines()[0]  # the level's array
    check(out, location, kind, "--level", "2", "--slice", "3,:,:")
    check(out, location, kind, "--slice", ":,40,:")


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_ome_levels_are_no_xarray_dataset(ome: dict[str, Path], version: str) -> None:
    said = refused(str(ome[version]), "xarray", "--level", "1")
    assert "dimension" in said and "--for zarr" in said


# -- ML types ----------------------------------------------------------------------------------------


def test_bfloat16_reads_as_float32_as_shown(tmp_path: Path, out: Path) -> None:
    import ml_dtypes
    import tensorstore as ts

    values = (np.arange(24, dtype="f4").reshape(4, 6) / 8 - 1).astype(ml_dtypes.bfloat16)
    arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "bf.zarr") + "/"},
                   "metadata": {"data_type": "bfloat16", "shape": [4, 6],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}}}},
                  create=True).result()
    arr.write(values).result()
    for kind in ("tensorstore", "zarrlib"):
        check(out, str(tmp_path / "bf.zarr"), kind)
    assert "bfloat16" in refused(str(tmp_path / "bf.zarr"), "zarr")


# -- over HTTP ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["zarr", "tensorstore", "zarrlib"])
def test_over_http(local: Path, out: Path, files_over_http: str, kind: str) -> None:
    base = f"{files_over_http}{local}"
    check(out, f"{base}/plain.zarr::/v4", kind, "--slice", "2,:,:,7")
    check(out, f"{base}/plain.zarr::/sh", kind)
    check(out, f"{base}/plain.zip::/v4", kind, "--slice", "1,1,:,:")
    check(out, f"{base}/cf3.zarr::/t2m", kind, "--slice", "time=2001-03-03")


def test_over_http_xarray_needs_consolidated_metadata(local: Path, out: Path, files_over_http: str) -> None:
    base = f"{files_over_http}{local}"
    assert "lists nothing" in refused(f"{base}/plain.zarr::/v4", "xarray")
    for fmt in (2, 3):
        check(out, f"{base}/cf{fmt}.zarr::/t2m", "xarray", "--slice", "time=2001-03-03")
        check(out, f"{base}/cf{fmt}.zarr::/u8", "xarray", "--slice", "lat=0")


# -- S3 ------------------------------------------------------------------------------------------------

BUCKET = "snippet-data"
SECRETS = {"key": "AKIASNIPPETKEY", "secret": "snippet-secret-value", "token": "snippet-session-token"}


@pytest.fixture(scope="module")
def s3(local: Path) -> Iterator[str]:
    pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")
    import boto3
    from cloud_servers import moto_s3

    with moto_s3() as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket=BUCKET)
        for name in ("plain.zarr", "cf3.zarr", "plain.zip"):
            top = local / name
            for path in [top] if top.is_file() else sorted(top.rglob("*")):
                if path.is_file():
                    client.put_object(Bucket=BUCKET, Key=path.relative_to(local).as_posix(), Body=path.read_bytes())
        yield endpoint


@pytest.mark.parametrize("kind", KINDS)
def test_on_s3(s3: str, out: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    options = {"endpoint_url": s3, "region": "us-east-1", **SECRETS}
    cases = [("plain.zarr::/v4", "1,:,:,5"), ("plain.zarr::/sh", None), ("cf3.zarr::/t2m", "time=2001-03-02"),
             ("plain.zip::/v4", "0,:,4,:")]
    for node, slice_text in cases:
        location = f"s3://{BUCKET}/{node}"
        if kind == "xarray" and node.startswith("plain.zip"):
            continue  # the archive's root group is a dataset too: the folder's case shows it
        code = window_snippet(location, kind, options, slice_text)
        assert s3 in code and not any(secret in code for secret in SECRETS.values()), code
        args = ("--slice", slice_text) if slice_text else ()
        with monkeypatch.context() as env:
            env.setenv("AWS_ENDPOINT_URL", s3)  # for the export, which takes no endpoint option
            want = exported(out, location, *args)
        assert_same(executed(code), want)


# -- Icechunk --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle() -> str:
    return py312_env.require(py312_env.ICECHUNK)


@pytest.fixture(scope="module")
def icechunk(oracle: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from icechunk_repos import repositories

    return repositories(tmp_path_factory)


@pytest.fixture(scope="module")
def icechunk_dataset(oracle: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    repo = tmp_path_factory.mktemp("icechunk-xr") / "ds.icechunk"
    return repo, stores.write_icechunk_dataset(oracle, repo)


@pytest.mark.parametrize("repo", ["repo2.icechunk", "repo1.icechunk"])
def test_icechunk_versions(icechunk: dict[str, Any], oracle: str, out: Path, repo: str) -> None:
    spec = icechunk["repos"][repo]
    location = icechunk["root"] / repo
    snapshot = spec["versions"]["tag.v1"]["snapshot"]  # the same version, spelled by its snapshot id
    wanted, codes = [], []
    for version in ("branch.main", "tag.v1", "branch.dev", snapshot):
        for node, args in (("/a", ("--slice", "3,:")), ("/a", ()), ("/grp/missing", ()), ("/sh", ("--slice", ":,5"))):
            loc = f"{location}@{version}::{node}"
            want = exported(out, loc, *args)
            assert_same(executed(snippet_for(loc, "zarrlib", *args)), want)
            code = snippet_for(loc, "zarr", *args)
            assert "icechunk.Repository.open" in code and "readonly_session(" in code
            wanted.append(want)
            codes.append(code)
    for got, want in zip(in_oracle(oracle, codes, out), wanted, strict=True):
        assert_same(got, want)
    assert "Icechunk" in refused(f"{location}::/a", "tensorstore")
    assert "no dimension names" in refused(f"{location}::/a", "xarray")


def test_icechunk_virtual_chunks_with_authorize(icechunk: dict[str, Any], oracle: str, out: Path) -> None:
    location = f"{icechunk['root'] / 'repo2.icechunk'}@branch.main::/vc"
    args = ("--authorize", icechunk["prefix"])
    want = exported(out, location, *args)
    code = snippet_for(location, "zarr", *args)
    assert "authorize_virtual_chunk_access" in code
    assert_same(in_oracle(oracle, [code], out)[0], want)
    assert_same(executed(snippet_for(location, "zarrlib", *args)), want)


def test_icechunk_as_an_xarray_dataset(icechunk_dataset: tuple[Path, str], oracle: str, out: Path) -> None:
    repo, snapshot = icechunk_dataset
    wanted, codes = [], []
    for version in ("branch.main", "tag.v1", snapshot):
        for args in ((), ("--slice", "y=20"), ("--raw",)):
            location = f"{repo}@{version}::/t"
            want = exported(out, location, *args)
            for kind in ("xarray", "zarr"):
                wanted.append(want)
                codes.append(snippet_for(location, kind, *args))
            assert_same(executed(snippet_for(location, "zarrlib", *args)), want)
    for got, want in zip(in_oracle(oracle, codes, out), wanted, strict=True):
        assert_same(got, want)


def in_oracle(python: str, codes: list[str], out: Path) -> list[np.ndarray]:
    return stores.run_in(python, codes, out / f"oracle-{next(_count)}")


# -- kerchunk reference sets -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("kerchunk")
    from reference_sets import kerchunk_json, kerchunk_parquet, write_hdf5

    root = tmp_path_factory.mktemp("refs")
    h5 = write_hdf5(root / "data.h5")
    refs = kerchunk_json(h5, root / "refs.json")
    return {"json": root / "refs.json", "parquet": kerchunk_parquet(refs, root / "refs.parq")}


@pytest.mark.parametrize("form", ["json", "parquet"])
def test_reference_sets(references: dict[str, Path], out: Path, form: str) -> None:
    refs = references[form]
    for node, args in (("/temp", ()), ("/temp", ("--slice", "7,:")), ("/grp/deep", ("--slice", "1,:,:")),
                       ("/counts", ()), ("/level", ()), ("/wave", ())):
        for kind in ("zarr", "zarrlib"):
            check(out, f"reference::{refs}::{node}", kind, *args)
    code = check(out, f"{references['json']}::/temp", "zarr")  # a .json file opens as its reference set
    assert '"remote_protocol": "file"' in code  # else fsspec looks through every reference for it
    assert "reference sets" in refused(f"reference::{refs}::/temp", "tensorstore")


def test_reference_sets_whose_dimensions_disagree_are_no_xarray_dataset(references: dict[str, Path]) -> None:
    said = refused(f"reference::{references['json']}::/temp", "xarray")
    assert "one dataset" in said and "phony_dim_" in said


# -- secrets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_no_secret_is_written(local: Path, files_over_http: str, kind: str) -> None:
    signed = (f"{files_over_http}{local}/cf3.zarr?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIASIGNED"
              "&X-Amz-Signature=deadbeefcafe")
    code = window_snippet(f"{signed}::/t2m", kind, {"headers": {"Authorization": "Bearer hidden-bearer"}}, "0,:,:")
    for secret in ("AKIASIGNED", "deadbeefcafe", "hidden-bearer", "X-Amz"):
        assert secret not in code, code
    assert "credentials are not written here" in code


@pytest.mark.parametrize("kind", KINDS)
def test_no_secret_is_written_on_s3(s3: str, kind: str) -> None:
    options = {"endpoint_url": s3, "anon": False,
               "client_kwargs": {"region_name": "us-east-1", "aws_access_key_id": "nested-key-id",
                                 "aws_secret_access_key": "nested-secret", "aws_session_token": "nested-token"}}
    code = window_snippet(f"s3://{BUCKET}/plain.zarr::/sh", kind, options)
    for secret in ("nested-key-id", "nested-secret", "nested-token"):
        assert secret not in code, code
    assert s3 in code and "us-east-1" in code


def test_every_kind_of_credential_is_left_out(local: Path) -> None:
    arr = zl.open(f"{local}/plain.zarr::/sh")
    assert isinstance(arr, zl.Array)
    options = {"endpoint_url": "https://objects.example", "region": "eu-west-1", "anon": False,
               "key": "k-secret", "secret": "s-secret", "token": "t-secret", "session_token": "st-secret",
               "password": "pw-secret", "account_key": "ak-secret", "sas_token": "sas-secret",
               "aws_access_key_id": "id-secret", "aws_secret_access_key": "sk-secret",
               "client_kwargs": {"aws_session_token": "nested-secret", "region_name": "eu-west-1"},
               "io_retries": 3, "authorize": ["s3://other/"]}
    source = source_of(arr, "https://user:pw-in-url@host/x.zarr?sv=2024&sig=sas-in-url::/sh", options)
    assert "secret" not in repr(source) and "-in-url" not in repr(source)
    assert source.options == {"endpoint_url": "https://objects.example", "region": "eu-west-1", "anon": False,
                              "client_kwargs": {"region_name": "eu-west-1"}}
    assert source.hidden and source.authorize == ("s3://other/",)
    assert source_of(arr, "https://host/x.zarr?version=2::/sh", {}).url == "https://host/x.zarr?version=2"


# -- the command --------------------------------------------------------------------------------------


def test_the_command_prints_the_snippet(local: Path) -> None:
    status, text, err = _cli("snippet", f"{local}/cf3.zarr::/t2m", "--slice", "time=2001-03-02", "--for", "zarr")
    assert status == 0 and text.endswith("\n") and text.count("\n# zarrview") == 0
    assert text.startswith(f"# zarrview {__version__}: {local}/cf3.zarr::/t2m[1, :, :] (CF-decoded)")
    assert "zarrview: --slice time=2001-03-02" in err  # the choice is said, as export says it
    compile(text, "<snippet>", "exec")
    raw = snippet_for(f"{local}/cf3.zarr::/t2m", "zarr", "--slice", "time=2001-03-02", "--raw")
    assert "(as stored)" in raw.splitlines()[0] and "np.nan" not in raw


@pytest.mark.parametrize(("args", "words"), [
    ((), "--for"),
    (("--for", "numpy"), "invalid choice"),
    (("--for", "zarr", "--slice", "1,x"), "--slice"),
    (("--for", "zarr", "--slice", "nope=3"), "no dimension 'nope'"),
    (("--for", "zarr", "--level", "3"), "--level"),
])
def test_bad_arguments_are_one_line_and_status_2(local: Path, args: tuple[str, ...], words: str) -> None:
    status, text, err = _cli("snippet", f"{local}/plain.zarr::/v4", *args)
    assert status == 2 and not text and err.count("\n") == 1 and words in err, err


def test_unreadable_stores_are_one_line_and_status_1(local: Path) -> None:
    status, text, err = _cli("snippet", f"{local}/nothing.zarr::/a", "--for", "zarr")
    assert status == 1 and not text and err.startswith("zarrview: ") and "nothing.zarr" in err
    status, text, err = _cli("snippet", f"{local}/plain.zarr::/bare", "--for", "zarr")
    assert status == 1 and not text and "group" in err


def test_library_refusals_are_classes(local: Path) -> None:
    assert issubclass(LibraryCannotRead, SnippetError) and issubclass(NotADataset, SnippetError)
    node = zl.open(f"{local}/plain.zarr::/text")
    _, spec = chosen_spec(looked_at(node), read_slice(None), None)
    assert spec is not None
    with pytest.raises(LibraryCannotRead, match="TensorStore"):
        snippet(spec, f"{local}/plain.zarr::/text", {}, "tensorstore")
    with pytest.raises(SnippetError, match="choose one of"):
        snippet(spec, f"{local}/plain.zarr::/text", {}, "numpy")


def test_the_snippet_command_imports_no_qt(local: Path) -> None:
    import subprocess
    import sys

    location = f"{local}/plain.zarr::/sh"
    code = (f"import sys; from zarrview.cli import main; main(['snippet', {location!r}, '--for', 'tensorstore']); "
            "assert not any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
