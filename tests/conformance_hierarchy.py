"""The hierarchy half of the v2/v3 conformance suites: groups, members, nested nodes.

A hierarchy written by zarr-python, plain or with consolidated metadata, and one whose
consolidated metadata is the only description of its children (as on a server that cannot
list). zarrlib must find the same groups, arrays, attributes and values as zarr-python does.
A suite subclasses ``HierarchyConformance`` with its format's data and writer.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_cases import Format
from conformance_helpers import assert_array_matches, load_json, skip_unless_listable

GROUPS = ["a", "a/b", "a/b/c", "alpha"]
MISSING = ["nope", "a/nope", "a/b/arr/deeper", "a/b/c/d", "zeta/x"]


class HierarchyConformance:
    format: ClassVar[Format]
    #: array path -> the values written there
    data: ClassVar[dict[str, np.ndarray]]
    #: group path ("" for the root) -> its attributes
    attrs: ClassVar[dict[str, dict[str, Any]]]

    @abstractmethod
    def write_hierarchy(self, path: Any, consolidate: bool) -> Any:
        """Write ``data`` and ``attrs`` with zarr-python at ``path`` (a folder or a zarr store)."""

    @abstractmethod
    def array_attrs(self, rel: str) -> dict[str, Any]:
        """The attributes the array at ``rel`` was written with."""

    def dimension_names(self, rel: str) -> tuple[str | None, ...] | None:
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        for name, values in (("group_rel", GROUPS), ("array_rel", list(self.data)), ("missing_rel", MISSING)):
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, values)

    @pytest.fixture(scope="class", params=[False, True], ids=["plain", "consolidated"])
    def hierarchy(self, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
        path = tmp_path_factory.mktemp(f"hier{self.format.zarr_format}") / "h.zarr"
        return self.write_hierarchy(path, request.param)  # type: ignore[no-any-return]

    @pytest.fixture(scope="class")
    def consolidated_only(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A consolidated hierarchy whose non-root metadata documents were removed afterwards:
        the root's consolidated metadata is then the only description of the children.
        zarr-python reads it through the consolidated metadata."""
        path: Path = self.write_hierarchy(tmp_path_factory.mktemp(f"cons{self.format.zarr_format}") / "h.zarr", True)
        names = {".zgroup", ".zarray", ".zattrs"} if self.format.zarr_format == 2 else {"zarr.json"}
        for dirpath, _, files in os.walk(path):
            if Path(dirpath) != path:
                for f in names & set(files):
                    os.remove(Path(dirpath) / f)
        return path

    def test_root_group(self, hierarchy: Path) -> None:
        g = zl.open(hierarchy)
        assert g.kind == "group" and g.path == "/"
        assert g.zarr_format == self.format.zarr_format
        assert dict(g.attrs) == self.attrs[""]
        assert dict(g.attrs) == dict(zarr.open_group(str(hierarchy), mode="r").attrs)
        assert g.metadata == load_json(hierarchy / self.format.group_document)

    def test_members_sorted_and_match_zarr_python(self, hierarchy: Path) -> None:
        g = zl.open(hierarchy)
        skip_unless_listable(g)
        members = g.members()
        names = [m.name for m in members]
        assert names == ["a", "alpha", "m", "zeta"]
        assert [m.kind for m in members] == ["group", "group", "array", "array"]
        assert [m.path for m in members] == ["/a", "/alpha", "/m", "/zeta"]
        assert names == sorted(k for k, _ in zarr.open_group(str(hierarchy), mode="r").members())
        assert [m.name for m in g["a"].members()] == ["b", "x"]
        assert [m.path for m in g["a/b"].members()] == ["/a/b/arr", "/a/b/c"]
        assert list(g["a/b/c"].members()) == []

    def test_nested_group(self, hierarchy: Path, group_rel: str) -> None:
        g = zl.open(hierarchy)[group_rel]
        assert g.kind == "group" and g.path == "/" + group_rel
        assert g.name == group_rel.rsplit("/", 1)[-1]
        assert g.zarr_format == self.format.zarr_format
        assert dict(g.attrs) == self.attrs[group_rel]
        assert dict(g.attrs) == dict(zarr.open_group(str(hierarchy), mode="r")[group_rel].attrs)
        assert g.metadata == _document(g, hierarchy, group_rel, self.format.group_document)

    def test_nested_array(self, hierarchy: Path, array_rel: str) -> None:
        rel, data = array_rel, self.data[array_rel]
        root = zl.open(hierarchy)
        a = root[rel]
        assert a.kind == "array" and a.path == "/" + rel
        assert a.name == rel.rsplit("/", 1)[-1]
        assert a.zarr_format == self.format.zarr_format
        assert dict(a.attrs) == self.array_attrs(rel)
        assert a.dimension_names == self.dimension_names(rel)
        assert_array_matches(a[...], data)
        assert_array_matches(a[...], zarr.open_group(str(hierarchy), mode="r")[rel][...])
        node = root  # the same node reached step by step
        for part in rel.split("/"):
            node = node[part]
        assert node.path == a.path
        assert_array_matches(node[1:], data[1:])
        assert_array_matches(node[::2], data[::2])
        direct = zl.open(hierarchy / rel)  # and opened directly
        assert direct.kind == "array"
        assert_array_matches(direct[...], data)

    def test_missing_member(self, hierarchy: Path, missing_rel: str) -> None:
        g = zl.open(hierarchy)
        with pytest.raises(zl.ZarrError) as info:
            g[missing_rel]
        assert isinstance(info.value, KeyError)

    def test_consolidated_only_zarr_python_reads_it(self, consolidated_only: Path) -> None:
        zg = zarr.open_group(str(consolidated_only), mode="r", use_consolidated=True)
        assert sorted(k for k, _ in zg.members()) == ["a", "alpha", "m", "zeta"]
        np.testing.assert_array_equal(zg["a/b/arr"][...], self.data["a/b/arr"])

    def test_consolidated_only_members(self, consolidated_only: Path) -> None:
        g = zl.open(consolidated_only)
        zg = zarr.open_group(str(consolidated_only), mode="r", use_consolidated=True)
        assert [m.name for m in g.members()] == sorted(k for k, _ in zg.members())
        assert [m.name for m in g["a"].members()] == ["b", "x"]
        assert [m.name for m in g["a/b"].members()] == ["arr", "c"]

    def test_consolidated_only_arrays(self, consolidated_only: Path, array_rel: str) -> None:
        a = zl.open(consolidated_only)[array_rel]
        assert a.kind == "array" and a.path == "/" + array_rel
        assert dict(a.attrs) == self.array_attrs(array_rel)
        assert_array_matches(a[...], self.data[array_rel])

    def test_consolidated_only_groups(self, consolidated_only: Path, group_rel: str) -> None:
        g = zl.open(consolidated_only)[group_rel]
        assert g.kind == "group" and g.path == "/" + group_rel
        assert dict(g.attrs) == self.attrs[group_rel]


def _document(node: zl.Node, hierarchy: Path, rel: str, name: str) -> Any:
    """The metadata document zarrlib should give for ``rel``: its own file, or on a remote store
    the copy in the root's consolidated metadata (read as zarr-python reads it, without a request)."""
    own = load_json(hierarchy / rel / name)
    if "://" not in node.url or node.url.startswith("file:"):
        return own
    if (hierarchy / ".zmetadata").exists():
        return load_json(hierarchy / ".zmetadata")["metadata"].get(f"{rel}/{name}", own)
    if name != "zarr.json":
        return own
    consolidated = load_json(hierarchy / "zarr.json").get("consolidated_metadata") or {}
    return consolidated.get("metadata", {}).get(rel, own)
