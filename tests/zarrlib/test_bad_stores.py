"""Broken stores must fail with the right ``zl.ZarrError`` subclass and a message that names
the offending store key or node path.  Every store starts as a good one written by
zarr-python (format 3 or 2) and is then broken on disk.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import zipfile
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from _bad_helpers import (
    assert_same_values,
    crc32c_bytes,
    edit_json,
    names,
    read_everything,
    read_shard_index,
    snapshot,
    touch,
    write_json,
    write_shard_index,
)
from _good_stores import DATA, DATA8, _templates, chunk_key, meta_key, store, v2, v3  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(60)


def random_bytes(n: int, seed: int = 1234) -> bytes:
    return np.random.default_rng(seed).bytes(n)


# ----------------------------------------------------------------------------------------------
# Sanity: the good stores read correctly (so a failure below is about the breakage)


def test_good_stores_read(store):
    fmt, root = store
    g = zl.open(root)
    assert g.kind == "group" and g.zarr_format == fmt
    for name in ("arr", "gz", "bl", "raw"):
        assert_same_values(g[name][...], DATA)
    assert_same_values(g["sub/inner"][...], np.array([1.5, 2.5, 3.5]))
    if fmt == 3:
        assert_same_values(g["crc"][...], DATA)
        assert_same_values(g["sh"][...], DATA8)


# ----------------------------------------------------------------------------------------------
# Malformed JSON


@pytest.mark.parametrize("fmt,key,node", [
    (3, "arr/zarr.json", "arr"),
    (3, "sub/zarr.json", "sub"),
    (3, "zarr.json", None),
    (2, "arr/.zarray", "arr"),
    (2, "sub/.zgroup", "sub"),
    (2, ".zgroup", None),
    (2, "arr/.zattrs", "arr"),
], ids=["v3-array", "v3-group", "v3-root", "v2-zarray", "v2-zgroup", "v2-root-zgroup",
        "v2-zattrs"])
def test_truncated_json(v3, v2, fmt, key, node):
    root = v3 if fmt == 3 else v2
    p = root / key
    text = p.read_bytes()
    p.write_bytes(text[: len(text) // 2])
    with pytest.raises(zl.MetadataError, match=names(key)):
        touch(root, node)


@pytest.mark.parametrize("content", ["[1, 2, 3]", '"hello"', "null", "42", "true", ""],
                         ids=["list", "string", "null", "number", "bool", "empty"])
@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_metadata_not_an_object(v3, v2, fmt, content):
    root = v3 if fmt == 3 else v2
    key = meta_key(fmt, "arr")
    (root / key).write_text(content)
    with pytest.raises(zl.MetadataError, match=names(key)):
        touch(root, "arr")


def test_binary_garbage_metadata(v3):
    (v3 / "arr" / "zarr.json").write_bytes(b"\xff\xfe\x00garbage\x80\x81")
    with pytest.raises(zl.MetadataError, match=names("arr/zarr.json")):
        touch(v3, "arr")


# ----------------------------------------------------------------------------------------------
# Unknown fields and extensions (v3)


@pytest.mark.parametrize("value", [1, "x", {"name": "frob"}, {"must_understand": True}],
                         ids=["int", "str", "object", "must-understand-true"])
@pytest.mark.parametrize("node", ["arr", "sub"])
def test_unknown_top_level_field_fails(v3, node, value):
    edit_json(v3 / node / "zarr.json", lambda d: d.__setitem__("frobnicate_field", value))
    with pytest.raises(zl.MetadataError, match=names("frobnicate_field", f"{node}")):
        touch(v3, node)


@pytest.mark.parametrize("node", ["arr", "sub", ""], ids=["array", "group", "root"])
def test_unknown_top_level_field_must_understand_false_opens(v3, node):
    path = v3 / node / "zarr.json" if node else v3 / "zarr.json"
    edit_json(path, lambda d: d.__setitem__("frobnicate_field",
                                            {"must_understand": False, "anything": [1, 2]}))
    g = zl.open(v3)
    n = g[node] if node else g
    if node == "arr":
        assert_same_values(n[...], DATA)
    else:
        assert n.kind == "group"
        n.members()


def test_unknown_codec(v3):
    def change(d):
        d["codecs"][1] = {"name": "frobnicate_codec", "configuration": {"level": 3}}
    edit_json(v3 / "arr" / "zarr.json", change)
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_codec", "arr/zarr.json")):
        touch(v3, "arr")


def test_unknown_codec_inside_shard(v3):
    def change(d):
        d["codecs"][0]["configuration"]["codecs"].append({"name": "frobnicate_codec"})
    edit_json(v3 / "sh" / "zarr.json", change)
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_codec", "sh/zarr.json")):
        touch(v3, "sh")


@pytest.mark.parametrize("where", ["compressor", "filters"])
def test_unknown_codec_v2(v2, where):
    def change(d):
        if where == "compressor":
            d["compressor"] = {"id": "frobnicate_codec", "level": 1}
        else:
            d["filters"] = [{"id": "frobnicate_codec"}]
    edit_json(v2 / "arr" / ".zarray", change)
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_codec", "arr/.zarray")):
        touch(v2, "arr")


def test_codec_missing_array_to_bytes(v3):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("codecs", d["codecs"][1:]))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v3, "arr")


@pytest.mark.parametrize("dtype", ["frobnicate_dtype", {"name": "frobnicate_dtype"},
                                   {"name": "frobnicate_dtype", "must_understand": False}],
                         ids=["short", "object", "object-must-understand-false"])
def test_unknown_data_type(v3, dtype):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("data_type", dtype))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_dtype", "arr")):
        touch(v3, "arr")


@pytest.mark.parametrize("dtype", ["|Z8", "<i3", "frob", 42], ids=["Z8", "i3", "frob", "int"])
def test_bad_data_type_v2(v2, dtype):
    edit_json(v2 / "arr" / ".zarray", lambda d: d.__setitem__("dtype", dtype))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v2, "arr")


@pytest.mark.parametrize("grid", [
    {"name": "frobnicate_grid", "configuration": {"chunk_shape": [5, 5]}},
    "frobnicate_grid",
    {"name": "frobnicate_grid", "must_understand": False, "configuration": {"chunk_shape": [5, 5]}},
], ids=["object", "short", "must-understand-false"])
def test_unknown_chunk_grid(v3, grid):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("chunk_grid", grid))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_grid", "arr")):
        touch(v3, "arr")


@pytest.mark.parametrize("cke", [
    {"name": "frobnicate_cke", "configuration": {"separator": "/"}},
    "frobnicate_cke",
], ids=["object", "short"])
def test_unknown_chunk_key_encoding(v3, cke):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("chunk_key_encoding", cke))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_cke", "arr")):
        touch(v3, "arr")


@pytest.mark.parametrize("sep", ["|", "", 7], ids=["pipe", "empty", "int"])
def test_bad_chunk_key_separator(v3, sep):
    edit_json(v3 / "arr" / "zarr.json",
              lambda d: d.__setitem__("chunk_key_encoding",
                                      {"name": "default", "configuration": {"separator": sep}}))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v3, "arr")


def test_unknown_storage_transformer(v3):
    edit_json(v3 / "arr" / "zarr.json",
              lambda d: d.__setitem__("storage_transformers", [{"name": "frobnicate_st"}]))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("frobnicate_st", "arr")):
        touch(v3, "arr")


# ----------------------------------------------------------------------------------------------
# Bad shapes


BAD_SHAPES = [
    ("shape", [-1, 10], "negative"),
    ("shape", [2.5, 10], "float"),
    ("shape", ["10", 10], "string-entry"),
    ("shape", [10 ** 30, 10], "absurd"),
    ("shape", [True, 10], "bool"),
    ("shape", "10", "not-a-list"),
    ("shape", None, "null"),
    ("chunks", [5], "chunk-rank"),
    ("chunks", [5, 5, 5], "chunk-rank-3"),
    ("chunks", [0, 5], "chunk-zero"),
    ("chunks", [-5, 5], "chunk-negative"),
    ("chunks", [5.5, 5], "chunk-float"),
    ("chunks", [10 ** 30, 5], "chunk-absurd"),
]


@pytest.mark.parametrize("what,value", [(w, v) for w, v, _ in BAD_SHAPES],
                         ids=[i for _, _, i in BAD_SHAPES])
@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_bad_shapes(v3, v2, fmt, what, value):
    root = v3 if fmt == 3 else v2

    def change(d):
        if what == "shape":
            d["shape"] = value
        elif fmt == 3:
            d["chunk_grid"]["configuration"]["chunk_shape"] = value
        else:
            d["chunks"] = value
    edit_json(root / meta_key(fmt, "arr"), change)
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(root, "arr")


def test_dimension_names_wrong_length(v3):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("dimension_names", ["y"]))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v3, "arr")


# ----------------------------------------------------------------------------------------------
# Wrong format / node type


@pytest.mark.parametrize("fmt,key,node,value", [
    (3, "arr/zarr.json", "arr", 2),
    (3, "arr/zarr.json", "arr", 4),
    (3, "arr/zarr.json", "arr", "3"),
    (3, "arr/zarr.json", "arr", None),
    (3, "sub/zarr.json", "sub", 4),
    (3, "zarr.json", None, 99),
    (2, "arr/.zarray", "arr", 3),
    (2, "arr/.zarray", "arr", 1),
    (2, "arr/.zarray", "arr", "2"),
    (2, "sub/.zgroup", "sub", 3),
], ids=["v3-2", "v3-4", "v3-str", "v3-null", "v3-group-4", "v3-root-99", "v2-3", "v2-1",
        "v2-str", "v2-group-3"])
def test_wrong_zarr_format(v3, v2, fmt, key, node, value):
    root = v3 if fmt == 3 else v2
    edit_json(root / key, lambda d: d.__setitem__("zarr_format", value))
    with pytest.raises(zl.MetadataError, match=names(key)):
        touch(root, node)


@pytest.mark.parametrize("value", ["frobnicate", None, 3, "ARRAY"])
def test_bad_node_type(v3, value):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("node_type", value))
    with pytest.raises(zl.MetadataError, match=names("arr/zarr.json")):
        touch(v3, "arr")


@pytest.mark.parametrize("field", ["node_type", "zarr_format", "shape", "data_type",
                                   "chunk_grid", "codecs", "fill_value", "chunk_key_encoding"])
def test_missing_required_field_v3(v3, field):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.pop(field))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v3, "arr")


@pytest.mark.parametrize("field", ["shape", "chunks", "dtype"])
def test_missing_required_field_v2(v2, field):
    edit_json(v2 / "arr" / ".zarray", lambda d: d.pop(field))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v2, "arr")


@pytest.mark.parametrize("fill", ["banana", [1, 2], {"a": 1}, 2 ** 40, 1.5],
                         ids=["string", "list", "object", "too-big", "float-for-int"])
def test_bad_fill_value_v3(v3, fill):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("fill_value", fill))
    with pytest.raises(zl.MetadataError, match=names("arr")):
        touch(v3, "arr")


# ----------------------------------------------------------------------------------------------
# Corrupt, truncated, mis-sized chunks


@pytest.mark.parametrize("node", ["arr", "gz", "bl"], ids=["zstd", "gzip", "blosc"])
def test_corrupt_chunk(store, node):
    fmt, root = store
    key = chunk_key(fmt, node, 0, 1)
    (root / key).write_bytes(random_bytes(64))
    a = zl.open(root)[node]
    # other chunks still read
    assert_same_values(a[0:5, 0:5], DATA[0:5, 0:5])
    assert_same_values(a[5:, :], DATA[5:, :])
    with pytest.raises(zl.CodecError, match=names(key)):
        a[...]
    with pytest.raises(zl.CodecError, match=names(key)):
        a[0, 7]


@pytest.mark.parametrize("node", ["arr", "gz", "bl"], ids=["zstd", "gzip", "blosc"])
def test_truncated_chunk(store, node):
    fmt, root = store
    key = chunk_key(fmt, node, 1, 0)
    blob = (root / key).read_bytes()
    (root / key).write_bytes(blob[: len(blob) // 2])
    a = zl.open(root)[node]
    with pytest.raises(zl.CodecError, match=names(key)):
        a[...]


@pytest.mark.parametrize("node", ["arr", "gz", "bl", "raw"],
                         ids=["zstd", "gzip", "blosc", "raw"])
def test_empty_chunk_file(store, node):
    fmt, root = store
    key = chunk_key(fmt, node, 1, 1)
    (root / key).write_bytes(b"")
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)[node][...]


@pytest.mark.parametrize("nbytes", [3, 96, 104, 400], ids=["3", "short", "long", "4x"])
def test_raw_chunk_wrong_size(store, nbytes):
    fmt, root = store
    key = chunk_key(fmt, "raw", 0, 0)
    assert (root / key).stat().st_size == 100
    (root / key).write_bytes(bytes(range(256))[:nbytes] if nbytes <= 256 else b"\x01" * nbytes)
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)["raw"][...]


@pytest.mark.parametrize("n_items", [24, 26, 1], ids=["short", "long", "one"])
def test_compressed_chunk_decodes_to_wrong_size(store, n_items):
    fmt, root = store
    key = chunk_key(fmt, "arr", 0, 0)
    payload = np.arange(n_items, dtype="<i4").tobytes()
    (root / key).write_bytes(numcodecs.Zstd().encode(payload))
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)["arr"][...]


def test_chunk_is_a_directory(v3):
    key = chunk_key(3, "arr", 0, 0)
    (v3 / key).unlink()
    (v3 / key).mkdir()
    # a directory where a chunk should be is not a chunk: either the fill value or an error,
    # but never a crash of a foreign exception type
    try:
        out = zl.open(v3)["arr"][...]
    except zl.ZarrError as e:
        assert "arr" in str(e)
    else:
        expected = DATA.copy()
        expected[0:5, 0:5] = 0
        assert_same_values(out, expected)


# ----------------------------------------------------------------------------------------------
# crc32c


@pytest.mark.parametrize("where", ["checksum", "data"])
def test_bad_crc32c(v3, where):
    key = chunk_key(3, "crc", 1, 1)
    blob = bytearray((v3 / key).read_bytes())
    assert len(blob) == 104
    pos = len(blob) - 2 if where == "checksum" else 10
    blob[pos] ^= 0xFF
    (v3 / key).write_bytes(bytes(blob))
    a = zl.open(v3)["crc"]
    assert_same_values(a[:5, :5], DATA[:5, :5])
    with pytest.raises(zl.ChecksumError, match=names(key)):
        a[...]


def test_crc32c_chunk_shorter_than_checksum(v3):
    key = chunk_key(3, "crc", 0, 0)
    (v3 / key).write_bytes(b"\x01\x02")
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(v3)["crc"][...]


def test_crc32c_valid_checksum_but_wrong_size(v3):
    key = chunk_key(3, "crc", 0, 0)
    payload = np.arange(20, dtype="<i4").tobytes()
    (v3 / key).write_bytes(payload + crc32c_bytes(payload))
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(v3)["crc"][...]


# ----------------------------------------------------------------------------------------------
# Shards: 8x8 uint16, shard 4x4, inner 2x2 -> 4 inner chunks of 8 bytes, index 4*16 + 4 bytes


SHARD_KEY = "sh/c/0/1"
N_INNER = 4


def _shard(v3: Path) -> tuple[Path, bytes]:
    p = v3 / SHARD_KEY
    return p, p.read_bytes()


def test_shard_layout_is_as_expected(v3):
    p, blob = _shard(v3)
    assert len(blob) == N_INNER * 8 + N_INNER * 16 + 4
    index = read_shard_index(blob, N_INNER)
    assert (index[:, 1] == 8).all()


@pytest.mark.parametrize("how", ["offset-past-end", "length-past-end", "huge-offset",
                                 "offset-into-index-overflow"])
def test_shard_index_points_past_end(v3, how):
    p, blob = _shard(v3)
    index = read_shard_index(blob, N_INNER)
    if how == "offset-past-end":
        index[1] = (len(blob) + 100, 8)
    elif how == "length-past-end":
        index[1] = (index[1, 0], len(blob) * 10)
    elif how == "huge-offset":
        index[1] = (2 ** 63, 8)
    else:
        index[1] = (2 ** 64 - 4, 8)  # offset + length overflows uint64
    p.write_bytes(write_shard_index(blob, index))
    a = zl.open(v3)["sh"]
    with pytest.raises(zl.CodecError, match=names(SHARD_KEY)):
        a[...]


def test_shard_index_bad_checksum(v3):
    p, blob = _shard(v3)
    blob = bytearray(blob)
    blob[-1] ^= 0xFF
    p.write_bytes(bytes(blob))
    with pytest.raises(zl.ChecksumError, match=names(SHARD_KEY)):
        zl.open(v3)["sh"][...]


def test_shard_index_entry_empty_marker_reads_fill(v3):
    """An index entry of (2**64-1, 2**64-1) marks a missing inner chunk: fill value, no error."""
    p, blob = _shard(v3)
    index = read_shard_index(blob, N_INNER)
    index[3] = (2 ** 64 - 1, 2 ** 64 - 1)
    p.write_bytes(write_shard_index(blob, index))
    expected = DATA8.copy()
    expected[2:4, 6:8] = 0
    assert_same_values(zl.open(v3)["sh"][...], expected)


@pytest.mark.parametrize("keep", [0, 10, 40], ids=["empty", "10-bytes", "40-bytes"])
def test_shard_truncated_index_unreadable(v3, keep):
    p, blob = _shard(v3)
    p.write_bytes(blob[:keep])
    with pytest.raises(zl.CodecError, match=names(SHARD_KEY)):
        zl.open(v3)["sh"][...]


def test_shard_truncated_at_the_end(v3):
    """Losing the last bytes leaves an 'index' that is really chunk data: must not decode."""
    p, blob = _shard(v3)
    p.write_bytes(blob[:-5])
    with pytest.raises(zl.CodecError, match=names(SHARD_KEY)):
        zl.open(v3)["sh"][...]


def test_shard_inner_chunk_wrong_size(v3):
    p, blob = _shard(v3)
    index = read_shard_index(blob, N_INNER)
    index[0] = (index[0, 0], 6)  # inner chunk is 2x2 uint16 = 8 bytes
    p.write_bytes(write_shard_index(blob, index))
    with pytest.raises(zl.CodecError, match=names(SHARD_KEY)):
        zl.open(v3)["sh"][...]


# ----------------------------------------------------------------------------------------------
# pickle: never decoded


class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _evil_payload(marker: Path) -> bytes:
    payload = pickle.dumps(np.array([_Evil(str(marker)), _Evil(str(marker))], dtype=object))
    # the payload really is dangerous: unpickling it would create the marker file
    probe = marker.with_name(marker.name + ".probe")
    f = pickle.loads(pickle.dumps(_Evil(str(probe))))
    f.close()
    assert probe.exists()
    probe.unlink()
    return payload


@pytest.mark.parametrize("layout", ["filter", "compressor", "filter+zlib"])
def test_pickle_codec_is_refused_v2(tmp_path, layout):
    root = tmp_path / "evil.zarr"
    marker = tmp_path / "PWNED"
    payload = _evil_payload(marker)
    meta = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "|O", "fill_value": None,
            "order": "C", "filters": [{"id": "pickle", "protocol": 5}], "compressor": None}
    if layout == "compressor":
        meta["filters"] = None
        meta["compressor"] = {"id": "pickle", "protocol": 5}
    elif layout == "filter+zlib":
        meta["compressor"] = {"id": "zlib", "level": 1}
        payload = numcodecs.Zlib(1).encode(payload)
    write_json(root / ".zgroup", {"zarr_format": 2})
    write_json(root / "obj" / ".zarray", meta)
    for k in ("0", "1"):
        (root / "obj" / k).write_bytes(payload)
    with pytest.raises(zl.ZarrError, match=names("pickle", "obj")):
        touch(root, "obj")
    with pytest.raises(zl.ZarrError, match=names("pickle")):
        touch(root / "obj")
    # walking the hierarchy must not decode it either
    try:
        read_everything(zl.open(root))
    except zl.ZarrError:
        pass
    assert not marker.exists()


def test_pickle_codec_is_refused_v3(tmp_path):
    root = tmp_path / "evil3.zarr"
    marker = tmp_path / "PWNED3"
    payload = _evil_payload(marker)
    write_json(root / "zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": {}})
    write_json(root / "obj" / "zarr.json", {
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "numcodecs.pickle", "configuration": {"protocol": 5}}],
    })
    (root / "obj" / "c").mkdir()
    (root / "obj" / "c" / "0").write_bytes(payload)
    with pytest.raises(zl.ZarrError, match=names("pickle", "obj")):
        touch(root, "obj")
    assert not marker.exists()


# ----------------------------------------------------------------------------------------------
# Missing stores and nodes


@pytest.mark.parametrize("form", ["path", "str", "file-url", "zip"])
def test_missing_root(tmp_path, form):
    target = tmp_path / ("nope_store.zip" if form == "zip" else "nope_store.zarr")
    loc = {"path": target, "str": str(target), "file-url": "file://" + str(target),
           "zip": str(target)}[form]
    with pytest.raises(zl.StoreNotFoundError, match=names("nope_store")):
        zl.open(loc)


@pytest.mark.parametrize("content", ["empty", "stray-files", "chunk-like"])
def test_directory_without_metadata(tmp_path, content):
    d = tmp_path / "plain_folder"
    d.mkdir()
    if content == "stray-files":
        (d / "README.txt").write_text("hello")
        (d / "data.bin").write_bytes(b"\x00" * 10)
    elif content == "chunk-like":
        (d / "c").mkdir()
        (d / "c" / "0").write_bytes(b"\x00" * 8)
        (d / "0.0").write_bytes(b"\x00" * 8)
    with pytest.raises(zl.StoreNotFoundError, match=names("plain_folder")):
        zl.open(d)


def test_zip_without_metadata(tmp_path):
    z = tmp_path / "plain_archive.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(zl.StoreNotFoundError, match=names("plain_archive")):
        zl.open(z)


def test_not_a_zip(tmp_path):
    z = tmp_path / "fake_archive.zip"
    z.write_bytes(b"this is not a zip archive at all")
    with pytest.raises(zl.StoreError, match=names("fake_archive")):
        zl.open(z)


@pytest.mark.parametrize("child,named", [("nope", "nope"), ("sub/nope", "sub/nope"),
                                         ("nope/deeper", "nope"), ("arr/x", "arr"),
                                         ("sub/inner/x", "inner")],
                         ids=["top", "nested", "deeper", "below-array", "below-nested-array"])
def test_missing_child(store, child, named):
    _, root = store
    g = zl.open(root)
    with pytest.raises(zl.NodeNotFoundError, match=names(named)) as info:
        g[child]
    assert isinstance(info.value, KeyError)
    with pytest.raises(KeyError):
        g[child]


def test_missing_child_plain_directory_v3(v3):
    (v3 / "sub" / "just_a_folder").mkdir()
    (v3 / "sub" / "just_a_folder" / "notes.txt").write_text("x")
    g = zl.open(v3)
    assert [m.name for m in g["sub"].members()] == ["inner"]
    with pytest.raises(zl.NodeNotFoundError, match=names("just_a_folder")):
        g["sub/just_a_folder"]


# ----------------------------------------------------------------------------------------------
# Indexing errors


BAD_INDEXES = [
    ((10, 0), "row-10"),
    ((0, 10), "col-10"),
    ((-11, 0), "row--11"),
    ((0, -11), "col--11"),
    ((0, 0, 0), "too-many"),
    ((slice(None, None, 0),), "step-0"),
    ((slice(None), slice(0, 5, 0)), "step-0-col"),
    ((slice(None, None, -1),), "step--1"),
    ((slice(8, 2, -2), 0), "step--2"),
    ((Ellipsis, Ellipsis), "two-ellipsis"),
    ((1.5, 0), "float"),
    (("a",), "str"),
    ((None, 0), "newaxis"),
    ((10 ** 30, 0), "huge-int"),
]


@pytest.mark.parametrize("index", [i for i, _ in BAD_INDEXES], ids=[n for _, n in BAD_INDEXES])
@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_bad_index(v3, v2, fmt, index):
    root = v3 if fmt == 3 else v2
    a = zl.open(root)["arr"]
    with pytest.raises(zl.IndexingError, match=names("arr")) as info:
        a[index]
    assert isinstance(info.value, IndexError)


def test_bad_index_scalar_forms(v3):
    a = zl.open(v3)["sub/inner"]
    for index in (3, -4, slice(None, None, 0), slice(None, None, -1)):
        with pytest.raises(zl.IndexingError, match=names("inner")):
            a[index]
    with pytest.raises(IndexError):
        a[3]


# ----------------------------------------------------------------------------------------------
# Read-only: opening and reading everything never touches the store


def _zip_of(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        for dirpath, _, files in os.walk(folder):
            for f in files:
                p = Path(dirpath) / f
                zf.write(p, p.relative_to(folder).as_posix())
    return target


@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_library_never_writes(v3, v2, tmp_path, fmt):
    root = v3 if fmt == 3 else v2
    archive = _zip_of(root, tmp_path / "copy.zip")
    before = snapshot(tmp_path)
    # good data, every form of location
    for loc in (root, str(root), "file://" + str(root), archive, str(archive)):
        out = read_everything(zl.open(loc))
        assert_same_values(out["/arr"], DATA)
    # broken data too: errors must not leave anything behind
    for bad in ("arr", "gz"):
        try:
            touch(root / bad, None)
        except zl.ZarrError:
            pass
    for missing in ("nothing_here", "nothing_here.zip"):
        with pytest.raises(zl.StoreNotFoundError):
            zl.open(tmp_path / missing)
    after = snapshot(tmp_path)
    assert after == before
    assert not (tmp_path / "nothing_here").exists()


def test_library_never_writes_on_errors(v3, tmp_path):
    (v3 / "arr" / "c" / "0" / "0").write_bytes(random_bytes(50))
    edit_json(v3 / "gz" / "zarr.json", lambda d: d.__setitem__("frobnicate_field", 1))
    before = snapshot(tmp_path)
    g = zl.open(v3)
    for name in ("arr", "gz", "nope"):
        try:
            g[name][...]
        except zl.ZarrError:
            pass
    assert snapshot(tmp_path) == before


def test_errors_are_zarr_errors_with_json_key(v3):
    """A JSON error's message names the key and the JSON problem, not just 'Expecting value'."""
    (v3 / "arr" / "zarr.json").write_text('{"zarr_format": 3,')
    with pytest.raises(zl.MetadataError) as info:
        touch(v3, "arr")
    msg = str(info.value)
    assert "arr/zarr.json" in msg
    assert not isinstance(info.value, json.JSONDecodeError)


