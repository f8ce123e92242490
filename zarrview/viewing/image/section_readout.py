"""The readout under the cursor on an orthogonal section: the element's place along the
section's two dimensions and the point's other indices, and its value as the plane's readout
writes it (CF-decoded with units, each channel of a composite).

A section read with a stride, or from a coarser pyramid level, holds one element for several
level-0 elements along an axis; its value is then given as that sample's, marked as such, as the
plane's readout marks a preview's.
"""

from __future__ import annotations

import math

from .orthogonal import Sections
from .readout import place_text, value_text

#: the two panels, by the axes they draw
XZ, YZ = "xz", "yz"


def section_readout(sections: Sections, panel: str, x: float, y: float) -> str:
    """``x 33, z 12 (y 120, t 4): 210`` for the element at ``(x, y)`` of ``panel`` (``XZ`` or
    ``YZ``, in the panel's coordinates: level-0 indices); empty outside the section."""
    req, values = sections.request, sections.values
    if req is None or values is None or panel not in (XZ, YZ):
        return ""
    state = req.state
    section, data = (req.xz, values[0]) if panel == XZ else (req.yz, values[1])
    i = math.floor((y - section.y0) / section.dy)
    j = math.floor((x - section.x0) / section.dx)
    if not (0 <= i < data.shape[0] and 0 <= j < data.shape[1]):
        return ""
    at = {section.rows_dim: math.floor(y), section.cols_dim: math.floor(x)}
    plane_dim = state.x_dim if panel == XZ else state.y_dim
    first = [(plane_dim, at[plane_dim]), (req.z_dim, at[req.z_dim])]
    point = dict(zip((state.y_dim, state.x_dim, req.z_dim), req.point, strict=True))
    others = {**state.fixed(), state.y_dim: point[state.y_dim], state.x_dim: point[state.x_dim]}
    rest = sorted((d, k) for d, k in others.items() if d not in at)
    where = ", ".join(place_text(state, d, k) for d, k in first)
    if rest:
        where += " (" + ", ".join(place_text(state, d, k) for d, k in rest) + ")"
    text = value_text(state, data[i, j])
    if section.dy > 1 or section.dx > 1:
        return f"{where}: ≈ {text} (a sample: the section holds one element in {section.dx:g} x {section.dy:g})"
    return f"{where}: {text}"
