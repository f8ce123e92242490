"""Fuzzing zarrlib's remote reads with mutated HTTP answers: the right data or a named error, never else.

A case takes one key of a small store written by zarr-python (its metadata document, a chunk,
or a shard, whose index and inner chunks are read by range), and mutates the valid answer the
loopback server (``hostile_http``) would give for it: the status line (code, version, reason,
line endings, garbage), the headers (Content-Length, Content-Range, Transfer-Encoding,
Content-Encoding, Location, duplicates, folding, hundreds of them, interim 1xx answers before
them), the body (truncated, extended, bits flipped, emptied, gzip-encoded with or without a
label, a gzip bomb, reframed in chunks with good or broken framing, sent in pieces) and, for a
206, the bytes of the range (others, more, fewer, a whole object). The mutation applies to the
first one or two requests for the key, or to all of them, so retries are exercised too.

Each case is drawn from ``random.Random(f"{seed}:{index}")``, so it is replayed from its seed and
index alone (or from its JSON). The read runs in a worker process under an address-space limit
(``hostile_reader``), with a short per-try timeout, through the backend the case names:

* good: the values zarr-python wrote (``ok``, or ``failure_recorded`` where ``read(failures=[])``
  recorded the mutated key and everything else equals the truth), or an error that is a
  ``StoreError`` (``store_error``) or another ``ZarrError`` (``zarr_error``: a body changed in a way
  HTTP cannot show, caught by the chunk's checksum or the JSON parser) naming the store's URL or
  the key;
* bad: wrong values returned as success (``silent_corruption``), another exception
  (``other_exception``), an error naming nothing (``unclear_error``), no answer by the deadline
  (``hang``), past the time budget (``slow``), a MemoryError, a dead worker or a peak RSS over the
  bound (``memory``, ``crash``), a server that sent more than the bound and slack allow
  (``unbounded``).

A case's wrong values are a defect only where a correct client could have known better, so each
mutation is allowed only on keys where that holds: mutations that keep the headers true to the
body (a shorter body still announced by its Content-Length, other bytes with a Content-Range
saying which) apply everywhere; mutations that make a consistent lie (bits flipped, a smaller
Content-Length, other bytes under the Content-Range asked for) apply only where a crc32c codec
protects the bytes, or to metadata documents where the lie cannot be valid JSON (a strict prefix,
a suffix of junk). The seeds' chunks are crc32c-protected except ``raw_shard``'s inner chunks.

    python -m tests.zarrlib.http_answer_fuzz --count 10000 --seed 1 --jobs 2
    python -m tests.zarrlib.http_answer_fuzz --replay 1:4321
    python -m tests.zarrlib.http_answer_fuzz --replay /tmp/fuzz/defects/001-silent_corruption/case.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # under pytest (tests/ and tests/zarrlib on sys.path) or as python -m tests.zarrlib.http_answer_fuzz
    from hostile_http import Answer, Request, Step, gzip_bomb, serve_hostile
    from hostile_reader import AS_BYTES, GiB, Reader
    from fuzz.slots import Slots, Ticker
except ImportError:  # pragma: no cover - the module run from the repository root
    from tests.hostile_http import Answer, Request, Step, gzip_bomb, serve_hostile
    from tests.zarrlib.hostile_reader import AS_BYTES, GiB, Reader
    from tests.fuzz.slots import Slots, Ticker

#: the backends a case may read through: the two the tests name, and the automatic choice (obstore,
#: handing a server whose answers state no size over to fsspec)
BACKENDS = ("fsspec", "obstore", "auto")
#: every read's I/O options: short, so a case that can only time out costs little
IO = {"io_timeout": 1.0, "io_retries": 2}
#: the bound on metadata documents and objects in the worker (the 1 GiB bomb is 1 MiB on the wire)
BOUND = 4 << 20
BOMB = 1 << 30
#: bytes past the bound the server may hand the kernel (test_remote_bounds's reasoning)
SLACK = 32 << 20
#: the most a case may grow the worker's peak RSS
MEMORY = 256 << 20
#: after a mutated answer the server waits this long for the client's next request, then hangs
#: up: a client waiting for bytes that never come sees the connection end instead of a timeout
LINGER = 0.3
#: seconds a case may take: every try timing out, with the linger and backoff, and room for a
#: loaded machine; past it the case is ``slow``. The deadline past which it is a ``hang``:
BUDGET = IO["io_retries"] * (IO["io_timeout"] + 2 * LINGER) * 2 + 5.0
DEADLINE = 30.0

GOOD = ("ok", "failure_recorded", "store_error", "zarr_error")
BAD = ("harness_error", "crash", "memory", "hang", "unbounded", "silent_corruption", "other_exception",
       "unclear_error", "slow")


# -- seeds: small stores written by zarr-python ----------------------------------------------

@dataclass
class Seed:
    name: str
    root: Path  # the folder served; the store is root/name
    truth: Path  # .npy of the values written
    chunks: list[str]  # chunk or shard keys
    protected: bool  # crc32c protects each (inner) chunk's bytes
    sharded: bool


def truth_values() -> Any:
    import numpy as np

    return (np.arange(40 * 30, dtype=np.uint32) * 7919 % 65521).astype("<u2").reshape(40, 30)


def build_seeds(root: Path) -> dict[str, Seed]:
    import numpy as np
    import zarr
    from zarr.codecs import Crc32cCodec, ZstdCodec

    root.mkdir(parents=True, exist_ok=True)
    data = truth_values()
    truth = root / "truth.npy"
    np.save(truth, data)
    specs = {
        "crc_zstd": dict(chunks=(16, 16), compressors=[ZstdCodec(level=1), Crc32cCodec()]),
        "crc_shard": dict(chunks=(8, 8), shards=(24, 16), compressors=[Crc32cCodec()]),
        # inner chunks without a checksum: only mutations a correct client can notice apply to them
        "raw_shard": dict(chunks=(8, 8), shards=(24, 16), compressors=None),
    }
    seeds = {}
    for name, spec in specs.items():
        store = root / f"{name}.zarr"
        if not (store / "zarr.json").exists():
            a = zarr.create_array(store, shape=data.shape, dtype="<u2", **spec)  # type: ignore[arg-type]
            a[...] = data
        keys = sorted(p.relative_to(store).as_posix() for p in (store / "c").rglob("*") if p.is_file())
        seeds[name] = Seed(f"{name}.zarr", root, truth, keys, protected=name.startswith("crc"),
                           sharded="shards" in spec)
    return seeds


# -- cases --------------------------------------------------------------------------------------

#: where a mutation may apply: "all" keys, "meta" (metadata documents and protected bytes),
#: "protected" (crc32c-protected bytes only), "metadata" (metadata documents only: an empty
#: body, which for a chunk or shard is the valid answer "an empty object", no lie to catch)
OPS: dict[str, tuple[str, float]] = {  # op -> (where, weight)
    "status": ("all", 3), "version": ("all", 1.5), "reason": ("all", 1), "eol": ("all", 1), "garbage_line": ("all", 1),
    "content_length": ("all", 4), "content_length_smaller": ("meta", 2), "duplicate_length": ("all", 1.5),
    "drop": ("all", 2), "content_range": ("all", 2.5), "transfer_encoding": ("all", 1.5), "te_lie": ("meta", 1),
    "content_encoding": ("all", 2), "gzip_body": ("all", 2), "gzip_unlabelled": ("meta", 1), "bomb": ("all", 0.7),
    "location": ("all", 0.5), "redirect": ("all", 2), "pad_headers": ("all", 1), "interim": ("all", 1.5),
    "header_case": ("all", 0.5), "odd_header": ("all", 1.5), "close": ("all", 1),
    "truncate": ("all", 3), "truncate_adjust": ("meta", 1.5), "extend": ("all", 2), "extend_adjust": ("meta", 1.5),
    "flip": ("protected", 3), "empty": ("metadata", 1), "chunked": ("all", 4), "split": ("all", 1.5), "drip": ("all", 0.4),
    "range_other": ("all", 2), "range_more": ("all", 2), "range_less": ("all", 2), "range_lie": ("protected", 2),
    "whole": ("all", 1.5), "whole_lie": ("protected", 1),
}
STATUSES = [100, 101, 199, 201, 202, 203, 204, 205, 226, 299, 300, 301, 302, 304, 307, 400, 401, 403, 404, 405, 408,
            410, 412, 416, 418, 429, 500, 501, 502, 503, 504, 599, 600, 999, 0, 1000, 20, 2000]
VERSIONS = ["HTTP/1.0", "HTTP/1.2", "HTTP/2", "HTTP/2.0", "http/1.1", "HTTP/11", "HTTP/", "ICY", "", "HTTP/1.1 ",
            "HTTP/0.9", " HTTP/1.1"]
REASONS = ["", " ", "x" * 8000, "Ünïcödé", "\x00", "OK\rX", "OK OK OK", "\t"]
#: Content-Length values, from the body's true length n
LENGTH: dict[str, Callable[[int], str]] = {
    "n+1": lambda n: str(n + 1), "n+100": lambda n: str(n + 100), "2n": lambda n: str(2 * n),
    "10 TiB": lambda n: str(10 << 40), "-1": lambda n: "-1", "+n": lambda n: f"+{n}", "n ": lambda n: f"{n} ",
    " n": lambda n: f" {n}", "hex": lambda n: f"0x{n:x}", "n,n": lambda n: f"{n},{n}", "n, n+1": lambda n: f"{n}, {n + 1}",
    "": lambda n: "", "abc": lambda n: "abc", "40 nines": lambda n: "9" * 40, "1e3": lambda n: "1e3",
    "n.0": lambda n: f"{n}.0", "n NUL": lambda n: f"{n}\x00", "n": lambda n: str(n),
    # smaller than the body: a consistent lie, for metadata and protected bytes only
    "n-1": lambda n: str(max(0, n - 1)), "0": lambda n: "0", "n/2": lambda n: str(n // 2), "1": lambda n: "1",
}
LENGTHS = [k for k in LENGTH if k not in ("n-1", "0", "n/2", "1", "n")]
SMALLER = ["n-1", "0", "n/2", "1"]
RANGES = ["bytes {a1}-{b1}/{size}", "bytes {a}-{b}/*", "bytes {a}-{b}/{size100}", "bytes */{size}", "bytes {b}-{a}/{size}",
          "garbage", "bytes {a}-{b1000}/{size}", "bytes={a}-{b}/{size}", "bytes {a}-{b}", "items {a}-{b}/{size}",
          "bytes -{a}-{b}/{size}", "bytes {a}-{b}/{size}, bytes 0-0/{size}"]
TRANSFER = ["identity", "gzip", "gzip, chunked", "chunked, gzip", "xyz", "chunked, chunked", "Chunked", " chunked"]
ENCODINGS = ["gzip", "deflate", "br", "zstd", "identity", "gzip, gzip", "x-gzip", "compress", "xyz", "", "GZIP", "gzip;q=1"]
DROPS = ["Content-Length", "Content-Range", "Content-Type", "Accept-Ranges", "ETag"]
#: where a redirect leads: never to a path of this server that does not exist, for that is the
#: server saying "no such object", which a client rightly reads as the fill value
REDIRECTS = ["self", "pair", "real", "elsewhere", "relative", "empty", "garbage", "scheme"]
ODD = ["nul", "no_colon", "space_before_colon", "fold", "fold_length", "empty_name", "latin1", "huge_value",
       "bare_cr"]
CHUNKED_BAD = [None, None, None, "no_last_close", "size_short", "size_long", "bad_hex", "huge_size", "negative",
               "missing_crlf", "extra_after_last", "ext", "trailer"]


def allowed_ops(where: str) -> list[str]:
    """The ops whose lies a correct client cannot see, allowed only where the bytes say so."""
    ok = {"all"} | ({"meta"} if where in ("meta", "protected") else set()) | ({"protected"} if where == "protected" else set())
    ok |= {"metadata"} if where == "meta" else set()
    return [op for op, (w, _) in OPS.items() if w in ok]


def draw_op(rnd: random.Random, op: str, role: str) -> dict[str, Any]:
    if op == "status":
        codes = [c for c in STATUSES if not (role != "meta" and c in (404, 410))]  # a missing chunk is the fill value
        return {"op": op, "code": rnd.choice(codes)}
    if op == "version":
        return {"op": op, "text": rnd.choice(VERSIONS)}
    if op == "reason":
        return {"op": op, "text": rnd.choice(REASONS)}
    if op == "garbage_line":
        return {"op": op, "bytes": bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 40))).hex()}
    if op == "content_length":
        return {"op": op, "value": rnd.choice(LENGTHS)}
    if op == "content_length_smaller":  # 0 for a chunk would say "an empty object", a lie no client can see
        return {"op": "content_length", "value": rnd.choice(SMALLER if role == "meta" else SMALLER[:1] + SMALLER[2:])}
    if op == "duplicate_length":
        return {"op": op, "value": rnd.choice(["n", "n+1", "0", "abc"])}
    if op == "drop":
        return {"op": op, "name": rnd.choice(DROPS)}
    if op == "content_range":
        return {"op": op, "value": rnd.choice(RANGES)}
    if op == "transfer_encoding":
        return {"op": op, "value": rnd.choice(TRANSFER)}
    if op == "te_lie":
        return {"op": "transfer_encoding", "value": "chunked"}
    if op == "content_encoding":
        return {"op": op, "value": rnd.choice(ENCODINGS)}
    if op == "gzip_body":
        return {"op": op, "kind": rnd.choice(["gzip", "deflate", "raw_deflate"]), "label": True}
    if op == "gzip_unlabelled":
        return {"op": "gzip_body", "kind": "gzip", "label": False}
    if op == "bomb":
        return {"op": op, "chunked": rnd.random() < 0.3}
    if op == "location":
        return {"op": op, "value": rnd.choice(["/elsewhere", "http://127.0.0.1:9/x", "", "\x00"])}
    if op == "redirect":
        return {"op": op, "code": rnd.choice([301, 302, 303, 307, 308]), "to": rnd.choice(REDIRECTS)}
    if op == "pad_headers":
        return {"op": op, "count": rnd.choice([10, 100, 1000, 3000]), "size": rnd.choice([1, 50, 500, 4000])}
    if op == "interim":
        return {"op": op, "code": rnd.choice([100, 102, 103, 199]), "count": rnd.choice([1, 2, 10, 1000]),
                "headers": rnd.random() < 0.5}
    if op == "header_case":
        return {"op": op, "how": rnd.choice(["lower", "upper"])}
    if op == "odd_header":
        return {"op": op, "how": rnd.choice(ODD)}
    if op == "close":
        return {"op": op}
    if op in ("truncate", "truncate_adjust"):
        least = 1 if op == "truncate_adjust" and role != "meta" else 0  # a byte at least (see content_length_smaller)
        return {"op": "truncate", "keep": rnd.random(), "adjust": op == "truncate_adjust", "least": least}
    if op in ("extend", "extend_adjust"):
        junk = "x" + bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 1, 10, 1000]))).hex()
        return {"op": "extend", "junk": junk, "adjust": op == "extend_adjust"}
    if op == "flip":
        return {"op": op, "bits": [rnd.randrange(1 << 30) for _ in range(rnd.choice([1, 1, 2, 3]))]}
    if op == "empty":
        return {"op": op}
    if op == "chunked":
        return {"op": op, "pieces": rnd.choice([1, 2, 3, 7, 100]), "bad": rnd.choice(CHUNKED_BAD),
                "keep_length": rnd.random() < 0.2}
    if op == "split":
        return {"op": op, "pieces": rnd.choice([2, 3, 10, 50]), "wait": rnd.choice([0.0, 0.001, 0.02])}
    if op == "drip":
        return {"op": op, "wait": rnd.choice([0.05, 0.3, 1.5])}
    if op in ("range_other", "range_more", "range_less", "range_lie"):
        return {"op": op, "by": rnd.choice([1, 2, 7, 100, 4096])}
    if op in ("whole", "whole_lie"):
        return {"op": op}
    if op == "eol":
        return {"op": op}
    raise ValueError(op)


def generate(seeds: dict[str, Seed], seed: int, index: int) -> dict[str, Any]:
    """The case ``index`` of the campaign ``seed``: the same on every machine."""
    rnd = random.Random(f"{seed}:{index}")
    s = seeds[sorted(seeds)[rnd.randrange(len(seeds))]]
    if rnd.random() < 0.3:
        key, role, ranges = "zarr.json", "meta", "any"
    else:
        key = s.chunks[rnd.randrange(len(s.chunks))]
        ranges = rnd.choice(["any", "suffix", "explicit"]) if s.sharded else "any"
        # raw_shard's index (its suffix range) has a crc32c; its inner chunks (explicit ranges) none
        role = "protected" if s.protected or ranges == "suffix" else "chunk"
    names = allowed_ops(role)
    weights = [OPS[n][1] for n in names]
    ops = [draw_op(rnd, rnd.choices(names, weights)[0], role) for _ in range(rnd.choice([1, 1, 1, 2, 2, 3]))]
    return {"seed": seed, "index": index, "store": s.name, "key": key, "role": role, "ranges": ranges,
            "times": rnd.choice([1, 1, 2, None, None]), "ops": ops,
            "backend": rnd.choice(BACKENDS), "mode": rnd.choice(["raise", "failures"])}


# -- carrying a case out: the mutated answer ----------------------------------------------------

@dataclass
class Wire:
    """An answer as it will be written, before and after mutation."""

    version: str
    status: str  # the code as written (may be any text)
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    whole: bytes  # the whole object, for range mutations
    start: int  # the body's first byte in the object (206)
    size: int | None
    eol: str = "\r\n"
    status_line: bytes | None = None  # replaces the status line as a whole
    interim: list[bytes] = field(default_factory=list)
    framing: str = "length"  # "length", "chunked" (body reframed), "close" (ends by closing)
    chunked: dict[str, Any] | None = None
    close: bool = False
    pieces: int = 1
    wait: float = 0.0
    extra_header_lines: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, a: Answer) -> Wire:
        return cls(a.version, str(a.status), a.reason, list(a.headers), a.body, a.whole, a.start, a.size)

    def get(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def set(self, name: str, value: str) -> None:
        self.drop(name)
        self.headers.append((name, value))

    def drop(self, name: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]

    def length(self, n: int) -> None:
        if self.get("Content-Length") is not None:
            self.set("Content-Length", str(n))


def _chunked_body(body: bytes, spec: dict[str, Any], rnd: random.Random) -> tuple[bytes, bool]:
    """``body`` in chunked framing as ``spec`` says; True where the connection must close after."""
    count = max(1, min(spec["pieces"], len(body) or 1))
    cuts = sorted(rnd.sample(range(1, len(body)), count - 1)) if len(body) > count else []
    parts = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])] if body else []
    bad = spec.get("bad")
    out = bytearray()
    close = bad is not None and bad not in ("ext", "trailer")
    for i, p in enumerate(parts):
        size = f"{len(p):x}"
        if bad == "size_short" and i == 0:
            size = f"{max(0, len(p) - 1):x}"
        elif bad == "size_long" and i == 0:
            size = f"{len(p) + 3:x}"
        elif bad == "bad_hex" and i == 0:
            size = "zz" + size
        elif bad == "huge_size" and i == 0:
            size = "f" * 20
        elif bad == "negative" and i == 0:
            size = "-" + size
        line = size + (";name=value;x" if bad == "ext" else "")
        out += line.encode() + b"\r\n" + p + (b"" if bad == "missing_crlf" and i == 0 else b"\r\n")
    if bad != "no_last_close":
        out += b"0\r\n" + (b"X-Trailer: 1\r\n" if bad == "trailer" else b"") + b"\r\n"
    if bad == "extra_after_last":
        out += b"5\r\nhello\r\n0\r\n\r\n"
    return bytes(out), close


def mutate(w: Wire, op: dict[str, Any], req: Request) -> None:
    """Apply one op to ``w``; an op that does not apply to this answer does nothing."""
    kind, n = op["op"], len(w.body)
    if kind == "status":
        w.status = str(op["code"])
    elif kind == "version":
        w.version = op["text"]
    elif kind == "reason":
        w.reason = op["text"]
    elif kind == "eol":
        w.eol = "\n"
    elif kind == "garbage_line":
        w.status_line = bytes.fromhex(op["bytes"])
    elif kind == "content_length":
        w.set("Content-Length", LENGTH[op["value"]](n))
    elif kind == "duplicate_length":
        w.headers.append(("Content-Length", LENGTH[op["value"]](n)))
    elif kind == "drop":
        w.drop(op["name"])
        if op["name"] == "Content-Length" and w.framing == "length":
            w.framing = "close"
    elif kind == "content_range":
        if w.size is None:
            return
        a, b = w.start, w.start + max(0, n - 1)
        w.set("Content-Range", op["value"].format(a=a, b=b, a1=a + 1, b1=b + 1, b1000=b + 1000, size=w.size,
                                                  size100=w.size + 100))
    elif kind == "transfer_encoding":
        w.set("Transfer-Encoding", op["value"])
    elif kind == "content_encoding":
        w.set("Content-Encoding", op["value"])
    elif kind == "gzip_body":
        if op["kind"] == "gzip":
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
        elif op["kind"] == "deflate":
            c = zlib.compressobj(6, zlib.DEFLATED, 15)
        else:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
        w.body = c.compress(w.body) + c.flush()
        w.length(len(w.body))
        if op["label"]:
            w.set("Content-Encoding", "gzip" if op["kind"] == "gzip" else "deflate")
    elif kind == "bomb":
        w.body = gzip_bomb(BOMB)
        w.set("Content-Encoding", "gzip")
        if op["chunked"]:
            w.drop("Content-Length")
            w.set("Transfer-Encoding", "chunked")
            w.framing, w.chunked = "chunked", {"pieces": 64, "bad": None}
        else:
            w.set("Content-Length", str(len(w.body)))
    elif kind == "location":
        w.set("Location", op["value"])
    elif kind == "redirect":
        path = req.target.split("?", 1)[0]
        to = {"self": req.target, "pair": path if "hop=b" in req.query else path + "?hop=b",
              "real": path + "?zfuzz=real", "elsewhere": "http://127.0.0.1:9" + path, "relative": "./" + path.rsplit("/", 1)[-1],
              "empty": "", "garbage": "http://[zz\x7f/x", "scheme": "ftp://127.0.0.1" + path}[op["to"]]
        w.status, w.reason, w.body = str(op["code"]), "Moved", b""
        w.headers = [("Location", to), ("Content-Length", "0")]
        w.framing = "length"
    elif kind == "pad_headers":
        w.extra_header_lines += [f"X-Pad-{i}: {'p' * op['size']}" for i in range(op["count"])]
    elif kind == "interim":
        extra = "Link: </a>; rel=preload\r\n" if op["headers"] else ""
        w.interim += [f"HTTP/1.1 {op['code']} Interim\r\n{extra}\r\n".encode()] * op["count"]
    elif kind == "header_case":
        w.headers = [(k.lower() if op["how"] == "lower" else k.upper(), v) for k, v in w.headers]
    elif kind == "odd_header":
        how = op["how"]
        if how == "nul":
            w.extra_header_lines.append("X-Odd: a\x00b")
        elif how == "no_colon":
            w.extra_header_lines.append("Garbage line without a colon")
        elif how == "space_before_colon":
            v = w.get("Content-Length")
            if v is not None:
                w.drop("Content-Length")
                w.extra_header_lines.append(f"Content-Length : {v}")
        elif how == "fold":
            w.extra_header_lines.append("X-Folded: first\r\n second")
        elif how == "fold_length":
            v = w.get("Content-Length")
            if v is not None:
                w.drop("Content-Length")
                w.extra_header_lines.append(f"Content-Length:\r\n {v}")
        elif how == "empty_name":
            w.extra_header_lines.append(": value")
        elif how == "latin1":
            w.extra_header_lines.append("X-Latin: caf\xe9")
        elif how == "huge_value":
            w.extra_header_lines.append("X-Huge: " + "h" * 100_000)
        elif how == "bare_cr":
            w.extra_header_lines.append("X-Cr: a\rb")
    elif kind == "close":
        w.close = True
    elif kind == "truncate":
        keep = max(op.get("least", 0), int(op["keep"] * n))
        if keep >= n:
            return
        w.body = w.body[:keep]
        if op["adjust"]:
            w.length(keep)
        else:
            w.close = True  # what the Content-Length still promises never comes
    elif kind == "extend":
        junk = bytes.fromhex(op["junk"][1:]) if len(op["junk"]) > 1 else b""
        w.body += b"x" + junk
        if op["adjust"]:
            w.length(len(w.body))
        else:  # the surplus follows the body the headers announce
            pass
    elif kind == "flip":
        if not w.body:
            return
        body = bytearray(w.body)
        for bit in op["bits"]:
            i = bit % (len(body) * 8)
            body[i // 8] ^= 1 << (i % 8)
        w.body = bytes(body)
    elif kind == "empty":
        w.body = b""
        w.length(0)
    elif kind == "chunked":  # with a Content-Length kept as well, Transfer-Encoding overrides it (RFC 9112 6.3)
        w.framing = "chunked"
        w.chunked = {"pieces": op["pieces"], "bad": op["bad"]}
        w.set("Transfer-Encoding", "chunked")
        if not op["keep_length"]:
            w.drop("Content-Length")
    elif kind == "split":
        w.pieces, w.wait = op["pieces"], op["wait"]
    elif kind == "drip":
        w.pieces, w.wait = max(2, min(n, 8)), op["wait"]
    elif kind in ("range_other", "range_more", "range_less", "range_lie", "whole", "whole_lie"):
        if w.status != "206" or w.size is None or not w.whole:
            return
        size, by = w.size, op.get("by", 0)
        if kind in ("range_other", "range_lie"):
            start = w.start + by if w.start + by + n <= size else max(0, w.start - by)
            if start == w.start:
                return
            body = w.whole[start:start + n]
            if kind == "range_other":  # said so
                w.set("Content-Range", f"bytes {start}-{start + len(body) - 1}/{size}")
            w.body = body
            w.length(len(body))
        elif kind == "range_more":
            stop = min(size, w.start + n + by)
            start = w.start if stop > w.start + n else max(0, w.start - by)
            w.body = w.whole[start:stop]
            w.set("Content-Range", f"bytes {start}-{stop - 1}/{size}")
            w.length(len(w.body))
        elif kind == "range_less":
            keep = max(0, n - by)
            if keep == 0:
                return
            w.body = w.body[:keep]
            w.set("Content-Range", f"bytes {w.start}-{w.start + keep - 1}/{size}")
            w.length(keep)
        elif kind == "whole":
            w.status, w.reason, w.body = "200", "OK", w.whole
            w.drop("Content-Range")
            w.length(len(w.body))
        else:  # whole_lie: a 200 (the whole object, it says) of the range's bytes only
            w.status, w.reason = "200", "OK"
            w.drop("Content-Range")
    else:  # pragma: no cover
        raise ValueError(kind)


def wire_steps(w: Wire, rnd: random.Random) -> list[Step]:
    eol = w.eol.encode()
    status = w.status_line if w.status_line is not None else f"{w.version} {w.status} {w.reason}".encode("latin-1", "replace")
    lines = [status] + [f"{k}: {v}".encode("latin-1", "replace") for k, v in w.headers]
    lines += [line.encode("latin-1", "replace") for line in w.extra_header_lines]
    head = eol.join(lines) + eol + eol
    close = w.close or w.framing == "close"
    body = w.body
    if w.framing == "chunked":
        body, bad = _chunked_body(w.body, w.chunked or {"pieces": 1}, rnd)
        close = close or bad
    steps: list[Step] = [("head", b) for b in w.interim]
    steps.append(("head", head))
    pieces = max(1, min(w.pieces, len(body) or 1))
    cut = [len(body) * i // pieces for i in range(pieces + 1)]
    for a, b in zip(cut, cut[1:]):
        if w.wait and a:
            steps.append(("wait", w.wait))
        steps.append(("body", body[a:b]))
    steps.append(("close", b"") if close else ("linger", LINGER))
    return steps


class Hook:
    """The server's answer hook for one case: mutates the answers to the case's key."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case
        self.path = f"/{case['store']}/{case['key']}"
        self.lock = threading.Lock()
        self.taken = 0
        self.rnd = random.Random(f"{case['seed']}:{case['index']}:wire")

    def applies(self, req: Request) -> bool:
        if req.path != self.path or "zfuzz=real" in req.query:
            return False
        rng, ranges = req.range, self.case["ranges"]
        if ranges == "suffix" and not (rng and rng.strip().startswith("bytes=-")):
            return False
        if ranges == "explicit" and not (rng and not rng.strip().startswith("bytes=-")):
            return False
        with self.lock:
            times = self.case["times"]
            if times is not None and self.taken >= times:
                return False
            self.taken += 1
            return True

    def __call__(self, req: Request, valid: Answer) -> Iterable[Step] | None:
        if not self.applies(req):
            return None
        w = Wire.of(valid)
        with self.lock:
            for op in self.case["ops"]:
                mutate(w, op, req)
            return wire_steps(w, self.rnd)


