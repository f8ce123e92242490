"""A group's children as a listing shows them, without making a node for each array.

Making a node costs about 20 µs: its document decoded and checked, its codec pipeline, the
node itself. ``zarrview tree`` of a consolidated hierarchy of 100,000 arrays spent 2 s on
that alone. Most arrays of such a hierarchy share their data type, chunking, fill value and
codecs with one already parsed (``metadata.templates``): for those, an outline holds only the
shape, checked as parsing would check it, and the parsed array it is like. Groups, arrays
unlike any seen, broken entries and everything not from consolidated v3 metadata are
outlined by their node, made as ``Group.load_members`` makes it, so what a listing shows is
the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from .errors import ZarrError
from .hierarchy import join
from .metadata import v3 as v3meta
from .metadata.model import ArrayMetadata
from .metadata.templates import known_like, own_fields

if TYPE_CHECKING:
    from .hierarchy import Hierarchy
    from .nodes import Group, Node


class Outline(NamedTuple):
    """One child: its ``node``, or (node None) an array of ``shape`` whose data type, chunk
    and shard shapes and codecs are those of ``like``. (A tuple: a dataclass took a tenth of
    an outline's time to make.)"""

    name: str
    node: Node | None
    like: ArrayMetadata | None = None
    shape: tuple[int, ...] = ()


def outlines(group: Group, names: Sequence[str]) -> list[Outline]:
    """Outlines of the children ``names`` of ``group``, in that order; names that hold no
    node are left out (as ``load_members`` leaves them out)."""
    h: Hierarchy = group.hierarchy
    cons = h.consolidated
    if not cons or cons.v2:
        return [Outline(node.name, node) for node in group.load_members(names)]
    out: list[Outline] = []
    for name in names:  # in order: an array made here makes those like it quick to outline
        path = join(group.path, name)
        found = _like(h, path)
        if found is not None:
            out.append(Outline(name, None, *found))
        else:  # from the consolidated metadata too, where it holds the node: no request
            out.extend(Outline(node.name, node) for node in group.load_members([name]))
    return out


def _like(h: Hierarchy, path: str) -> tuple[ArrayMetadata, tuple[int, ...]] | None:
    """The parsed array that ``path``'s consolidated entry shares its fields with, and its own
    shape; None for a group, an array unlike any parsed, or an entry that is not sound."""
    assert h.consolidated is not None
    where = ""  # nothing is reported from here: a fault sends the entry to its node, which names it
    try:
        doc = h.consolidated.entry(path)  # None where the metadata lacks the node
        if doc is None or v3meta.node_type(doc, where) != "array":
            return None
        like = known_like(doc)
        own = own_fields(doc, like, where) if like is not None else None
    except ZarrError:
        return None  # its node says what is wrong
    return None if own is None or like is None else (like, own[0])
