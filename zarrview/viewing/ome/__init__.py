"""OME-NGFF (OME-Zarr) 0.4, 0.5 and 0.6, without Qt: detection, the model, validation, pyramids.

``detect(group)`` reads a group's attributes into an :class:`OmeImage`, :class:`OmeLabels`,
:class:`OmePlate`, :class:`OmeWell`, :class:`Bioformats2raw` or :class:`OmeScene` (or None) with the
:class:`Problem` list of the specification's rules it breaks (its own checks of the MUST rules,
then the specification's JSON schemas); it never raises for bad metadata. ``pyramid`` holds the
arithmetic a view needs: pixel sizes, the level for a zoom, regions between levels. ``text`` is
what the command line prints.

Modules: ``doc`` (where the metadata is, its version, problem recording), ``axes``,
``transforms`` (0.4/0.5), ``multiscales``, ``omero``, ``labels``, ``hcs`` (plate and well), ``schema``,
``detect``, ``pyramid``, ``text``, ``model`` (the dataclasses); for 0.6 (RFC-5) ``affine`` (a
transformation as a matrix), ``coordinate_transformations`` (the JSON read into one),
``coordinate_systems`` (systems, references, the graph), ``multiscales_v06`` (levels placed in
the intrinsic system) and ``scene``.
"""

from __future__ import annotations

from . import pyramid
from .detect import detect
from .model import (
    Acquisition,
    Axis,
    Bioformats2raw,
    Channel,
    CoordinateSystem,
    LabelColor,
    Level,
    Multiscale,
    OmeImage,
    OmeLabel,
    OmeLabels,
    OmeNode,
    Omero,
    OmePlate,
    OmeScene,
    OmeWell,
    PlateWell,
    Problem,
    Rdefs,
    SceneLink,
    WellImage,
    Window,
)
from .text import describe, marker

__all__ = [
    "Acquisition", "Axis", "Bioformats2raw", "Channel", "CoordinateSystem", "LabelColor", "Level", "Multiscale",
    "OmeImage", "OmeLabel", "OmeLabels", "OmeNode", "Omero", "OmePlate", "OmeScene", "OmeWell", "PlateWell", "Problem",
    "Rdefs", "SceneLink", "WellImage", "Window",
    "describe", "detect", "marker", "pyramid",
]
