"""Writes Icechunk repositories and what icechunk itself reads back from them (run in a 3.12 venv).

Usage: python icechunk_writer.py OUT_FOLDER

OUT_FOLDER/src.h5 holds the HDF5 datasets that virtual chunks point into;
OUT_FOLDER/repo2.icechunk and repo1.icechunk are the same history written as spec 2 and spec 1;
OUT_FOLDER/expected.json lists every repository's refs, ancestry and versions, and each
version's arrays as .npy files read back through icechunk and zarr-python. Its "changes" hold,
for every ordered pair of versions, icechunk's ``Repository.diff`` (or the error it refuses
the pair with) and the pair's changes as zarrview defines them where icechunk refuses, made
here of what icechunk itself decodes; OUT_FOLDER/expired2.icechunk went through snapshot
expiration, unexpired2.icechunk is the same history without it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import time
import warnings
from typing import Any

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
    edit(repo, spec)
    changes[name] = record_changes(repo, spec)
    return expected(name, repo)


def edit(repo: ic.Repository, spec: int) -> None:
    """A branch from tag v1 (beside main, which the other tests read as it is) whose commits
    make every kind of change a diff reports; spec 2 also moves nodes, on a branch of its own."""
    repo.create_branch("edits", repo.lookup_tag("v1"))
    s = repo.writable_session("edits")
    g = zarr.open_group(s.store)
    g.attrs["edited"] = True  # a group's attributes alone
    g["a"].attrs["units"] = "m"  # an array's attributes alone
    g["small"][:] = [1, -2, 3]  # the same bytes again
    g["flags"][0:2, 0:2] = True  # chunks of an array deleted in the next commit
    g["grp/b"][4:6] = 0  # the fill value: the chunk's reference is removed
    z = g.create_group("grp/sub").create_group("deep").create_array("z", shape=(6, 4), chunks=(3, 2), dtype="i2",
                                                                     fill_value=0)
    z[:] = rng.integers(-100, 100, (6, 4))
    tmp = g.create_array("tmp", shape=(4,), chunks=(2,), dtype="i4", fill_value=0)  # deleted in the next commit
    tmp[:] = [1, 2, 3, 4]
    old = g.create_group("old").create_array("x", shape=(3,), chunks=(2,), dtype="f4", fill_value=0)
    old[:] = [1.5, 2.5, 3.5]
    repo.create_tag("v2", s.commit("edits: attributes, nested groups, chunks"))

    s = repo.writable_session("edits")
    g = zarr.open_group(s.store)
    del g["flags"]
    del g["tmp"]
    g["small"].resize((5,))  # the array's metadata
    del g["v"]  # an array replaced by a group at its path
    g.create_group("v", attributes={"was": "an array"})
    s.commit("edits: delete, resize, an array replaced by a group")

    s = repo.writable_session("edits")
    g = zarr.open_group(s.store)
    del g["old"]  # a group with an array
    g["grp/sub/deep/z"][0, 0] = 99
    s.commit("edits: delete a group")

    if spec >= 2:  # spec 1 has no moves
        repo.create_branch("moved", repo.lookup_branch("edits"))
        s = repo.rearrange_session("moved")
        s.move("/grp/sub", "/sub2")
        s.move("/small", "/grp/small2")
        s.commit("moved: a group and an array")
        s = repo.writable_session("moved")
        g = zarr.open_group(s.store)
        g["sub2/deep/z"][3:6, 0:2] = 5
        g["grp/small2"].attrs["moved"] = True
        s.commit("moved: written after the move")


def diff_json(d: Any) -> dict[str, Any]:
    """icechunk's ``Diff`` as JSON: sets as sorted lists, chunk indexes as lists."""
    out: dict[str, Any] = {k: sorted(getattr(d, k)) for k in ("new_groups", "new_arrays", "deleted_groups",
                                                               "deleted_arrays", "updated_groups", "updated_arrays")}
    out["updated_chunks"] = {p: sorted(list(i) for i in c) for p, c in sorted(d.updated_chunks.items())}
    out["moved_nodes"] = [list(m) for m in d.moved_nodes]
    return out


