"""Every remote request is awaited on the one I/O loop: no client starts an I/O thread of its own.

In a fresh interpreter, reads over HTTP through obstore and through the fsspec route (aiohttp),
and of a store on fsspec's in-memory file system, leave one I/O thread and the bounded pool of
its blocking calls, and none of fsspec's own ("fsspecIO"); the values read are zarr-python's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from remote_backends import backend  # noqa: F401  (each read on each backend)

pytestmark = pytest.mark.timeout(120)

SCRIPT = r"""
import json, sys, threading
sys.path.insert(0, sys.argv[2])
import numpy as np
import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import backend
from http_server import serve
backend.PREFERRED = sys.argv[3]
with serve(__import__("pathlib").Path(sys.argv[1])) as (url, _):
    got = zl.open(f"{url}/a.zarr")[...]
    handed = zl.open(f"{url}/a.zarr", client_kwargs={"trust_env": False})[...]  # options only aiohttp takes
names = sorted({t.name.split("_")[0] for t in threading.enumerate() if t.is_alive()})
print(json.dumps({"sum": int(got.sum()) + int(handed.sum()), "threads": names}))
"""


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_remote_reads_of_both_routes_share_one_io_thread(backend: str, tmp_path: Path) -> None:
    data = np.arange(60 * 70, dtype="<u4").reshape(60, 70)
    a = zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(16, 16), dtype="<u4")
    a[...] = data
    tests = str(Path(__file__).parents[1])
    for preferred in ("auto", "fsspec"):
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), tests, preferred], capture_output=True,
                              text=True, timeout=100)
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["sum"] == 2 * int(data.sum())
        io = [n for n in report["threads"] if "io" in n.lower()]
        assert "zarrlib-io" in io and "fsspecIO" not in report["threads"], report["threads"]
        assert all(n.startswith("zarrlib-io") for n in io), report["threads"]