# -- running cases --------------------------------------------------------------------------------

def _names(message: str, url: str, case: dict[str, Any]) -> bool:
    return f"{url}/{case['store']}" in message or case["key"] in message


def classify(case: dict[str, Any], r: dict[str, Any], url: str, answers: list[Any]) -> tuple[str, str]:
    """(category, one line saying why) of a case's result."""
    outcome = r.get("outcome")
    if outcome == "hang":
        return "hang", r.get("message", "")
    if outcome == "died":
        stacks = r.get("stacks", "")
        memory = "SIGKILL" in r.get("message", "") or "MemoryError" in stacks or "Cannot allocate" in stacks
        return ("memory" if memory else "crash"), r.get("message", "")
    if outcome == "memory" or r.get("viewer", {}).get("outcome") == "memory":
        return "memory", r.get("message", "MemoryError")
    grew = r.get("rss_peak", 0) - r.get("rss_before", 0)
    if grew > MEMORY:
        return "memory", f"peak RSS grew by {grew >> 20} MiB"
    for a in answers:
        if a.body > BOUND + SLACK or a.head > SLACK:
            return "unbounded", f"{a.target}: {a.body} body and {a.head} head bytes sent before the client hung up"
    if r.get("waited", 0) > BUDGET:
        return "slow", f"took {r['waited']:.1f} s, the budget is {BUDGET:.1f} s"
    if outcome == "ok":
        if not r.get("equal", False):
            return "silent_corruption", "values differ from what zarr-python wrote, without an error"
        failures = r.get("failures", [])
        for f in failures:
            if not f.get("zarr_error"):
                return "other_exception", f"failure record of {f['key']} carries {f.get('type')}: {f['message'][:200]}"
            if f["key"] not in f["message"] and not _names(f["message"], url, case):
                return "unclear_error", f"failure record naming nothing: {f['message'][:200]}"
        return ("failure_recorded" if failures else "ok"), ""
    if outcome == "error":
        message = r.get("message", "")
        if not r.get("zarr_error"):
            return "other_exception", f"{r.get('type')}: {message[:200]}"
        if not _names(message, url, case):
            return "unclear_error", f"{r.get('type')} naming neither {url}/{case['store']} nor {case['key']}: {message[:200]}"
        return ("store_error" if r.get("store_error") else "zarr_error"), f"{r.get('type')}: {message[:160]}"
    return "harness_error", f"unexpected result {str(r)[:300]}"


