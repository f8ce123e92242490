"""Shared helpers for the conformance tests.

The independent truth in these tests is what zarr-python 3 / tensorstore wrote and read, or
the numpy data handed to them.  The helpers here compare what ``zarrview.zarrlib`` returns with
that truth, strictly: same shape, same dtype (byte order aside), same values (NaN equal to NaN,
NaT equal to NaT, str never equal to bytes).
"""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

# zarr-python warns about every data type without a stable v3 spec; the tests write those on purpose.
warnings.filterwarnings("ignore", module=r"zarr\..*")
warnings.filterwarnings("ignore", message=r".*does not have a Zarr V3 specification.*")
warnings.filterwarnings("ignore", message=r".*is currently not part in the Zarr format 3 specification.*")
warnings.filterwarnings("ignore", message=r".*Consolidated metadata is currently not part.*")


# --------------------------------------------------------------------------- JSON documents


#: marks shared by the conformance modules
CONFORMANCE_MARKS = [
    pytest.mark.timeout(120),
    # the tests write data types and layouts without a stable spec on purpose
    pytest.mark.filterwarnings("ignore::zarr.errors.ZarrFutureWarning"),
    pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
    pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning"),
]


def load_json(path: Path | str) -> Any:
    with open(path, "rb") as f:
        return json.loads(f.read())


def write_json(path: Path | str, doc: Any) -> None:
    Path(path).write_text(json.dumps(doc, indent=2))


def edit_json(path: Path | str, fn: Callable[[dict], Any]) -> dict:
    """Load a JSON document, let ``fn`` modify it in place, write it back and return it."""
    doc = load_json(path)
    fn(doc)
    write_json(path, doc)
    return doc


def edit_zarr_json(store: Path, fn: Callable[[dict], Any]) -> dict:
    return edit_json(Path(store) / "zarr.json", fn)


# --------------------------------------------------------------------------- dtypes


_STRING_DTYPE = getattr(getattr(np, "dtypes", None), "StringDType", None)


def _is_string_dtype(dt: np.dtype) -> bool:
    """numpy's variable-width StringDType (what zarr-python returns for "string" arrays)."""
    return _STRING_DTYPE is not None and isinstance(dt, _STRING_DTYPE)


def expected_dtype(dt: Any) -> np.dtype:
    """The dtype zarrlib must report for an array zarr-python reports with ``dt``.

    Variable-length strings (numpy StringDType in zarr-python) are ``object`` in zarrlib.
    """
    dt = np.dtype(dt) if not isinstance(dt, np.dtype) else dt
    if _is_string_dtype(dt):
        return np.dtype(object)
    return dt


def _native(dt: np.dtype) -> np.dtype:
    if dt == np.dtype(object):
        return dt
    return dt.newbyteorder("=")


def assert_same_dtype(actual: Any, expected: Any, context: str = "") -> None:
    """dtype equality, ignoring byte order ('>i4' == '<i4'), applied to structured fields too."""
    assert isinstance(actual, np.dtype), f"{context}dtype is {type(actual).__name__}, not numpy.dtype"
    expected = expected_dtype(expected)
    if expected == np.dtype(object):
        assert actual == np.dtype(object), f"{context}dtype {actual!r}, expected object"
        return
    assert _native(actual) == _native(expected), f"{context}dtype {actual!r}, expected {expected!r}"


def to_expected_array(x: Any) -> np.ndarray:
    """numpy array to compare with; zarr-python's StringDType results become object arrays."""
    arr = np.asarray(x)
    if _is_string_dtype(arr.dtype):
        out = np.empty(arr.shape, dtype=object)
        out[...] = arr.astype(object)
        return out
    return arr


# --------------------------------------------------------------------------- values


def _first_mismatches(a: np.ndarray, e: np.ndarray, ne: np.ndarray, limit: int = 5) -> str:
    idx = np.argwhere(ne)[:limit]
    parts = [f"at {tuple(int(i) for i in ix)}: got {a[tuple(ix)]!r}, expected {e[tuple(ix)]!r}" for ix in idx]
    return f"{int(ne.sum())} of {ne.size} elements differ; " + "; ".join(parts)


def _category(x: Any) -> str:
    """str and bytes (numpy's subclasses included) never compare equal to each other."""
    if isinstance(x, str):
        return "str"
    if isinstance(x, (bytes, bytearray)):
        return "bytes"
    return type(x).__name__