class Model:
    """The changes between two snapshots as zarrview defines them, from what icechunk decodes
    (its ancestry, ``inspect_snapshot`` and ``inspect_transaction_log``): the logs of the
    commits after the newest common ancestor on the way to ``to``, plus those on the way to
    ``from`` undone, ids named by their paths in ``from`` and ``to``. Where ``from`` is an
    ancestor of ``to`` this is icechunk's own diff (``record_changes`` checks it)."""

    KINDS = ("groups", "arrays")

    def __init__(self, repo: ic.Repository, spec: int) -> None:
        self.repo, self.spec = repo, spec
        self.logs: dict[str, dict[str, Any]] = {}

    def chain(self, sid: str) -> list[tuple[str, str | None]]:
        return [(x.id, x.parent_id) for x in self.repo.ancestry(snapshot_id=sid)]

    def log(self, sid: str, parent: str | None) -> dict[str, Any]:
        if self.spec == 1 and parent is None:
            return {}
        if sid not in self.logs:
            self.logs[sid] = self.repo.inspect_transaction_log(sid)
            assert "synthetic_composite" not in self.logs[sid]  # no expiration in these histories
        return self.logs[sid]

    def paths(self, sid: str) -> dict[str, str]:
        return {n["id"]: n["path"] for n in self.repo.inspect_snapshot(sid)["nodes"]}

    def diff(self, a: str, b: str) -> tuple[dict[str, Any], str, str]:
        chain_a, chain_b = self.chain(a), self.chain(b)
        ids_a, ids_b = [i for i, _ in chain_a], [i for i, _ in chain_b]
        if a in ids_b:
            base, relation = a, "same" if a == b else "ancestor"
        else:
            base = next(i for i in ids_a if i in ids_b)
            relation = "descendant" if base == b else "diverged"
        found: dict[str, set[str]] = {f"{c}_{k}": set() for c in ("new", "deleted", "updated") for k in self.KINDS}
        chunks: dict[str, set[tuple[int, ...]]] = {}
        moves: list[list[str]] = []
        for side, chain, ids in ((False, chain_b, ids_b), (True, chain_a, ids_a)):
            for sid, parent in chain[:ids.index(base)]:
                log = self.log(sid, parent)
                for k in self.KINDS:
                    found[f"deleted_{k}" if side else f"new_{k}"].update(log.get(f"new_{k}", ()))
                    found[f"new_{k}" if side else f"deleted_{k}"].update(log.get(f"deleted_{k}", ()))
                    found[f"updated_{k}"].update(log.get(f"updated_{k}", ()))
                for entry in log.get("updated_chunks", ()):
                    chunks.setdefault(entry["node_id"], set()).update(tuple(c) for c in entry["chunks"])
                moves += [[m["to"], m["from"]] if side else [m["from"], m["to"]] for m in log.get("moved_nodes", ())]
        paths = {**self.paths(a), **self.paths(b)}
        out: dict[str, Any] = {k: sorted({paths[i] for i in v if i in paths}) for k, v in found.items()}
        named: dict[str, set[tuple[int, ...]]] = {}
        for node, indexes in chunks.items():
            if node in paths:
                named.setdefault(paths[node], set()).update(indexes)
        out["updated_chunks"] = {p: [list(i) for i in sorted(c)] for p, c in sorted(named.items())}
        out["moved_nodes"] = moves
        return {k: out[k] for k in ("new_groups", "new_arrays", "deleted_groups", "deleted_arrays", "updated_groups",
                                    "updated_arrays", "updated_chunks", "moved_nodes")}, base, relation


def labels(repo: ic.Repository) -> dict[str, str]:
    """Every version a user can name: branches, tags and every snapshot on their ancestries."""
    found = {f"branch.{b}": repo.lookup_branch(b) for b in sorted(repo.list_branches())}
    found.update({f"tag.{t}": repo.lookup_tag(t) for t in sorted(repo.list_tags())})
    for sid in list(found.values()):
        for info in repo.ancestry(snapshot_id=sid):
            found.setdefault(info.id, info.id)
    return found


def as_version(label: str, end: str) -> dict[str, str]:
    kind, _, name = label.partition(".")
    return {f"{end}_{kind}": name} if kind in ("branch", "tag") and name else {f"{end}_snapshot_id": label}


def icechunk_diff(repo: ic.Repository, a: str, b: str) -> dict[str, Any]:
    """icechunk's answer for the pair: ``{"icechunk": DIFF}`` or ``{"error": FIRST LINE}``."""
    try:
        return {"icechunk": diff_json(repo.diff(**as_version(a, "from"), **as_version(b, "to")))}
    except ic.IcechunkError as e:
        return {"error": str(e).splitlines()[0]}


