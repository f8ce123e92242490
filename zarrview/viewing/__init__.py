"""The view model: what is viewed and how it is drawn, without Qt.

Between the scheduling layer (which reads) and the Qt widgets (which only render and forward
input): a :class:`ViewState` says what the user looks at, a :class:`ViewController` turns each
state into read requests and each response into a :class:`Scene` of tiles placed in data
coordinates. Tests drive it without a QApplication.
"""

from __future__ import annotations

from .image.axes import colour_axis, default_axes, dim_names
from .image.controller import ViewController
from .image.scene import Scene, Tile
from .image.state import ViewState, initial_state

__all__ = ["Scene", "Tile", "ViewController", "ViewState", "colour_axis", "default_axes", "dim_names",
           "initial_state"]
