"""What the main window offers the helpers it builds: its menus (``menus.py``), what the data area
shows for the selected node (``node_display.py``), opening nodes by path (``path_navigator.py``)
and File ▸ Open Version (``version_actions.py``).

Each helper sees the window through one of these protocols, which name only what that helper
uses, so none imports the window, and the window's other members stay its own.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLineEdit, QWidget

from .. import zarrlib as zl
from ..scheduling import WorkerPool
from .data_view import DataView
from .fold_panels import MetadataFold
from .io_dock import IoDock
from .metadata_panel import MetadataPanel
from .orthogonal_view import OrthogonalViews
from .series_panel import SeriesPanel
from .tree.filter import FilterProxy
from .tree.model import HierarchyModel
from .tree.paging import HierarchyTree


class WindowPart(Protocol):
    """What every helper that reads in the background and speaks on the status bar uses."""

    @property
    def pool(self) -> WorkerPool:
        """Where the helper's background jobs run."""
        ...

    def say(self, text: str) -> None:
        """``text`` on the status bar."""
        ...

    def window(self) -> QWidget:
        """The top-level widget: the parent of the helper's dialogs, timers and lanes, which
        go with it."""
        ...


class VersionHost(WindowPart, Protocol):
    """The window whose current store's repository File ▸ Open Version reads."""

    def current_store(self) -> zl.Node | None:
        """The root node of the store whose node is selected (None: nothing selected)."""
        ...

    def open_location(self, location: str, **options: Any) -> None:
        """Open a store beside the others."""
        ...


class NavigatorHost(WindowPart, Protocol):
    """The window whose tree nodes are opened in by path."""

    @property
    def model(self) -> HierarchyModel:
        """The open stores and the nodes listed below them."""
        ...

    @property
    def proxy(self) -> FilterProxy:
        """The filter between the model and the tree."""
        ...

    @property
    def tree(self) -> HierarchyTree:
        """The tree view, whose current row is the node selected."""
        ...


class DisplayHost(WindowPart, Protocol):
    """The window whose data area and metadata panel show the node selected."""

    @property
    def data(self) -> DataView:
        """The data area."""
        ...

    @property
    def meta(self) -> MetadataPanel:
        """The metadata panel (a pyramid's problems are added to it)."""
        ...


class MenuHost(Protocol):
    """What the window's menu entries do and the panels they show or hide."""

    @property
    def settings(self) -> QSettings:
        """Where whether image axes are shown is remembered, and the recent locations."""
        ...

    @property
    def data(self) -> DataView:
        """The data area: its tools row, analysis panel, axes and side column."""
        ...

    @property
    def series(self) -> SeriesPanel:
        """The series at a point (View ▸ Series at a Point)."""
        ...

    @property
    def orthogonal(self) -> OrthogonalViews:
        """The XZ and YZ sections (View ▸ Orthogonal Views)."""
        ...

    @property
    def meta_fold(self) -> MetadataFold:
        """The metadata panel's fold (View ▸ Metadata Panel)."""
        ...

    @property
    def io_dock(self) -> IoDock:
        """What each view costs (View ▸ I/O)."""
        ...

    @property
    def filter(self) -> QLineEdit:
        """The tree's filter box (Find)."""
        ...

    def open_folder(self) -> None: ...
    def open_file(self) -> None: ...
    def open_references(self) -> None: ...
    def open_url(self) -> None: ...
    def open_version(self) -> None: ...
    def go_to_path(self) -> None: ...

    def open_location(self, location: str, **options: Any) -> None:
        """Open a store (a recent location, with the options it was opened with)."""
        ...

    def close_current_store(self) -> None: ...

    def validate_store(self) -> None:
        """The findings of the current store against its specifications, in a dialog."""
        ...

    def save_view(self) -> None:
        """The view shown, to a .zarrview file."""
        ...

    def copy_view_command(self) -> None: ...
    def copy_view_link(self) -> None: ...

    def copy_snippet(self, kind: str) -> None:
        """Python that reads the plane shown with the library ``kind``, on the clipboard."""
        ...

    def show_axes(self, shown: bool) -> None:
        """Image axes on or off."""
        ...

    def show_compare(self, shown: bool) -> None:
        """A second array beside the one shown, or not."""
        ...

    def show_storage_columns(self, shown: bool) -> None:
        """The tree's Stored and Ratio columns on or off."""
        ...

    def edit_preferences(self) -> None: ...

    def say(self, text: str) -> None:
        """``text`` on the status bar (an export's progress and outcome)."""
        ...