def run_case(case: dict[str, Any], seeds: dict[str, Seed], reader: Reader, deadline: float = DEADLINE) -> dict[str, Any]:
    s = next(v for v in seeds.values() if v.name == case["store"])
    hook = Hook(case)
    try:
        with serve_hostile(s.root, answer_hook=hook) as (url, state):
            job = {"url": f"{url}/{case['store']}", "options": IO, "backend": case["backend"], "mode": case["mode"],
                   "limits": {"metadata_bytes": BOUND, "object_bytes": BOUND}, "expected": str(s.truth)}
            if "inject" in case:
                job["inject"] = case["inject"]
            r = reader.run(job, deadline)
            state.wait_quiet(2.0)
            answers = state.matching(hostile=True)
            if state.errors:
                return {"category": "harness_error", "why": state.errors[0], "result": r, "mutated": len(answers)}
    except Exception as e:  # noqa: BLE001 - a harness bug must show, not stop the campaign
        return {"category": "harness_error", "why": f"{type(e).__name__}: {e}", "result": {}, "mutated": 0}
    category, why = classify(case, r, url, answers)
    return {"category": category, "why": why, "result": r, "mutated": len(answers),
            "sent": max((a.body for a in answers), default=0)}


@dataclass
class Report:
    counts: Counter[str] = field(default_factory=Counter)
    defects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    cases: int = 0
    mutated: int = 0  # cases whose mutation met a request
    seconds: float = 0.0
    slowest: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    results: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    @property
    def bad(self) -> int:
        return sum(n for c, n in self.counts.items() if c not in GOOD)


