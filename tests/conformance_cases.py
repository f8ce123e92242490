"""The conformance machinery shared by the Zarr v2 and v3 suites (test_zarr_python_v2/v3.py).

A ``Case`` is an array zarr-python writes (then perhaps edits, or a store written by hand),
the data a full read must return and the metadata zarrlib must report. ``ArrayConformance``
runs every case the same way for both formats: the full read against the data written and
against zarr-python's own read, the metadata against zarr-python's, every selection against
numpy (and, for a few layouts, against zarr-python), out-of-bounds indices. Each suite module
holds only its format's case table and what no other format has; it subclasses these
classes, so the v2 and v3 suites cannot drift apart in what they check.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_helpers import (
    OVER_HTTP,
    assert_array_matches,
    assert_bits_equal,
    assert_fill_value_equal,
    assert_same_dtype,
    edit_json,
    expected_selection,
    load_json,
    out_of_bounds_selections,
    sample_data,
    selections,
    to_expected_array,
)

DEFAULT: Any = object()  # "let zarr-python choose" / "not checked"


def _v2_expect(z: Any) -> dict[str, Any]:
    return dict(shape=tuple(z.shape), dtype=z.dtype, chunks=tuple(z.chunks), shards=None,
                fill_value=z.metadata.fill_value, attrs=dict(z.attrs), dimension_names=None)


def _v3_expect(z: Any) -> dict[str, Any]:
    names = z.metadata.dimension_names
    return dict(shape=tuple(z.shape), dtype=z.dtype, chunks=tuple(z.chunks),
                shards=None if z.shards is None else tuple(z.shards), fill_value=z.fill_value,
                dimension_names=None if names is None else tuple(names), attrs=dict(z.attrs))


@dataclass(frozen=True)
class Format:
    """What differs between the formats for the shared machinery."""

    zarr_format: int
    array_document: str  # the array's metadata file, which ``Case.edit`` edits
    group_document: str
    #: the metadata zarr-python reports for an array it opened
    zarr_expect: Callable[[Any], dict[str, Any]]


V2 = Format(2, ".zarray", ".zgroup", _v2_expect)
V3 = Format(3, "zarr.json", "zarr.json", _v3_expect)


@dataclass
class Built:
    path: Path
    data: np.ndarray  # what a full read must return
    zarr_readable: bool
    expect: dict[str, Any]  # expected metadata attributes (absent key: not checked)
    codec_names: tuple[str, ...]
    bits: bool  # compare floating-point data bit for bit as well


@dataclass
class Case:
    id: str
    data: np.ndarray
    chunks: Any = "auto"
    dtype: Any = None
    fill_value: Any = DEFAULT
    write: Any = "full"  # "full", None (write nothing) or a tuple of slices (write that region)
    edit: Callable[[dict], Any] | None = None  # applied to the array document after zarr-python wrote it
    expected_fill: Any = DEFAULT  # fill for unwritten elements after ``edit`` (default: zarr's)
    expected_data: Any = None  # overrides the computed expected data
    zarr_readable: bool = True
    lossy: bool = False  # expected data is zarr-python's read, not the input
    bits: bool = False
    expect: dict[str, Any] = field(default_factory=dict)
    codec_names: tuple[str, ...] = ()
    post: Callable[[Path], Any] | None = None  # extra fixture step (e.g. check chunk keys exist)
    custom_build: Callable[[Path], np.ndarray] | None = None  # writes the store by hand
    kwargs: dict[str, Any] = field(default_factory=dict)

    def build(self, path: Path, fmt: Format) -> Built:
        path.mkdir(parents=True)
        if self.custom_build is not None:
            expected = self.custom_build(path)
        else:
            fill = self._write(path, fmt)
            if self.post is not None:
                self.post(path)
            expected = self._expected(path, fill)
        expect = fmt.zarr_expect(zarr.open_array(str(path), mode="r", zarr_format=fmt.zarr_format)) \
            if self.zarr_readable else {}
        expect.update(self.expect)
        expect = {k: v for k, v in expect.items() if v is not DEFAULT}
        return Built(path, expected, self.zarr_readable, expect, self.codec_names, self.bits)

    def _write(self, path: Path, fmt: Format) -> Any:
        """Write with zarr-python (then edit); the fill value unwritten elements hold."""
        dtype = self.dtype if self.dtype is not None else self.data.dtype
        kw: dict[str, Any] = dict(store=str(path), shape=self.data.shape, dtype=dtype, chunks=self.chunks,
                                  zarr_format=fmt.zarr_format)
        if self.fill_value is not DEFAULT:
            kw["fill_value"] = self.fill_value
        kw.update(self.kwargs)
        arr = zarr.create_array(**kw)
        if self.write == "full":
            arr[...] = self.data
        elif self.write is not None:
            arr[self.write] = self.data[self.write]
        if self.edit is not None:
            edit_json(path / fmt.array_document, self.edit)
        return arr.fill_value if self.expected_fill is DEFAULT else self.expected_fill

    def _expected(self, path: Path, fill: Any) -> np.ndarray:
        if self.expected_data is not None:
            return np.asarray(self.expected_data)
        if self.lossy:
            return to_expected_array(zarr.open_array(str(path), mode="r")[...])
        expected = np.empty(self.data.shape, dtype=self.data.dtype)
        if self.write != "full":
            if expected.dtype == object:
                expected.fill(fill)
            else:
                expected[...] = np.array(fill, dtype=expected.dtype)
        if self.write == "full":
            expected[...] = self.data
        elif self.write is not None:
            expected[self.write] = self.data[self.write]
        return expected


class Cases(list[Case]):
    """A suite's case table: ids are unique, and cases are found by id."""

    def add(self, case: Case) -> None:
        assert case.id not in self.by_id(), case.id
        self.append(case)

    def by_id(self) -> dict[str, Case]:
        return {c.id: c for c in self}

    def fill_case(self, id: str, dtype: str, fill: Any = DEFAULT, edit_fill: Any = DEFAULT, **kw: Any) -> None:
        """10x12 data in 4x5 chunks, partly written so that missing chunks read as the fill.

        Where the fill value is edited after writing, partially written chunks hold
        zarr-python's original fill, so only whole chunks are written then."""
        data = sample_data(np.dtype(dtype).newbyteorder("="), (10, 12), seed=zlib.crc32(id.encode()) % 999)
        edited = edit_fill is not DEFAULT
        region = (slice(0, 8), slice(5, 10)) if edited else (slice(0, 6), slice(3, 7))
        self.add(Case(f"fill-{id}", data.astype(dtype), chunks=(4, 5), fill_value=fill, write=region,
                      edit=(lambda doc: doc.__setitem__("fill_value", edit_fill)) if edited else None, **kw))


