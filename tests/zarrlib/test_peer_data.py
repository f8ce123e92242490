"""``zarrview.zarrlib`` against the zarrs project's test stores (copied into tests/data/zarrs).

Every array found under the folder (a directory holding ``zarr.json`` with node_type "array", or
``.zarray``) is a test case; nothing is skipped silently.

* Where zarr-python can read the array, what zl reads must equal what zarr-python reads from the
  same store (values, shape, dtype, fill value, chunks, attributes).
* Where zarr-python cannot (codecs needing missing packages such as pcodec / zfpy, zarrs-only
  codecs such as bitround, the zarrs-only ``optional`` data type), zl must either read the values
  the store documents (in its attributes, in its raw chunk bytes, or in the uncompressed sibling
  store written by the same program) or raise a ``zl.ZarrError`` naming the unsupported codec or
  data type.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_helpers import skip_unless_listable, transport  # noqa: F401  (autouse: every test also runs over HTTP)
from conformance_helpers import (
    CONFORMANCE_MARKS,
    assert_array_matches,
    assert_fill_value_equal,
    assert_same_dtype,
    to_expected_array,
)

pytestmark = CONFORMANCE_MARKS

PEER = Path(__file__).resolve().parents[1] / "data" / "zarrs"

BIG = 2_000_000  # arrays with more elements are compared on strided windows, not in full


# --------------------------------------------------------------------------- discovery


def _load(p: Path) -> Any:
    try:
        return json.loads(p.read_bytes())
    except (OSError, ValueError):
        return None


def _discover() -> tuple[list[str], list[str]]:
    arrays: list[str] = []
    groups: list[str] = []
    for dirpath, dirnames, filenames in os.walk(PEER):
        dirnames.sort()
        rel = Path(dirpath).relative_to(PEER).as_posix()
        is_array = ".zarray" in filenames
        is_group = ".zgroup" in filenames
        if "zarr.json" in filenames:
            doc = _load(Path(dirpath) / "zarr.json")
            node_type = doc.get("node_type") if isinstance(doc, dict) else None
            is_array |= node_type == "array"
            is_group |= node_type == "group"
        if is_array:
            arrays.append(rel)
        if is_group:
            groups.append(rel)
    return sorted(arrays), sorted(groups)


ARRAYS, GROUPS = _discover()


def test_peer_data_found():
    assert len(ARRAYS) >= 60, f"only {len(ARRAYS)} arrays found under {PEER}"


def _formats(rel: str) -> list[int]:
    d = PEER / rel
    out = []
    if (d / "zarr.json").is_file():
        out.append(3)
    if (d / ".zarray").is_file():
        out.append(2)
    return out


def _meta(rel: str, fmt: int) -> dict:
    return _load(PEER / rel / ("zarr.json" if fmt == 3 else ".zarray"))


# --------------------------------------------------------------------------- zarr-python's view


def _zarr_open(rel: str, fmt: int):
    return zarr.open_array(str(PEER / rel), mode="r", zarr_format=fmt)


def _zarr_read(rel: str, fmt: int) -> tuple[Any, Exception | None]:
    """(zarr array, None) if zarr-python reads the array, else (None, the exception)."""
    try:
        z = _zarr_open(rel, fmt)
        z[(0,) * z.ndim] if z.ndim and all(z.shape) else z[...]
        return z, None
    except Exception as exc:  # noqa: BLE001 - any failure means "zarr-python cannot read it"
        return None, exc


def _windows(shape: tuple[int, ...]) -> list[Any]:
    if int(np.prod(shape, dtype=np.int64)) <= BIG:
        return [Ellipsis]
    return [
        tuple(slice(None, None, max(1, n // 97)) for n in shape),
        tuple(slice(0, min(n, 1500)) for n in shape),
        tuple(slice(max(0, n - 7), None) for n in shape),
        tuple(slice(n // 2 - 3, n // 2 + 4, 2) for n in shape),
    ]


def _as_array(x: Any, dtype: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    out = np.empty((), dtype=dtype)
    out[()] = x
    return out


# --------------------------------------------------------------------------- truths for arrays
# zarr-python cannot read


def _codec_names(meta: dict, fmt: int) -> list[str]:
    names: list[str] = []

    def walk(codecs):
        for c in codecs or []:
            if isinstance(c, dict):
                names.append(str(c.get("name", c.get("id"))))
                cfg = c.get("configuration") or {}
                for key in ("codecs", "index_codecs", "mask_codecs", "data_codecs"):
                    walk(cfg.get(key))

    if fmt == 3:
        walk(meta.get("codecs"))
    else:
        walk(meta.get("filters"))
        walk([meta.get("compressor")] if meta.get("compressor") else [])
    return names


def _dtype_name(meta: dict) -> str:
    dt = meta.get("data_type", meta.get("dtype"))
    return dt.get("name") if isinstance(dt, dict) else str(dt)


def _sibling_none(rel: str) -> Path:
    """The uncompressed store written by the same program as ``rel`` (array_<codec>... ->
    array_none...)."""
    p = PEER / rel
    name = re.sub(r"array_(pcodec|zfpy)", "array_none", p.name)
    sib = p.with_name(name)
    assert sib.is_dir(), f"no uncompressed sibling {sib} for {rel}"
    return sib


def _sibling_truth(rel: str, fmt: int) -> np.ndarray:
    sib = _sibling_none(rel)
    fmt_sib = fmt if (sib / ("zarr.json" if fmt == 3 else ".zarray")).is_file() else None
    return to_expected_array(zarr.open_array(str(sib), mode="r", zarr_format=fmt_sib)[...])


def _parse_optional_description(desc: str) -> tuple[np.ndarray, np.ndarray]:
    """The grid in an ``optional`` store's description: values and a 'missing' mask."""
    rows = []
    for line in desc.splitlines():
        toks = line.split()
        if toks and all(re.fullmatch(r"\d+|N|SN", t) for t in toks):
            rows.append(toks)
    assert rows, f"no value grid in description {desc!r}"
    missing = np.array([[t in ("N", "SN") for t in r] for r in rows])
    values = np.array([[int(t) if t.isdigit() else 0 for t in r] for r in rows])
    return values, missing


