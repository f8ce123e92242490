"""zarrlib is the viewer's engine but must never pull in Qt or pyqtgraph: it runs headless
(CLI, scripts, worker processes).  Checked in a fresh interpreter so nothing else in the test
session has imported Qt first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from test_layering import QT_MODULES

pytestmark = pytest.mark.timeout(120)

FORBIDDEN = QT_MODULES  # every module of every package is checked in test_layering.py

SCRIPT = r"""
import json, sys
import zarrview.zarrlib as zl

out = {"phase": {}}
def forbidden():
    bad = set(json.loads(sys.argv[2]))
    return sorted({m.split(".")[0] for m in sys.modules} & bad)

out["phase"]["import"] = forbidden()
g = zl.open(sys.argv[1])
seen = []
def walk(n):
    _ = n.attrs, n.metadata
    seen.append(n.path)
    if n.kind == "group":
        for m in n.members():
            walk(m)
    else:
        _ = n.shape, n.dtype, n.chunks, n.shards, n.fill_value, n.dimension_names, n.codecs
        out.setdefault("sums", {})[n.path] = float(n[...].astype("f8").sum())
walk(g)
try:
    g["does_not_exist"]
except zl.NodeNotFoundError:
    pass
out["phase"]["read"] = forbidden()
out["seen"] = seen
print(json.dumps(out))
"""


@pytest.fixture
def small_store(tmp_path) -> Path:
    root = tmp_path / "small.zarr"
    g = zarr.open_group(root, mode="w", zarr_format=3)
    a = g.create_array("plain", shape=(6, 4), chunks=(3, 2), dtype="i2")
    a[:] = np.arange(24).reshape(6, 4)
    s = g.create_array("sharded", shape=(8,), chunks=(2,), shards=(4,), dtype="f4")
    s[:] = np.arange(8)
    g2 = zarr.open_group(tmp_path / "small2.zarr", mode="w", zarr_format=2)
    b = g2.create_array("v2", shape=(5,), chunks=(2,), dtype="<u4")
    b[:] = [1, 2, 3, 4, 5]
    return root


@pytest.mark.parametrize("which", ["v3", "v2"])
def test_zarrlib_never_imports_qt(small_store, which):
    root = small_store if which == "v3" else small_store.with_name("small2.zarr")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), json.dumps(FORBIDDEN)],
        capture_output=True, text=True, timeout=100, cwd=str(Path(__file__).resolve().parents[1]),
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["phase"]["import"] == [], out
    assert out["phase"]["read"] == [], out
    if which == "v3":
        assert out["seen"] == ["/", "/plain", "/sharded"]
        assert out["sums"] == {"/plain": float(sum(range(24))), "/sharded": float(sum(range(8)))}
    else:
        assert out["seen"] == ["/", "/v2"]
        assert out["sums"] == {"/v2": 15.0}
