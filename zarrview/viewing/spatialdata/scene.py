"""What is drawn with an image of a SpatialData store: the elements that share a coordinate
system with it, placed by their transformations into the image's own pixel space.

The image view draws in the image's level-0 pixel space (pixel ``i`` spans ``[i, i + 1)``: the
image's intrinsic coordinates, as spatialdata has them). An element at ``M_e`` in a coordinate
system the image reaches by ``M_i`` lies at ``inverse(M_i) @ M_e`` there. Label images become
:class:`~..labels.layers.LabelLayer`\\ s whose levels are placed so (where that map keeps the axes:
scale and translation only); points and shapes become :class:`Overlay`\\ s, read on a worker
(``overlay_job``, the request) and taken from the answer on the GUI thread (``overlays``, the apply).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Answer, Job
from ...zarrlib import CancelToken, Group, ZarrError
from ..labels.layers import LabelLayer, layer_of
from ..ome.model import Level, OmeImage
from .parquet import MAX_POINTS, MAX_SHAPES, read_points, read_shapes
from .store import Element, SpatialDataStore, read_store, store_of
from .transforms import TransformError

XY = ("x", "y")


@dataclass(frozen=True)
class Mates:
    """An image element of a store and what shares a coordinate system with it."""

    store: SpatialDataStore
    image: Element


def mates_of(image: Group) -> Mates | None:
    """The store an image group is an element of, listed (requests: not on the GUI thread); None
    for an image outside a SpatialData store."""
    root = store_of(image)
    store = read_store(root) if root is not None else None
    if store is None:
        return None
    element = next((e for e in store.of("images") if e.path == image.path), None)
    return Mates(store, element) if element is not None else None


def to_image(image: Element, other: Element, system: str) -> np.ndarray:
    """The 3 × 3 matrix from ``other``'s (x, y) to the image's pixel space (x, y) through ``system``."""
    m_image = image.systems[system].matrix(XY, XY)
    m_other = other.systems[system].matrix(XY, XY)
    if abs(np.linalg.det(m_image[:2, :2])) < 1e-300:
        raise TransformError(f"{image.path}: its transformation to {system!r} cannot be inverted")
    return np.linalg.solve(m_image, m_other)


# -- labels -------------------------------------------------------------------------------------
def label_layers(mates: Mates, image: OmeImage) -> tuple[tuple[LabelLayer, ...], tuple[str, ...]]:
    """The label images of the image's coordinate systems as layers placed over it, and a note
    for each one that cannot be (opens their levels: not on the GUI thread)."""
    from ..ome import detect

    layers, notes = [], []
    for element, system in mates.store.mates(mates.image, ("labels",)):
        try:
            found = detect(element.group, labels=False)
            placed = _placed(found, element, mates.image, image, system) if isinstance(found, OmeImage) else None
        except (ZarrError, TransformError) as e:
            notes.append(f"labels {element.name}: {e}")
            continue
        if isinstance(placed, str):
            notes.append(f"labels {element.name}: {placed}")
        elif placed is not None:
            layers.append(placed)
    return tuple(layers), tuple(notes)


def _placed(found: OmeImage, label: Element, image_el: Element, image: OmeImage, system: str) -> LabelLayer | str | None:
    layer = layer_of(label.name, found)
    if layer is None or not image.multiscales or not image.first.levels:
        return None
    t = to_image(image_el, label, system)
    if abs(t[0, 1]) > 1e-9 * abs(t[0, 0]) or abs(t[1, 0]) > 1e-9 * abs(t[1, 1]) or t[0, 0] <= 0 or t[1, 1] <= 0:
        return f"rotated, sheared or flipped against the image in {system!r}: left off it"
    image_axes = [a.name for a in image.first.axes]
    base = image.first.levels[0]
    along = {"x": (t[0, 0], t[0, 2]), "y": (t[1, 1], t[1, 2])}

    def place(level: Level) -> Level:
        scale, shift = list(level.scale), list(level.translation)
        for k, name in enumerate(layer.axes):
            if name in along and name in image_axes:
                a, b = along[name]
                d = image_axes.index(name)
                s0, t0 = base.scale[d], base.translation[d]
                # label pixel j's centre: a * (scale j + shift + 1/2) + b in the image's pixel space,
                # whose pixel i has its centre at s0 i + t0 in the image's physical space
                scale[k] = float(s0 * a * level.scale[k])
                shift[k] = float(s0 * (a * (level.translation[k] + 0.5) + b - 0.5) + t0)
        return replace(level, scale=tuple(scale), translation=tuple(shift))

    return layer.with_(levels=tuple(place(lv) for lv in layer.levels))


# -- points and shapes --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Overlay:
    """A points or shapes element in the image's pixel space (x: column, y: row)."""

    name: str
    kind: str                          # "points", "circles", "polygons"
    system: str
    xy: np.ndarray                     # points and circle centres, n × 2
    radius: np.ndarray | None = None   # circles, in image pixels
    rings: tuple[np.ndarray, ...] = ()  # polygons, each n × 2
    codes: np.ndarray | None = None    # each point's feature into ``categories``
    categories: tuple[str, ...] = ()
    total: int = 0
    drawn: int = 0
    error: str | None = None
    sampled: str = ""

    @property
    def note(self) -> str:
        """What the panel says of it: how many are drawn of how many, or why none are."""
        if self.error is not None:
            return f"{self.name}: {self.error}"
        what = {"points": "points", "circles": "circles", "polygons": "shapes"}[self.kind]
        if self.drawn < self.total:
            return f"{self.name}: {self.drawn:,} of {self.total:,} {what} drawn ({self.sampled or 'evenly spaced'})"
        return f"{self.name}: {self.total:,} {what}"


