"""zarrview: a desktop viewer for Zarr hierarchies."""

__version__ = "0.1.0"