def _is_missing(x: Any) -> bool:
    if x is None or x is np.ma.masked:
        return True
    if isinstance(x, (list, tuple)) and len(x) == 1 and x[0] is None:
        return True  # Some(None) of a nested optional
    return False


def _check_unsupported_or_truth(node_fn, meta: dict, rel: str, fmt: int, zarr_exc: Exception) -> None:
    """zarr-python cannot read ``rel``: zl must read the documented values or name what it lacks."""
    codecs = _codec_names(meta, fmt)
    dtype_name = _dtype_name(meta)
    # what makes the array unreadable for zarr-python, and the truth for it
    if dtype_name == "optional":
        culprit = "optional"
        values, missing = _parse_optional_description(meta["attributes"]["description"])

        def check(got):
            got_arr = got
            assert getattr(got_arr, "shape", None) == values.shape, f"shape {getattr(got_arr, 'shape', None)}"
            mask = np.ma.getmaskarray(got_arr) if isinstance(got_arr, np.ma.MaskedArray) else None
            for idx in np.ndindex(values.shape):
                item = got_arr[idx] if mask is None or not mask[idx] else np.ma.masked
                if missing[idx]:
                    assert _is_missing(item), f"at {idx}: got {item!r}, expected a missing value"
                else:
                    assert not _is_missing(item) and int(item) == values[idx], (
                        f"at {idx}: got {item!r}, expected {values[idx]}")
    elif "bitround" in codecs:
        culprit = "bitround"
        # bitround's decode is the identity: the stored bytes (bytes codec, little endian,
        # one chunk) are the values
        assert meta["chunk_grid"]["configuration"]["chunk_shape"] == meta["shape"]
        raw = (PEER / rel / "c" / "0").read_bytes()
        truth = np.frombuffer(raw, dtype=np.dtype(meta["data_type"]).newbyteorder("<")).reshape(meta["shape"])

        def check(got):
            assert_array_matches(got, truth)
    elif any(c.split(".")[-1] in ("pcodec", "zfpy") for c in codecs):
        culprit = next(c.split(".")[-1] for c in codecs if c.split(".")[-1] in ("pcodec", "zfpy"))
        truth = _sibling_truth(rel, fmt)

        def check(got):
            if culprit == "pcodec":  # lossless
                assert_array_matches(got, truth)
            else:  # zfpy in fixed-accuracy mode: tolerance from the configuration
                cfg = next(c for c in (meta.get("codecs") or [meta.get("compressor")])
                           if "zfpy" in str(c.get("name", c.get("id"))))
                tol = (cfg.get("configuration") or cfg).get("tolerance")
                assert isinstance(got, np.ndarray) and got.shape == truth.shape
                assert_same_dtype(got.dtype, truth.dtype)
                np.testing.assert_allclose(got, truth, atol=tol, rtol=0)
    else:
        pytest.fail(f"zarr-python cannot read {rel} ({type(zarr_exc).__name__}: {zarr_exc}) and this "
                    f"test knows no other truth for it (codecs {codecs}, data type {dtype_name!r})")
    try:
        got = node_fn()[...]
    except zl.ZarrError as exc:
        assert culprit.lower() in str(exc).lower(), (
            f"zl refused {rel} with {type(exc).__name__}: {exc!s} - the message does not name "
            f"{culprit!r}")
        return
    check(got)


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("rel", ARRAYS)
def test_array_matches_zarr_python(rel):
    formats = _formats(rel)
    assert formats, rel
    path = PEER / rel

    def open_node():
        node = zl.open(path)
        assert node.kind == "array", f"{rel} opened as {node.kind}"
        return node

    # zl picks one of the metadata documents where both exist; it must be one that is there
    try:
        node = open_node()
    except zl.ZarrError as exc:
        node = None
        open_exc = exc
    fmt = node.zarr_format if node is not None else formats[0]
    assert fmt in formats, f"{rel}: zl reports zarr_format {fmt}, documents present: {formats}"
    meta = _meta(rel, fmt)
    z, zexc = _zarr_read(rel, fmt)
    if z is None:
        if node is None:
            # opening already failed: the refusal must name what is unsupported
            _check_unsupported_or_truth(lambda: (_ for _ in ()).throw(open_exc), meta, rel, fmt, zexc)
        else:
            _check_unsupported_or_truth(lambda: node, meta, rel, fmt, zexc)
        return
    assert node is not None, f"zl cannot open {rel}, zarr-python can: {open_exc}"
    for sel in _windows(tuple(z.shape)):
        theirs = _as_array(z[sel], z.dtype)
        ours = node[sel]
        assert_array_matches(ours, theirs, context=f"{rel} [{sel!r}]: ")
    # both metadata documents present (zarrs writes v2 and v3 metadata for the same chunks):
    # the other one describes the same values
    for other in formats:
        if other != fmt:
            z2, _ = _zarr_read(rel, other)
            if z2 is not None:
                assert_array_matches(node[...], _as_array(z2[...], z2.dtype), context=f"{rel} (v{other} doc): ")