def apply_matrix(m: np.ndarray, xy: np.ndarray) -> np.ndarray:
    return xy @ m[:2, :2].T + m[:2, 2] if len(xy) else np.zeros((0, 2))


def overlay_job(mates: Mates, max_points: int = MAX_POINTS, max_shapes: int = MAX_SHAPES) -> Job[Any] | None:
    """The request: a job reading every points and shapes element of the image's coordinate
    systems (None where there is none)."""
    wanted = mates.store.mates(mates.image, ("points", "shapes"))
    if not wanted:
        return None
    work = functools.partial(_read_all, mates.image, wanted, max_points, max_shapes)
    return Job(lambda ctx: work(ctx.cancel), f"points and shapes over {mates.image.path}")


def overlays(answer: Answer[Any]) -> tuple[Overlay, ...]:
    """The apply: the overlays of an answer (none for a cancelled one; an error said as one)."""
    if answer.error is not None:
        return (Overlay("points and shapes", "points", "", np.zeros((0, 2)), error=str(answer.error)),)
    return answer.value if isinstance(answer.value, tuple) else ()


def _read_all(image: Element, wanted: tuple[tuple[Element, str], ...], max_points: int, max_shapes: int,
              cancel: CancelToken) -> tuple[Overlay, ...]:
    out = []
    for element, system in wanted:
        try:
            out.append(read_overlay(image, element, system, max_points, max_shapes, cancel))
        except (ZarrError, TransformError) as e:
            if cancel.cancelled:
                raise
            out.append(Overlay(element.name, element.kind, system, np.zeros((0, 2)), error=str(e)))
    return tuple(out)


def read_overlay(image: Element, element: Element, system: str, max_points: int = MAX_POINTS,
                 max_shapes: int = MAX_SHAPES, cancel: CancelToken | None = None) -> Overlay:
    """One points or shapes element, read and placed in the image's pixel space."""
    m = to_image(image, element, system)
    if element.kind == "points":
        attrs = element.group.attrs.get("spatialdata_attrs") if isinstance(element.group.attrs, dict) else None
        feature = attrs.get("feature_key") if isinstance(attrs, dict) else None
        pts = read_points(element.group, feature if isinstance(feature, str) else None, max_points, cancel)
        return Overlay(element.name, "points", system, apply_matrix(m, pts.xy), codes=pts.codes,
                       categories=pts.categories, total=pts.total, drawn=len(pts.xy), sampled=pts.sampled)
    shapes = read_shapes(element.group, max_shapes, cancel)
    if shapes.rings:
        drawn = len(set(shapes.owner.tolist()))
        return Overlay(element.name, "polygons", system, np.zeros((0, 2)),
                       rings=tuple(apply_matrix(m, r) for r in shapes.rings), total=shapes.total, drawn=drawn,
                       error=shapes.note or None)
    scale = float(np.sqrt(abs(np.linalg.det(m[:2, :2]))))  # exact where the map keeps circles round
    radius = shapes.radius * scale if shapes.radius is not None else None
    return Overlay(element.name, "circles" if radius is not None else "points", system,
                   apply_matrix(m, shapes.centers), radius=radius, total=shapes.total, drawn=len(shapes.centers))
