"""Zarr conventions (the ``zarr_conventions`` framework) and GeoZarr, without Qt.

``declared`` says which conventions a node's attributes follow (declared, or recognised by their
documented attributes) and which keys OME-NGFF may read; ``crs`` names a ``proj:`` coordinate
reference system; ``spatial`` reads ``spatial:`` transforms and dimensions; ``layout`` reads a
multiscales ``layout`` and opens its levels; ``geozarr`` makes them pyramid levels placed by their
transforms; ``georef`` turns those into the coordinates a view shows; ``text`` is what the command
line, the tree and the metadata panel print.
"""
