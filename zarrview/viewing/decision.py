"""What a node is shown as, decided once for the window, ``zarrview export`` and ``zarrview info``.

A node is an array's plane, an array drawn as a table or a line, an OME-Zarr image or label
image, a multiscales convention pyramid (GeoZarr), a plate, a well or another OME-Zarr group, an
AnnData element, a group with nothing to draw, or a node that cannot be read. Where it is drawn,
the plane, pyramid level and label images asked for (``--slice``, ``--level``, ``--labels``)
either name something of it or are refused, in the words every command and the window use. The
window renders a ``Shown``; the commands print it and write what it says: neither decides again,
so neither can disagree with the other about a node.

``decide`` reads a group's OME-Zarr and GeoZarr metadata (it opens the level arrays): call it off
the GUI thread. ``decide(..., read=False)`` reads no more than the node's own attributes: it is
final for arrays, unreadable nodes and AnnData elements, and says ``pending`` for any other group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from ..zarrlib import Array, Group, Node
from .anndata import encoding_of
from .anndata.element import element_kind
from .cf.dims import dimension_names
from .cf.view import CFOnce
from .conventions.geozarr import GeoMultiscale
from .conventions.georef import array_state, pyramid_state
from .export.plane import is_table, level_error, pyramid_level_error
from .image.slice_spec import plane_error
from .image.state import ViewState
from .labels.layers import LabelLayer, labels_group, layers_of
from .ome import OmeImage, OmeNode, OmePlate, OmeWell, Problem
from .ome.view import image_state
from .shown import shown_as


class Kind(Enum):
    """What a node is shown as."""

    PLANE = "an array's plane"
    TABLE = "an array as a table or a line"  # records, strings, fewer than two dimensions
    IMAGE = "an OME-Zarr image"
    LABEL_IMAGE = "an OME-Zarr label image"
    PYRAMID = "a multiscales pyramid"
    PLATE = "an OME-Zarr plate"
    WELL = "an OME-Zarr well"
    OME_GROUP = "an OME-Zarr group"  # a labels group, a bioformats2raw collection, a scene
    ANNDATA = "an AnnData element"
    GROUP = "a group"
    ERROR = "a node that cannot be read"


#: the kinds drawn as values: a plane, a table or a line of an array, or a pyramid's level
DRAWN = frozenset({Kind.PLANE, Kind.TABLE, Kind.IMAGE, Kind.LABEL_IMAGE, Kind.PYRAMID})


@dataclass(frozen=True)
class Refusal:
    """Why what a node is shown as cannot be shown with the plane, level or label images asked
    for, or at all."""

    #: one line, as the commands print it after ``zarrview: ``
    text: str
    #: the window's words where it says it differently (None: ``text``)
    window_text: str | None = None
    #: the problems printed under ``text`` (an OME-Zarr image's errors, a pyramid's problems)
    listed: tuple[str, ...] = ()
    #: the request that names nothing of the node (``--slice``, ``--level``, ``--labels``), a
    #: usage error; None where the node itself cannot be shown
    request: str | None = None
    #: whether the decision looked at the level: the window's pending ``--level`` is then spent
    spends_level: bool = False

    @property
    def window(self) -> str:
        return self.text if self.window_text is None else self.window_text


@dataclass(frozen=True, eq=False)
class Shown:
    """What ``node`` is shown as, and what shows it."""

    node: Node
    kind: Kind
    #: the OME-Zarr node or multiscales pyramid the group's metadata describes
    found: OmeNode | GeoMultiscale | None = None
    #: the array whose values are shown: the node, or a pyramid's first readable level
    array: Array | None = None
    #: the names of the dimensions shown: an array's own, an image's or a pyramid's axes
    names: tuple[str | None, ...] | None = None
    #: the problems of its metadata (OME-Zarr errors and warnings, the conventions' problems)
    problems: tuple[Problem, ...] = ()
    #: what the AnnData views show it as (``anndata.element``), or None
    anndata: str | None = None
    #: a group whose OME-Zarr and GeoZarr metadata is still to be read (``decide(read=False)``)
    pending: bool = False
    #: an array's CF coordinates, read once when first asked for (never by ``decide`` itself)
    coordinates: CFOnce | None = None
    #: the request: the indices ``--slice`` fixes, in level-0 indices, and the level asked for
    plane: Mapping[int, int] = field(default_factory=dict)
    level: int | None = None
    #: why the request names nothing of what the node is shown as (or the node shows nothing)
    refused: Refusal | None = None
    #: the first view of what is drawn (rows and columns, channels, pyramid), where drawn
    state: ViewState | None = None
    #: the label images asked to be drawn over an image (``--labels``)
    layers: tuple[LabelLayer, ...] = ()

    @property
    def ome(self) -> OmeNode | None:
        return None if isinstance(self.found, GeoMultiscale) else self.found

    @property
    def image(self) -> OmeImage | None:
        return self.found if isinstance(self.found, OmeImage) else None

    @property
    def pyramid(self) -> GeoMultiscale | None:
        return self.found if isinstance(self.found, GeoMultiscale) else None

    @property
    def message(self) -> str:
        """The window's words for a group it draws nothing of."""
        return f"{self.node.path} is a group: select an array to see its data."

    @property
    def first_level(self) -> int | None:
        """The pyramid level a whole plane is read from where no ``--level`` is asked for: the
        finest readable one, which the window shows at full resolution (None: no pyramid)."""
        if self.level is not None or self.state is None or not self.state.pyramid:
            return self.level
        return self.state.pyramid[0].index

    def with_found(self, found: OmeImage | GeoMultiscale) -> Shown:
        """This group shown as another of its pyramids (an image's other multiscale, a pyramid of
        another band), at this plane and at no level asked for: picked in the window."""
        return replace(_drawn_group(self.node, found), anndata=self.anndata).with_request(self.plane)

    def with_request(self, plane: Mapping[int, int] | None = None, level: int | None = None,
                     overlays: str | None = None) -> Shown:
        """This decision for ``plane`` (``--slice``), ``level`` (``--level``) and the label
        images ``overlays`` names (``--labels``: all for ""): what is refused, the first view,
        the label layers. Reads an image's ``labels`` group where ``overlays`` is given."""
        plane = plane if plane is not None else {}
        asked = replace(self, plane=plane, level=level, refused=None, state=None, layers=())
        node = self.node
        if isinstance(node, Array):
            return _array_request(asked, node, overlays)
        image, pyramid = self.image, self.pyramid
        if image is not None and self.kind in (Kind.IMAGE, Kind.LABEL_IMAGE):
            return _image_request(asked, image, overlays)
        if pyramid is not None and self.kind is Kind.PYRAMID:
            return _pyramid_request(asked, pyramid, overlays)
        if isinstance(node, Group):
            enc = encoding_of(node)
            what = f" (AnnData {enc.type})" if enc is not None else ""
            return replace(asked, refused=Refusal(f"{node.path} is a group{what}, not an array or an OME-Zarr "
                                                  "image: name one with ::/path", self.message))
        error = getattr(node, "error", "not an array")
        return replace(asked, refused=Refusal(f"{node.path} cannot be read: {error}", str(error)))


