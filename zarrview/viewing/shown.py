"""Which metadata a group is shown by, for the one decision of what a node is shown as
(``viewing.decision``): its OME-Zarr node (an image, a label image, a plate, a well, a labels
group...) where its attributes hold OME metadata, else a multiscales convention pyramid (GeoZarr),
else nothing but a group.

OME metadata wins over the multiscales convention where a group holds both, as the window has
always shown such a group; a group that holds neither is listed, never drawn. Reads the group's
attributes and those of its levels: call it off the GUI thread.
"""

from __future__ import annotations

from ..zarrlib import Group
from .conventions.geozarr import GeoMultiscale, detect_geozarr
from .ome import OmeNode, detect


def shown_as(group: Group, *, labels: bool = False) -> OmeNode | GeoMultiscale | None:
    """The OME node ``group`` is (with its ``labels/`` group read and checked where ``labels``),
    else its multiscales convention pyramid, else None."""
    return detect(group, labels=labels) or detect_geozarr(group)