def as_array(x: Any, dtype: Any) -> np.ndarray:
    """zarr-python returns scalars for 0-d results; keep the array's dtype."""
    if isinstance(x, np.ndarray):
        return x
    out = np.empty((), dtype=dtype)
    out[()] = x
    return out


def _eq(actual: Any, expected: Any) -> None:
    assert actual == expected, f"{actual!r} != {expected!r}"
    assert type(actual) is type(expected), f"{type(actual).__name__} != {type(expected).__name__}"


def _one_of(got: Any, allowed: list[Any]) -> None:
    assert got in allowed, f"(chunks, shards) {got}, expected one of {allowed}"


def _codecs_ok(desc: Any, names: tuple[str, ...]) -> None:
    assert isinstance(desc, str) and desc.strip(), f"codecs description {desc!r}"
    for n in names:
        assert n.lower() in desc.lower(), f"{n!r} not named in codecs description {desc!r}"


def _shards(arr: Any) -> tuple[int, ...] | None:
    return None if arr.shards is None else tuple(arr.shards)


def _selection_failures(arr: Any, shape: tuple[int, ...], chunks: Any, expected: Callable[[Any], np.ndarray],
                        only: frozenset[str] | None = None) -> list[str]:
    failures = []
    for name, sel in selections(shape, chunks):
        if only is not None and name not in only:
            continue
        try:
            assert_array_matches(arr[sel], expected(sel), context=f"[{name} {sel!r}] ")
        except Exception as exc:  # noqa: BLE001 - collect every failing selection
            failures.append(f"{name} {sel!r}: {type(exc).__name__}: {exc}")
    return failures