def decide(node: Node, plane: Mapping[int, int] | None = None, level: int | None = None, *,
           labels: bool = False, overlays: str | None = None, read: bool = True) -> Shown:
    """What ``node`` is shown as with ``plane`` (``--slice``), ``level`` (``--level``) and the
    label images ``overlays`` names (``--labels``). ``labels`` reads and checks an image's
    ``labels`` group too (``zarrview info``). Without ``read`` a group's OME-Zarr and GeoZarr
    metadata is not read: the answer is ``pending`` for a group that is no AnnData element."""
    return looked_at(node, labels=labels, read=read).with_request(plane, level, overlays)


def looked_at(node: Node, *, labels: bool = False, read: bool = True) -> Shown:
    """What ``node`` is shown as, before any request (``Shown.with_request``): what ``--slice``
    names are matched against (``names``, ``array``, ``coordinates``) comes from here."""
    anndata = element_kind(node)
    if isinstance(node, Array):
        kind = Kind.TABLE if node.ndim < 2 or is_table(node) else Kind.PLANE
        return Shown(node, kind, array=node, names=dimension_names(node), anndata=anndata,
                     coordinates=CFOnce(node))
    if not isinstance(node, Group):
        return Shown(node, Kind.ERROR)
    if not read:
        return Shown(node, Kind.ANNDATA if anndata is not None else Kind.GROUP, anndata=anndata,
                     pending=anndata is None)
    found = shown_as(node, labels=labels)
    if anndata is not None:  # the AnnData views show it, whatever else its attributes say
        return Shown(node, Kind.ANNDATA, found=found, anndata=anndata)
    if isinstance(found, (GeoMultiscale, OmeImage)):
        return _drawn_group(node, found)
    if found is not None:
        kind = Kind.PLATE if isinstance(found, OmePlate) else Kind.WELL if isinstance(found, OmeWell) \
            else Kind.OME_GROUP
        return Shown(node, kind, found, problems=found.problems)
    return Shown(node, Kind.GROUP)


