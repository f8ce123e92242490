"""Remote reads in a process of their own, under an address-space limit, timed and measured.

A read against a hostile server may, on a regression, take gigabytes (an endless body, a gzip
bomb, one per chunk in flight) or never end. ``Reader`` runs each read in a long-lived worker
process whose ``RLIMIT_AS`` is set once, so such a regression costs a MemoryError or a killed
worker, never this machine's memory. The worker is this file run as a script, so ``zarrview`` is
the one the interpreter finds (``PYTHONPATH`` first), not necessarily the checkout's. The parent
waits on the worker's answer with a deadline (no sleeps): a read past it is a hang, the worker's
stacks are taken (faulthandler) and it is replaced. The worker resets its peak RSS before each
read (``/proc/self/clear_refs``) and reports it after, with the read's time, its outcome
(the exception's type and message, or the values compared with the truth it is given as a
``.npy`` file, written from the numpy data handed to zarr-python), and the failures recorded.

A job is one JSON line: ``{"url", "options", "backend", "limits", "mode", "expected"}`` where
``mode`` is ``"open"`` (metadata only), ``"raise"`` (``arr[...]``), ``"failures"``
(``arr.read(..., failures=[])``, the viewer's way) or ``"both"``. A job may also name ``inject``
(for the harness's own checks, honoured only with ``ZARRVIEW_READER_SELFTEST=1``).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# tests/, for the worker process both fuzzing harnesses keep (also where this file runs as the
# worker, whose own path is tests/zarrlib): appended, so zarrview is found as before
sys.path.append(str(Path(__file__).resolve().parents[1]))
from fuzz.process import WorkerProcess  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GiB = 1 << 30
#: the worker's address space: numpy, zarrlib, aiohttp and obstore with their threads reserve
#: under 0.5 GiB of it (measured VmPeak 0.44 GiB over every hostile case); a read of gigabytes runs out
AS_BYTES = 4 * GiB


def _type_name(exc: BaseException) -> str:
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _status(name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
    return 0


# -- the worker ----------------------------------------------------------------------------------

def _describe_error(e: BaseException, zl: Any) -> dict[str, Any]:
    """The outcome of a read that raised ``e`` ("memory" for a MemoryError), and what it raised."""
    return {"outcome": "memory" if isinstance(e, MemoryError) else "error", "type": _type_name(e),
            "store_error": isinstance(e, zl.StoreError), "zarr_error": isinstance(e, zl.ZarrError),
            "message": str(e)[:4000], "traceback": "".join(traceback.format_exception(e))[-6000:]}


def prefer(name: str) -> None:
    """Opens that name no backend take ``name``, as ``remote_backends.backend`` arranges in a test
    process: through ``storage.backend.PREFERRED`` where the library has it, else through the
    ``ZARRLIB_REMOTE_BACKEND`` environment variable it read before."""
    from zarrview.zarrlib.storage import backend

    os.environ["ZARRLIB_REMOTE_BACKEND"] = name
    if hasattr(backend, "PREFERRED"):
        backend.PREFERRED = name


def _read(arr: Any, mode: str, expected: Any, zl: Any, inject: str | None) -> dict[str, Any]:
    """One read of the whole array: ``arr[...]`` ("raise") or ``arr.read(..., failures=[])``."""
    import numpy as np

    out: dict[str, Any] = {}
    t0 = time.monotonic()
    try:
        failures: list[Any] = []
        got = arr.read(..., failures=failures) if mode == "failures" else arr[...]
        if inject == "silent":
            got = got.copy()
            got.reshape(-1)[0] += 1
        out["outcome"] = "ok"
        out["failures"] = [{"key": f.key, "message": f.message, "box": [list(b) for b in f.box],
                            "type": _type_name(f.error) if f.error is not None else None,
                            "store_error": isinstance(f.error, zl.StoreError),
                            "zarr_error": isinstance(f.error, zl.ZarrError)} for f in failures]
        if expected is not None:
            mask = np.zeros(expected.shape, bool)
            for f in failures:
                mask[tuple(slice(a, b) for a, b in f.box)] = True
            shape_ok = tuple(got.shape) == tuple(expected.shape) and got.dtype == expected.dtype
            out["equal"] = bool(shape_ok and np.array_equal(got[~mask], expected[~mask]))
            out["fill_in_failures"] = bool(shape_ok and (got[mask] == arr.fill_value).all())
            out["failed_cells"] = int(mask.sum())
    except Exception as e:  # noqa: BLE001 - classifying is the point (a MemoryError included)
        out.update(_describe_error(e, zl))
    out["seconds"] = time.monotonic() - t0
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Open ``job["url"]`` and read it as ``job["mode"]`` says: "open" (metadata only), "raise"
    (``arr[...]``), "failures" (``arr.read(..., failures=[])``) or "both" (the second, then the
    first: the result is the raising read's, with the other's under ``"viewer"``)."""
    import numpy as np

    import zarrview.zarrlib as zl

    prefer(job.get("backend") or "fsspec")
    old = zl.limits.configure(**job.get("limits", {}))
    inject = job.get("inject") if os.environ.get("ZARRVIEW_READER_SELFTEST") == "1" else None
    mode = job.get("mode", "raise")
    expected = np.load(job["expected"]) if job.get("expected") else None
    out: dict[str, Any] = {"step": "open"}
    try:
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")  # the peak RSS from here on
        out["rss_before"] = _status("VmRSS")
        t0 = time.monotonic()
        try:
            if inject == "hang":
                time.sleep(3600)
            if inject == "memory":
                hog = [np.empty(256 << 20, np.uint8) for _ in range(64)]  # runs out of address space, untouched
                del hog
            if inject == "exception":
                raise RuntimeError("injected: not a ZarrError")
            arr = zl.open(job["url"], **job.get("options", {}))
            out["outcome"] = "ok"
        except Exception as e:  # noqa: BLE001 - classifying is the point (a MemoryError included)
            out.update(_describe_error(e, zl))
        out["seconds_open"] = time.monotonic() - t0
        if out["outcome"] == "ok" and mode != "open":
            out["step"] = "read"
            if mode in ("failures", "both"):
                viewer = _read(arr, "failures", expected, zl, inject)
                if mode == "failures":
                    out.update(viewer)
                else:
                    out["viewer"] = viewer
            if mode in ("raise", "both") and out.get("viewer", {}).get("outcome") != "memory":
                out.update(_read(arr, "raise", expected, zl, inject))
        out["seconds"] = time.monotonic() - t0
        out["rss_peak"] = _status("VmHWM")
        return out
    finally:
        zl.limits.restore(old)


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # whatever a library prints cannot break the protocol
    sys.stdout = open(os.devnull, "w")
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks for stacks before killing a hang
    import numpy  # noqa: F401  (imports map libraries: before the limit)

    import zarrview.zarrlib
    with contextlib.suppress(ImportError):
        import aiohttp  # noqa: F401
        import obstore  # noqa: F401
    limit = int(os.environ.get("ZARRVIEW_READER_AS_BYTES", "0"))
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    proto.write(json.dumps({"ready": True, "rss": _status("VmRSS"), "vm": _status("VmSize"),
                            "zarrview": str(Path(zarrview.zarrlib.__file__).parents[1])}) + "\n")
    for line in sys.stdin:
        result = run_job(json.loads(line))
        result["vm_peak"] = _status("VmPeak")
        proto.write(json.dumps(result) + "\n")
        if "memory" in (result.get("outcome"), result.get("viewer", {}).get("outcome")):
            return  # after a MemoryError the process may be in any state: the parent starts another