class ArrayConformance:
    """Every case of ``cases``, read with zarrlib and compared (subclass per format)."""

    format: ClassVar[Format]
    cases: ClassVar[Cases]
    #: layouts whose selections are also compared with zarr-python's reads
    zarr_selection_cases: ClassVar[list[str]]
    out_of_bounds_cases: ClassVar[list[str]]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        readable = [c for c in self.cases if c.zarr_readable]
        for name, values in (("case", self.cases), ("readable_case", readable)):
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, values, ids=[c.id for c in values])
        for name, ids in (("zarr_selection_case", self.zarr_selection_cases),
                          ("out_of_bounds_case", self.out_of_bounds_cases)):
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, ids)

    @pytest.fixture(scope="class")
    def built(self, tmp_path_factory: pytest.TempPathFactory) -> Callable[[Case | str], Built]:
        """Each case written once per session, on first use."""
        root = tmp_path_factory.mktemp(f"zarr_python_v{self.format.zarr_format}")
        cache: dict[str, Built] = {}
        by_id = self.cases.by_id()

        def get(case: Case | str) -> Built:
            case = by_id[case] if isinstance(case, str) else case
            if case.id not in cache:
                cache[case.id] = case.build(root / f"{case.id}.zarr", self.format)
            return cache[case.id]

        return get

    def test_full_read_matches_written_data(self, built: Callable[[Case], Built], case: Case) -> None:
        b = built(case)
        arr = zl.open(b.path)
        assert arr.kind == "array"
        got = arr[...]
        assert_array_matches(got, b.data)
        if b.bits:
            assert_bits_equal(got, b.data)

    def test_validation_finds_no_error(self, built: Callable[[Case], Built], case: Case) -> None:
        """What zarr-python wrote (and the edits zarrlib reads) breaks no rule a validator holds."""
        from zarrview.zarrlib.storage import LocalStore
        from zarrview.zarrlib.validate import validate_store

        errors = [str(f) for f in validate_store(LocalStore(built(case).path)) if f.severity == "error"]
        assert not errors, errors

    def test_full_read_matches_zarr_python(self, built: Callable[[Case], Built], readable_case: Case) -> None:
        b = built(readable_case)
        z = zarr.open_array(str(b.path), mode="r", zarr_format=self.format.zarr_format)
        theirs = as_array(z[...], z.dtype)
        ours = zl.open(b.path)[...]
        assert_array_matches(ours, theirs)
        if b.bits:
            assert_bits_equal(ours, theirs)

    def test_metadata(self, built: Callable[[Case], Built], case: Case) -> None:
        b = built(case)
        arr = zl.open(b.path)
        assert arr.kind == "array" and arr.path == "/"
        assert arr.zarr_format == self.format.zarr_format
        assert arr.metadata == load_json(b.path / self.format.array_document)
        e = b.expect
        checks: dict[str, Callable[[], None]] = {
            "shape": lambda: _eq(tuple(arr.shape), e["shape"]),
            "dtype": lambda: assert_same_dtype(arr.dtype, e["dtype"]),
            "chunks": lambda: _eq(tuple(arr.chunks), e["chunks"]),
            "shards": lambda: _eq(_shards(arr), e["shards"]),
            "fill_value": lambda: assert_fill_value_equal(arr.fill_value, e["fill_value"],
                                                          e.get("dtype", b.data.dtype)),
            "dimension_names": lambda: _eq(arr.dimension_names, e["dimension_names"]),
            "attrs": lambda: _eq(dict(arr.attrs), e["attrs"]),
            "chunks_shards": lambda: _one_of((tuple(arr.chunks), _shards(arr)), e["chunks_shards"]),
        }
        problems = []
        for name, check in [*((n, c) for n, c in checks.items() if n in e),
                            ("codecs", lambda: _codecs_ok(arr.codecs, b.codec_names))]:
            try:
                check()
            except AssertionError as exc:
                problems.append(f"{name}: {exc}")
        assert not problems, "; ".join(problems)

    def test_selections(self, built: Callable[[Case], Built], case: Case, transport: str) -> None:
        b = built(case)
        failures = _selection_failures(zl.open(b.path), b.data.shape, b.expect.get("chunks"),
                                       lambda sel: expected_selection(b.data, sel),
                                       None if transport == "local" else OVER_HTTP)
        assert not failures, f"{len(failures)} selections fail:\n" + "\n".join(failures[:8])

    def test_selections_match_zarr_python(self, built: Callable[[str], Built], zarr_selection_case: str) -> None:
        b = built(zarr_selection_case)
        theirs = zarr.open_array(str(b.path), mode="r", zarr_format=self.format.zarr_format)
        failures = _selection_failures(zl.open(b.path), b.data.shape, b.expect.get("chunks"),
                                       lambda sel: as_array(theirs[sel], theirs.dtype))
        assert not failures, "\n".join(failures[:8])

    def test_out_of_bounds_index_raises(self, built: Callable[[str], Built], out_of_bounds_case: str) -> None:
        b = built(out_of_bounds_case)
        arr = zl.open(b.path)
        for _, sel in out_of_bounds_selections(b.data.shape):
            with pytest.raises((IndexError, zl.ZarrError)):
                arr[sel]
