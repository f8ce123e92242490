"""Opening a reference set from what a user typed: ``reference::URL`` (a JSON file or a
Parquet folder, local or remote), ``reference://`` with ``fo=URL`` (fsspec's spelling), a
``.json`` reference file, or a Parquet reference folder opened as a folder.

The reference file itself and the files it points into are read through zarrlib's own stores
(``open_plain``, passed in by ``plain.py`` so the two modules do not import each other).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


from ...errors import StoreError, StoreNotFoundError, TooLargeError
from ...limits import limits
from ..access import AUTHORIZE, AccessPolicy, normal_url, policy_of
from ..base import Store
from ..local import LocalStore, local_path, read_regular
from .entries import BadReferenceError
from .json_refs import JsonReferences, is_json_name
from .parquet_refs import ParquetReferences
from .store import ReferenceStore
from .targets import Targets, beside

__all__ = ["REQUIRE_REFERENCES", "zmetadata_names_references", "open_references", "is_parquet_references", "reference_url",
           "memory_url", "AUTHORIZE", "is_fsspec_reference", "open_reference_location"]

Opener = Callable[..., Store]
#: the storage option that names the prefixes a reference set may read besides its own folder
#: (a list of URL prefixes, or an ``AccessPolicy`` the caller widens later)
#: an option of ``open_plain``'s own: a ``.json`` URL opened without ``reference::`` must be a
#: reference set by its keys, or it is refused (a pasted ``zarr.json`` URL is not one)
REQUIRE_REFERENCES = "_require_references"
#: fsspec ``ReferenceFileSystem`` options that mean nothing here (targets are zarrlib stores)
_FSSPEC_ONLY = ("remote_protocol", "target_protocol", "skip_instance_cache", "lazy", "simple_templates",
                "cache_size", "max_gap", "max_block", "asynchronous", "loop", "ref_storage_args", "fs",
                "template_overrides", "target", "listings_expiry_time")
#: bytes of ``.zmetadata`` looked at (its two ends) to tell a Parquet reference folder from Zarr
_SNIFF = 4096
#: ``record_size`` as the first or last member of the document (kerchunk writes it last)
_RECORD_HEAD = re.compile(rb'^\s*{\s*"record_size"\s*:\s*\d+')
_RECORD_TAIL = re.compile(rb'[,{]\s*"record_size"\s*:\s*\d+\s*}\s*$')


def zmetadata_names_references(head: bytes, tail: bytes) -> bool:
    """Whether a ``.zmetadata`` (its first and last few KiB) is a Parquet reference set's:
    ``record_size`` beside ``metadata`` at its top level."""
    return bool(_RECORD_HEAD.search(head) or _RECORD_TAIL.search(tail))


def _local(url: str) -> Path | None:
    """The resolved path of a local location; None for a remote URL."""
    path = local_path(url)
    return None if path is None else path.resolve()


def memory_url(refs: Mapping[str, Any]) -> str:
    """The ``url`` of a reference set given as a mapping: one per mapping object."""
    return f"reference::memory-{id(refs):x}"


def reference_url(url: str) -> str:
    """The ``url`` of the store that ``reference::url`` opens: a local path resolved."""
    path = _local(url)
    return "reference::" + (str(path) if path is not None else url)


def is_parquet_references(folder: Path) -> bool:
    """Whether a local folder is a Parquet reference set: its ``.zmetadata`` carries
    ``record_size`` (looked for at both ends of the file, so a large consolidated metadata
    document of a plain Zarr store is not read whole)."""
    zmeta = folder / ".zmetadata"
    try:
        fd = os.open(zmeta, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO cannot hang the open
    except OSError:
        return False
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:  # a folder, a FIFO or a device: not a reference set (reading it is LocalStore's to refuse)
        os.close(fd)
        return False
    with os.fdopen(fd, "rb") as f:
        try:
            head = f.read(_SNIFF)
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _SNIFF))
            tail = f.read(_SNIFF)
        except OSError:
            return False
    return zmetadata_names_references(head, tail)


def is_fsspec_reference(loc: str) -> bool:
    """fsspec's spelling of a reference set: ``reference://``, with the set in ``fo=``."""
    return loc.lower().startswith("reference://")


