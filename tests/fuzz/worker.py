"""The worker: a long-lived process that runs cases against zarrlib, as the app and CLI would.

Started by ``runner.Worker`` as ``python -m tests.fuzz.worker``; it sets its address-space
limit once, then reads one case per line on stdin and answers one JSON line on the protocol
pipe. What a case does is what a user's session does to a store: open it, walk every node,
show each node the way ``zarrview tree`` / ``info`` and the metadata panel do, and read every
array whole, both raising and with ``failures=[]`` (the viewer's way). Any exception that is
not a ``ZarrError`` is a defect; so is a read that breaks the failures contract, or a
checksummed chunk read wrong without an error.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import io
import json
import math
import os
import re
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # frames are reported relative to this
MAX_NODES, MAX_DEPTH = 64, 12


def innermost(exc: BaseException) -> str:
    """``zarrview/zarrlib/reader.py:123 in _read_item``: the innermost frame in zarrview, where a
    defect is fixed (an exception from numpy is still zarrlib's for letting it escape)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/zarrview/" in f.filename and "/tests/fuzz/" not in f.filename]
    f = ours[-1] if ours else frames[-1] if frames else None
    if f is None:
        return "?"
    return f"{os.path.relpath(f.filename, PACKAGE_ROOT)}:{f.lineno} in {f.name}"


def _type_name(exc: BaseException) -> str:
    """``zlib.error`` rather than ``error``: the name a fix has to catch."""
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def same_values(expected: Any, got: Any) -> bool:
    """Equality that treats NaN as equal and compares object arrays item by item."""
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        a, b = np.asarray(expected), np.asarray(got)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" and b.dtype.kind in "fc" or a.dtype.kind in "mM" and a.dtype == b.dtype:
            return bool(np.array_equal(a, b, equal_nan=True))
        if a.dtype.kind not in "OTU" and a.dtype.fields is None and a.dtype == b.dtype:
            return bool(np.array_equal(a, b))
        return all(same_values(x, y) for x, y in zip(a.reshape(-1).tolist() if a.dtype.kind != "O" else a.reshape(-1),
                                                     b.reshape(-1).tolist() if b.dtype.kind != "O" else b.reshape(-1)))
    if isinstance(expected, float) and isinstance(got, float) and math.isnan(expected) and math.isnan(got):
        return True
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(expected) == len(got) and all(same_values(x, y) for x, y in zip(expected, got))
    return bool(expected == got)


#: public methods that are actions, not answers: exercised by the walk and the reads instead
_ACTIONS = frozenset({"read", "members", "load_members", "prefetch", "iter_member_names"})


def public_surface(node: Any, zl: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Every public attribute of ``node``, as a thunk that asks for it: properties read, methods
    that need no argument called. A node of kind "array" answers every attribute an ``Array``
    has, whatever its class (a caller holding an array asks for them), so those are asked too."""
    import inspect

    names = {n for n in dir(type(node)) if not n.startswith("_")}
    if getattr(node, "kind", None) == "array":
        names |= {n for n in dir(zl.Array) if not n.startswith("_")}
    out: list[tuple[str, Callable[[], Any]]] = []
    if getattr(node, "path", None) == "/":
        names.discard("ancestor")  # the root has none: asking is the caller's mistake, not the store's
    for name in sorted(names - _ACTIONS):
        member = inspect.getattr_static(type(node), name, None)
        if callable(member) and not isinstance(member, property):
            try:
                params = inspect.signature(member).parameters.values()
            except (TypeError, ValueError):
                continue
            if any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   for p in list(params)[1:]):
                continue
            out.append((name, lambda name=name: getattr(node, name)()))
        else:
            out.append((name, lambda name=name: getattr(node, name)))
    return out


#: a metadata document's key below the root (``g1/g2/.zgroup``): a message naming one names where
#: the problem is, even when it is not the node acted on nor a key the case changed
_DOCUMENT_KEY = re.compile(r"[\w.-]+/(?:zarr\.json|\.zarray|\.zgroup|\.zattrs|\.zmetadata)\b")


class Case:
    """One case's run: the steps taken and every finding."""

    def __init__(self, msg: dict[str, Any]) -> None:
        import zarrview.zarrlib as zl

        self.zl = zl
        self.msg = msg
        self.store: str = msg["store"]
        self.findings: list[dict[str, Any]] = []
        self.zarr_errors = 0
        self.errors: list[list[str]] = []  # the first ZarrErrors (step, node, type, message), for statistics
        self.inject: str | None = msg.get("inject") if os.environ.get("ZARRVIEW_FUZZ_SELFTEST") == "1" else None

    def finding(self, category: str, step: str, exc: BaseException | None, detail: str = "", check: str = "") -> None:
        """Record a bad outcome; ``check`` names a failed invariant (no exception to locate), so
        that different invariants stay different defects."""
        self.findings.append({
            "category": category, "step": step, "type": _type_name(exc) if exc else "",
            "where": innermost(exc) if exc else f"(check: {check or step})", "message": (detail or str(exc))[:500],
            "traceback": "".join(traceback.format_exception(exc)[-12:]) if exc else ""})

    def step(self, name: str, fn: Callable[[], Any], node: str = "/") -> tuple[bool, Any]:
        """Run one user-visible action; ZarrError is the good way to fail, anything else is not."""
        try:
            return True, fn()
        except self.zl.ZarrError as e:
            self.zarr_errors += 1
            if len(self.errors) < 4:
                self.errors.append([name, node, type(e).__name__, str(e)[:300]])
            if not self.names_something(str(e), node):
                self.finding("unclear_error", name, e, f"{type(e).__name__} naming no node, key or store: {e}")
            return False, e
        except MemoryError as e:
            self.finding("memory", name, e)
            return False, e
        except (Exception, SystemExit) as e:  # noqa: BLE001 - classifying is the point
            self.finding("other_exception", name, e)
            return False, e

    def names_something(self, message: str, node: str) -> bool:
        """Whether an error names where the problem is: the node, the store, a key the case
        changed, or (for the root) a metadata document. Messages are shown to a person who has
        to find the broken file."""
        if node != "/" and node.strip("/") in message or self.store in message:
            return True
        keys = self.msg.get("keys", [])
        if any(k in message for k in keys):
            return True
        # a zip archive whose Zarr root is a folder in it (the store's own root document gone)
        # opens at that folder: its keys, as messages name them, lack the folder's name
        if any("/" in k.split("/", 1)[1] and k.split("/", 1)[1] in message for k in keys if "/" in k):
            return True
        if _DOCUMENT_KEY.search(message):  # another node's document (an ancestor's .zgroup), by its key
            return True
        return node == "/" and any(d in message for d in ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata",
                                                          "meta/root"))

    # -- what a user does with a store ---------------------------------------------------------
    def run(self) -> None:
        self.maybe_inject("open")
        ok, root = self.step("open", lambda: self.zl.open(self.store))
        if not ok:
            return
        for node in self.walk(root):
            self.describe(node)
            if isinstance(node, self.zl.Array):
                self.exercise(node)
        self.cli(["tree", self.store])
        self.cli(["info", self.store])

    def walk(self, root: Any) -> list[Any]:
        out, queue = [], [(root, 0)]
        while queue and len(out) < MAX_NODES:
            node, depth = queue.pop(0)
            out.append(node)
            if isinstance(node, self.zl.ErrorNode) and not isinstance(node.error, self.zl.ZarrError):
                self.finding("other_exception", "members", node.error)
            elif isinstance(node, self.zl.ErrorNode) and not self.names_something(str(node.error), node.path):
                self.finding("unclear_error", "members", node.error, f"error node naming nothing: {node.error}")
            if isinstance(node, self.zl.Group) and depth < MAX_DEPTH:
                self.step("member_names", node.member_names, node.path)
                ok, kids = self.step("members", node.members, node.path)
                if ok:
                    queue.extend((k, depth + 1) for k in kids)
        return out

    def describe(self, node: Any) -> None:
        from zarrview import describe

        for name, ask in public_surface(node, self.zl):
            self.step(f"attribute {name}", ask, node.path)
        self.step("describe", lambda: (describe.one_line(node), describe.summary(node), describe.to_json(node.attrs),
                                       describe.to_json(node.metadata)), node.path)
        if node.path != "/":
            self.cli(["info", f"{self.store}::{node.path}"])

    def cli(self, argv: list[str]) -> None:
        from zarrview import cli

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.step("cli " + argv[0], lambda: cli.main(argv))

    def exercise(self, arr: Any) -> None:
        zl, lim = self.zl, self.zl.limits.limits()
        self.maybe_inject("read")
        t0 = time.perf_counter()
        ok, whole = self.step("read", lambda: arr[...], arr.path)
        slow = time.perf_counter() - t0 > 1.0  # a bomb being refused: do not pay for it three more times
        failures: list[Any] = []
        ok_f, partial = self.step("read_failures", lambda: self.read_with_failures(arr, failures), arr.path)
        if isinstance(partial, BaseException) and isinstance(partial, (zl.CodecError, zl.StoreError)):
            whole_read_refusal = self.refused_as_a_whole(arr, lim)
            if not whole_read_refusal:
                self.finding("contract", "read_failures", partial, f"read(failures=[]) raised {type(partial).__name__} "
                             f"for an array whose read is within every bound: {partial}")
        elif ok_f and not ok and isinstance(whole, (zl.CodecError, zl.StoreError)) and not failures:
            self.finding("contract", "read_failures", whole,
                         f"arr[...] raised but read(failures=[]) recorded nothing: {whole}")
        elif ok_f and ok and failures:
            self.finding("contract", "read_failures", None, f"arr[...] succeeded but read(failures=[]) recorded "
                         f"{failures[0]}", check="no failures where arr[...] succeeds")
        for f in failures:
            if not isinstance(f, zl.ChunkFailure) or not isinstance(f.key, str) or not str(f.message).strip():
                self.finding("contract", "read_failures", None, f"malformed failure record {f!r}", check="records")
            elif f.key not in f.message and not self.names_something(f.message, arr.path):
                self.finding("unclear_error", "read_failures", None, f"failure record naming nothing: {f.message}",
                             check="failure records name the chunk")
        expected_path = self.msg.get("check", {}).get(arr.path)
        if expected_path is not None and (ok or ok_f):
            expected = np.load(expected_path, allow_pickle=True)
            if ok and not same_values(expected, whole):
                self.finding("silent_corruption", "read", None, f"{arr.path}: read without error, values differ from "
                             "what zarr-python wrote", check="arr[...] equals the truth")
            if ok_f and not same_values(self.mask(expected, failures, arr), self.mask(partial, failures, arr)):
                self.finding("silent_corruption", "read_failures", None, f"{arr.path}: chunks outside the recorded "
                             "failures differ from what zarr-python wrote", check="read(failures) equals the truth")
        if not slow and arr.size > 0 and arr.ndim > 0:
            self.viewer_reads(arr, whole if ok else None)

    def viewer_reads(self, arr: Any, whole: Any) -> None:
        """What the viewer does: the last element (the far edge of a huge grid), and one 2-D plane
        through a decoded-chunk cache, twice (the second from the cache); each must agree with
        the whole read where that succeeded."""
        last = tuple(slice(s - 1, s) for s in arr.shape)  # slices: 0-d results of objects compare badly
        ok, value = self.step("read_last", lambda: arr[last], arr.path)
        if ok and whole is not None and not same_values(whole[last], value):
            self.finding("silent_corruption", "read_last", None, f"{arr.path}: the last element differs from the "
                         "whole read", check="last element equals the whole read")
        if arr.ndim < 2:
            return
        plane = (0,) * (arr.ndim - 2) + (slice(None), slice(None))
        cache = self.zl.ChunkCache(64 << 20)
        failures: list[Any] = []
        ok, first = self.step("read_plane", lambda: arr.read(plane, cache=cache, failures=failures), arr.path)
        if not ok and isinstance(first, (self.zl.CodecError, self.zl.StoreError)) and \
                not self.refused_as_a_whole(arr, self.zl.limits.limits()):
            self.finding("contract", "read_plane", first, f"read(plane, failures=[]) raised: {first}")
        if not ok:
            return
        ok, again = self.step("read_plane", lambda: arr.read(plane, cache=cache, failures=[]), arr.path)
        if ok and not same_values(first, again):
            self.finding("silent_corruption", "read_plane", None, f"{arr.path}: a plane read again through the "
                         "chunk cache differs from the first read", check="a cached plane equals the first read")
        if whole is not None and not failures and not same_values(whole[plane], first):
            self.finding("silent_corruption", "read_plane", None, f"{arr.path}: a plane differs from the same "
                         "region of the whole read", check="a plane equals the whole read")

    def read_with_failures(self, arr: Any, failures: list[Any]) -> Any:
        out = arr.read(..., failures=failures)
        if self.inject == "contract":
            raise self.zl.CodecError(f"injected: chunk c/0 of {arr.path} is corrupt")
        if self.inject == "silent" and out.size and out.dtype.kind in "iuf":
            out = out.copy()
            out.reshape(-1)[0] += 1  # a wrong value without an error: what the check exists for
        return out

    @staticmethod
    def refused_as_a_whole(arr: Any, lim: Any) -> bool:
        """A read may raise despite ``failures=[]`` when it is refused before any chunk is read:
        the result, the chunk count, one chunk's decoded size or an element is over its bound."""
        try:
            chunk = math.prod(arr.chunks) * max(arr.dtype.itemsize, 1)
            return (arr.nbytes > lim.read_bytes or math.prod(arr.chunk_grid_shape()) > lim.chunks_per_read
                    or chunk > lim.chunk_bytes or arr.dtype.itemsize > lim.element_bytes)
        except Exception:  # noqa: BLE001 - properties that fail were reported by ``describe``
            return True

    @staticmethod
    def mask(values: Any, failures: list[Any], arr: Any) -> Any:
        """The values with every recorded failure's box blanked, to compare the rest."""
        out = np.array(values, dtype=object, copy=True)
        for f in failures:
            out[tuple(slice(a, b) for a, b in f.box)] = None
        return out

    def maybe_inject(self, where: str) -> None:
        """Test-only faults (``ZARRVIEW_FUZZ_SELFTEST=1``), so the suite proves that each bad
        outcome is caught and classified: a harness that cannot fail cannot be trusted."""
        kind = self.inject
        if kind is None or where != ("open" if kind in ("hang", "busy", "crash", "memory", "kill", "write") else "read"):
            return
        if kind == "exception":
            self.step("read", lambda: {}["injected"])
        elif kind == "hang":
            time.sleep(3600)
        elif kind == "busy":
            while True:
                pass
        elif kind == "crash":
            import ctypes
            ctypes.string_at(0)
        elif kind == "memory":
            hog: list[Any] = []  # address space runs out long before this loop ends
            self.step("open", lambda: [hog.append(np.empty(256 << 20, np.uint8)) for _ in range(1 << 20)])
        elif kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif kind == "write":
            Path(self.store, "zarr.json").write_text("{}")


def _libc() -> Any:
    with contextlib.suppress(OSError):
        import ctypes

        return ctypes.CDLL("libc.so.6")
    return None


_LIBC = _libc()


def fixed_mmap_threshold(nbytes: int = 256 << 10) -> None:
    """glibc raises its mmap threshold after each large free (up to 32 MiB), so a long-lived
    worker that decodes bombs serves ever larger blocks from its heap, whose holes grow the
    address space case after case (to the 6 GiB limit in 20,000 cases, with nothing leaked).
    A fixed threshold maps every large block and unmaps it when freed."""
    if _LIBC is not None:
        _LIBC.mallopt(-3, nbytes)  # M_MMAP_THRESHOLD


def give_back_free_memory(cases: int, every: int = 25) -> None:
    """Collect the cyclic garbage of the last cases and return free memory to the system, so
    the worker's footprint stays that of one case. Failed reads leave cycles (an exception's
    traceback holds the frame that holds the read), which Python's full collection postpones
    while the oldest generation is large: without this, a worker grew by about 250 KiB a case
    to its address-space limit, each cycle keeping a read's buffers."""
    if cases % every:
        return
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # whatever the library prints cannot break the protocol
    sys.stdout = open(os.devnull, "w")
    faulthandler.enable(all_threads=True)  # a crash leaves its stacks in the log the parent reads
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks for stacks before killing a hang
    import zarrview.cli  # noqa: F401  (import everything before the limit: imports map libraries)
    import zarrview.describe  # noqa: F401
    import zarrview.zarrlib as zl
    from zarrview.zarrlib.reader import default_executor

    zl.limits.configure(read_bytes=int(os.environ.get("ZARRVIEW_FUZZ_READ_BYTES", 1 << 30)))
    default_executor()
    limit = int(os.environ.get("ZARRVIEW_FUZZ_AS_BYTES", 0))
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    fixed_mmap_threshold()
    proto.write(json.dumps({"ready": True, "vm": _status("VmSize"), "rss": _status("VmRSS")}) + "\n")
    cases = 0
    for line in sys.stdin:
        msg = json.loads(line)
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")  # peak RSS from here on
        t0 = time.perf_counter()
        case = Case(msg)
        case.run()
        cases += 1
        give_back_free_memory(cases)
        memory = any(f["category"] == "memory" for f in case.findings)
        proto.write(json.dumps({"findings": case.findings, "zarr_errors": case.zarr_errors, "errors": case.errors,
                                "restart": memory,
                                "seconds": time.perf_counter() - t0, "rss_peak": _status("VmHWM"),
                                "vm_peak": _status("VmPeak")}) + "\n")
        if memory:
            return  # after a MemoryError the process may be in any state: the parent starts a new one


if __name__ == "__main__":
    main()
