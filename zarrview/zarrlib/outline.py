"""A group's children as a listing shows them, without making a node for each array.

Making a node costs about 20 µs: its document decoded and checked, its codec pipeline, the
node itself. ``zarrview tree`` of a consolidated hierarchy of 100,000 arrays spent 2 s on
that alone. Most arrays of such a hierarchy share their data type, chunking, fill value and
codecs with one already parsed (``metadata.templates``): for those, an outline holds only the
shape, checked as parsing would check it, and the parsed array it is like. Groups, arrays
unlike any seen, broken entries and everything not from consolidated v3 metadata are
outlined by their node, made as ``Group.load_members`` makes it, so what a listing shows is
the same either way. ``Group.member_outlines`` makes the outlines (``nodes.Outline``); this
module finds the parsed array an entry is like, and needs no node to do so.
"""

from __future__ import annotations

from .errors import ZarrError
from .hierarchy import Hierarchy
from .metadata import v3 as v3meta
from .metadata.model import ArrayMetadata
from .metadata.templates import known_like, own_fields


def by_template(h: Hierarchy) -> bool:
    """Whether arrays of ``h`` may be outlined by a template: only entries of consolidated v3
    metadata are (v2 entries and listed nodes are read as their nodes)."""
    cons = h.consolidated
    return bool(cons and not cons.v2)


def template_of(h: Hierarchy, path: str) -> tuple[ArrayMetadata, tuple[int, ...]] | None:
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
