"""Why two arrays or planes cannot be compared: each refusal is a class, its message the reason
the window shows."""

from __future__ import annotations


class CompareError(ValueError):
    """Two arrays or planes that cannot be compared as asked; the message says why."""


class LinkError(CompareError):
    """No plane of B stands for the plane of A shown (B has no dimension for A's rows or columns)."""


class GridMismatchError(CompareError):
    """Two planes on different grids with no common window (no overlap, units that differ)."""


class ShapeMismatchError(CompareError):
    """Two arrays or planes of different shapes compared element by element; the message names both."""


class UnmatchedError(CompareError):
    """A coordinate value of A that no value of B stands for (outside B's values, in units or a
    calendar that do not convert); the message says why."""
