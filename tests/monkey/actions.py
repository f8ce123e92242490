"""What a person can do with the window, as actions the monkey picks at random.

Each action is registered with ``@action(name, weight)``: it gets the ``Hand`` (the window,
the corpus, the random generator, a folder for exports) and either does something a person
could do now and returns a short description, or returns None when it does not apply (no
image shown for a slider, no store open to close). Actions go through the window's widgets and
public methods only, as a person's clicks would. A new view (another convention, another
panel) adds its actions here, or in a module of its own that registers with ``action``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QMimeData, QModelIndex, QPointF, Qt, QUrl
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import QAbstractSlider, QComboBox, QDialogButtonBox, QPushButton, QSlider

from modal_input import answer_dialog
from zarrview.app.dialogs import OpenUrlDialog

from zarrview.app.window import MainWindow
from zarrview.viewing.analysis.plane import Block

from .corpus import Corpus


@dataclass
class Hand:
    """What an action may use."""

    window: MainWindow
    corpus: Corpus
    rng: random.Random
    exports: Path
    #: what the save dialog answers next
    next_export: str = ""
    #: export paths the save dialog handed out, in order
    asked: list[str] = field(default_factory=list)

    def save_dialog(self, _caption: str, _filters: str) -> str:
        """The save dialog a person fills in: the path the export action chose."""
        self.asked.append(self.next_export)
        return self.next_export


Act = Callable[[Hand], "str | None"]


@dataclass(frozen=True)
class Action:
    name: str
    weight: float
    run: Act


#: every action, by name; ``pick`` chooses by weight
REGISTRY: dict[str, Action] = {}


def action(name: str, weight: float = 1.0) -> Callable[[Act], Act]:
    def register(fn: Act) -> Act:
        REGISTRY[name] = Action(name, weight, fn)
        return fn

    return register


def pick(rng: random.Random, names: list[str] | None = None) -> Action:
    chosen = [REGISTRY[n] for n in names] if names else list(REGISTRY.values())
    return rng.choices(chosen, weights=[a.weight for a in chosen])[0]


# -- finding things the way a person sees them ---------------------------------------------------
def menu_action(w: MainWindow, text: str) -> QAction:
    """The menu entry whose text (without its ``&``) starts with ``text``."""
    for menu_entry in w.menuBar().actions():
        menu = menu_entry.menu()
        for act in menu.actions() if menu is not None else []:
            if act.text().replace("&", "").startswith(text):
                return act
    raise LookupError(f"no menu entry {text!r}")


def visible_rows(w: MainWindow, parent: QModelIndex | None = None) -> Iterator[QModelIndex]:
    """Every row of the tree a person can see: top rows and the children of expanded rows."""
    parent = parent if parent is not None else QModelIndex()
    for r in range(w.proxy.rowCount(parent)):
        index = w.proxy.index(r, 0, parent)
        yield index
        if w.tree.isExpanded(index):
            yield from visible_rows(w, index)


def shown_sliders(w: MainWindow) -> list[QSlider]:
    """The sliders a person can drag now: above the data (image planes, table pages) and in the
    column beside the image (label opacities)."""
    return [s for panel in (w.data.controls, w.data.side) for s in panel.findChildren(QSlider)
            if s.isVisible() and s.isEnabled() and s.maximum() > 0]


def _combo(w: MainWindow, first_item: str) -> QComboBox | None:
    for combo in w.data.controls.findChildren(QComboBox):
        if combo.isVisible() and combo.count() and combo.itemText(0).startswith(first_item):
            return combo
    return None


def showing_image(w: MainWindow) -> bool:
    return w.data.stack.currentWidget() is w.data.image and w.data.state is not None


# -- stores ----------------------------------------------------------------------------------------
@action("drop a store", 1.5)
def drop_store(h: Hand) -> str | None:
    store = h.rng.choice(h.corpus.stores)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(store.location)])
    h.window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                                  Qt.KeyboardModifier.NoModifier))
    return f"drop {store.name}"


#: nodes a location may name after ``::`` (some in no store of the corpus: an error to read)
NODES = ["/vol", "/series/line", "/series/names", "/0", "/labels/cells/0", "/A/1", "/sub/inner", "/corrupt",
         "/badjson", "/no/such/node", "/records"]


@action("open a URL", 0.6)
def open_url(h: Hand) -> str | None:
    """File ▸ Open URL…: a location typed into the dialog, with a node path, and Open pressed."""
    store = h.rng.choice(h.corpus.stores)
    location = store.location + (f"::{h.rng.choice(NODES)}" if h.rng.random() < 0.7 else "")
    uncheck = h.rng.random() < 0.5

    def type_into(dialog: OpenUrlDialog) -> None:
        dialog.url.setText(location)
        if uncheck:
            dialog.anonymous.setChecked(False)

    answer_dialog(OpenUrlDialog, type_into, QDialogButtonBox.StandardButton.Open)
    menu_action(h.window, "Open URL").trigger()  # returns when the dialog closes
    return f"open URL {store.name}{location[len(store.location):]}"


@action("close a store", 0.5)
def close_store(h: Hand) -> str | None:
    w = h.window
    tops = w.proxy.rowCount()
    if not tops:
        return None
    w.tree.setCurrentIndex(w.proxy.index(h.rng.randrange(tops), 0))
    menu_action(w, "Close Store").trigger()
    return "close a store"


# -- the tree --------------------------------------------------------------------------------------
def _on_a_row(h: Hand, rows: list[QModelIndex], do: Callable[[QModelIndex], None], verb: str) -> str | None:
    index = h.rng.choice(rows) if rows else None
    if index is not None:
        do(index)
    return None if index is None else f"{verb} {index.data()}"


@action("expand a row", 3)
def expand_row(h: Hand) -> str | None:
    w = h.window
    rows = [i for i in visible_rows(w) if w.proxy.hasChildren(i) and not w.tree.isExpanded(i)]
    return _on_a_row(h, rows, w.tree.expand, "expand")


@action("select a row", 6)
def select_row(h: Hand) -> str | None:
    return _on_a_row(h, list(visible_rows(h.window)), h.window.tree.setCurrentIndex, "select")


@action("filter the tree", 0.7)
def filter_tree(h: Hand) -> str | None:
    words = ["", "", "vol", "0", "labels", "A", "line", "no such name", "temp", "c"]
    text = h.rng.choice(words)
    h.window.filter.setText(text)
    return f"filter {text!r}"


# -- the image -------------------------------------------------------------------------------------
def _step(h: Hand, slider: QSlider, up: float) -> None:
    """One step of ``slider``, up with probability ``up``, as an arrow key or a click on its groove."""
    slider.triggerAction(QAbstractSlider.SliderAction.SliderSingleStepAdd if h.rng.random() < up
                         else QAbstractSlider.SliderAction.SliderSingleStepSub)


@action("move a slider", 5)
def move_slider(h: Hand) -> str | None:
    sliders = shown_sliders(h.window)
    slider = h.rng.choice(sliders) if sliders else None
    if slider is None:
        return None
    if h.rng.random() < 0.6:
        _step(h, slider, 0.5)
    else:
        slider.setValue(h.rng.randint(0, slider.maximum()))
    return f"slider to {slider.value()}"


@action("drag a slider", 1.5)
def drag_slider(h: Hand) -> str | None:
    """Many steps in one go, faster than the reads: only the last plane may be shown."""
    sliders = shown_sliders(h.window)
    slider = h.rng.choice(sliders) if sliders else None
    for _ in range(h.rng.randint(3, 30) if slider is not None else 0):
        _step(h, slider, 0.7)
    return None if slider is None else f"drag slider to {slider.value()}"


@action("zoom or pan", 3)
def zoom_or_pan(h: Hand) -> str | None:
    w = h.window
    if not showing_image(w):
        return None
    state = w.data.state
    assert state is not None
    rows, cols = state.plane_shape
    if h.rng.random() < 0.2:
        w.data.image.show_plane(rows, cols)  # back to the whole plane, as a double click would
        return "fit"
    height = max(2.0, rows * h.rng.uniform(0.05, 1.2))
    width = max(2.0, cols * h.rng.uniform(0.05, 1.2))
    top = h.rng.uniform(-0.1 * rows, rows - height / 2)
    left = h.rng.uniform(-0.1 * cols, cols - width / 2)
    w.data.image.view.setRange(xRange=(left, left + width), yRange=(top, top + height), padding=0)
    return f"view rows {top:.0f}+{height:.0f} cols {left:.0f}+{width:.0f}"


@action("pick a level", 1)
def pick_level(h: Hand) -> str | None:
    combo = _combo(h.window, "auto:")
    if combo is None:
        return None
    combo.setCurrentIndex(h.rng.randrange(combo.count()))
    return f"level {combo.currentText()[:20]!r}"


@action("swap axes", 0.7)
def swap_axes(h: Hand) -> str | None:
    plane = h.window.data.plane
    if plane is None or not showing_image(h.window):
        return None
    combo = h.rng.choice([plane.y_combo, plane.x_combo])
    combo.setCurrentIndex(h.rng.randrange(combo.count()))
    return f"axes {plane.y_combo.currentIndex()}, {plane.x_combo.currentIndex()}"


@action("complex or colour mode", 0.4)
def complex_mode(h: Hand) -> str | None:
    plane = h.window.data.plane
    if plane is None:
        return None
    if plane.complex_combo is not None and plane.complex_combo.isVisible():
        plane.complex_combo.setCurrentIndex(h.rng.randrange(plane.complex_combo.count()))
        return f"complex {plane.complex_combo.currentText()}"
    if plane.rgb_box is not None and plane.rgb_box.isVisible():
        plane.rgb_box.toggle()
        return f"rgb {plane.rgb_box.isChecked()}"
    return None


@action("contrast", 1.5)
def contrast(h: Hand) -> str | None:
    w = h.window
    if not showing_image(w):
        return None
    if h.rng.random() < 0.5:
        button = next((b for b in w.data.controls.findChildren(QPushButton) if b.text() == "Auto contrast"), None)
        if button is None or not button.isVisible():
            return None
        button.click()
        return "auto contrast"
    hist = w.data.image.ui.histogram.item
    if not hist.isVisible():
        return None
    lo, hi = hist.getLevels()
    span = (hi - lo) or 1.0
    new_lo = lo + h.rng.uniform(-0.5, 0.5) * span
    hist.setLevels(new_lo, new_lo + span * h.rng.uniform(0.1, 2.0))  # as dragging the histogram's handles
    return "drag the histogram"


@action("channels", 1.5)
def channels(h: Hand) -> str | None:
    panel = h.window.data.channels
    if panel is None or not panel.isVisible():
        return None
    roll = h.rng.random()
    if roll < 0.25:
        (panel.single if panel.composite.isChecked() else panel.composite).click()
        return "channel mode"
    if not panel.rows or not panel.list.widget().isEnabled():
        return None
    row = h.rng.choice(panel.rows)
    if roll < 0.55:
        row.active.click()
        return f"channel {row.active.text()} active {row.active.isChecked()}"
    if roll < 0.7:
        row.inverted.click()
        return f"channel {row.active.text()} inverted"
    lo = h.rng.uniform(row.lo.minimum(), min(row.lo.maximum(), 70000))
    row.lo.setValue(lo)
    row.hi.setValue(lo + h.rng.uniform(1, 5000))
    return f"channel {row.active.text()} window"


@action("show as table", 0.4)
def as_table(h: Hand) -> str | None:
    if h.window.data.array is None:
        return None
    h.window.data.as_table.toggle()
    return f"as table {h.window.data.as_table.isChecked()}"


@action("scroll the table", 0.6)
def scroll_table(h: Hand) -> str | None:
    table = h.window.data.table
    if h.window.data.stack.currentWidget() is not table:
        return None
    bar = table.verticalScrollBar()
    bar.setValue(h.rng.randint(0, bar.maximum()))
    return f"table at {bar.value()}"


@action("series at a point", 0.4)
def series(h: Hand) -> str | None:
    w = h.window
    act = menu_action(w, "Series at a Point")
    if not act.isChecked() and showing_image(w):
        act.trigger()
        state = w.data.state
        assert state is not None
        rows, cols = state.plane_shape
        w.data.pixel_clicked.emit(h.rng.randrange(rows), h.rng.randrange(cols))  # what a click on the image says
        return "series on"
    if act.isChecked():
        act.trigger()
        return "series off"
    return None


@action("measure", 0.4)
def measure(h: Hand) -> str | None:
    """View ▸ Line Profile or Region Statistics, then a line or rectangle anywhere (partly off the
    plane too), or the tool closed."""
    w = h.window
    act = menu_action(w, h.rng.choice(["Line Profile", "Region Statistics"]))
    tools = w.data.analysis
    if tools.tool is not None and h.rng.random() < 0.3:
        tools.use(None)
        return "measure off"
    if not showing_image(w):
        return None
    if not act.isChecked():
        act.trigger()
    state = w.data.state
    assert state is not None
    rows, cols = state.plane_shape
    r0, r1 = sorted(h.rng.uniform(-0.1 * rows, 1.1 * rows) for _ in range(2))
    c0, c1 = sorted(h.rng.uniform(-0.1 * cols, 1.1 * cols) for _ in range(2))
    if tools.tool == "profile":
        tools.place_line(((r0, c0), (r1, c1)))
    elif tools.tool == "stats":
        tools.place_box(Block(int(r0), int(r1) + 1, int(c0), int(c1) + 1))
    return f"measure {tools.tool} rows {r0:.0f}-{r1:.0f} cols {c0:.0f}-{c1:.0f}"


@action("image axes", 0.2)
def image_axes(h: Hand) -> str | None:
    menu_action(h.window, "Image Axes").trigger()
    return "axes toggled"


@action("metadata tab", 1)
def metadata_tab(h: Hand) -> str | None:
    meta = h.window.meta
    tabs = [i for i in range(meta.count()) if meta.isTabVisible(i)]
    meta.setCurrentIndex(h.rng.choice(tabs))
    return f"tab {meta.tabText(meta.currentIndex())}"


# -- export ----------------------------------------------------------------------------------------
@action("export", 0.6)
def export(h: Hand) -> str | None:
    exports = h.window.exports
    menu = menu_action(h.window, "Export Data").associatedObjects()[-1]
    menu.aboutToShow.emit()  # the menu opens: its entries say what can be exported now
    which = h.rng.choice([exports.data_action, exports.image_action, exports.screenshot_action])
    if not which.isEnabled():
        return None
    suffix = ".png" if which is not exports.data_action else h.rng.choice([".npy", ".csv"])
    n = len(h.asked)
    path = h.corpus.not_a_folder / f"x{suffix}" if h.rng.random() < 0.15 else h.exports / f"e{n}{suffix}"
    h.next_export = str(path)
    which.trigger()
    return f"{which.text().replace('&', '')} to {path.name}"
