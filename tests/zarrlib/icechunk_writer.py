"""Writes Icechunk repositories and what icechunk itself reads back from them (run in a 3.12 venv).

Usage: python icechunk_writer.py OUT_FOLDER

OUT_FOLDER/src.h5 holds the HDF5 datasets that virtual chunks point into;
OUT_FOLDER/repo2.icechunk and repo1.icechunk are the same history written as spec 2 and spec 1;
OUT_FOLDER/expected.json lists every repository's refs, ancestry and versions, and each
version's arrays as .npy files read back through icechunk and zarr-python.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import warnings

import h5py
import icechunk as ic
import numpy as np
import zarr
from zarr.core.sync import sync

warnings.simplefilter("ignore")
out = os.path.abspath(sys.argv[1])
os.makedirs(out, exist_ok=True)
prefix = "file://" + out + "/"
rng = np.random.default_rng(7)

h5 = os.path.join(out, "src.h5")
contig = rng.standard_normal((5, 8)).astype("<f4")
chunked = rng.integers(-3000, 3000, (8, 8)).astype("<i2")
with h5py.File(h5, "w") as f:
    f.create_dataset("contig", data=contig)
    f.create_dataset("chunked", data=chunked, chunks=(4, 4))
raw = np.arange(400, dtype="<i4") * 3
with open(os.path.join(out, "raw.bin"), "wb") as f:
    f.write(raw.tobytes())
with h5py.File(h5) as f:
    contig_offset = f["contig"].id.get_offset()
    ds = f["chunked"]
    chunk_info = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]


def write(name: str, spec: int) -> dict:
    path = os.path.join(out, name)
    cfg = ic.RepositoryConfig.default()
    cfg.inline_chunk_threshold_bytes = 40
    # manifests with 20 or more virtual chunks store their locations zstd-compressed with a dictionary
    cfg.manifest = ic.ManifestConfig(virtual_chunk_location_compression=ic.ManifestVirtualChunkLocationCompressionConfig(
        min_num_chunks=20))
    cfg.set_virtual_chunk_container(ic.VirtualChunkContainer(prefix, ic.local_filesystem_store(out), name="data"))
    auth = {prefix: ic.credentials.LocalFileSystemAccess} if hasattr(ic.credentials, "LocalFileSystemAccess") \
        else {prefix: None}
    repo = ic.Repository.create(ic.local_filesystem_storage(path), config=cfg, spec_version=spec,
                                authorize_virtual_chunk_access=auth)
    s = repo.writable_session("main")
    g = zarr.group(s.store, attributes={"title": "icechunk fixture"})
    a = g.create_array("a", shape=(10, 7), chunks=(4, 3), dtype="f8", fill_value=-1.0)
    a[:] = rng.standard_normal((10, 7))
    sub = g.create_group("grp")
    b = sub.create_array("b", shape=(6,), chunks=(4,), dtype="i4", fill_value=0)
    b[:] = rng.integers(-10**6, 10**6, 6)
    m = sub.create_array("missing", shape=(9, 9), chunks=(4, 4), dtype="u1", fill_value=42)
    m[0:4, 4:8] = rng.integers(0, 255, (4, 4))
    m[8:9, 8:9] = 7
    s.commit("first", metadata={"tool": "writer", "nested": {"list": [1, 2.5, None, True], "text": "Zürich"}})

    s = repo.writable_session("main")
    g = zarr.open_group(s.store)
    g["a"][0, 0] = 1234.5
    sh = g.create_array("sh", shape=(16, 12), chunks=(4, 4), shards=(8, 8), dtype="u2", fill_value=0)
    sh[:] = rng.integers(0, 60000, (16, 12))
    small = g.create_array("small", shape=(3,), chunks=(3,), dtype="i1", fill_value=0)
    small[:] = [1, -2, 3]
    flags = g.create_array("flags", shape=(5, 5), chunks=(5, 5), dtype="bool", fill_value=False)
    flags[:] = rng.integers(0, 2, (5, 5)).astype(bool)
    g.create_array("v", shape=(5, 8), chunks=(5, 8), dtype="<f4", compressors=None, fill_value=0)
    s.store.set_virtual_ref("v/c/0/0", prefix + "src.h5", offset=contig_offset, length=contig.nbytes)
    g.create_array("vc", shape=(8, 8), chunks=(4, 4), dtype="<i2", compressors=None, fill_value=0)
    for info in chunk_info:
        i, j = info.chunk_offset[0] // 4, info.chunk_offset[1] // 4
        s.store.set_virtual_ref(f"vc/c/{i}/{j}", prefix + "src.h5", offset=info.byte_offset, length=info.size,
                                checksum=dt.datetime.now(dt.UTC) + dt.timedelta(days=1))
    s.commit("second", metadata={"author": "fixture", "n": 2})
    repo.create_tag("v1", repo.lookup_branch("main"))
    repo.create_branch("dev", repo.lookup_branch("main"))

    s = repo.writable_session("dev")
    g = zarr.open_group(s.store)
    g["a"][5:, :] = 7.0
    g["grp/b"][:] = -1
    s.commit("on dev")

    s = repo.writable_session("main")
    g = zarr.open_group(s.store)
    g["a"][2:9, 1:6] = rng.standard_normal((7, 5))
    c = g.create_array("c64", shape=(4, 3), chunks=(3, 2), dtype="c8", fill_value=0)
    c[:] = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype("c8")
    del g["flags"]
    g.create_array("vlong", shape=(400,), chunks=(10,), dtype="<i4", compressors=None, fill_value=0)
    for i in range(40):
        s.store.set_virtual_ref(f"vlong/c/{i}", prefix + "raw.bin", offset=40 * i, length=40)
    g.create_array("vnamed", shape=(30,), chunks=(10,), dtype="<i4", compressors=None, fill_value=0)
    for i in range(3):  # relative to the container named "data"
        s.store.set_virtual_ref(f"vnamed/c/{i}", "vcc://data/raw.bin", offset=400 + 40 * i, length=40)
    s.commit("third: remove flags, add c64")
    repo.create_tag("latest", repo.lookup_branch("main"))
    return expected(name, repo)


async def _keys(store: ic.IcechunkStore) -> list[str]:
    return sorted([k async for k in store.list()])


def expected(name: str, repo: ic.Repository) -> dict:
    folder = os.path.join(out, "expected", name)
    versions: dict[str, dict] = {}
    spellings = [("branch", b) for b in repo.list_branches()] + [("tag", t) for t in repo.list_tags()]
    for kind, ref in spellings:
        snap = repo.lookup_branch(ref) if kind == "branch" else repo.lookup_tag(ref)
        versions[f"{kind}.{ref}"] = {"snapshot": snap}
    for info in repo.ancestry(branch="main"):
        versions.setdefault(info.id, {"snapshot": info.id})
    ancestry = {}
    metadata = {}
    for label, v in versions.items():
        session = repo.readonly_session(snapshot_id=v["snapshot"])
        ancestry[label] = [[x.id, x.parent_id, x.written_at.isoformat(), x.message]
                           for x in repo.ancestry(snapshot_id=v["snapshot"])]
        metadata.update({x.id: x.metadata for x in repo.ancestry(snapshot_id=v["snapshot"])})
        arrays: dict[str, str] = {}
        v["arrays"] = arrays
        try:
            root = zarr.open_group(session.store, mode="r")
        except zarr.errors.GroupNotFoundError:  # the first snapshot holds no node
            v["empty"] = True
            continue
        v["keys"] = sync(_keys(session.store))
        for path, node in root.members(max_depth=None):
            if isinstance(node, zarr.Array):
                file = os.path.join(folder, label, path.replace("/", "__") + ".npy")
                os.makedirs(os.path.dirname(file), exist_ok=True)
                np.save(file, node[...])
                arrays["/" + path] = file
    return {"spec": int(repo.spec_version) if hasattr(repo, "spec_version") else None,
            "branches": {b: repo.lookup_branch(b) for b in repo.list_branches()},
            "tags": {t: repo.lookup_tag(t) for t in repo.list_tags()},
            "versions": versions, "ancestry": ancestry, "metadata": metadata}


result = {"prefix": prefix, "contig_offset": contig_offset,
          "repos": {"repo2.icechunk": write("repo2.icechunk", 2), "repo1.icechunk": write("repo1.icechunk", 1)}}
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(result, f, indent=1, default=str)
print("ok")
