"""What the data view offers the panels it builds for an image: the label layers' panel
(``label_controls.py``), the projection row (``projection_controls.py``) and the CF part
(``cf_presenter.py``).

Each panel sees the view through one of these protocols, which name only what that panel uses,
so neither imports the data view, and the view's other members stay its own.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance

from ..scheduling import WorkerPool
from ..viewing import Scene, ViewState
from ..viewing.ome import OmeImage
from .fold_panels import SideColumn


class LabelHost(Protocol):
    """The view whose image the label layers are drawn over."""

    @property
    def state(self) -> ViewState | None:
        """The view model's state shown now (None: no image)."""
        ...

    @property
    def ome(self) -> OmeImage | None:
        """The OME image shown: layers read for another image are dropped."""
        ...

    @property
    def side(self) -> SideColumn:
        """The column beside the image that holds the layers' panel."""
        ...

    def set_state(self, state: ViewState) -> None:
        """A new state for the view model (the layers added, shown, faded or recoloured)."""
        ...


class StateHost(Protocol):
    """The view whose state a panel reads and extends (the CF part adds coordinates and units)."""

    @property
    def state(self) -> ViewState | None:
        """The view model's state shown now (None: no image)."""
        ...

    def set_state(self, state: ViewState) -> None:
        """Show ``state``."""
        ...


class ProjectionHost(Protocol):
    """The view whose plane a projection replaces while it is shown."""

    @property
    def pool(self) -> WorkerPool:
        """Where the projection runs."""
        ...

    @property
    def state(self) -> ViewState | None:
        """The view model's state shown now: the array, plane and displayed dimensions."""
        ...

    @property
    def status(self) -> SignalInstance:
        """``status(text)``: a line for the window's status bar."""
        ...

    @property
    def progress(self) -> SignalInstance:
        """``progress(done, total)``: while done < total, the window's Cancel button applies."""
        ...

    def cover_plane(self, scene: Scene, status: str) -> None:
        """Draw ``scene`` where the plane is drawn, until ``paint_plane``."""
        ...

    def paint_plane(self) -> None:
        """Draw the plane's scene again."""
        ...
