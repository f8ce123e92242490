"""The allocator policy remote reads rely on: freed response buffers are reused, not faulted in again.

Measured in fresh interpreters (the policy is per process), with the kernel's page-fault
counter, over real remote reads: a loopback HTTP server and 300 KB chunks, the size at
which asyncio's 256 KiB socket reads, aiohttp's copies and the joined body all churn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's policy is Linux-only"),
              pytest.mark.timeout(120)]

READS = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
import zarrview.zarrlib as zl
from http_server import serve
tuned = zl.tune_process(keep_freed_memory=sys.argv[3] == "1")  # what the app and the CLI do at start
with serve(__import__("pathlib").Path(sys.argv[1])) as (url, _):
    arr = zl.open(f"{url}/a.zarr")
    for _ in range(30):  # warm up, as a viewer's first reads do: the transport's worker threads each warm an arena
        arr[0, 500:524, 290:310]
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        plane = arr[0, 500:524, 290:310]
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 20
    print(json.dumps({"applied": tuned.keep_freed_memory, "faults": faults, "sum": int(plane.sum())}))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    root = tmp_path_factory.mktemp("alloc")
    data = np.random.default_rng(0).integers(0, 2**16, size=(1, 1024, 1200), dtype="<u2")
    a = zarr.create_array(root / "a.zarr", shape=data.shape, chunks=(1, 512, 300), dtype="u2", compressors=None)
    a[...] = data  # 8 chunks of 307,200 bytes, stored as they are
    return root, int(data[0, 500:524, 290:310].sum())


def _run(root: Path, keep: bool) -> dict[str, float]:
    tests = str(Path(__file__).parents[1])
    proc = subprocess.run([sys.executable, "-c", READS, str(root), tests, "1" if keep else "0"], capture_output=True,
                          text=True, timeout=100, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_remote_reads_stop_faulting_their_buffers_in(site: tuple[Path, int]) -> None:
    root, total = site
    default = _run(root, keep=False)
    kept = _run(root, keep=True)
    assert default["applied"] is False and kept["applied"] is True
    assert default["sum"] == kept["sum"] == total
    pages = 4 * 307_200 // 4096  # the four response bodies of that window
    # glibc's adaptive default usually faults the bodies in again on every read (about 320 pages
    # here), though a large enough free elsewhere in the process can raise its thresholds first
    assert kept["faults"] < pages / 10, (kept, default)
    assert kept["faults"] <= default["faults"] + 5, (kept, default)


UNTUNED = r"""
import ctypes, json, sys
import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import allocator
zl.open(sys.argv[1])  # a remote store: opening one leaves the allocator policy alone
print(json.dumps({"done": allocator._done}))
"""


def test_opening_a_store_leaves_the_process_untuned(site: tuple[Path, int]) -> None:
    tests = str(Path(__file__).parents[1])
    script = "import sys; sys.path.insert(0, sys.argv[2])\nfrom http_server import serve\n" \
        "import pathlib\nwith serve(pathlib.Path(sys.argv[1])) as (url, _):\n    sys.argv[1] = url + '/a.zarr'\n" \
        + "\n".join("    " + line for line in UNTUNED.strip().splitlines())
    proc = subprocess.run([sys.executable, "-c", script, str(site[0]), tests], capture_output=True, text=True,
                          timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"done": None}
