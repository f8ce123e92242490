"""The ``spatial:`` convention: which two dimensions of an array are Y and X, and the affine map
from their indices to coordinates.

``x = a * col + b * row + c`` and ``y = d * col + e * row + f`` (``spatial:transform`` is
``[a, b, c, d, e, f]``, rasterio's order). With ``"pixel"`` registration (the default) index
``(0, 0)`` is the top-left corner of the first pixel, so its centre is at ``(0.5, 0.5)``; with
``"node"`` registration the transform gives pixel centres.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...zarrlib import Array
from ..ome.doc import Reporter, is_number


@dataclass(frozen=True)
class Affine:
    a: float
    b: float
    c: float
    d: float
    e: float
    f: float

    @property
    def rotated(self) -> bool:
        """Whether X depends on the row or Y on the column (the axes are then not separable)."""
        return self.b != 0.0 or self.d != 0.0

    def apply(self, col: float, row: float) -> tuple[float, float]:
        """(x, y) of the index point (col, row)."""
        return self.a * col + self.b * row + self.c, self.d * col + self.e * row + self.f

    def coarser(self, sx: float, sy: float, tx: float = 0.0, ty: float = 0.0) -> Affine:
        """The transform of a level whose pixel (0, 0) corner lies at (tx, ty) pixels of this
        one and whose pixels are ``sx`` by ``sy`` of these."""
        x0, y0 = self.apply(tx, ty)
        return Affine(self.a * sx, self.b * sy, x0, self.d * sx, self.e * sy, y0)


def read_affine(obj: Any, key: str, path: str, rep: Reporter) -> Affine | None:
    """The affine at ``obj[key]`` (six finite numbers), or None; a malformed one is a problem."""
    if not isinstance(obj, dict) or key not in obj:
        return None
    value = obj[key]
    where = f"{path}.{key}" if path else key
    if not (isinstance(value, list) and len(value) == 6 and all(is_number(v) for v in value)):
        rep.error(where, f'"{key}" must be six numbers [a, b, c, d, e, f], not {value!r:.80}')
        return None
    a, b, c, d, e, f = (float(v) for v in value)
    if a * e - b * d == 0.0:
        rep.error(where, f'"{key}" {value} maps every pixel onto a line (its determinant is 0)')
        return None
    return Affine(a, b, c, d, e, f)


def transform_usable(attrs: Any, path: str, rep: Reporter) -> bool:
    """Whether ``spatial:transform_type`` allows reading ``spatial:transform`` as an affine."""
    kind = attrs.get("spatial:transform_type", "affine") if isinstance(attrs, dict) else "affine"
    if kind != "affine":
        rep.warning(f"{path}.spatial:transform_type" if path else "spatial:transform_type",
                    f"transform type {kind!r:.40} is not one zarrview reads; coordinates are shown as indices")
        return False
    return True


def centre_offset(attrs: Any, rep: Reporter) -> float:
    """Where a pixel's centre lies in transform indices: 0.5 for ``"pixel"`` registration, 0 for ``"node"``."""
    value = attrs.get("spatial:registration", "pixel") if isinstance(attrs, dict) else "pixel"
    if value not in ("pixel", "node"):
        rep.error("spatial:registration", f'"spatial:registration" must be "pixel" or "node", not {value!r:.40}')
        return 0.5
    return 0.5 if value == "pixel" else 0.0


def spatial_dims(arr: Array, sources: Sequence[Any], rep: Reporter) -> tuple[int, int] | None:
    """(Y, X): the dimensions ``spatial:dimensions`` names (the first of ``sources``' attributes
    that has it) in the array's ``dimension_names``; else its last two. None for fewer than two."""
    if arr.ndim < 2:
        return None
    fallback = (arr.ndim - 2, arr.ndim - 1)
    named = next((s["spatial:dimensions"] for s in sources if isinstance(s, dict) and "spatial:dimensions" in s), None)
    if named is None:
        return fallback
    if not (isinstance(named, list) and len(named) == 2 and all(isinstance(n, str) for n in named)):
        rep.error("spatial:dimensions", f'"spatial:dimensions" must be two names [Y, X], not {named!r:.60}')
        return fallback
    names = [str(n) for n in (arr.dimension_names or ())]
    missing = [n for n in named if n not in names]
    if missing:
        rep.error("spatial:dimensions", f"{arr.path} has no dimension {missing[0]!r} (its dimension names: "
                                        f"{names or 'none'}); its last two dimensions are taken as Y and X")
        return fallback
    y, x = names.index(named[0]), names.index(named[1])
    return (y, x) if y != x else fallback