def record_changes(repo: ic.Repository, spec: int) -> dict[str, Any]:
    """Every ordered pair of versions: icechunk's diff or its refusal, and the model's changes
    (which must be icechunk's wherever icechunk answers)."""
    model = Model(repo, spec)
    names = labels(repo)
    pairs = []
    for a, sa in names.items():
        for b, sb in names.items():
            entry: dict[str, Any] = {"from": a, "to": b, **icechunk_diff(repo, a, b)}
            entry["model"], entry["base"], entry["relation"] = model.diff(sa, sb)
            if "icechunk" in entry:
                assert entry["relation"] == "ancestor" and entry["model"] == entry["icechunk"], entry
            else:
                assert entry["relation"] != "ancestor", entry
            pairs.append(entry)
    return {"versions": names, "pairs": pairs}


def expiring(name: str, expire: bool) -> ic.Repository:
    """A short spec 2 history whose oldest commits expiration removes (where ``expire``): the
    newest commit and the tagged one are re-parented onto the first snapshot and carry the
    removed commits' transaction logs."""
    repo = ic.Repository.create(ic.local_filesystem_storage(os.path.join(out, name)), spec_version=2)
    s = repo.writable_session("main")
    g = zarr.group(s.store)
    g.create_array("a0", shape=(4,), chunks=(2,), dtype="i4", fill_value=0)[:] = [1, 2, 3, 4]
    s.commit("c0")
    s = repo.writable_session("main")
    g = zarr.open_group(s.store)
    g.create_array("a1", shape=(2,), chunks=(1,), dtype="i4", fill_value=0)[:] = [5, 6]
    g["a0"].attrs["n"] = 1
    repo.create_tag("t1", s.commit("c1"))
    s = repo.writable_session("main")
    g = zarr.open_group(s.store)
    g["a0"][0:2] = [7, 8]
    del g["a1"]
    s.commit("c2")
    time.sleep(0.05)
    cut = dt.datetime.now(dt.UTC)
    time.sleep(0.05)
    s = repo.writable_session("main")
    zarr.open_group(s.store).create_group("late")
    s.commit("c3")
    if expire:
        repo.expire_snapshots(older_than=cut)
    return repo


def record_expiration() -> dict[str, Any]:
    """The expired repository's pairs, each with the answer for the same versions of the
    repository that kept its whole history (``twin``: icechunk's diff, else the model's); and
    icechunk's diff of a copy of the expired repository whose oldest carried-over transaction
    log is deleted (icechunk warns and leaves its changes out)."""
    twin = expiring("unexpired2.icechunk", expire=False)
    repo = expiring("expired2.icechunk", expire=True)
    names = labels(repo)
    by_message = {x.message: x.id for x in twin.ancestry(branch="main")}
    messages = {x.id: x.message for sid in names.values() for x in repo.ancestry(snapshot_id=sid)}
    twin_names = {label: label if label.startswith(("branch.", "tag.")) else by_message[messages[sid]]
                  for label, sid in names.items()}
    model = Model(twin, 2)
    pairs = []
    for a in names:
        for b in names:
            entry: dict[str, Any] = {"from": a, "to": b, **icechunk_diff(repo, a, b)}
            answer = icechunk_diff(twin, twin_names[a], twin_names[b])
            entry["twin"] = answer["icechunk"] if "icechunk" in answer else \
                model.diff(resolve(twin, twin_names[a]), resolve(twin, twin_names[b]))[0]
            pairs.append(entry)
    carried = repo.inspect_transaction_log(repo.lookup_branch("main"))["synthetic_composite"]
    deleted = carried["merged_pruned_ancestor_tx_logs"][0]
    gone = os.path.join(out, "expired2-gc.icechunk")
    shutil.copytree(os.path.join(out, "expired2.icechunk"), gone)
    os.remove(os.path.join(gone, "transactions", deleted))
    collected = ic.Repository.open(ic.local_filesystem_storage(gone))
    first = [x.id for x in collected.ancestry(branch="main")][-1]
    gc = {"deleted": deleted, "from": first, "to": "branch.main", **icechunk_diff(collected, first, "branch.main")}
    return {"versions": names, "pairs": pairs, "gc": gc}


def resolve(repo: ic.Repository, label: str) -> str:
    kind, _, name = label.partition(".")
    if kind == "branch" and name:
        return repo.lookup_branch(name)
    if kind == "tag" and name:
        return repo.lookup_tag(name)
    return label


changes: dict[str, Any] = {}


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
changes["expired2.icechunk"] = record_expiration()
result["changes"] = changes
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(result, f, indent=1, default=str)
print("ok")
