"""What OME-NGFF metadata says, as frozen dataclasses (no Qt, no reading here).

A node found by :func:`zarrview.viewing.ome.detect` is one of :class:`OmeImage` (a multiscale
image, possibly a label image), :class:`OmeLabels` (the ``labels`` group), :class:`OmePlate`,
:class:`OmeWell` or :class:`Bioformats2raw`. Each carries the :class:`Problem` list of what
breaks the specification; a node with problems is still returned and used where it can be.

Coordinates: ``physical = scale * index + translation`` gives the centre of pixel ``index``
(the convention ome-zarr-py writes its per-level translations in); see ``pyramid.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...zarrlib import Array, Group

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One way a document breaks the specification: ``error`` for a MUST, ``warning`` for a SHOULD
    or for what zarrview cannot use (a transform stored as binary data)."""

    severity: Severity
    node: str      # the group's path in its store, e.g. "/plate/A/1"
    path: str      # the JSON path in the group's attributes, e.g. "$.ome.multiscales[0].axes[2].unit"
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.node}: {self.path}: {self.message}"


@dataclass(frozen=True)
class Axis:
    name: str
    type: str | None = None   # "space", "time", "channel", a custom type, or None
    unit: str | None = None


@dataclass(frozen=True)
class CoordinateSystem:
    """A named coordinate system of OME-Zarr 0.6: its axes, in the order of the points' coordinates."""

    name: str
    axes: tuple[Axis, ...]


@dataclass(frozen=True)
class Level:
    """One resolution level: a dataset of a multiscale and the array it names.

    ``scale`` and ``translation`` are the dataset's transforms combined with the multiscale's
    own (applied after them): the level's index space mapped to physical space, per axis.
    ``array`` is None when the array cannot be opened (``error`` says why); ``shape`` and the
    counts are then empty.
    """

    index: int
    path: str
    array: Array | None
    scale: tuple[float, ...]
    translation: tuple[float, ...]
    shape: tuple[int, ...] = ()
    chunks: tuple[int, ...] = ()
    shards: tuple[int, ...] | None = None
    chunk_counts: tuple[int, ...] = ()          # chunks (inner chunks when sharded) per axis
    shard_counts: tuple[int, ...] | None = None  # shards per axis, None when not sharded
    dtype: str = ""
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.array is not None


@dataclass(frozen=True)
class Multiscale:
    name: str | None
    axes: tuple[Axis, ...]
    levels: tuple[Level, ...]
    type: str | None = None          # the downscaling method, when stated
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: 0.6: every coordinate system the multiscale names (the levels are placed in ``intrinsic``)
    coordinate_systems: tuple[CoordinateSystem, ...] = ()
    intrinsic: str | None = None

    @property
    def readable_levels(self) -> tuple[Level, ...]:
        return tuple(lv for lv in self.levels if lv.readable)

    def axis_index(self, name: str) -> int | None:
        return next((i for i, a in enumerate(self.axes) if a.name == name), None)


@dataclass(frozen=True)
class Window:
    start: float | None = None
    end: float | None = None
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class Channel:
    label: str | None = None
    color: str | None = None                    # "RRGGBB" as written (None when missing or bad)
    window: Window | None = None
    active: bool = True
    inverted: bool = False
    family: str | None = None
    coefficient: float | None = None

    @property
    def rgb(self) -> tuple[int, int, int] | None:
        if self.color is None:
            return None
        return int(self.color[0:2], 16), int(self.color[2:4], 16), int(self.color[4:6], 16)


@dataclass(frozen=True)
class Rdefs:
    default_z: int | None = None
    default_t: int | None = None
    model: str | None = None        # "color" or "greyscale"


@dataclass(frozen=True)
class Omero:
    channels: tuple[Channel, ...] = ()
    rdefs: Rdefs = field(default_factory=Rdefs)
    name: str | None = None
    id: int | None = None


@dataclass(frozen=True)
class LabelColor:
    value: int
    rgba: tuple[int, int, int, int] | None


