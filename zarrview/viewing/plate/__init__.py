"""An OME-Zarr plate as a mosaic of well thumbnails, and the reads behind each well."""
