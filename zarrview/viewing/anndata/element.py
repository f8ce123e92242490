"""Which AnnData element the window's AnnData views show a node as, from the attributes already
read: the window's presenter and the decision of what a node is shown as (``viewing.decision``)
ask the same question, so they never disagree about which nodes are AnnData's to draw."""

from __future__ import annotations

from ...zarrlib import Array, Group, Node
from .embedding import is_embedding
from .encoding import encoding_of
from .frame import NULLABLE, is_frame
from .sparse import is_sparse

#: column groups of a dataframe, each shown beside the frame's index
COLUMNS = ("categorical", *NULLABLE)

#: a dataframe (obs, var) as one table
FRAME = "dataframe"
#: one column group of a dataframe (categorical, nullable) as a table beside its frame's index
COLUMN = "column"
#: a CSR or CSC matrix: the block in view and its stored entries
SPARSE = "sparse matrix"
#: an obsm array of 2 or 3 coordinates a row, drawn as points
EMBEDDING = "embedding"
#: the AnnData object itself, summed up in words
OBJECT = "anndata"


def element_kind(node: Node) -> str | None:
    """``FRAME``, ``COLUMN``, ``SPARSE``, ``EMBEDDING`` or ``OBJECT``: what the AnnData views show
    ``node`` as; None where they do not show it (an ``uns`` dict or array is an ordinary node).
    Reads no more than the node's own attributes."""
    if isinstance(node, Group):
        if is_frame(node):
            return FRAME
        enc = encoding_of(node)
        if enc is not None and enc.type in COLUMNS:
            return COLUMN
        if is_sparse(node):
            return SPARSE
        if enc is not None and enc.type == "anndata":
            return OBJECT
        return None
    if isinstance(node, Array) and is_embedding(node):
        return EMBEDDING
    return None