@dataclass(frozen=True)
class OmeLabel:
    """The ``image-label`` of a label image."""

    colors: tuple[LabelColor, ...] = ()
    properties: tuple[dict[str, Any], ...] = ()   # each with its "label-value"
    source: str | None = None                    # relative path of the source image ("../../")
    version: str | None = None

    def color_map(self) -> dict[int, tuple[int, int, int, int] | None]:
        """label value -> rgba; the last entry wins where a value repeats."""
        return {c.value: c.rgba for c in self.colors}

    def properties_of(self, value: int) -> dict[str, Any]:
        """Every property stated for a label value (later entries add to and override earlier)."""
        out: dict[str, Any] = {}
        for p in self.properties:
            if p.get("label-value") == value:
                out.update({k: v for k, v in p.items() if k != "label-value"})
        return out


@dataclass(frozen=True)
class _Found:
    version: str
    group: Group = field(compare=False, repr=False)
    problems: tuple[Problem, ...]

    @property
    def path(self) -> str:
        return self.group.path

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


@dataclass(frozen=True)
class OmeImage(_Found):
    name: str | None
    multiscales: tuple[Multiscale, ...]
    omero: Omero | None = None
    labels: tuple[str, ...] = ()          # the label images listed in labels/ (paths under labels/)
    label: OmeLabel | None = None         # set when this image is itself a label image

    kind = "image"

    @property
    def first(self) -> Multiscale:
        return self.multiscales[0]

    @property
    def is_label(self) -> bool:
        return self.label is not None


@dataclass(frozen=True)
class OmeLabels(_Found):
    """The ``labels`` group of an image: the paths of its label images."""

    labels: tuple[str, ...]

    kind = "labels"


@dataclass(frozen=True)
class PlateWell:
    path: str
    row: int
    column: int


@dataclass(frozen=True)
class Acquisition:
    id: int
    name: str | None = None
    maximum_field_count: int | None = None
    start_time: int | None = None
    end_time: int | None = None


@dataclass(frozen=True)
class OmePlate(_Found):
    name: str | None
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    wells: tuple[PlateWell, ...]
    acquisitions: tuple[Acquisition, ...] = ()
    field_count: int | None = None
    bioformats2raw: bool = False       # also carries "bioformats2raw.layout" (the plate wins)

    kind = "plate"

    def well_at(self, row: int, column: int) -> PlateWell | None:
        return next((w for w in self.wells if w.row == row and w.column == column), None)


@dataclass(frozen=True)
class WellImage:
    path: str
    acquisition: int | None = None


@dataclass(frozen=True)
class OmeWell(_Found):
    images: tuple[WellImage, ...]

    kind = "well"


@dataclass(frozen=True)
class Bioformats2raw(_Found):
    """A bioformats2raw collection: every series (image group path, relative to this group)."""

    series: tuple[str, ...]
    series_from: Literal["OME/series", "numbered groups"]

    kind = "bioformats2raw"


@dataclass(frozen=True)
class SceneLink:
    """One transformation of a scene: from the coordinate system ``source`` to ``target``, each
    ``(path of the image group, or "" for the scene's own, name)``."""

    name: str | None
    type: str
    source: tuple[str, str]
    target: tuple[str, str]


@dataclass(frozen=True)
class OmeScene(_Found):
    """A 0.6 ``scene``: coordinate systems of its own and transformations linking its images'."""

    coordinate_systems: tuple[CoordinateSystem, ...]
    links: tuple[SceneLink, ...]
    images: tuple[str, ...]               # the image groups the links name (paths below the scene)
    graph: Any = field(default=None, compare=False, repr=False)   # its TransformGraph

    kind = "scene"

    def route(self, source: tuple[str, str], target: tuple[str, str]) -> Any:
        """The :class:`~zarrview.viewing.ome.affine.AffineMap` from the coordinate system
        ``source`` to ``target`` (each ``(image path or "", name)``); raises
        :class:`~zarrview.viewing.ome.affine.TransformationError` where none links them."""
        return self.graph.route(source, target)


OmeNode = OmeImage | OmeLabels | OmePlate | OmeWell | Bioformats2raw | OmeScene