def _drawn_group(node: Node, found: OmeImage | GeoMultiscale) -> Shown:
    """A group drawn as a pyramid: an OME-Zarr image's first multiscale or a multiscales
    convention pyramid, its first readable level the array shown."""
    if isinstance(found, GeoMultiscale):
        ms = found.multiscale
        levels = ms.readable_levels
        return Shown(node, Kind.PYRAMID, found, levels[0].array if levels else None,
                     tuple(a.name for a in ms.axes) if ms.axes else None, found.problems)
    ms_levels = found.first.readable_levels if found.multiscales else ()
    names = tuple(a.name for a in found.first.axes) if found.multiscales else None
    kind = Kind.LABEL_IMAGE if found.is_label else Kind.IMAGE
    return Shown(node, kind, found, ms_levels[0].array if ms_levels else None, names, found.problems)


def _array_request(asked: Shown, arr: Array, overlays: str | None) -> Shown:
    """An array's plane: ``--level`` and ``--labels`` are an image's, and the plane must exist."""
    why = None
    if asked.level is not None:
        why = Refusal(f"--level is for an OME-Zarr image group; {arr.path} is an array", request="--level",
                      spends_level=True)
    elif overlays is not None:
        why = Refusal(f"--labels is for an OME-Zarr image group; {arr.path} is an array", request="--labels")
    elif (bad := plane_error(arr, asked.plane)) is not None:
        why = Refusal(bad, request="--slice")
    if why is not None:
        return replace(asked, refused=why)
    if asked.kind is not Kind.PLANE:
        return asked
    return replace(asked, state=array_state(arr, asked.plane))  # Y as rows where spatial: says


def _image_request(asked: Shown, image: OmeImage, overlays: str | None) -> Shown:
    """An OME-Zarr image: a pyramid to read, the plane in its first readable level, the label
    images named, the level asked for."""
    path = asked.node.path
    if not image.multiscales:  # metadata too broken to name a level: its problems say why
        return replace(asked, refused=Refusal(
            f"{path} holds OME-Zarr image metadata that names no readable pyramid",
            f"The OME-Zarr metadata of {path} names no pyramid that can be read: see its problems in the OME tab.",
            tuple(str(p) for p in image.errors)))
    if asked.array is not None and (bad := plane_error(asked.array, asked.plane)) is not None:
        return replace(asked, refused=Refusal(bad, request="--slice"))  # --slice in level-0 indices
    layers: tuple[LabelLayer, ...] = ()
    if overlays is not None:
        layers, missing = _named_layers(asked.node, overlays)
        if missing is not None:
            return replace(asked, refused=Refusal(missing, request="--labels"))
    state = image_state(image, asked.plane)
    if state is None:
        levels = image.first.levels
        why = "; ".join(lv.error or "" for lv in levels if lv.error) or "it has no levels"
        text = level_error(image, asked.level or 0) or f"no level of the image {path} can be read"
        return replace(asked, layers=layers, refused=Refusal(
            text, f"No level of the image {path} can be read: {why}", request="--level", spends_level=True))
    bad_level = level_error(image, asked.level) if asked.level is not None else None
    if bad_level is not None:
        return replace(asked, layers=layers, refused=Refusal(bad_level, request="--level", spends_level=True))
    return replace(asked, layers=layers, state=state)


def _pyramid_request(asked: Shown, found: GeoMultiscale, overlays: str | None) -> Shown:
    """A multiscales convention pyramid: no label images, a readable level, the plane in it,
    the level asked for."""
    path = asked.node.path
    ms = found.multiscale
    if overlays is not None:
        return replace(asked, refused=Refusal(f"--labels is for an OME-Zarr image; {path} is a multiscales pyramid",
                                              request="--labels"))
    if asked.array is None:
        why = "; ".join(lv.error or "" for lv in ms.levels if lv.error) or "it has no levels"
        return replace(asked, refused=Refusal(
            f"{path} is a multiscales pyramid with no readable level",
            f"No level of the pyramid {path} can be read: {why}", tuple(str(p) for p in found.problems),
            spends_level=True))
    if (bad := plane_error(asked.array, asked.plane)) is not None:
        return replace(asked, refused=Refusal(bad, request="--slice"))
    bad_level = pyramid_level_error(ms, path, asked.level) if asked.level is not None else None
    if bad_level is not None:
        return replace(asked, refused=Refusal(bad_level, request="--level", spends_level=True))
    return replace(asked, state=pyramid_state(found, asked.plane))


def _named_layers(image: Node, names: str) -> tuple[tuple[LabelLayer, ...], str | None]:
    """The label images ``names`` names (all for ""), every one shown, and why not where a name
    is not one of the image's label images."""
    assert isinstance(image, Group)
    layers = layers_of(labels_group(image))
    wanted = [n.strip() for n in names.split(",") if n.strip()] or [lay.name for lay in layers]
    have = {lay.name: lay for lay in layers}
    missing = [n for n in wanted if n not in have]
    if missing:
        known = ", ".join(have) or "none that can be read"
        return (), (f"--labels {','.join(missing)}: {image.path} has no such label image "
                    f"(its label images: {known})")
    return tuple(have[n].with_(visible=True) for n in wanted), None
