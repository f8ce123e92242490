"""OME-NGFF (OME-Zarr) 0.4 and 0.5, without Qt: detection, the model, validation, pyramids.

``detect(group)`` reads a group's attributes into an :class:`OmeImage`, :class:`OmeLabels`,
:class:`OmePlate`, :class:`OmeWell` or :class:`Bioformats2raw` (or None) with the
:class:`Problem` list of the specification's rules it breaks (its own checks of the MUST rules,
then the specification's JSON schemas); it never raises for bad metadata. ``pyramid`` holds the
arithmetic a view needs: pixel sizes, the level for a zoom, regions between levels. ``text`` is
what the command line prints.

Modules: ``doc`` (where the metadata is, its version, problem recording), ``axes``,
``transforms``, ``multiscales``, ``omero``, ``labels``, ``hcs`` (plate and well), ``schema``,
``detect``, ``pyramid``, ``text``, ``model`` (the dataclasses).
"""

from __future__ import annotations

from . import pyramid
from .detect import detect
from .model import (
    Acquisition,
    Axis,
    Bioformats2raw,
    Channel,
    LabelColor,
    Level,
    Multiscale,
    OmeImage,
    OmeLabel,
    OmeLabels,
    OmeNode,
    Omero,
    OmePlate,
    OmeWell,
    PlateWell,
    Problem,
    Rdefs,
    WellImage,
    Window,
)
from .text import describe, marker

__all__ = [
    "Acquisition", "Axis", "Bioformats2raw", "Channel", "LabelColor", "Level", "Multiscale", "OmeImage", "OmeLabel",
    "OmeLabels", "OmeNode", "Omero", "OmePlate", "OmeWell", "PlateWell", "Problem", "Rdefs", "WellImage", "Window",
    "describe", "detect", "marker", "pyramid",
]
