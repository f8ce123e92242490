"""The tree's columns by name, so the model, its rows, the filter and the window agree on which
column holds what without repeating bare numbers."""

from __future__ import annotations

#: the node's name, its icon, and the children of a row (Qt's tree hangs them off column 0)
NAME_COLUMN = 0
#: an array's shape
SHAPE_COLUMN = 1
#: an array's data type and pyramid level, or what kind of group it is (OME-NGFF, implicit)
TYPE_COLUMN = 2

#: what an array or group holds in its store (View ▸ Storage Columns; hidden until asked for)
STORED_COLUMN = 3
#: an array's compression ratio: decoded over stored bytes of its stored chunks
RATIO_COLUMN = 4

#: the header of each column, in column order
HEADERS = ("Name", "Shape", "Type", "Stored", "Ratio")
COLUMN_COUNT = len(HEADERS)