def assert_values_equal(actual: np.ndarray, expected: np.ndarray, context: str = "") -> None:
    e = expected
    a = actual
    if e.dtype.names:
        assert a.dtype.names == e.dtype.names, f"{context}fields {a.dtype.names} != {e.dtype.names}"
        for name in e.dtype.names:
            assert_values_equal(a[name], e[name], f"{context}field {name!r}: ")
        return
    if e.dtype == object or a.dtype == object:
        af = a.ravel().tolist()
        ef = e.ravel().tolist()
        bad = [
            i
            for i, (x, y) in enumerate(zip(af, ef))
            if _category(x) != _category(y) or x != y
        ]
        if bad:
            shown = "; ".join(
                f"at flat {i}: got {af[i]!r} ({type(af[i]).__name__}), expected {ef[i]!r} ({type(ef[i]).__name__})"
                for i in bad[:5]
            )
            raise AssertionError(f"{context}{len(bad)} of {len(ef)} elements differ; {shown}")
        return
    if e.dtype.kind == "V":
        ab = [x.tobytes() for x in a.ravel()]
        eb = [x.tobytes() for x in e.ravel()]
        assert ab == eb, f"{context}raw bytes differ: got {ab[:5]!r}..., expected {eb[:5]!r}..."
        return
    if e.dtype.kind in "fc":
        # NaN == NaN; values compared exactly otherwise (including the sign of zero? no: -0.0 == 0.0)
        np.testing.assert_array_equal(a, e, err_msg=context)
        return
    if e.dtype.kind in "Mm":
        native = e.dtype.newbyteorder("=")
        ai = np.ascontiguousarray(a.astype(native)).view("i8")
        ei = np.ascontiguousarray(e.astype(native)).view("i8")
        ne = ai != ei
        if ne.any():
            raise AssertionError(context + _first_mismatches(a, e, ne))
        return
    np.testing.assert_array_equal(a, e, err_msg=context, strict=False)


def assert_array_matches(actual: Any, expected: Any, context: str = "") -> None:
    """zarrlib's read ``actual`` has the shape, dtype and values of ``expected``.

    A numpy scalar is accepted in place of a 0-d array (numpy itself returns scalars when every
    axis is indexed by an integer).
    """
    e = to_expected_array(expected)
    if isinstance(actual, np.generic) and e.ndim == 0:
        actual = np.asarray(actual)
    assert isinstance(actual, np.ndarray), f"{context}read returned {type(actual).__name__}, not numpy.ndarray"
    assert not isinstance(actual, np.ma.MaskedArray) or not np.ma.getmaskarray(actual).any(), (
        f"{context}read returned a masked array with masked elements"
    )
    assert actual.shape == e.shape, f"{context}shape {actual.shape}, expected {e.shape}"
    assert_same_dtype(actual.dtype, e.dtype, context)
    assert_values_equal(actual, e, context)