@pytest.mark.parametrize("rel", ARRAYS)
def test_array_metadata_matches_zarr_python(rel):
    path = PEER / rel
    try:
        node = zl.open(path)
    except zl.ZarrError:
        # only acceptable where zarr-python cannot read it either (checked in the test above)
        z, _ = _zarr_read(rel, _formats(rel)[0])
        assert z is None, f"zl cannot open {rel}, zarr-python can"
        return
    if isinstance(node, zl.UnsupportedArray):
        # a data type or codec zarrlib lacks: the node opens with its metadata, only reading fails,
        # and only where zarr-python cannot read it either
        z, _ = _zarr_read(rel, _formats(rel)[0])
        assert z is None, f"zl cannot read {rel}, zarr-python can"
        assert node.metadata == _meta(rel, node.zarr_format) and node.shape == tuple(node.metadata["shape"])
        with pytest.raises(zl.UnsupportedFeatureError):
            node[...]
        return
    fmt = node.zarr_format
    doc = _meta(rel, fmt)
    assert node.kind == "array"
    assert node.path == "/"
    assert node.metadata == doc
    if fmt == 3:
        attrs = doc.get("attributes", {})
        dn = doc.get("dimension_names")
        assert node.dimension_names == (None if dn is None else tuple(dn))
    else:
        attrs = _load(path / ".zattrs") or {}
    assert dict(node.attrs) == attrs
    assert tuple(node.shape) == tuple(doc["shape"])
    assert isinstance(node.codecs, str)
    try:
        z = _zarr_open(rel, fmt)
    except Exception:  # noqa: BLE001 - zarr-python cannot open it: shape/attrs checked above
        return
    assert_same_dtype(node.dtype, z.dtype)
    assert tuple(node.chunks) == tuple(z.chunks)
    assert (None if node.shards is None else tuple(node.shards)) == (None if z.shards is None else tuple(z.shards))
    zfill = z.metadata.fill_value if fmt == 2 else z.fill_value
    if fmt == 2 and z.dtype == object and zfill is not None and not isinstance(zfill, (str, bytes)):
        zfill = str(zfill)  # zarr-python: a numeric fill in a vlen-utf8 array is its text
    assert_fill_value_equal(node.fill_value, zfill, z.dtype)


@pytest.mark.parametrize("rel", GROUPS)
def test_group_matches_zarr_python(rel):
    path = PEER / rel
    node = zl.open(path)
    assert node.kind == "group"
    zg = zarr.open_group(str(path), mode="r")
    assert dict(node.attrs) == dict(zg.attrs)
    skip_unless_listable(node)
    members = node.members()
    names = [m.name for m in members]
    assert names == sorted(names)
    z_members = dict(zg.members())
    assert names == sorted(z_members)
    for m in members:
        zm = z_members[m.name]
        assert m.kind == ("array" if isinstance(zm, zarr.Array) else "group"), m.name
        assert m.path == "/" + m.name
        same = node[m.name]
        assert same.path == m.path and same.kind == m.kind


def _arrays_below_groups() -> list[tuple[str, str]]:
    out = []
    roots = [g for g in GROUPS if not any(g != r and g.startswith(r + "/") for r in GROUPS)]
    for root in roots:
        for a in ARRAYS:
            if a.startswith(root + "/"):
                out.append((root, a[len(root) + 1:]))
    return out


@pytest.mark.parametrize("root,sub", _arrays_below_groups(), ids=[f"{r}::{s}" for r, s in _arrays_below_groups()])
def test_array_reached_from_root(root, sub):
    top = zl.open(PEER / root)
    node = top[sub]
    assert node.kind == "array"
    assert node.path == "/" + sub
    assert node.name == sub.rsplit("/", 1)[-1]
    direct = zl.open(PEER / root / sub)
    sel = _windows(tuple(direct.shape))[-1]
    assert_array_matches(node[sel], direct[sel])