# ----------------------------------------------------------------------------------------------
# Hostile data: sizes declared by headers or metadata must not be trusted blindly


def _zstd_with_declared_size(payload: bytes, declared: int) -> bytes:
    """A real zstd frame whose header claims ``declared`` decompressed bytes (8-byte FCS)."""
    frame = numcodecs.Zstd(level=1).encode(payload)
    assert int.from_bytes(frame[:4], "little") == 0xFD2FB528
    fhd = frame[4]
    assert fhd == 0x20  # single segment, 1-byte content size, no checksum, no dict id
    return frame[:4] + bytes([0xE0]) + declared.to_bytes(8, "little") + frame[6:]


@pytest.mark.parametrize("declared", [2 ** 40, 2 ** 31, 99])
def test_zstd_frame_lies_about_its_size(store, declared):
    fmt, root = store
    key = chunk_key(fmt, "arr", 0, 0)
    (root / key).write_bytes(_zstd_with_declared_size(DATA[:5, :5].tobytes(), declared))
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)["arr"][...]


def test_blosc_header_lies_about_its_size(store):
    fmt, root = store
    key = chunk_key(fmt, "bl", 0, 0)
    blob = bytearray((root / key).read_bytes())
    blob[4:8] = (2 ** 31 - 1).to_bytes(4, "little")  # nbytes (decompressed size)
    (root / key).write_bytes(bytes(blob))
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)["bl"][...]


