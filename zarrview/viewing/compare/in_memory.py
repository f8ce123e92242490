"""A difference of two planes as an array of its own, held in memory.

The difference is drawn, read under the cursor, exported and copied as any array is, through
the same view as the data (its readout is the value at the coordinate it names), so it is made
an array: a Zarr v3 array in a memory store, A's plane shape, the values where the two planes
were compared and NaN (its fill value) elsewhere, in chunks of at most ``CHUNK`` a side, the
chunks that are all NaN not stored.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...zarrlib import Array, open as open_node
from ...zarrlib.storage.memory import MemoryStore

#: the chunk edge of a difference array
CHUNK = 512


def plane_array(values: np.ndarray, shape: tuple[int, int], origin: tuple[int, int] = (0, 0), *, name: str,
                dimension_names: tuple[str, str] | None = None, attributes: dict[str, Any] | None = None) -> Array:
    """``values`` placed at ``origin`` of a ``shape`` plane of NaN, as an array named ``name``."""
    rows, cols = shape
    full = np.full(shape, np.nan)
    r0, c0 = origin
    full[r0:r0 + values.shape[0], c0:c0 + values.shape[1]] = values
    chunks = (max(1, min(CHUNK, rows)), max(1, min(CHUNK, cols)))
    doc: dict[str, Any] = {
        "zarr_format": 3, "node_type": "array", "shape": [rows, cols], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"long_name": name, **(attributes or {})},
    }
    if dimension_names is not None:
        doc["dimension_names"] = list(dimension_names)
    data = {"zarr.json": json.dumps(doc).encode()}
    for i in range(-(-rows // chunks[0])):
        for j in range(-(-cols // chunks[1])):
            block = full[i * chunks[0]:(i + 1) * chunks[0], j * chunks[1]:(j + 1) * chunks[1]]
            if np.isnan(block).all():
                continue
            padded = np.full(chunks, np.nan)
            padded[:block.shape[0], :block.shape[1]] = block
            data[f"c/{i}/{j}"] = padded.astype("<f8").tobytes()
    node = open_node(MemoryStore(data, url=f"memory://{name}"))
    assert isinstance(node, Array)
    return node