def _signature(category: str, why: str, case: dict[str, Any]) -> str:
    """A defect's identity: its category, the backend, and its message with the numbers, ports
    and keys taken out; wrong values say nothing, so for them the kinds of ops stand in."""
    text = re.sub(r"http://127\.0\.0\.1:\d+", "URL", why)
    text = re.sub(r"\b[0-9a-fx]+\b", "N", text)
    if category == "silent_corruption":
        text += " " + ",".join(sorted({op["op"] for op in case["ops"]}))
    return f"{category} {case['backend']}: {text[:160]}"


class Campaign:
    def __init__(self, out: Path, jobs: int = 2, as_bytes: int = AS_BYTES, keep: bool = False,
                 log: Callable[[str], None] = print, selftest: bool = False, deadline: float = DEADLINE,
                 seeds: dict[str, Seed] | None = None) -> None:
        self.out = out
        self.deadline = deadline
        self.jobs = jobs
        self.as_bytes = as_bytes
        self.keep = keep
        self.log = log
        self.selftest = selftest
        self.seeds = seeds if seeds is not None else build_seeds(out / "seeds")
        self.report = Report()
        self._lock = threading.Lock()

    def record(self, case: dict[str, Any], res: dict[str, Any]) -> None:
        with self._lock:
            rep = self.report
            rep.cases += 1
            rep.mutated += bool(res.get("mutated"))
            rep.counts[res["category"]] += 1
            if self.keep:
                rep.results.append((case, res))
            rep.slowest.append((res.get("result", {}).get("waited", 0.0), case))
            rep.slowest.sort(key=lambda t: -t[0])
            del rep.slowest[5:]
            if res["category"] in GOOD:
                return
            with open(self.out / "bad.jsonl", "a") as f:  # every bad case, one line each, replayable
                f.write(json.dumps({"category": res["category"], "why": res["why"], "case": case}) + "\n")
            sig = (res["category"], _signature(res["category"], res["why"], case))
            first = sig not in rep.defects
            if first:
                rep.defects[sig] = {"case": case, "why": res["why"], "count": 0, "dir": ""}
            rep.defects[sig]["count"] += 1
            number = len(rep.defects)
        if first:
            where = self.out / "defects" / f"{number:03d}-{res['category']}"
            where.mkdir(parents=True, exist_ok=True)
            (where / "case.json").write_text(json.dumps(case, indent=1))
            (where / "result.json").write_text(json.dumps(res.get("result", {}), indent=1, default=str))
            rep.defects[sig]["dir"] = str(where)

    def run(self, cases: Iterable[dict[str, Any]], progress_every: float = 60.0) -> Report:
        tick = Ticker(progress_every, lambda s: self.log(f"  {self.report.cases} cases, {s:.0f} s, "
                                                         f"{dict(self.report.counts)}"))

        def slot(i: int, take: Callable[[], dict[str, Any] | None]) -> None:
            with Reader(self.out / "work" / f"worker-{i}.log", self.as_bytes, selftest=self.selftest) as reader:
                while (case := take()) is not None:
                    self.record(case, run_case(case, self.seeds, reader, self.deadline))
                    tick()

        Slots(self.jobs, slot).run(cases)
        self.report.seconds = time.monotonic() - tick.start
        return self.report


