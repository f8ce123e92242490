"""The panels that fold away so the image keeps most of the window: the metadata panel under a
one-line summary, and the column of image controls (channels, labels, points and shapes) beside
the image rather than in rows above it.

Each only shows, hides and sizes its contents; the window remembers whether each is open.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QSplitter, QToolButton, QVBoxLayout,
                               QWidget)

from .metadata_panel import MetadataPanel

#: the height the metadata panel opens at, before the user has dragged it
OPEN_HEIGHT = 250
#: the widest the side column grows for its controls (wider ones scroll)
SIDE_MAX_WIDTH = 380
#: the share of the window's width the image keeps: until the user says otherwise, the side
#: column opens only where the image keeps this much beside it, and folds to its toggle elsewhere
IMAGE_SHARE = 0.6
#: what Qt takes for "no maximum"
NO_MAXIMUM = (1 << 24) - 1


class MetadataFold(QWidget):
    """The metadata panel below a header line (a toggle and the node's summary): folded, only
    the line shows and the data view below takes the rest of the splitter. ``toggled(open)``
    follows the header's button, whoever pressed it."""

    toggled = Signal(bool)

    def __init__(self, panel: MetadataPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.button = QToolButton()
        self.button.setText("Metadata")
        self.button.setCheckable(True)
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setToolTip("Show or fold the metadata, attributes and JSON of the node selected (View menu)")
        self.summary = QLabel()
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header = QWidget()
        line = QHBoxLayout(self.header)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        line.addWidget(self.summary, 1)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(panel, 1)
        panel.summary_changed.connect(self.summary.setText)
        self.open_height = OPEN_HEIGHT
        self.button.toggled.connect(self.set_open)
        self.set_open(False)

    def is_open(self) -> bool:
        return self.button.isChecked()

    def set_open(self, shown: bool) -> None:
        """Unfolded, the panel gets back the height it had (``OPEN_HEIGHT`` at first); folded,
        the header line alone stays, saying what the node is."""
        if self.panel.isVisible() and not shown:
            self.open_height = self.height()
        self.button.blockSignals(True)
        self.button.setChecked(shown)
        self.button.blockSignals(False)
        self.button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.summary.setVisible(not shown)
        self.panel.setVisible(shown)
        margins = self._layout.contentsMargins()
        self.setMaximumHeight(NO_MAXIMUM if shown else self.header.sizeHint().height() + margins.top() + margins.bottom())
        splitter = self.parentWidget()
        if shown and isinstance(splitter, QSplitter):
            sizes = splitter.sizes()
            mine = splitter.indexOf(self)
            total = sum(sizes)
            if len(sizes) == 2 and total > 0:
                sizes[mine] = min(self.open_height, total * 2 // 3)
                sizes[1 - mine] = total - sizes[mine]
                splitter.setSizes(sizes)
        self.toggled.emit(shown)


class SideColumn(QScrollArea):
    """The image's controls in a column at its right, scrolled when they are taller than the
    view; shown while it holds controls and its ``toggle`` is down, as wide as they need up to
    ``SIDE_MAX_WIDTH``. The toggle shows only while there is something to show.

    Until the user opens or folds it (``chosen``), the column opens where the image keeps
    ``IMAGE_SHARE`` of the window's width beside it and folds to its toggle where it would not,
    again whenever the view is resized; a choice of the user's stands."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: the user's choice (open or folded), or None: open where the image keeps its share
        self.chosen: bool | None = None
        self._deciding = False
        self._view: QWidget | None = None
        self.toggle = QToolButton()
        self.toggle.setText("Controls")
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setToolTip("Show or hide the column of channel and label controls beside the image")
        self.toggle.toggled.connect(self._toggled)
        inner = QWidget()
        #: the column's controls, top to bottom in the order they were added
        self.column = QVBoxLayout(inner)
        self.column.setContentsMargins(4, 0, 2, 0)
        self.column.addStretch(1)  # the controls packed at the top, whatever the height
        self.setWidget(inner)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.fit()

    def _toggled(self, on: bool) -> None:
        if not self._deciding:  # the toggle, the View menu or the saved choice: the user's
            self.chosen = on
        self.fit()

    def choose(self, shown: bool) -> None:
        """The user's choice (the one saved last session): it stands whatever the width."""
        self.chosen = shown
        self.toggle.setChecked(shown)
        self.fit()

    def beside(self, view: QWidget) -> None:
        """The column sits in ``view`` beside the image: the view's width, as it is resized,
        decides whether the column fits."""
        self._view = view
        view.installEventFilter(self)

    def _fits(self, width: int) -> bool:
        """Whether the image keeps ``IMAGE_SHARE`` of the window's width beside a column ``width`` wide."""
        view, window = self._view, self.window()
        if view is None or window is self or window.width() <= 0:
            return True
        return view.width() - width >= IMAGE_SHARE * window.width()

    def add(self, widget: QWidget) -> None:
        """``widget`` at the bottom of the column."""
        self.column.insertWidget(self.column.count() - 1, widget)
        self.fit()

    def clear(self) -> None:
        for w in self.controls():
            self.column.removeWidget(w)
            w.deleteLater()
        self.fit()

    def fit(self) -> None:
        """As wide as the widest control (the scroll bar's room included); shown when wanted
        and not empty, the toggle's arrow pointing where the column goes when pressed."""
        width = min(SIDE_MAX_WIDTH, self.column.sizeHint().width()) + self.verticalScrollBar().sizeHint().width()
        self.setFixedWidth(width)
        filled = bool(self.controls())
        if self.chosen is None and filled and self.toggle.isChecked() != self._fits(width):
            self._deciding = True
            try:
                self.toggle.setChecked(not self.toggle.isChecked())  # the View menu follows
            finally:
                self._deciding = False
        wanted = self.toggle.isChecked()
        self.toggle.setVisible(filled)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow if wanted else Qt.ArrowType.LeftArrow)
        self.setVisible(wanted and filled)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """A control's size settles once it is polished and shown (a group box's title, a label
        panel added after the channels): the column follows."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest \
                or watched is self._view and event.type() == QEvent.Type.Resize and self.chosen is None:
            self.fit()
        return super().eventFilter(watched, event)

    def controls(self) -> list[QWidget]:
        """The widgets in the column, top to bottom."""
        items = (self.column.itemAt(i) for i in range(self.column.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]
