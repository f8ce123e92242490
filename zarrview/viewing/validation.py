"""A store checked against the Zarr specifications and the conventions zarrview interprets.

The Zarr rules (documents, hierarchy, consolidated metadata, shard indexes, chunk keys) are
``zarrlib.validate``'s; here the OME-NGFF, GeoZarr and AnnData rules are added for every group
whose attributes hold them, as the window's OME and convention panels and its AnnData views
find them (``ome.detect``, ``conventions.geozarr``, ``anndata``: a dataframe or sparse matrix
that breaks the format is what the window cannot show): one list, whatever asks for it
(``zarrview validate``, File ▸ Validate Store).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..zarrlib import ErrorNode, Group, Node, ZarrError
from ..zarrlib.cancel import CancelToken
from ..zarrlib.storage.base import Store
from ..zarrlib.validate import Finding, validate_store
from .anndata.frame import is_frame, open_frame
from .anndata.sparse import is_sparse, open_sparse
from .conventions.geozarr import detect_geozarr
from .ome.detect import detect

#: groups whose conventions are checked, at most (each opened to read its attributes)
GROUPS_CHECKED = 10_000


def validate(store: Store, root: Node | None, prefix: str = "", cancel: CancelToken | None = None,
             progress: Callable[[int], None] | None = None) -> list[Finding]:
    """Every finding below ``prefix`` of ``store``; ``root`` (the node there, None where its
    metadata cannot be read) is walked for the conventions of its groups."""
    findings = validate_store(store, prefix, cancel, progress)
    if isinstance(root, Group):
        for group in _groups(root, cancel):
            findings.extend(_conventions(group))
    return findings


def _groups(root: Group, cancel: CancelToken | None) -> Iterator[Group]:
    todo, n = [root], 0
    while todo and n < GROUPS_CHECKED:
        group = todo.pop()
        n += 1
        if cancel is not None:
            cancel.raise_if_cancelled()
        yield group
        try:
            todo.extend(m for m in group.members() if isinstance(m, Group) and not isinstance(m, ErrorNode))
        except ZarrError:
            continue


def _document(group: Group) -> str:
    """The key of the document a group's attributes are in."""
    base = group.path.strip("/")
    name = "zarr.json" if group.zarr_format == 3 else ".zattrs"
    return f"{base}/{name}" if base else name


def _conventions(group: Group) -> list[Finding]:
    out: list[Finding] = []
    key = _document(group)
    try:
        ome = detect(group, labels=False)
    except ZarrError as e:
        return [Finding("error", key, "ome-ngff", f"the OME-Zarr metadata cannot be read: {e}")]
    if ome is not None:
        out.extend(Finding(p.severity, key, "ome-ngff", f"{p.path}: {p.message}") for p in ome.problems)
    try:
        geo = detect_geozarr(group)
    except ZarrError as e:
        return out + [Finding("error", key, "geozarr", f"the multiscales metadata cannot be read: {e}")]
    if geo is not None:
        out.extend(Finding(p.severity, key, "geozarr", f"{p.path}: {p.message}") for p in geo.problems)
    try:
        if is_frame(group):
            open_frame(group)
        elif is_sparse(group):
            open_sparse(group)
    except ZarrError as e:  # AnnDataError names the element and what breaks the format
        out.append(Finding("error", key, "anndata", str(e)))
    return out
