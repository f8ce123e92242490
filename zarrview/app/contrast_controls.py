"""The contrast of a plane: Auto contrast, whether every new plane takes its own levels, and
the levels as two numbers to type.

The boxes show the levels the scene is drawn with (``show_levels``, with every scene), so a
histogram drag, Auto contrast or a new plane's automatic levels appear in them as they happen;
typing a number sets that end alone and keeps the other exactly (the box shows it rounded to six
digits). A number that is not finite, or that would put the lower level at or above the upper
one, is refused and the box shows the levels again. In a composite (the channels' windows) or a
label image (its labels' colours) levels do not apply: the boxes and the option are disabled.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QRegularExpression
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

#: what a level box accepts: a decimal number, with an exponent if wanted (1e-6, -2.5E3)
NUMBER = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
#: significant digits a level box shows
DIGITS = 6
#: width of a level box in characters: -0.984517 and 1.23457e+06 fit
BOX_CHARACTERS = 10


class ContrastControls:
    """The widgets, as lines for the controls' grid. An array with planes to step through (3 or
    more dimensions) gets two: ``first`` (Auto contrast, Auto per plane) beside the axes and
    ``second`` (the levels) under it, beside the first slider, so the line of axes and colour
    map stays about as wide as it was and the image keeps its place. A 2-D array has one plane:
    no option, the levels beside Auto contrast on ``first`` alone (``second`` None)."""

    def __init__(self, auto_contrast: Callable[[], None], levels_typed: Callable[[tuple[float, float]], None],
                 per_plane: Callable[[bool], None], planes: bool = True, per_plane_on: bool = False) -> None:
        self.levels_typed = levels_typed
        #: the levels shown: the end not typed is taken from here, exactly
        self.levels: tuple[float, float] | None = None
        self.auto = QPushButton("Auto contrast")
        self.auto.setToolTip("Levels from the 0.5 and 99.5 percentiles of the values on screen (the region in view, "
                             "at the level shown); drag the histogram or type the levels to set them by hand")
        self.auto.clicked.connect(auto_contrast)
        self.per_plane: QCheckBox | None = None
        if planes:
            self.per_plane = QCheckBox("Auto per plane")
            self.per_plane.setChecked(per_plane_on)  # as the state has it (a view kept for the array)
            self.per_plane.setToolTip("Every new plane (a slider step, another time) takes its levels from its own "
                                      "values on screen as it lands; off: the levels stay until Auto contrast or a drag")
            self.per_plane.toggled.connect(per_plane)
        self.lo, self.hi = QLineEdit(), QLineEdit()
        width = self.lo.fontMetrics().horizontalAdvance("0" * BOX_CHARACTERS)
        for box, end in ((self.lo, "lower"), (self.hi, "upper")):
            box.setValidator(QRegularExpressionValidator(QRegularExpression(NUMBER), box))
            box.setFixedWidth(width)
            box.setToolTip(f"The {end} level: the value drawn at the {end} end of the colour map; type one to set it")
            box.editingFinished.connect(lambda b=box: self._typed(b))
        levels = (QLabel("min"), self.lo, QLabel("max"), self.hi)
        self.first = _line(self.auto, self.per_plane) if self.per_plane is not None else _line(self.auto, *levels)
        self.second = _line(*levels) if self.per_plane is not None else None

    def show_levels(self, levels: tuple[float, float], applies: bool = True) -> None:
        """The levels the plane is drawn with; ``applies`` False (a composite, a label image)
        disables the boxes and the option. A box being typed in keeps what is typed."""
        self.levels = (float(levels[0]), float(levels[1]))
        for box, value in zip((self.lo, self.hi), self.levels, strict=True):
            if box.isEnabled() != applies:
                box.setEnabled(applies)
            text = f"{value:.{DIGITS}g}"
            # every frame comes here: a box is touched only when its words change (each setText repaints)
            if box.text() != text and not (box.hasFocus() and box.isModified()):
                box.setText(text)
                box.setCursorPosition(0)  # a number longer than the box shows its start
        if self.per_plane is not None and self.per_plane.isEnabled() != applies:
            self.per_plane.setEnabled(applies)

    def _typed(self, box: QLineEdit) -> None:
        """A number typed in ``box`` (Return or focus out): the levels with that end set."""
        if not box.isModified() or self.levels is None:
            return  # focus left without an edit: the rounded text must not replace the exact level
        box.setModified(False)
        try:
            value = float(box.text())
        except ValueError:
            value = math.nan
        lo, hi = (value, self.levels[1]) if box is self.lo else (self.levels[0], value)
        if not (math.isfinite(value) and lo < hi):
            self.show_levels(self.levels, box.isEnabled())
            return
        self.levels_typed((lo, hi))


def _line(*widgets: QWidget) -> QWidget:
    line = QWidget()
    layout = QHBoxLayout(line)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    for w in widgets:
        layout.addWidget(w)
    layout.addStretch(1)
    return line
