"""Writes an Icechunk repository whose virtual chunks lie in a file served over HTTP, each
recorded with the file's ETag, as icechunk records a checksum (run in the 3.12 venv).

Usage: python icechunk_etag_writer.py OUT_FOLDER URL_PREFIX ETAG OFFSET:LENGTH[,OFFSET:LENGTH...]

OUT_FOLDER/web.icechunk has one array "e" (shape (8, 8), chunks (4, 4), <i2) whose four chunks
are the given byte ranges of URL_PREFIX + "src.h5"; OUT_FOLDER/e.npy is what icechunk reads of it.
"""

from __future__ import annotations

import os
import sys
import warnings

import icechunk as ic
import numpy as np
import zarr

warnings.simplefilter("ignore")
out, prefix, etag, ranges = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cfg = ic.RepositoryConfig.default()
cfg.set_virtual_chunk_container(ic.VirtualChunkContainer(prefix, ic.http_store()))
repo = ic.Repository.create(ic.local_filesystem_storage(os.path.join(out, "web.icechunk")), config=cfg,
                            authorize_virtual_chunk_access={prefix: None})
s = repo.writable_session("main")
g = zarr.group(s.store)
g.create_array("e", shape=(8, 8), chunks=(4, 4), dtype="<i2", compressors=None, fill_value=0)
for n, item in enumerate(ranges.split(",")):
    offset, length = (int(x) for x in item.split(":"))
    s.store.set_virtual_ref(f"e/c/{n // 2}/{n % 2}", prefix + "src.h5", offset=offset, length=length, checksum=etag)
s.commit("virtual chunks with their file's ETag")
read = zarr.open_array(repo.readonly_session("main").store, path="e", mode="r")[...]  # icechunk's own read
np.save(os.path.join(out, "e.npy"), read)
print("ok")