@pytest.mark.parametrize("node", ["gz", "arr"], ids=["gzip", "zstd"])
def test_decompression_bomb_is_stopped_early(store, node):
    """A small chunk that inflates to 64 MiB (the chunk holds 100 bytes): refused without
    inflating it all."""
    import tracemalloc

    fmt, root = store
    key = chunk_key(fmt, node, 1, 1)
    zeros = bytes(64 * 2 ** 20)
    codec = numcodecs.GZip(level=9) if node == "gz" else numcodecs.Zstd(level=3)
    (root / key).write_bytes(codec.encode(zeros))
    del zeros
    a = zl.open(root)[node]
    tracemalloc.start()
    try:
        with pytest.raises(zl.CodecError, match=names(key)):
            a[5:, 5:]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2 ** 20, f"decoding one 100-byte chunk allocated {peak / 2 ** 20:.0f} MiB"


def test_huge_chunk_shape_is_not_allocated(v3):
    """Valid metadata with 2**31 x 2**31 chunks: a read must not try to allocate a chunk."""
    edit_json(v3 / "arr" / "zarr.json", lambda d: d["chunk_grid"]["configuration"].__setitem__(
        "chunk_shape", [2 ** 31, 2 ** 31]))
    for p in (v3 / "arr" / "c").rglob("*"):
        if p.is_file() and p.relative_to(v3 / "arr" / "c").as_posix() != "0/0":
            p.unlink()
    # the old 5x5 chunk is now chunk (0, 0): far too small, so an error, never a MemoryError
    with pytest.raises(zl.ZarrError, match=names("arr")):
        zl.open(v3)["arr"][0:2, 0:2]
    (v3 / "arr" / "c" / "0" / "0").unlink()
    try:
        out = zl.open(v3)["arr"][0:2, 0:3]
    except zl.ZarrError as e:  # refusing absurd chunks outright is acceptable
        assert "arr" in str(e)
    else:
        assert_same_values(out, np.zeros((2, 3), "<i4"))