def assert_bits_equal(actual: Any, expected: Any, context: str = "") -> None:
    """Bit-exact comparison for floating-point data (NaN payloads, signed zeros)."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"{context}shape {a.shape}, expected {e.shape}"
    assert a.dtype.itemsize == e.dtype.itemsize
    view = {1: "u1", 2: "u2", 4: "u4", 8: "u8", 16: "u8"}[e.dtype.itemsize]
    an = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("="))).view(view)
    en = np.ascontiguousarray(e.astype(e.dtype.newbyteorder("="))).view(view)
    ne = an != en
    if ne.any():
        raise AssertionError(context + _first_mismatches(an, en, ne))


# --------------------------------------------------------------------------- fill values


def _struct_fill_to_tuple(v: Any, dtype: np.dtype) -> Any:
    if isinstance(v, dict):
        return tuple(_struct_fill_to_tuple(v[name], dtype.fields[name][0]) for name in dtype.names)
    return v


def assert_fill_value_equal(actual: Any, expected: Any, dtype: np.dtype, context: str = "") -> None:
    """The fill value zarrlib reports equals ``expected`` for an array of ``dtype``.

    Compared as the bytes of a one-element array of ``dtype``, so NaN compares equal to NaN of the
    same bit pattern; ``None`` only equals ``None``.
    """
    dtype = expected_dtype(dtype)
    if expected is None:
        assert actual is None, f"{context}fill_value {actual!r}, expected None"
        return
    assert actual is not None, f"{context}fill_value is None, expected {expected!r}"
    if dtype == np.dtype(object):
        if isinstance(actual, np.ndarray) and actual.ndim == 0:
            actual = actual[()]
        assert _category(actual) == _category(expected) and actual == expected, (
            f"{context}fill_value {actual!r}, expected {expected!r}"
        )
        return
    if dtype.names:
        actual = _struct_fill_to_tuple(actual, dtype)
        expected = _struct_fill_to_tuple(expected, dtype)
    if dtype.kind == "V" and not dtype.names and isinstance(actual, (list, tuple)):
        actual = bytes(actual)
    if dtype.kind == "V" and not dtype.names and isinstance(expected, str):
        expected = base64.b64decode(expected)
    try:
        a = np.array(actual, dtype=dtype)
    except Exception as exc:  # noqa: BLE001 - report what could not be interpreted
        raise AssertionError(f"{context}fill_value {actual!r} is not a {dtype} scalar: {exc}") from exc
    e = np.array(expected, dtype=dtype)
    assert a.tobytes() == e.tobytes(), f"{context}fill_value {actual!r}, expected {expected!r} ({dtype})"


# --------------------------------------------------------------------------- selections


#: the selections read over HTTP as well as from disk. Which elements a selection takes is worked
#: out before any byte is asked for, the same on every transport, and every selection is held to
#: numpy from disk; over HTTP these cover what the transport does differently: whole objects,
#: inner chunks of a shard fetched by range, a part of one chunk, steps across several, a 0-d
#: read, past the end and nothing at all
OVER_HTTP = frozenset({"ellipsis", "empty-tuple", "int-neg1", "cross-chunks", "cross-chunks-step", "in-one-chunk",
                       "step-larger-than-chunk", "past-end", "empty-slice", "int-and-step", "int-middle-axis"})


def selections(shape: tuple[int, ...], chunks: tuple[int, ...] | None = None) -> list[tuple[str, Any]]:
    """Named selections for an array of ``shape``: ints (incl. negative), slices with steps,
    Ellipsis, slices crossing chunk boundaries.  Only selections numpy accepts are returned."""
    ndim = len(shape)
    chunks = tuple(chunks) if chunks is not None else tuple(max(1, n // 3) for n in shape)
    out: list[tuple[str, Any]] = [
        ("ellipsis", Ellipsis),
        ("all-slices", tuple(slice(None) for _ in shape)),
    ]
    if ndim == 0:
        out.append(("empty-tuple", ()))
        return out
    n0 = shape[0]
    out += [
        ("int-0", 0),
        ("int-neg1", -1),
        ("int-mid", n0 // 2),
        ("int-neg-mid", -(n0 // 2) - 1),
        ("step2", tuple(slice(None, None, 2) for _ in shape)),
        ("start1-step3", tuple(slice(1, None, 3) for _ in shape)),
        ("cross-chunks", tuple(slice(max(c - 1, 0), 2 * c + 1) for c in chunks)),
        ("cross-chunks-step", tuple(slice(max(c - 2, 0), 3 * c + 2, c + 1) for c in chunks)),
        ("neg-bounds", tuple(slice(-3, -1) for _ in shape)),
        ("past-end", tuple(slice(1, n + 10) for n in shape)),
        ("empty-slice", (slice(2, 2),)),
        ("huge-step", tuple(slice(None, None, n + 3) for n in shape)),
        ("ellipsis-last", (Ellipsis, slice(1, None, 2))),
        ("first-slice-only", slice(None, max(n0 - 1, 0))),
        ("in-one-chunk", tuple(slice(min(1, n), min(1, n) + max(1, c - 2)) for n, c in zip(shape, chunks))),
        ("neg-start-clamped", tuple(slice(-n - 5, None) for n in shape)),
        ("stop-before-start", (slice(5, 2),)),
        ("step-larger-than-chunk", tuple(slice(0, None, c + 2) for c in chunks)),
    ]
    if ndim >= 2:
        out += [
            ("int-and-step", (-2, slice(None, None, 3))),
            ("slice-and-int", (slice(1, None, 2), 1)),
            ("ellipsis-int", (Ellipsis, -1)),
            ("int-ellipsis", (1, Ellipsis)),
            ("all-ints", tuple(n // 2 for n in shape)),
            ("all-neg-ints", tuple(-1 for _ in shape)),
        ]
    if ndim >= 3:
        out.append(("int-middle-axis", (slice(None), 1, slice(None, None, 2))))
        out.append(("int-ellipsis-int", (0, Ellipsis, -1)))
    probe = np.empty(shape, dtype="u1")
    valid = []
    for name, sel in out:
        try:
            probe[sel]
        except IndexError:
            continue
        valid.append((name, sel))
    return valid


def expected_selection(data: np.ndarray, sel: Any) -> np.ndarray:
    """numpy's ``data[sel]`` as an array of ``data``'s dtype (numpy returns scalars for all-int
    selections, and ``np.asarray`` of a str scalar would change the dtype)."""
    r = data[sel]
    if isinstance(r, np.ndarray):
        return r
    out = np.empty((), dtype=data.dtype)
    out[()] = r
    return out


def out_of_bounds_selections(shape: tuple[int, ...]) -> list[tuple[str, Any]]:
    if not shape:
        return [("int-on-0d", 0)]
    return [
        ("int-past-end", shape[0]),
        ("neg-int-past-start", -shape[0] - 1),
        ("too-many-indices", tuple(0 for _ in shape) + (0,)),
    ]


# --------------------------------------------------------------------------- test data


def sample_data(dtype: Any, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Deterministic data of ``dtype`` covering extreme and special values."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        specials = np.array([info.min, info.max, 0, 1], dtype=dt)
        flat[: min(n, 4)] = specials[: min(n, 4)]
    elif dt.kind == "f":
        flat = (rng.standard_normal(n) * 1000).astype(dt)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).max, np.finfo(dt).tiny], dtype=dt)
        flat[: min(n, 6)] = specials[: min(n, 6)]
    elif dt.kind == "c":
        ft = np.float32 if dt.itemsize == 8 else np.float64
        flat = (rng.standard_normal(n) * 100).astype(ft) + 1j * (rng.standard_normal(n) * 100).astype(ft)
        flat = flat.astype(dt)
        specials = np.array([complex(np.nan, 1), complex(2, np.inf), complex(-np.inf, np.nan), 0j], dtype=dt)
        flat[: min(n, 4)] = specials[: min(n, 4)]
    else:
        raise ValueError(dt)
    return flat.reshape(shape)


# --------------------------------------------------------------------------- transports


def walk_nodes(node: Any) -> dict[str, Any]:
    """Every node below ``node`` (itself included) by path, found by listing."""
    out = {node.path: node}
    for child in node.members() if node.kind == "group" else []:
        out.update(walk_nodes(child))
    return out


def write_bucket_fixtures(root: Path, data: np.ndarray, title: str, names: tuple[str, ...]) -> None:
    """What the cloud tests upload, written by zarr-python: the same values chunked (v3), sharded
    and as v2, and a small tree whose arrays have names URLs must escape."""
    import zarr

    kind = data.dtype.str[1:]
    zarr.create_array(root / "v3.zarr", shape=data.shape, chunks=(1, 16, 16), dtype=kind)[...] = data
    zarr.create_array(root / "sharded.zarr", shape=data.shape, chunks=(1, 8, 8), shards=(1, 16, 16),
                      dtype=kind)[...] = data
    zarr.create_array(root / "v2.zarr", shape=data.shape, chunks=(1, 16, 16), dtype=kind, zarr_format=2)[...] = data
    g = zarr.open_group(root / "tree.zarr", mode="w")
    g.attrs["title"] = title
    sub = g.create_group("sub")
    for i, name in enumerate(names):
        sub.create_array(name, shape=(4,), dtype="f8")[...] = np.arange(4) / 2 + i


def assert_same_tree(remote: Any, disk: Any, count: int) -> None:
    """Two hierarchies, walked by listing, hold the same paths, attributes and array values."""
    import numpy as np

    theirs, ours = walk_nodes(remote), walk_nodes(disk)
    assert sorted(theirs) == sorted(ours) and len(ours) == count, (sorted(theirs), sorted(ours))
    for path, node in ours.items():
        assert theirs[path].attrs == node.attrs
        if node.kind == "array":
            np.testing.assert_array_equal(theirs[path][...], node[...])


def assert_member_names(group: Any, expected: list[str]) -> None:
    """Listing where the store can list; over plain HTTP without consolidated metadata the
    children are unknown until reached by path, so the listing is empty."""
    names = [m.name for m in group.members()]
    assert names == (expected if group.can_list_members else []), names


def skip_unless_listable(group: Any) -> None:
    if not group.can_list_members:
        pytest.skip("this store cannot list (plain HTTP, no consolidated metadata)")


@pytest.fixture(autouse=True, params=["local", "http", "http-obstore"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every conformance test runs three times: from disk, and over HTTP from a loopback server
    with byte ranges and no listing (``zl.open`` of a local path is redirected to its URL), read
    through fsspec/aiohttp and through obstore."""
    if request.param.startswith("http"):
        from remote_backends import prefer

        prefer(monkeypatch, "auto" if request.param == "http-obstore" else "fsspec")
        if request.node.get_closest_marker("needs_listing"):
            pytest.skip("plain HTTP cannot list a store without consolidated metadata")
        import os
        from urllib.parse import quote

        import zarrview.zarrlib as zl
        from zarrview.zarrlib.storage.location import split_node_path

        base = request.getfixturevalue("files_over_http")
        real_open = zl.open

        def open_over_http(location: Any, path: str | None = None, **options: Any) -> Any:
            if isinstance(location, (str, os.PathLike)):
                head, node = split_node_path(os.fspath(location))
                if "://" not in head and not head.startswith("zip::") and Path(head).exists():
                    location = base + quote(str(Path(head).resolve())) + ("" if node == "/" else f"::{node}")
            return real_open(location, path, **options)

        monkeypatch.setattr(zl, "open", open_over_http)
    return str(request.param)
