"""SpatialData stores, without Qt: the store and its elements (``store``), their coordinate
transformations (``transforms``), the Parquet points and shapes (``parquet``, ``wkb``), the
labels and overlays drawn over an image of the same coordinate system (``scene``).

An image and its labels are OME-NGFF multiscales in spatialdata's flavour (``ome.flavour``);
the image view shows them as any OME image, with its coordinate-system mates placed by their
transformations.
"""