def open_reference_location(location: str, options: dict[str, Any], open_plain: Opener) -> Store | None:
    """The reference set ``location`` names, or None where it names none: ``reference::URL``,
    ``reference://`` with the set in ``fo=``, a ``.json`` file or URL (which must then be a
    reference set: a pasted ``zarr.json`` URL is refused as not one), or a local Parquet
    reference folder (read as a folder, its every chunk would be the fill value). The opener
    ``storage.location`` offers every location to."""
    if location.startswith("reference::"):
        return open_references(location[len("reference::"):], options, open_plain)
    if is_fsspec_reference(location):
        fo = options.pop("fo", None)
        if fo is None:
            raise StoreError("reference:// needs the reference set: open('reference://', fo='refs.json') "
                             "or spell it reference::refs.json")
        return open_references(fo, options, open_plain)
    if location.startswith("zip::"):
        return None
    path = _local(location)
    if path is None:  # a URL: a .json one names a reference set (no store has such a name)
        if is_json_name(location.split("?", 1)[0]):
            return open_references(location, {**options, REQUIRE_REFERENCES: True}, open_plain)
        return None
    if path.is_dir() and is_parquet_references(path):
        return open_references(str(path), options, open_plain)
    if path.is_file() and is_json_name(path.name):
        return open_references(str(path), {**options, REQUIRE_REFERENCES: True}, open_plain)
    return None


def open_references(url: str, options: dict[str, Any], opener: Opener) -> ReferenceStore:
    """The store of the reference set at ``url`` (``fo`` of ``reference://``, or what follows
    ``reference::``); other options go to the stores of the reference file and its targets."""
    options = dict(options)
    for name in _FSSPEC_ONLY:
        options.pop(name, None)
    authorize = options.pop(AUTHORIZE, None)
    sniffed = bool(options.pop(REQUIRE_REFERENCES, False))
    # fsspec's names: target_options for the reference file, remote_options for its targets
    for_file = options.pop("target_options", None) or {}
    for_targets = options.pop("remote_options", None) or {}
    file_options = {**options, **for_file}
    target_options = {**options, **for_targets}
    if isinstance(url, Mapping):  # fsspec's fo as the parsed set: relative targets are below the working folder
        base = normal_url(os.getcwd()).rstrip("/") + "/"
        refs_in_memory = JsonReferences(url, "the reference set given as a mapping", require=sniffed)
        return ReferenceStore(refs_in_memory, memory_url(url), "references", base,
                              Targets(lambda folder: opener(folder, **target_options), _policy(authorize, base)), [])
    if not isinstance(url, str | os.PathLike) or not os.fspath(url):
        raise StoreError(f"reference: cannot open {url!r}; name a JSON or Parquet reference set "
                         "(reference::refs.json, or reference:// with fo='refs.json' or fo=a dict)")
    url = os.fspath(url)
    path = _local(url)
    owned: list[Store] = []
    refs: JsonReferences | ParquetReferences
    if path is not None:
        if path.is_dir():
            folder: Store = LocalStore(path)
            owned.append(folder)
            refs = ParquetReferences(folder, path.name)
            base = normal_url(str(path.parent)).rstrip("/") + "/"
        elif path.exists():  # a file, or something else that _read_local names
            refs = JsonReferences(_read_local(path), path.name, require=sniffed)
            base = normal_url(str(path.parent)).rstrip("/") + "/"
        else:
            raise StoreNotFoundError(f"reference set {path} does not exist")
        name = path.name
    else:
        trimmed = url.rstrip("/")
        parent, _, name = trimmed.rpartition("/")
        base = parent + "/"
        if is_json_name(trimmed):
            store = opener(base, **file_options)
            owned.append(store)
            raw = store.get_bounded(name, limits().metadata_bytes)
            if raw is None:
                raise StoreNotFoundError(f"reference set {url} does not exist")
            refs = JsonReferences(raw, name, require=sniffed)
        else:
            folder = opener(trimmed + "/", **file_options)
            owned.append(folder)
            refs = ParquetReferences(folder, name)
    policy = _policy(authorize, base)
    targets = Targets(lambda folder: opener(folder, **target_options), policy)
    return ReferenceStore(refs, reference_url(url), name, base, targets, owned)


def _read_local(path: Path) -> bytes:
    try:
        return read_regular(path, limits().metadata_bytes, "a metadata document (limits.metadata_bytes)")
    except TooLargeError as e:
        raise BadReferenceError(str(e)) from e


def _policy(authorize: Any, base: str) -> AccessPolicy:
    """The store's policy: the caller's (widened to the reference set's own folder or host),
    or a new one of the prefixes given."""
    policy = policy_of(authorize, base)
    policy.allow(beside(base))
    return policy