def test_huge_shape_reads_a_corner(v3):
    """2**40 x 2**40 elements (more than int64 bytes): a small corner is still readable."""
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("shape", [2 ** 40, 2 ** 40]))
    try:
        a = zl.open(v3)["arr"]
        out = a[3:7, 3:7]
    except zl.ZarrError as e:
        assert "arr" in str(e)
    else:
        assert tuple(a.shape) == (2 ** 40, 2 ** 40)
        assert_same_values(out, DATA[3:7, 3:7])
        assert_same_values(a[2 ** 40 - 1, 0:2], np.zeros(2, "<i4"))


def _v2_strings(v2: Path) -> Path:
    g = zarr.open_group(v2, mode="a", zarr_format=2)
    a = g.create_array("txt", shape=(4,), chunks=(2,), dtype=str, compressors=None)
    a[:] = np.array(["a", "bé", "", "dd"])
    return v2


@pytest.mark.parametrize("bad", ["random", "too-many-items", "too-few-items", "huge-count",
                                 "truncated", "bad-utf8"])
def test_corrupt_vlen_utf8_chunk(v2, bad):
    root = _v2_strings(v2)
    assert zl.open(root)["txt"][...].tolist() == ["a", "bé", "", "dd"]
    key = "txt/0"

    def item(b: bytes) -> bytes:
        return len(b).to_bytes(4, "little") + b

    blob = {
        "random": (2).to_bytes(4, "little") + random_bytes(36),  # garbage after a sane count
        "too-many-items": (3).to_bytes(4, "little") + item(b"a") + item(b"b") + item(b"c"),
        "too-few-items": (1).to_bytes(4, "little") + item(b"a"),
        "huge-count": (2 ** 24).to_bytes(4, "little") + item(b"a") + item(b"b"),
        "truncated": (root / key).read_bytes()[:-2],
        "bad-utf8": (2).to_bytes(4, "little") + item(b"\xff\xfe") + item(b"b"),
    }[bad]
    (root / key).write_bytes(blob)
    with pytest.raises(zl.CodecError, match=names(key)):
        zl.open(root)["txt"][...]


