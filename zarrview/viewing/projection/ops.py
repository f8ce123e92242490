"""The reductions a projection computes, as partial results that grow by one slab at a time
and merge with each other.

A projection reads its range of the reduced dimension slab after slab; each slab's values come
here as ``(k, *plane)`` (the reduced dimension first) and are folded into one partial result the
size of the output plane. Partial results of different slabs merge (a cluster reduces slabs on
its workers and the client merges what comes back), so one set of rules serves both engines.

The rules are numpy's, with NaN ignored as numpy's nan-functions ignore it:

* ``max``/``min``: the array's own type; a float element that is NaN in every slab is NaN
  (``np.nanmax``), an integer array has no NaN. Exactly numpy's values.
* ``sum``: in int64 for signed integers and booleans, uint64 for unsigned ones (``np.sum``'s
  own choice: they wrap as numpy's do past 2**63), float64 for floats, NaN counted as 0 (as
  ``np.nansum(a, axis, dtype=np.float64)``).
* ``mean``: float64, NaN ignored; NaN where nothing was counted (``np.nanmean(..., dtype=float64)``).
* ``std``: float64, the population deviation (``ddof`` 0, as numpy) or with ``ddof``, from
  Welford's running mean and sum of squared deviations, one plane at a time, and Chan's rule
  where two partial results merge: no sum of squares that cancels catastrophically. NaN where
  fewer than ``ddof + 1`` values were counted.

Memory: ``max``/``min`` hold one plane of the array's type, ``sum`` one plane of its sum type,
``mean`` a float64 sum and (floats only) an int64 count, ``std`` a float64 mean and sum of
squares (and a count for floats); each step allocates at most two float64 planes of scratch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

OPS = ("max", "min", "sum", "mean", "std")
#: element kinds a projection reduces (complex, dates, text and records are refused by name)
REDUCIBLE = "biuf"


class ProjectionOpError(ValueError):
    """An operation the projection does not know, or one it cannot apply to the array's type."""


def result_dtype(op: str, dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The type of the projected plane for values of ``dtype`` (see the module's rules)."""
    check_op(op, dtype)
    if op in ("max", "min"):
        return np.dtype(dtype)
    if op == "sum":
        if dtype.kind == "f":
            return np.dtype(np.float64)
        return np.dtype(np.uint64 if dtype.kind == "u" else np.int64)
    return np.dtype(np.float64)


def check_op(op: str, dtype: np.dtype[Any]) -> None:
    if op not in OPS:
        raise ProjectionOpError(f"unknown reduction {op!r}: one of {', '.join(OPS)}")
    if dtype.kind not in REDUCIBLE or dtype.names:
        raise ProjectionOpError(f"values of type {dtype} cannot be reduced (numbers and booleans only)")


@dataclass
class Partial:
    """What is known of the projection after some slabs: ``value`` holds the running max, min
    or sum, or the running mean for ``mean``/``std`` (then ``count`` the values counted per
    element, or one number where no element can be NaN, and ``m2`` the sum of squared
    deviations for ``std``). ``value`` is None before the first slab."""

    op: str
    value: np.ndarray | None = None
    count: np.ndarray | int = 0
    m2: np.ndarray | None = field(default=None, repr=False)

    # -- folding a slab in ------------------------------------------------------------------
    def add(self, values: np.ndarray) -> None:
        """Fold in ``values`` of shape ``(k, *plane)``, one plane at a time (no slab-sized temporary)."""
        for plane in values:
            self._add_plane(plane)

    def _add_plane(self, x: np.ndarray) -> None:
        op = self.op
        floats = x.dtype.kind == "f"
        if op in ("max", "min"):
            if self.value is None:
                self.value = np.array(x, copy=True)
                return
            fn = (np.fmax if op == "max" else np.fmin) if floats else (np.maximum if op == "max" else np.minimum)
            fn(self.value, x, out=self.value)
            return
        if op in ("sum", "mean"):
            if self.value is None:
                self.value = np.zeros(x.shape, result_dtype("sum" if op == "sum" else "mean", x.dtype))
                if floats and op == "mean":
                    self.count = np.zeros(x.shape, np.int64)
            if floats:
                valid = ~np.isnan(x)
                np.add(self.value, x, out=self.value, where=valid)
                if op == "mean":
                    assert isinstance(self.count, np.ndarray)
                    self.count += valid
            else:
                np.add(self.value, x, out=self.value, casting="unsafe")
                if op == "mean":
                    self.count = int(self.count) + 1
            return
        self._welford(x, floats)

    def _welford(self, x: np.ndarray, floats: bool) -> None:
        """One plane into the running mean and sum of squared deviations."""
        if self.value is None:
            self.value = np.zeros(x.shape, np.float64)
            self.m2 = np.zeros(x.shape, np.float64)
            if floats:
                self.count = np.zeros(x.shape, np.int64)
        mean, m2 = self.value, self.m2
        assert m2 is not None
        delta = np.subtract(x, mean, dtype=np.float64)
        if floats:
            assert isinstance(self.count, np.ndarray)
            valid = ~np.isnan(delta)
            self.count += valid
            np.copyto(delta, 0.0, where=~valid)
            step = np.divide(delta, self.count, out=np.zeros_like(delta), where=valid)
        else:
            self.count = int(self.count) + 1
            step = np.divide(delta, self.count)
        mean += step
        np.subtract(x, mean, out=step, dtype=np.float64)  # x - new mean
        if floats:
            np.copyto(step, 0.0, where=np.isnan(step))
        step *= delta
        m2 += step

    # -- merging partial results ---------------------------------------------------------------
    def merge(self, other: Partial) -> None:
        """Fold in another partial result of the same plane (from other slabs)."""
        if other.value is None:
            return
        if self.value is None:
            self.value, self.count, self.m2 = other.value, other.count, other.m2
            return
        op, a, b = self.op, self.value, other.value
        floats = a.dtype.kind == "f"
        if op in ("max", "min"):
            fn = (np.fmax if op == "max" else np.fmin) if floats else (np.maximum if op == "max" else np.minimum)
            fn(a, b, out=a)
        elif op == "sum":
            np.add(a, b, out=a)
        elif op == "mean":
            a += b
            self.count = self.count + other.count
        else:
            self._chan(other)

    def _chan(self, other: Partial) -> None:
        """Chan, Golub and LeVeque's pairwise combination of two (count, mean, m2) triples."""
        assert self.value is not None and other.value is not None and self.m2 is not None and other.m2 is not None
        na = np.asarray(self.count, dtype=np.float64)
        nb = np.asarray(other.count, dtype=np.float64)
        n = na + nb
        safe = np.where(n > 0, n, 1.0)
        delta = other.value - self.value
        self.value += delta * (nb / safe)
        self.m2 += other.m2 + delta * delta * (na * nb / safe)
        self.count = self.count + other.count

    # -- the answer ------------------------------------------------------------------------------
    def result(self, ddof: int = 0) -> np.ndarray:
        """The projected plane (see the module's rules for its type and its NaN)."""
        if self.value is None:
            raise ValueError("a projection of no values")
        if self.op in ("max", "min", "sum"):
            return self.value
        count = np.asarray(self.count, dtype=np.float64)
        if self.op == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.divide(self.value, count)
            return np.where(count > 0, out, np.nan) if np.ndim(count) else (out if count > 0 else out * np.nan)
        assert self.m2 is not None
        dof = count - ddof
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.divide(self.m2, dof)
        var = np.where(dof > 0, var, np.nan)
        return np.sqrt(np.maximum(var, 0.0, where=~np.isnan(var), out=var))
