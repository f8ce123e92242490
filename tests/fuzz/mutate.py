"""Hypothesis strategies that turn a seed into a concrete case: a list of operations.

The strategies only choose; ``apply`` does. Every drawn value ends up in the case's JSON, so
a case replays without hypothesis, and the campaign's seed reproduces the whole sequence.
Values lean towards the extremes that break parsers and allocators: integers at 2**31, 2**53,
2**63 and 2**64, 5000-digit numbers, NaN/Infinity tokens, nesting 1000 deep, 65 dimensions,
data type names like "r" + digits, declared sizes of gigabytes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from .seeds import Seed

T = TypeVar("T")

INTS = [0, 1, -1, 2, 3, 7, 8, 63, 64, 65, 255, 256, 1024, 2**15, 2**16, 2**24, 2**31 - 1, 2**31, 2**32 - 1,
        2**32, 2**53, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**100, -2**31, -2**63, -2**63 - 1, -2**64]
FLOAT_TOKENS = ["1e308", "-1e308", "1e400", "-1e400", "5e-324", "0.5", "-0.0", "1.0", "2.5e9", "4294967296.0",
                "9.3e18", "1.8446744073709552e19", "NaN", "Infinity", "-Infinity", "nan", "inf", "1E+2", "01", "-", "1."]
CODECS = ["bytes", "crc32c", "gzip", "zstd", "blosc", "transpose", "sharding_indexed", "vlen-utf8", "vlen-bytes",
          "zlib", "delta", "lz4", "bz2", "lzma", "fixedscaleoffset", "quantize", "packbits", "categorize", "astype",
          "bitround", "pickle", "json2", "msgpack2", "vlen-array", "shuffle", "adler32", "fletcher32", "pcodec",
          "numcodecs.delta", "numcodecs.zlib", "https://purl.org/zarr/spec/codec/gzip/1.0", "sharding"]
DTYPES = ["r8", "r16", "r0", "r7", "r-8", "r" + "9" * 30, "r" + "1" * 5, "r²", "bool", "int8", "uint64", "float16",
          "float64", "complex128", "string", "bytes", "|O", "O", "<i4", ">f8", "|b1", "|S0", "|S100000000000",
          "<U2147483648", "|V0", "|V4294967296", "<M8[D]", "<M8[100000000000000000000s]", "<m8[as]", "<M8", "=i4",
          "i4", "float", "int", "bfloat16", "float8_e4m3fn", "numpy.datetime64", "numpy.timedelta64",
          "fixed_length_utf32", "null_terminated_bytes", "struct", "raw_bits", "<f16", ">c32", "|u1", "<u8", "|i1"]
WORDS = ["", "r²", "C", "F", "K", "little", "big", "native", "/", ".", "\\", "c/0/0", "..", "../..", "/etc/passwd",
         "\u0000", "💥", "start", "end", "middle", "regular", "default", "v2", "rectilinear", "array", "group",
         "indexed", "https://purl.org/zarr/spec/protocol/core/3.0", "zarr.json", "lz4hc", "zstd", "blosclz", "noshuffle",
         "bitshuffle", "shuffle", "s", "as", "D", "generic"]
RAW = ["", "}", "{", "[", "[1,", "nul", "tru", '"\\ud800"', '"\\udfff\\ud800"', '"a\x01b"', '"\\u0000"', '"\\x"',
       "[] []", "{}", "[]", "null", "true", "false", '{"": 1}', '{"a": 1, "a": 2}', "1 2", "\ufeff{}", "-0", "+1"]
HOT = {"shape", "chunks", "chunk_shape", "data_type", "dtype", "fill_value", "chunks_per_shard", "endian", "typesize",
       "level", "clevel", "blocksize", "order", "length_bytes", "index_location", "id", "name", "separator",
       "dimension_separator", "zarr_format", "node_type", "codecs", "index_codecs", "compressor", "filters",
       "configuration", "scale_factor", "unit", "astype", "elementsize", "cname", "shuffle", "keepbits", "scale",
       "offset", "labels", "checksum", "storage_transformers", "chunk_grid", "chunk_key_encoding", "metadata"}


def pick(draw: st.DrawFn, items: Sequence[T]) -> T:
    """One of ``items``, drawn as an index: a fresh ``sampled_from`` per draw costs hypothesis a
    validation pass each time, which made generation slower than running the case."""
    return items[draw(st.integers(0, len(items) - 1))]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@functools.cache
def int_texts() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(INTS).map(str), st.integers().map(str),
                     st.integers(19, 6000).map(lambda n: "9" * n), st.integers(19, 400).map(lambda n: "-1" + "0" * n))


@functools.cache
def dims_texts() -> st.SearchStrategy[str]:
    """Lists for shapes and chunk shapes: empty, 65 dimensions, zeros, negatives, 2**64."""
    one = st.one_of(st.sampled_from(INTS), st.integers(0, 20))
    return st.one_of(st.lists(one, max_size=5).map(_dumps), st.lists(one, min_size=30, max_size=70).map(_dumps),
                     st.integers(1, 70).map(lambda n: _dumps([1] * n)), st.integers(1, 4).map(lambda n: _dumps([2**40] * n)))


@functools.cache
def nesting_texts() -> st.SearchStrategy[str]:
    return st.one_of(st.integers(60, 3000).map(lambda n: "[" * n + "]" * n),
                     st.integers(60, 3000).map(lambda n: '{"a": ' * n + "0" + "}" * n),
                     st.integers(60, 1500).map(lambda n: '[{"name": ' * n + "1" + "}]" * n))


@functools.cache
def long_texts() -> st.SearchStrategy[str]:
    return st.one_of(st.integers(1000, 300_000).map(lambda n: _dumps("a" * n)),
                     st.integers(1000, 100_000).map(lambda n: "[" + ",".join(["0"] * n) + "]"),
                     st.integers(100, 20_000).map(lambda n: "{" + ",".join(f'"k{i}": {i}' for i in range(n)) + "}"))


@functools.cache
def small_json() -> st.SearchStrategy[str]:
    leaf = st.one_of(st.none(), st.booleans(), st.sampled_from(INTS), st.integers(-3, 20), st.text(max_size=8),
                     st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(CODECS + DTYPES + WORDS))
    return st.recursive(leaf, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
                        max_leaves=8).map(_dumps)


@functools.cache
def codec_texts() -> st.SearchStrategy[str]:
    """Codec objects (v3 ``name``/``configuration`` and v2 ``id`` forms) with extreme settings."""
    conf = st.dictionaries(st.sampled_from(sorted(HOT) + ["nbytes", "dtype", "bits", "digits"]),
                           st.one_of(st.sampled_from(INTS), st.sampled_from(WORDS + DTYPES), st.just(None)), max_size=4)
    v3 = st.builds(lambda n, c: _dumps({"name": n, "configuration": c}), st.sampled_from(CODECS), conf)
    v2 = st.builds(lambda n, c: _dumps({"id": n, **c}), st.sampled_from(CODECS), conf)
    return st.one_of(v3, v2, st.lists(v3, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]"))


@functools.cache
def dtype_texts() -> st.SearchStrategy[str]:
    ints = st.sampled_from(INTS)
    return st.one_of(
        st.sampled_from(DTYPES).map(_dumps),
        st.integers(0, 2**70).map(lambda n: _dumps(f"r{n}")),
        st.builds(lambda n: _dumps({"name": "fixed_length_utf32", "configuration": {"length_bytes": n}}), ints),
        st.builds(lambda n: _dumps({"name": "null_terminated_bytes", "configuration": {"length_bytes": n}}), ints),
        st.builds(lambda u, s: _dumps({"name": "numpy.datetime64", "configuration": {"unit": u, "scale_factor": s}}),
                  st.sampled_from(["s", "ns", "as", "Y", "x", ""]), ints),
        st.builds(lambda n, d, s: _dumps([["a", "<i4"], [n, d, s]]), st.sampled_from(["b", "a", ""]),
                  st.sampled_from(DTYPES), st.lists(ints, max_size=3)),
        st.integers(50, 1000).map(lambda n: _dumps([["f", [["g", "<i2"]] * 2]] * 2) if n < 100 else
                                  "[" * (n // 10) + '["a", "<i4"]' + "]" * (n // 10)),
    )


@functools.cache
def value_texts() -> st.SearchStrategy[str]:
    """Raw JSON text (sometimes not valid JSON) to put where a value was."""
    return st.one_of(
        int_texts(), st.sampled_from(FLOAT_TOKENS), st.sampled_from(WORDS + CODECS).map(_dumps), st.sampled_from(RAW),
        dims_texts(), dtype_texts(), codec_texts(), small_json(), nesting_texts(), long_texts(),
        st.text(max_size=20).map(_dumps))


def json_paths(doc: Any, limit: int = 12) -> list[list[Any]]:
    """Every path into a document (bounded depth), root first."""
    out: list[list[Any]] = []

    def walk(node: Any, path: list[Any]) -> None:
        out.append(path)
        if len(path) >= limit:
            return
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            walk(v, path + [k])
    walk(doc, [])
    return out


def _hot(path: list[Any]) -> bool:
    return any(isinstance(p, str) and p in HOT for p in path[-2:]) or bool(path) and isinstance(path[-1], int)


@functools.cache
def _paths(seed: Seed, key: str) -> tuple[list[list[Any]], list[list[Any]]]:
    paths = json_paths(seed.docs[key])
    return paths, [p for p in paths if _hot(p)] or paths


def meta_op(draw: st.DrawFn, seed: Seed) -> dict[str, Any]:
    key = pick(draw, seed.keys("meta"))
    paths, hot = _paths(seed, key)
    path = pick(draw, hot if draw(st.booleans()) else paths)
    kind = pick(draw, ["json_set"] * 6 + ["json_del", "json_add", "json_swap", "raw", "raw"])
    if kind == "raw":
        return raw_bytes_op(draw, key, seed.sizes[key], meta=True)
    op: dict[str, Any] = {"op": kind, "key": key, "path": path}
    last = path[-1] if path else None
    if kind == "json_set" and path and draw(st.integers(0, 2)) == 0:
        op["text"] = plausible(draw, _value_at(seed.docs[key], path))
    elif kind == "json_set" and last in ("data_type", "dtype") and draw(st.booleans()):
        op["text"] = draw(dtype_texts())
    elif kind == "json_set" and last in ("shape", "chunks", "chunk_shape", "chunks_per_shard") and draw(st.booleans()):
        op["text"] = draw(dims_texts())
    elif kind in ("json_set", "json_add"):
        op["text"] = draw(value_texts())
    if kind == "json_add":
        op["name"] = pick(draw, sorted(HOT) + ["must_understand", "extra", "dimension_names", ""])
        op["at"] = draw(st.integers(0, 8))
    if draw(st.integers(0, 9)) == 0:
        op["ascii"] = True
    return op


def _value_at(doc: Any, path: list[Any]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def plausible(draw: st.DrawFn, value: Any) -> str:
    """A value shaped like the original (same type, same length), so the edit gets past the first
    type check and reaches the code that trusts it: a shape of the right rank but 2**62 long, a
    codec list with one codec dropped, a dtype of another size."""
    if isinstance(value, bool) or value is None:
        return draw(value_texts())
    if isinstance(value, int):
        return str(pick(draw, INTS + [value + 1, value - 1, value * 2, value << 20, -value]))
    if isinstance(value, float):
        return pick(draw, FLOAT_TOKENS)
    if isinstance(value, str):
        return _dumps(pick(draw, [value + "x", value.upper(), value[:-1], value * 2, value + "/..", ""] + DTYPES + WORDS))
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return _dumps([pick(draw, [v, v, v + 1, 0, 1, -1, 2**31, 2**32, 2**53, 2**62, 2**63 - 1, 2**64, v << 20, v << 40])
                       for v in value])
    if isinstance(value, list) and value:
        options = [value[::-1], value + value[-1:], value[1:], value[:-1], value[:1] * 3, [value[0], value]]
        return _dumps(pick(draw, options))
    if isinstance(value, dict) and value:
        drop = pick(draw, sorted(value))
        return _dumps(pick(draw, [{k: v for k, v in value.items() if k != drop}, {**value, drop: [value[drop]]},
                                  {**value, drop: {"name": value[drop]}}, {**value, "configuration": value}]))
    return draw(value_texts())


@functools.cache
def _hex(max_size: int = 64) -> st.SearchStrategy[str]:
    return st.binary(max_size=max_size).map(bytes.hex)


@functools.cache
def payloads(compressor: str | None) -> st.SearchStrategy[dict[str, Any]]:
    """Bombs (bounded at 4 GiB declared), crafted headers, or random bytes."""
    # the large ones cost the library seconds to refuse when it cannot know the decoded size
    sizes = st.sampled_from([1 << 20] * 3 + [16 << 20] * 2 + [(1 << 30) + 1, 3 << 30, (4 << 30) - 1])
    small = st.sampled_from([1 << 20, 16 << 20, 64 << 20])  # compressed for real: see payloads
    cheap = ["gzip", "zlib", "zstd", "zstd_nosize"]
    codec = st.sampled_from(cheap + ["bz2", "lzma", "lz4", "blosc"] if compressor is None else [compressor] * 6 + cheap)
    return st.one_of(
        codec.flatmap(lambda c: st.builds(lambda n: {"kind": "bomb", "codec": c, "size": n},
                                          sizes if c in cheap else small if c in ("bz2", "lzma")
                                          else st.sampled_from([1 << 20, 64 << 20, (1 << 30) + 1]))),
        st.builds(lambda f, v, h: {"kind": "header", "fmt": f, "value": v, "hex": h},
                  st.sampled_from(["blosc", "blosc_memcpy", "lz4", "vlen", "vlen_item"]), st.sampled_from(INTS), _hex(32)),
        st.builds(lambda h: {"kind": "hex", "hex": h}, _hex(300)))


def raw_bytes_op(draw: st.DrawFn, key: str, size: int, meta: bool = False, crc: bool = False) -> dict[str, Any]:
    kinds = ["truncate", "flip", "flip", "insert", "append", "zero", "replace"] + (["encode"] if meta else ["bomb"] * 2)
    kind = pick(draw, kinds)
    op: dict[str, Any] = {"op": kind, "key": key}
    if kind == "truncate":
        op["n"] = draw(st.integers(0, max(size - 1, 0)))
    elif kind == "flip":
        op["bits"] = [draw(st.integers(0, max(size * 8 - 1, 0))) for _ in range(draw(st.integers(1, 4)))]
    elif kind == "insert":
        op["pos"] = draw(st.integers(0, size))
        op["hex"] = pick(draw, ["ff", "fffe", "c328", "80", "00", "efbbbf", "eda080"]) if meta else draw(_hex(16))
    elif kind == "append":
        op["hex"] = draw(_hex(16))
        op["zeros"] = pick(draw, [0, 0, 1, 4096, 1 << 20])
    elif kind == "encode":
        op["how"] = pick(draw, ["utf16", "bom", "latin1"])
    elif kind in ("replace", "bomb"):
        op["op"] = "replace"
        op["payload"] = draw(payloads(None)) if kind == "bomb" else {"kind": "hex", "hex": draw(_hex(300))}
    if crc and kind != "truncate" and draw(st.booleans()):
        op["fix_crc"] = True
    return op


def chunk_op(draw: st.DrawFn, seed: Seed, role: str) -> dict[str, Any]:
    keys = seed.keys(role)
    key = pick(draw, keys)
    info = seed.arrays[seed.owner[key]]
    choice = draw(st.integers(0, 9))
    if choice == 0 and len(keys) > 1:
        other = pick(draw, [k for k in keys if k != key])
        return {"op": pick(draw, ["swap", "copy"]), "key": key, "other": other}
    if choice == 1:
        return {"op": "delete", "key": key}
    if choice >= 6 and role == "shard":
        return index_op(draw, key, info.crc_index, info.crc_chunks, _compressor(seed, info.path))
    if choice >= 4 and role == "chunk":
        op = {"op": "replace", "key": key, "payload": draw(payloads(_compressor(seed, info.path)))}
        if info.crc_chunks and draw(st.booleans()):
            op["fix_crc"] = True  # the payload gets a valid crc32c appended
        return op
    return raw_bytes_op(draw, key, seed.sizes[key], crc=info.crc_chunks or info.crc_index)


@functools.cache
def _compressor(seed: Seed, path: str) -> str | None:
    rel = path.strip("/")
    text = json.dumps([d for k, d in seed.docs.items() if k.startswith(rel + "/") or k == f"meta/root/{rel}.array.json"])
    return next((c for c in ("zstd", "gzip", "zlib", "bz2", "lzma", "lz4", "blosc")
                 if f'"{c}"' in text or f"codec/{c}" in text), None)


@functools.cache
def _index_values() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(INTS + [2**64 - 2, 2**63 + 5, 10**15, 2**53 - 1]), st.integers(0, 4096),
                     st.integers(0, 2**64 - 1))


def index_op(draw: st.DrawFn, key: str, crc_index: bool, crc_chunks: bool, compressor: str | None) -> dict[str, Any]:
    kind = pick(draw, ["index_set"] * 4 + ["index_byteswap", "index_all", "inner_replace", "inner_replace"])
    op: dict[str, Any] = {"op": kind, "key": key}
    if kind == "index_set":
        op.update(entry=draw(st.integers(0, 15)), field=draw(st.integers(0, 1)), value=draw(_index_values()))
    elif kind == "index_all":
        op["value"] = draw(_index_values())
    elif kind == "inner_replace":
        op.update(entry=draw(st.integers(0, 15)), payload=draw(payloads(compressor)))
    if (crc_index or kind == "inner_replace" and crc_chunks) and draw(st.integers(0, 3)) > 0:
        op["fix_crc"] = True
    return op


FS_KINDS = ["dev_zero", "dev_urandom", "fifo", "dir", "loop", "dangling", "sparse", "outside", "dir_loop"]


def fs_op(draw: st.DrawFn, seed: Seed) -> dict[str, Any]:
    return {"op": "fs", "key": pick(draw, sorted(seed.roles)), "kind": pick(draw, FS_KINDS)}


ZIP_VALUES = {"flags": [0, 1, 8, 9, 0x40, 0x41, 0x800, 0xFFFF], "method": [0, 8, 1, 6, 9, 12, 14, 93, 95, 98, 99, 0xFFFF],
              "crc": [0, 1, 2**32 - 1], "compress_size": INTS, "file_size": INTS, "name_length": [0, 1, 3, 0xFFFF],
              "header_offset": INTS}


def zip_ops(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Pack the mutated store into an archive, then maybe edit the archive's headers or bytes."""
    ops: list[dict[str, Any]] = [{"op": "zip", "method": pick(draw, ["stored", "deflated"]), "top": draw(st.booleans())}]
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.integers(0, 3)) == 0:
            ops.append({"op": "zip_flip", "bits": [draw(st.integers(0, 1 << 16)) for _ in range(draw(st.integers(1, 3)))]})
        else:
            field = pick(draw, sorted(ZIP_VALUES))
            ops.append({"op": "zip_set", "entry": draw(st.integers(0, 40)), "field": field,
                        "value": pick(draw, ZIP_VALUES[field]), "local": draw(st.booleans())})
    return ops


def op_for(draw: st.DrawFn, seed: Seed) -> dict[str, Any]:
    roles = [r for r in ("meta", "chunk", "shard") if seed.keys(r)]
    weights = {"meta": 9, "chunk": 5, "shard": 6}
    choice = draw(st.integers(0, sum(weights[r] for r in roles)))  # the last value: a file system trick
    for role in roles:
        if choice < weights[role]:
            return meta_op(draw, seed) if role == "meta" else chunk_op(draw, seed, role)
        choice -= weights[role]
    return fs_op(draw, seed)


def cases(seeds: dict[str, Seed]) -> st.SearchStrategy[dict[str, Any]]:
    """A case: one seed and one to three operations on it."""
    names = sorted(seeds)

    @st.composite
    def case(draw: st.DrawFn) -> dict[str, Any]:
        seed = seeds[pick(draw, names)]
        count = pick(draw, [1, 1, 1, 1, 2, 2, 3])
        ops = [op_for(draw, seed) for _ in range(count)]
        if draw(st.integers(0, 7)) == 0:
            ops += zip_ops(draw)
        return {"seed": seed.name, "ops": ops}
    return case()