# -- the parent's side ---------------------------------------------------------------------------

class Reader(WorkerProcess):
    """One worker process; ``run`` hands it a job and waits for the answer at most ``timeout`` s."""

    def __init__(self, log: Path, as_bytes: int = AS_BYTES, selftest: bool = False) -> None:
        env = dict(os.environ, ZARRVIEW_READER_AS_BYTES=str(as_bytes), PYTHONFAULTHANDLER="1",
                   ZARRVIEW_READER_SELFTEST="1" if selftest else "0", MALLOC_ARENA_MAX="4")
        env.pop("ZARRVIEW_LIMITS", None)
        super().__init__(log, [sys.executable, str(Path(__file__).resolve())], env, REPO, 180.0)

    def run(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The worker's answer, or ``{"outcome": "hang" | "died", ...}`` after ``timeout`` seconds
        without one or the worker's death (with its stacks or last words)."""
        line, offset, waited = self.ask(job, timeout)
        if line:
            result: dict[str, Any] = json.loads(line)
            result["waited"] = waited
            if "memory" in (result.get("outcome"), result.get("viewer", {}).get("outcome")):
                self.stop()
            return result
        if line is None:  # no answer in time: its stacks, then the process
            stacks = self.take_stacks(offset)
            return {"outcome": "hang", "waited": waited, "message": f"no answer after {timeout:g} s", "stacks": stacks}
        _, what, stacks = self.death(offset)
        return {"outcome": "died", "waited": waited, "message": what, "stacks": stacks}


if __name__ == "__main__":
    main()
