"""Every public attribute of every kind of node answers or raises a ZarrError, on good stores
and broken ones: a caller holding an "array" may ask it anything an Array answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from fuzz.worker import public_surface


def _edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("surface")
    for fmt in (2, 3):
        g = zarr.open_group(root / f"v{fmt}.zarr", mode="w", zarr_format=fmt)
        g.create_array("good", shape=(5, 4), chunks=(2, 2), dtype="i2")[...] = np.arange(20).reshape(5, 4)
        g.create_array("strings", shape=(3,), chunks=(2,), dtype=str)[...] = ["a", "bb", "ccc"]
        g.create_array("codec", shape=(4,), chunks=(2,), dtype="f4")
        g.create_array("dtype", shape=(4,), chunks=(2,), dtype="u1")
        g.create_array("broken", shape=(4,), chunks=(2,), dtype="u1")
        g.create_group("sub").create_array("deep", shape=(2,), chunks=(2,), dtype="u1")
    _edit(root / "v3.zarr" / "codec" / "zarr.json", lambda d: d["codecs"].append({"name": "no_such_codec"}))
    _edit(root / "v3.zarr" / "dtype" / "zarr.json", lambda d: d.update(data_type="float7_e9m9"))
    _edit(root / "v2.zarr" / "codec" / ".zarray", lambda d: d.update(compressor={"id": "no_such_codec"}))
    _edit(root / "v2.zarr" / "dtype" / ".zarray", lambda d: d.update(dtype="<q9"))
    (root / "v3.zarr" / "broken" / "zarr.json").write_text("{not json")
    (root / "v2.zarr" / "broken" / ".zarray").write_text('{"zarr_format": 2, "shape": "x"}')
    return root


def _nodes(root: Any) -> list[Any]:
    out, queue = [], [root]
    while queue:
        node = queue.pop()
        out.append(node)
        if isinstance(node, zl.Group):
            queue.extend(node.members())
    return out


@pytest.mark.parametrize("fmt", [2, 3])
def test_every_attribute_answers_or_raises_a_zarr_error(corpus: Path, fmt: int) -> None:
    nodes = _nodes(zl.open(corpus / f"v{fmt}.zarr"))
    kinds = {type(n).__name__ for n in nodes}
    assert {"Group", "Array", "UnsupportedArray", "ErrorNode"} <= kinds, kinds
    asked = 0
    for node in nodes:
        for name, ask in public_surface(node, zl):
            try:
                ask()
            except zl.ZarrError:
                pass
            except Exception as e:  # noqa: BLE001 - the point is that nothing else escapes
                pytest.fail(f"{type(node).__name__} {node.path}.{name} raised {type(e).__name__}: {e}")
            asked += 1
    assert asked > 100


def test_an_unsupported_array_answers_what_its_document_states(corpus: Path) -> None:
    arr = zl.open(corpus / "v3.zarr")["codec"]
    assert isinstance(arr, zl.UnsupportedArray) and arr.kind == "array"
    assert {n for n in dir(zl.Array) if not n.startswith("_")} <= {n for n in dir(arr) if not n.startswith("_")}
    assert (arr.shape, arr.ndim, arr.size, arr.chunks, arr.chunk_grid_shape()) == ((4,), 1, 4, (2,), (2,))
    assert arr.data_type_name == "float32" and "no_such_codec" in arr.codecs
    for name in ("dtype", "fill_value", "nbytes", "shards", "reader"):
        with pytest.raises(zl.UnsupportedFeatureError, match="/codec: the .* cannot be read.*no_such_codec"):
            getattr(arr, name)


@pytest.mark.parametrize("key", [Ellipsis, 0, None, ("a",), b"good"])
def test_a_group_indexed_by_a_non_string_raises_a_zarr_error(corpus: Path, key: Any) -> None:
    root = zl.open(corpus / "v3.zarr")
    with pytest.raises(zl.NodeNotFoundError, match="named by path strings"):
        root[key]
    assert key not in root
