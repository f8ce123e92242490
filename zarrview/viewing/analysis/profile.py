"""The values along a line drawn on the plane, read at full resolution from level 0.

Sampling is nearest-neighbour at about one sample per pixel: ``n = ceil(length) + 1`` points
evenly spaced from one end of the line to the other (so no two are more than a pixel apart),
each taking the value of the element whose pixel ``[i, i+1)`` holds it. Nothing is
interpolated: every value plotted is one the array holds (decoded as the view decodes it), so a
spike in the profile is a spike in the data. Points outside the plane are left out.

Only the chunks the line crosses are read: the points are grouped by the chunk they fall in,
and each group reads the small box around its points (never more than about a chunk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...scheduling import Context, Job
from ..image.state import ViewState
from .plane import AnalysisError, Block, PixelSize, distances, plane_name, read_block, value_heading

#: (row, column) of each end, in the plane's data coordinates (level-0 pixels)
Line = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Profile:
    """What a line crosses: the element of each sample, its distance along the line and value."""

    rows: np.ndarray
    cols: np.ndarray
    distance: np.ndarray
    #: (samples,) or (samples, channels) where a colour dimension is shown
    values: np.ndarray
    distance_unit: str
    title: str
    value_name: str
    value_unit: str


@dataclass(frozen=True)
class ProfilePlot:
    """What the profile panel draws: one curve per channel, and the axes' labels."""

    x: np.ndarray
    curves: tuple[tuple[str, np.ndarray], ...]
    x_label: str
    y_label: str
    title: str


def sample_points(line: Line) -> tuple[np.ndarray, np.ndarray]:
    """Continuous (rows, columns) of the samples along ``line``, about one per pixel, ends included."""
    (r0, c0), (r1, c1) = line
    n = max(2, math.ceil(math.hypot(r1 - r0, c1 - c0)) + 1)
    t = np.linspace(0.0, 1.0, n)
    return r0 + t * (r1 - r0), c0 + t * (c1 - c0)


def request(state: ViewState, line: Line, pixel: PixelSize = None) -> Job[Profile]:
    """A job reading the values along ``line`` of ``state``'s plane; ``pixel``: the pixel size
    and unit of level 0 (an OME-Zarr image's), used where CF coordinates give no distance."""
    rows_at, cols_at = sample_points(line)
    nrows, ncols = state.plane_shape
    rows, cols = np.floor(rows_at).astype(np.int64), np.floor(cols_at).astype(np.int64)
    inside = (rows >= 0) & (rows < nrows) & (cols >= 0) & (cols < ncols)
    dist = distances(state, rows_at, cols_at, pixel)
    rows, cols, along = rows[inside], cols[inside], dist.values[inside]
    name, unit = value_heading(state)
    title = plane_name(state)
    chunks = state.array.typical_chunks
    cy, cx = max(1, chunks[state.y_dim]), max(1, chunks[state.x_dim])

    def work(ctx: Context) -> Profile:
        if not rows.size:
            raise AnalysisError("the line lies outside the plane")
        keys = (rows // cy) * (ncols // cx + 1) + cols // cx
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        ends = np.append(starts[1:], rows.size)
        parts = []
        for done, (a, b) in enumerate(zip(starts, ends)):
            ctx.cancel.raise_if_cancelled()
            r, c = rows[a:b], cols[a:b]
            block = Block(int(r.min()), int(r.max()) + 1, int(c.min()), int(c.max()) + 1)
            _, shown = read_block(state, block, ctx)
            parts.append(shown[r - block.r0, c - block.c0])
            if ctx.progress is not None:
                ctx.progress(done + 1, len(starts))
        return Profile(rows, cols, along, np.concatenate(parts), dist.unit, title, name, unit)

    return Job(work, f"profile of {title} from ({line[0][0]:.0f}, {line[0][1]:.0f}) to ({line[1][0]:.0f}, "
                     f"{line[1][1]:.0f})")


def plot_of(profile: Profile, channel_names: tuple[str, ...] = ()) -> ProfilePlot:
    """The curves and labels of ``profile``; a colour dimension's channels are named by
    ``channel_names`` (else "channel i")."""
    values = profile.values
    if values.ndim == 1:
        curves: tuple[tuple[str, np.ndarray], ...] = ((profile.value_name, values.astype(np.float64)),)
    else:
        curves = tuple((channel_names[i] if i < len(channel_names) else f"channel {i}",
                        values[:, i].astype(np.float64)) for i in range(values.shape[1]))
    y_label = f"{profile.value_name} ({profile.value_unit})" if profile.value_unit else profile.value_name
    return ProfilePlot(profile.distance, curves, f"distance ({profile.distance_unit})", y_label, profile.title)
