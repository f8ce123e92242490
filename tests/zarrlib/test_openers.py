"""A location is offered to the openers ``storage.location`` holds before it opens as it is:
Icechunk and the reference sets register theirs there, and the stores below know neither."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview
import zarrview.zarrlib as zl
from zarrview.zarrlib.icechunk.locate import open_repository
from zarrview.zarrlib.storage import location
from zarrview.zarrlib.storage.base import Store
from zarrview.zarrlib.storage.memory import MemoryStore
from zarrview.zarrlib.storage.references import open_reference_location


def test_icechunk_and_references_register_their_openers() -> None:
    assert open_reference_location in location.OPENERS and open_repository in location.OPENERS
    location.register_opener(open_repository)  # once, however often
    assert location.OPENERS.count(open_repository) == 1


def test_a_registered_opener_is_offered_every_location_first(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [2, 3], "data_type": "int16",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    values = np.arange(6, dtype="<i2").reshape(2, 3)
    seen: list[tuple[str, dict[str, Any]]] = []

    def demo(loc: str, options: dict[str, Any], _open_plain: Any) -> Store | None:
        seen.append((loc, options))
        if not loc.startswith("demo://"):
            return None
        return MemoryStore({"zarr.json": json.dumps(doc).encode(), "c/0/0": values.tobytes()}, loc)

    monkeypatch.setattr(location, "OPENERS", [demo, *location.OPENERS])
    np.testing.assert_array_equal(zl.open("demo://x", io_retries=2)[...], values)
    assert seen == [("demo://x", {"io_retries": 2})]  # its own copy of the options


def test_no_store_below_imports_icechunk() -> None:
    """The stores are below Icechunk, which opens its base and its virtual chunks' folders
    through them: none of them reaches up to it."""
    storage = Path(zarrview.__file__).parent / "zarrlib" / "storage"
    up = []
    for path in storage.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module is not None and "icechunk" in node.module:
                up.append(f"{path.relative_to(storage)}: from {'.' * node.level}{node.module}")
    assert up == []
