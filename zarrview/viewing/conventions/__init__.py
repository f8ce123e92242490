"""Zarr conventions (the ``zarr_conventions`` framework) and GeoZarr, without Qt.

``declared`` says which conventions a node's attributes follow (declared, or recognised by their
documented attributes) and which keys OME-NGFF may read; ``crs`` names a ``proj:`` coordinate
reference system; ``spatial`` reads ``spatial:`` transforms and dimensions; ``geozarr`` reads a
multiscales group into pyramid levels placed by their transforms; ``georef`` turns them into the
coordinates a view shows; ``text`` is what the command line and the metadata panel print.
"""