def cases(seeds: dict[str, Seed], seed: int, count: int, start: int = 0) -> Iterator[dict[str, Any]]:
    for index in range(start, start + count):
        yield generate(seeds, seed, index)


def summary(rep: Report, out: Path) -> list[str]:
    rate = rep.cases / rep.seconds if rep.seconds else 0.0
    lines = [f"{rep.cases} cases in {rep.seconds:.0f} s ({rate:.1f} cases/s), {rep.mutated} met their mutation; "
             f"output in {out}", "categories:"]
    for cat in GOOD + BAD:
        if rep.counts.get(cat):
            lines.append(f"  {cat:<18} {rep.counts[cat]:>7}{'' if cat in GOOD else '   BAD'}")
    lines.append("slowest cases:")
    for seconds, case in rep.slowest:
        lines.append(f"  {seconds:6.2f} s  --replay {case['seed']}:{case['index']}  {json.dumps(case['ops'])[:120]}")
    lines.append(f"distinct defects: {len(rep.defects)}")
    order = {c: i for i, c in enumerate(BAD)}
    for (cat, _), d in sorted(rep.defects.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        case = d["case"]
        lines.append(f"  [{cat}] {d['count']} cases, {case['backend']}, {case['store']}/{case['key']} "
                     f"({case['ranges']}): {d['why'][:200]}")
        lines.append(f"      ops {json.dumps(case['ops'])[:200]}")
        lines.append(f"      replay: python -m tests.zarrlib.http_answer_fuzz --replay {case['seed']}:{case['index']}")
    return lines


# -- command line ---------------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.zarrlib.http_answer_fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=2000, help="cases to run (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed: the same seed gives the same cases")
    p.add_argument("--start", type=int, default=0, help="index of the first case")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", type=Path, help="where seeds, worker logs and defects go (default: a new temp folder)")
    p.add_argument("--mem-gib", type=float, default=AS_BYTES / GiB, help="address-space limit of each worker, GiB")
    p.add_argument("--minutes", type=float, help="stop starting new cases after this many minutes")
    p.add_argument("--replay", help="SEED:INDEX or a case.json: run that one case and print all of it")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="zarrview-http-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    campaign = Campaign(out, jobs=1 if args.replay else args.jobs, as_bytes=int(args.mem_gib * GiB),
                        keep=bool(args.replay), log=lambda s: print(s, flush=True))
    if args.replay:
        if re.fullmatch(r"-?\d+:\d+", args.replay):
            seed, index = map(int, args.replay.split(":"))
            case = generate(campaign.seeds, seed, index)
        else:
            case = json.loads(Path(args.replay).read_text())
        rep = campaign.run([case])
        _, res = rep.results[0]
        print(json.dumps(case, indent=1))
        print(f"\n[{res['category']}] {res['why']}")
        print(json.dumps(res.get("result", {}), indent=1, default=str)[:20000])
        return 0 if res["category"] in GOOD else 1
    print(f"running {args.count} cases from index {args.start}, seed {args.seed}, {args.jobs} jobs; seeds in "
          f"{out / 'seeds'}", flush=True)
    todo: Iterable[dict[str, Any]] = cases(campaign.seeds, args.seed, args.count, args.start)
    if args.minutes:
        deadline = time.monotonic() + args.minutes * 60
        todo = (c for c in todo if time.monotonic() < deadline)
    rep = campaign.run(todo)
    print("\n".join(summary(rep, out)))
    shutil.rmtree(out / "work", ignore_errors=True)
    return 1 if rep.bad else 0


if __name__ == "__main__":
    sys.exit(main())
