"""Label images drawn over an OME-Zarr image: their layers and colours, their reads and their export."""
