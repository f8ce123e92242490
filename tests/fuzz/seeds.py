"""Seed stores: tiny stores written by zarr-python (the oracle) that every case starts from.

Each seed is a directory ``<root>/<name>/store`` plus ``expected/*.npy`` with the values
zarr-python (or zarr 2.x, for the committed fixtures) wrote, and a manifest describing every
key: metadata document, chunk or shard, and for each array whether crc32c protects its chunks
and its shard index. The manifest lets the strategies aim at real keys and lets the runner know
when a successful read must equal the truth (the silent-corruption check).

Seeds are kept to a few KiB so that copying one and reading it whole costs milliseconds.
"""

from __future__ import annotations

import json
import math
import shutil
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "data" / "zarr2"
FIXTURE_TRUTH = TESTS / "data" / "zarr2_expected"
META_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


@dataclass
class ArrayInfo:
    """What the mutators and checks need to know about one array of a seed."""

    path: str  # node path, "/a/b"
    prefix: str  # key prefix of its chunk (or shard) objects
    expected: str  # npy file, relative to the seed directory
    crc_chunks: bool = False  # crc32c is the last bytes->bytes codec of each (inner) chunk
    sharded: bool = False
    index_location: str = "end"
    index_nbytes: int = 0
    crc_index: bool = False  # the shard index ends with its own crc32c


@dataclass(eq=False)  # hashed by identity: strategies cache per seed
class Seed:
    name: str
    dir: str  # absolute; the store is dir/store
    arrays: dict[str, ArrayInfo] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # key -> "meta" | "chunk" | "shard"
    owner: dict[str, str] = field(default_factory=dict)  # chunk/shard key -> array path
    sizes: dict[str, int] = field(default_factory=dict)
    docs: dict[str, Any] = field(default_factory=dict)  # metadata key -> parsed JSON

    @property
    def store(self) -> Path:
        return Path(self.dir) / "store"

    def keys(self, role: str) -> list[str]:
        return sorted(k for k, r in self.roles.items() if r == role)


# -- writing seeds with zarr-python ---------------------------------------------------------------

def _values(shape: tuple[int, ...], dtype: str, salt: int = 0) -> np.ndarray:
    n = math.prod(shape)
    base = (np.arange(n, dtype=np.int64) * 7 + salt) % 251 - 60
    return base.astype(dtype).reshape(shape)


