"""An affine map between coordinate systems as one homogeneous matrix, with its inverse.

Every OME-Zarr 0.6 transformation a viewer places images with (identity, scale, translation,
affine, rotation, mapAxis, projectAxis, and sequences, byDimensions and bijections of them) is
affine, so each reads into one ``(M + 1) × (N + 1)`` matrix from N input to M output axes.
A ``bijection`` also carries the inverse it states, which is used as written even where the
forward matrix could be inverted: the specification lets a writer give both directions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: how close to 0 an off-diagonal term must be for a map to count as axis-aligned
_ALIGNED_TOLERANCE = 1e-12


class TransformationError(ValueError):
    """A transformation that cannot be read or applied: ``where`` is its JSON path."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class UnsupportedTransformation(TransformationError):
    """A transformation the specification allows but zarrview does not apply (displacement and
    coordinate fields, parameters stored in a Zarr array)."""


@dataclass(frozen=True, eq=False)
class AffineMap:
    """``matrix`` maps homogeneous input points (column vectors) to output points;
    ``stated_inverse`` is an inverse the metadata wrote out (a bijection's), else None."""

    matrix: np.ndarray
    stated_inverse: np.ndarray | None = None

    @property
    def n_in(self) -> int:
        return int(self.matrix.shape[1]) - 1

    @property
    def n_out(self) -> int:
        return int(self.matrix.shape[0]) - 1

    def apply(self, points: np.ndarray) -> np.ndarray:
        """Points (one a row, ``n_in`` columns) in the output coordinate system."""
        pts = np.atleast_2d(np.asarray(points, dtype=float))
        return pts @ self.matrix[:-1, :-1].T + self.matrix[:-1, -1]

    def inverse(self, where: str = "$") -> AffineMap:
        """The map back: the stated inverse, else the matrix inverted where it is square and regular."""
        if self.stated_inverse is not None:
            return AffineMap(self.stated_inverse, self.matrix)
        if self.n_in != self.n_out:
            raise TransformationError(where, f"a map from {self.n_in} to {self.n_out} axes has no inverse")
        try:
            inv = np.linalg.inv(self.matrix)
        except np.linalg.LinAlgError:
            raise TransformationError(where, "the transformation is singular and has no inverse") from None
        if not np.all(np.isfinite(inv)):
            raise TransformationError(where, "the transformation is singular and has no inverse")
        return AffineMap(inv, self.matrix)

    def then(self, after: AffineMap) -> AffineMap:
        """This map followed by ``after`` (``after(self(x))``)."""
        matrix = after.matrix @ self.matrix
        stated = None
        if self.stated_inverse is not None or after.stated_inverse is not None:
            try:
                stated = self.inverse().matrix @ after.inverse().matrix
            except TransformationError:
                stated = None
        return AffineMap(matrix, stated)

    def axis_aligned(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """(scale, translation) per axis where the map scales and shifts each axis on its own
        (``x_i = s_i * i + t_i``), else None (a rotation, shear, permutation or projection)."""
        if self.n_in != self.n_out:
            return None
        linear = self.matrix[:-1, :-1]
        off = linear - np.diag(np.diag(linear))
        if np.any(np.abs(off) > _ALIGNED_TOLERANCE):
            return None
        return (tuple(float(v) for v in np.diag(linear)), tuple(float(v) for v in self.matrix[:-1, -1]))


def identity_map(n: int) -> AffineMap:
    return AffineMap(np.eye(n + 1))


def from_linear(linear: np.ndarray, shift: np.ndarray) -> AffineMap:
    """The map ``x -> linear @ x + shift``."""
    m, n = linear.shape
    matrix = np.zeros((m + 1, n + 1))
    matrix[:m, :n] = linear
    matrix[:m, n] = shift
    matrix[m, n] = 1.0
    return AffineMap(matrix)