@pytest.mark.parametrize("breakage", ["truncated", "not-object", "wrong-array-meta"])
def test_broken_consolidated_metadata_v2(v2, breakage):
    """A broken .zmetadata is either ignored (the real documents are read) or named."""
    zarr.consolidate_metadata(str(v2), zarr_format=2)
    p = v2 / ".zmetadata"
    if breakage == "truncated":
        p.write_text(p.read_text()[:50])
    elif breakage == "not-object":
        p.write_text("[]")
    else:
        doc = json.loads(p.read_text())
        doc["metadata"]["arr/.zarray"]["dtype"] = "|Z8"
        p.write_text(json.dumps(doc))
    try:
        g = zl.open(v2)
        out = g["arr"][...]
    except zl.MetadataError as e:
        assert ".zmetadata" in str(e)
    else:
        assert_same_values(out, DATA)


def test_corrupt_zip_member(v3, tmp_path):
    """A zip whose stored chunk fails the archive's own CRC: an error naming the key."""
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        for dirpath, _, files in os.walk(v3):
            for f in files:
                p = Path(dirpath) / f
                zf.write(p, p.relative_to(v3).as_posix())
    raw = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo("raw/c/1/1")
    # local file header: 30 fixed bytes, then the name and the extra field, then the data
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    pos = info.header_offset + 30 + name_len + extra_len
    assert raw[pos:pos + 100] == (v3 / "raw" / "c" / "1" / "1").read_bytes()
    raw[pos + 10] ^= 0xFF
    archive.write_bytes(bytes(raw))
    g = zl.open(archive)
    assert_same_values(g["raw"][:5, :5], DATA[:5, :5])
    with pytest.raises(zl.ZarrError, match=names("raw/c/1/1")):
        g["raw"][...]


@pytest.mark.parametrize("child", ["../outside.zarr", "sub/../../outside.zarr", "..", "./arr/..",
                                   "sub/../arr"])
def test_member_lookup_cannot_escape_the_store(v3, tmp_path, child):
    """Node names never contain '..': lookups must not reach outside the opened store."""
    outside = tmp_path / "outside.zarr"
    g = zarr.open_group(outside, mode="w", zarr_format=3)
    g.attrs["secret"] = True
    g.create_array("arr", shape=(2,), chunks=(2,), dtype="u1")
    root = zl.open(v3 / "sub")
    with pytest.raises(zl.ZarrError) as info:
        node = root[child]
        assert "secret" not in node.attrs, "escaped the store"
    assert ".." in str(info.value) or "arr" in str(info.value) or "outside" in str(info.value)