def _v3(store: Path) -> None:
    import zarr
    from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec,
                             ZstdCodec)

    name = store.parent.name
    g = zarr.open_group(store, mode="w", zarr_format=3, attributes={"title": "fuzz seed", "unit": "r²"})

    def put(path: str, data: np.ndarray, **kw: Any) -> None:
        a = g.create_array(path, shape=data.shape, dtype=data.dtype, **kw)
        a[...] = data

    def sharding(loc: str, inner_crc: bool, index_crc: bool, compressor: Any = None) -> Any:
        inner = [BytesCodec()] + ([compressor] if compressor else []) + ([Crc32cCodec()] if inner_crc else [])
        index = [BytesCodec()] + ([Crc32cCodec()] if index_crc else [])
        return ShardingCodec(chunk_shape=(2, 3), codecs=inner, index_codecs=index, index_location=loc)

    data = _values((7, 9), "i4")
    data[:3, :4] = -1  # equals the fill value: zarr-python leaves that chunk unwritten
    if name == "v3_plain":
        put("a", data, chunks=(3, 4), compressors=None, fill_value=-1, attributes={"k": [1, 2]})
    elif name == "v3_crc":
        put("a", _values((7, 9), "f8") / 3, chunks=(3, 4), compressors=[Crc32cCodec()], fill_value=0.5)
    elif name.startswith("v3_shard_"):
        loc = "start" if "start" in name else "end"
        crc = "nocrc" not in name
        comp = ZstdCodec(level=1) if "zstd" in name else GzipCodec(level=1) if "gzip" in name else None
        values = _values((8, 10), "u2")
        values[:2, :3] = 0  # one inner chunk stays empty: its index entry is the 2**64-1 marker
        put("s", values, chunks=(4, 6), serializer=sharding(loc, crc, crc, comp), compressors=None, fill_value=0)
    elif name == "v3_gzip_zstd":
        put("gz", _values((6, 5), "f4"), chunks=(4, 4), compressors=[GzipCodec(level=5)])
        put("zs", _values((6, 5), "u8"), chunks=(4, 4), compressors=[ZstdCodec(level=3, checksum=True)])
    elif name == "v3_blosc_transpose":
        put("b", _values((4, 6), "i2"), chunks=(2, 6), filters=[TransposeCodec(order=(1, 0))],
            compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")], serializer=BytesCodec(endian="big"))
    elif name == "v3_strings":
        put("s", np.array(["a", "bb", "r²", "", "xyz", "ünï"], dtype=object).astype(str), chunks=(4,),
            compressors=[ZstdCodec(level=1)])
    elif name == "v3_misc":
        put("bool", np.array([True, False, True, True, False]), chunks=(2,), compressors=None)
        put("c8", (_values((3, 3), "f4") + 1j).astype("c8"), chunks=(2, 2), compressors=[Crc32cCodec()])
        put("scalar", np.array(3.25), compressors=None)
    elif name == "v3_nested":
        sub = g.create_group("g1", attributes={"level": 1})
        sub.create_group("g2", attributes={"level": 2})
        put("g1/g2/a", _values((5, 4), "i8"), chunks=(2, 2), compressors=[GzipCodec(level=1)])
        put("g1/b", _values((6,), "u1"), chunks=(4,), compressors=None)
        zarr.consolidate_metadata(store)
    else:
        raise ValueError(name)


def _v2(store: Path) -> None:
    import numcodecs
    import zarr

    name = store.parent.name
    g = zarr.open_group(store, mode="w", zarr_format=2, attributes={"title": "fuzz seed"})

    def put(path: str, data: np.ndarray, **kw: Any) -> None:
        a = g.create_array(path, shape=data.shape, dtype=data.dtype, **kw)
        a[...] = data

    if name == "v2_compressors":
        put("blosc", _values((6, 7), "i4"), chunks=(3, 4), compressors=numcodecs.Blosc(cname="zstd", shuffle=2))
        put("zlib", _values((5, 3), "f8") / 7, chunks=(2, 2), compressors=numcodecs.Zlib(level=1), fill_value=np.nan)
        put("raw", _values((9,), "u1"), chunks=(4,), compressors=None, chunk_key_encoding={"name": "v2", "separator": "/"})
    elif name == "v2_more_compressors":
        for cname, codec in (("lz4", numcodecs.LZ4()), ("bz2", numcodecs.BZ2(level=1)), ("lzma", numcodecs.LZMA()),
                             ("zstd", numcodecs.Zstd(level=1))):
            put(cname, _values((5, 4), "u2"), chunks=(3, 4), compressors=codec)
    elif name == "v2_filters":
        put("delta", np.arange(10, dtype="i4") * 3, chunks=(4,), filters=[numcodecs.Delta(dtype="i4")],
            compressors=numcodecs.Zlib(level=1))
    elif name == "v2_strings":
        put("s", np.array(["a", "bb", "r²", "", "xyz"], dtype=object).astype(str), chunks=(2,))
    elif name == "v2_consolidated":
        g.create_group("g1", attributes={"x": 1}).create_group("g2")
        put("g1/a", _values((4, 4), "f4"), chunks=(2, 2), compressors=numcodecs.Zlib(level=1))
        put("g1/g2/b", _values((3,), ">i2"), chunks=(3,), compressors=None)
        zarr.consolidate_metadata(store)
    else:
        raise ValueError(name)


def _fixture(sources: list[str], root_meta: str) -> Callable[[Path], None]:
    """A seed cut from the committed zarr 2.x fixtures: ``sources`` are store-relative paths to
    copy (array folders and their documents, draft meta/data paths), plus the root document."""
    def build(store: Path) -> None:
        base = FIXTURES / root_meta.split(":", 1)[0]
        store.mkdir(parents=True)
        for leaf in root_meta.split(":", 1)[1].split(","):
            shutil.copy(base / leaf, store / leaf)
        for rel in sources:
            src, dst = base / rel, store / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    return build


_DRAFT_ROOT = "v3draft:zarr.json"
SEEDS: dict[str, Callable[[Path], None]] = {
    **{n: _v3 for n in ("v3_plain", "v3_crc", "v3_shard_end_crc", "v3_shard_start_crc", "v3_shard_start_nocrc_gzip",
                        "v3_shard_end_nocrc_zstd", "v3_gzip_zstd", "v3_blosc_transpose", "v3_strings", "v3_misc",
                        "v3_nested")},
    **{n: _v2 for n in ("v2_compressors", "v2_more_compressors", "v2_filters", "v2_strings", "v2_consolidated")},
    "v2_filters_fixture": _fixture(["categorize", "fixedscaleoffset", "packbits", "quantize", "astype_f8_f4", "shuffle"],
                                   "v2_filters:.zgroup"),
    "v2_objects_fixture": _fixture(["vlen_array_i4", "vlen_bytes", "json", "msgpack"], "v2_objects:.zgroup"),
    "v2_dtypes_fixture": _fixture(["struct_nested", "S5", "U3_be", "M8_D"], "v2_dtypes:.zgroup"),
    "draft_fixture": _fixture(["meta/root.group.json", "meta/root/g1.group.json", "meta/root/g1/i2_gzip.array.json",
                               "data/root/g1/i2_gzip", "meta/root/delta_i4.array.json", "data/root/delta_i4"], _DRAFT_ROOT),
    "draft_sharded_fixture": _fixture(["meta/root/sharded/u2_raw.array.json", "data/root/sharded/u2_raw",
                                       "meta/root/sharded/f4_blosc.array.json", "data/root/sharded/f4_blosc"], _DRAFT_ROOT),
}


# -- the manifest ---------------------------------------------------------------------------------

def _array_docs(store: Path) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """node path -> (flavor, metadata key, document) for every array of a seed."""
    out: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for f in sorted(store.rglob("*")):
        rel = f.relative_to(store).as_posix()
        if f.name in ("zarr.json", ".zarray") and rel != "zarr.json" or f.name.endswith(".array.json"):
            doc = json.loads(f.read_text())
            if f.name == "zarr.json" and doc.get("node_type") != "array":
                continue
            if f.name.endswith(".array.json"):
                out["/" + rel[len("meta/root/"):-len(".array.json")]] = ("draft", rel, doc)
            else:
                out["/" + rel.rsplit("/", 1)[0]] = ("v3" if f.name == "zarr.json" else "v2", rel, doc)
    return out


def _describe_array(path: str, flavor: str, doc: dict[str, Any]) -> ArrayInfo:
    rel = path.strip("/")
    if flavor == "draft":
        info = ArrayInfo(path, f"data/root/{rel}/", f"expected/{rel}.npy")
        for t in doc.get("storage_transformers") or []:
            cps = t["configuration"]["chunks_per_shard"]
            info.sharded, info.index_nbytes = True, 16 * math.prod(cps)
        return info
    if flavor == "v2":
        return ArrayInfo(path, f"{rel}/", f"expected/{rel}.npy")
    info = ArrayInfo(path, f"{rel}/c", f"expected/{rel}.npy")
    codecs = doc["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        cfg = codecs[0]["configuration"]
        outer = doc["chunk_grid"]["configuration"]["chunk_shape"]
        info.sharded = True
        info.index_location = cfg.get("index_location", "end")
        info.crc_index = cfg["index_codecs"][-1]["name"] == "crc32c"
        info.index_nbytes = 16 * math.prod(o // i for o, i in zip(outer, cfg["chunk_shape"])) + 4 * info.crc_index
        codecs = cfg["codecs"]
    info.crc_chunks = codecs[-1]["name"] == "crc32c"
    return info


def _manifest(name: str, seed_dir: Path, truth: Callable[[str, str], np.ndarray]) -> Seed:
    store = seed_dir / "store"
    seed = Seed(name, str(seed_dir))
    for path, (flavor, _key, doc) in _array_docs(store).items():
        info = _describe_array(path, flavor, doc)
        seed.arrays[path] = info
        out = seed_dir / info.expected
        out.parent.mkdir(parents=True, exist_ok=True)
        np.save(out, truth(path, flavor), allow_pickle=True)
    prefixes = sorted(seed.arrays.values(), key=lambda a: -len(a.prefix))
    for f in sorted(store.rglob("*")):
        if not f.is_file():
            continue
        key = f.relative_to(store).as_posix()
        seed.sizes[key] = f.stat().st_size
        if f.name in META_NAMES or key.startswith("meta/") or key == "zarr.json":
            seed.roles[key] = "meta"
            seed.docs[key] = json.loads(f.read_text())
            continue
        owner = next((a for a in prefixes if key.startswith(a.prefix)), None)
        if owner is None:
            raise RuntimeError(f"seed {name}: key {key} belongs to no array")
        seed.roles[key] = "shard" if owner.sharded else "chunk"
        seed.owner[key] = owner.path
    return seed


def build_seeds(root: Path, names: list[str] | None = None) -> dict[str, Seed]:
    """Write every seed under ``root`` (or only ``names``) and return their manifests.

    Deterministic: the same package versions give byte-identical stores, so a case's
    description replays on any machine."""
    import zarr

    root.mkdir(parents=True, exist_ok=True)
    seeds: dict[str, Seed] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names or list(SEEDS):
            seed_dir = root / name
            if seed_dir.exists():
                shutil.rmtree(seed_dir)
            seed_dir.mkdir(parents=True)
            SEEDS[name](seed_dir / "store")
            fixture = name.endswith("_fixture")
            fixture_store = {"v2_objects_fixture": "v2_objects", "v2_dtypes_fixture": "v2_dtypes",
                             "v2_filters_fixture": "v2_filters"}.get(name, "v3draft")

            def truth(path: str, flavor: str, seed_dir: Path = seed_dir, fixture: bool = fixture,
                      fixture_store: str = fixture_store) -> np.ndarray:
                if fixture:
                    return np.load(FIXTURE_TRUTH / fixture_store / (path.strip("/") + ".npy"), allow_pickle=True)
                return np.asarray(zarr.open_array(seed_dir / "store", path=path.strip("/"), mode="r")[...])

            seeds[name] = _manifest(name, seed_dir, truth)
            (seed_dir / "manifest.json").write_text(json.dumps(asdict(seeds[name]), indent=1))
    return seeds


def load_seed(seed_dir: Path) -> Seed:
    raw = json.loads((seed_dir / "manifest.json").read_text())
    raw["arrays"] = {k: ArrayInfo(**v) for k, v in raw["arrays"].items()}
    return Seed(**raw)
