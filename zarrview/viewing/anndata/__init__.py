"""AnnData's on-disk format: elements named by their ``encoding-type`` attribute, read as what
they are (a dataframe as one table, a sparse matrix as a matrix, an embedding as points), a
page or a block at a time through zarrlib selections. No Qt."""

from .encoding import AnnDataError, Encoding, encoding_of, encoding_rows
from .frame import Column, Frame, FramePage, open_frame
from .sparse import SparseMatrix, open_sparse

__all__ = ["AnnDataError", "Column", "Encoding", "Frame", "FramePage", "SparseMatrix", "encoding_of",
           "encoding_rows", "open_frame", "open_sparse"]
