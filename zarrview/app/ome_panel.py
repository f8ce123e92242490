"""The metadata panel's OME tab: what an OME-Zarr group's metadata says, and where it breaks the
specification.

``sections(node, labels)`` turns a node of :mod:`zarrview.viewing.ome` into titled tables of
words (no Qt: the tests compare them with the model); :class:`OmePanel` shows them, one table a
section, with a colour swatch beside each channel's and label value's colour. The problems come
last, each with its severity, the group, the JSON path in its attributes and what is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..viewing.ome import Bioformats2raw, Level, Multiscale, OmeImage, OmeLabels, OmeNode, OmePlate, OmeWell, Problem
from ..viewing.ome.model import CoordinateSystem, OmeScene
from ..viewing.ome.text import link_text

#: rows shown of a long list (label colours, wells); the rest are counted in a note
MAX_ROWS = 500
DASH = "—"
Rgb = tuple[int, int, int]


@dataclass(frozen=True)
class Section:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    #: a colour drawn beside column ``swatch_column`` of each row (None: no swatch in that row)
    swatches: tuple[Rgb | None, ...] = ()
    swatch_column: int | None = None
    note: str = ""
    #: severities of the rows of the problems table (for their colour)
    severities: tuple[str, ...] = field(default=())


def heading(node: OmeNode, severities: Sequence[str]) -> str:
    """``OME-NGFF image 0.5 at /: 'name', 2 multiscales (the first is shown) · 1 error`` (the
    severities: of every problem listed, the labels group's too)."""
    what = "label image" if isinstance(node, OmeImage) and node.is_label else node.kind
    out = f"OME-NGFF {what} {node.version} at {node.path}"
    name = getattr(node, "name", None)
    if name:
        out += f": {name!r}"
    if isinstance(node, OmeImage) and len(node.multiscales) > 1:
        out += f", {len(node.multiscales)} multiscales (the first is shown)"
    return out + " · " + problem_count(severities)


def problem_count(severities: Sequence[str]) -> str:
    """``2 errors, 1 warning`` (or ``no problems``) for the severities of some problems."""
    errors = sum(s == "error" for s in severities)
    warnings = len(severities) - errors
    if not severities:
        return "no problems"
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((errors, "error"), (warnings, "warning")) if n]
    return ", ".join(parts)


def sections(node: OmeNode, labels: OmeLabels | None = None) -> list[Section]:
    """Every table the OME tab shows for ``node``; ``labels`` is its image's ``labels`` group,
    read apart (the image's own detection skips it)."""
    out: list[Section] = []
    problems = list(node.problems)
    if isinstance(node, OmeImage):
        many = len(node.multiscales) > 1
        for i, ms in enumerate(node.multiscales):
            suffix = f" of multiscale {i}" + (f" {ms.name!r}" if ms.name else "") if many else ""
            out += [axes_section(ms, suffix), levels_section(ms, suffix)]
            if ms.coordinate_systems:
                out.append(systems_section(ms.coordinate_systems, suffix,
                                           f"The levels are placed in {ms.intrinsic!r}, the intrinsic system."))
        if node.omero is not None:
            out.append(channels_section(node))
        if node.label is not None:
            out.append(label_section(node))
        if labels is not None:
            out.append(Section("Labels", ("Label image",), tuple((n,) for n in labels.labels),
                               note="" if labels.labels else "The labels group lists no label image."))
            problems += labels.problems
    elif isinstance(node, OmePlate):
        out += plate_sections(node)
    elif isinstance(node, OmeWell):
        out.append(Section("Fields", ("Field", "Path", "Acquisition"),
                           tuple((str(i), im.path, _opt(im.acquisition)) for i, im in enumerate(node.images))))
    elif isinstance(node, Bioformats2raw):
        out.append(Section("Series", ("Series", "Path"), tuple((str(i), s) for i, s in enumerate(node.series)),
                           note=f"Listed from {node.series_from}."))
    elif isinstance(node, OmeLabels):
        out.append(Section("Label images", ("Label image",), tuple((n,) for n in node.labels)))
    elif isinstance(node, OmeScene):
        out.append(systems_section(node.coordinate_systems, "", "The scene's own coordinate systems."))
        out.append(Section("Transformations", ("Transformation",), tuple((link_text(k),) for k in node.links),
                           note="Images linked: " + (", ".join(node.images) or DASH) + "."))
    out.append(problems_section(problems))
    return out


def axes_section(ms: Multiscale, suffix: str = "") -> Section:
    rows = tuple((str(i), a.name, a.type or DASH, a.unit or DASH) for i, a in enumerate(ms.axes))
    return Section("Axes" + suffix, ("Axis", "Name", "Type", "Unit"), rows)


def systems_section(systems: tuple[CoordinateSystem, ...], suffix: str, note: str) -> Section:
    """0.6: each coordinate system with its axes (name, type, unit)."""
    rows = tuple((cs.name, ", ".join(f"{a.name} ({a.type or DASH}{', ' + a.unit if a.unit else ''})" for a in cs.axes))
                 for cs in systems)
    return Section("Coordinate systems" + suffix, ("Name", "Axes"), rows, note=note)


def levels_section(ms: Multiscale, suffix: str = "") -> Section:
    note = f"Downscaled by {ms.type}." if ms.type else ""
    return Section("Levels" + suffix, ("Level", "Path", "Shape", "Scale", "Translation", "Chunks", "Shards",
                                       "Data type"), tuple(level_row(lv) for lv in ms.levels), note=note)


def level_row(lv: Level) -> tuple[str, ...]:
    """Level, path, shape, scale, translation, chunks (shape: count), shards, data type."""
    chunks = f"{shape_text(lv.chunks)}: {count_text(lv.chunk_counts)}" if lv.chunk_counts else DASH
    shards = f"{shape_text(lv.shards)}: {count_text(lv.shard_counts)}" if lv.shards and lv.shard_counts else DASH
    kind = lv.dtype or DASH
    if lv.error:
        kind = f"cannot be read: {lv.error}"
    return (str(lv.index), lv.path, shape_text(lv.shape) if lv.shape else DASH, numbers(lv.scale),
            numbers(lv.translation), chunks, shards, kind)


def channels_section(image: OmeImage) -> Section:
    assert image.omero is not None
    rows, swatches = [], []
    for i, c in enumerate(image.omero.channels):
        w = c.window
        window = DASH
        if w is not None and (w.start, w.end, w.min, w.max) != (None,) * 4:
            window = f"{_opt(w.start)}–{_opt(w.end)} of {_opt(w.min)}–{_opt(w.max)}"
        rows.append((str(i), c.label or DASH, f"#{c.color}" if c.color else DASH, window, _yes(c.active),
                     _yes(c.inverted)))
        swatches.append(c.rgb)
    r = image.omero.rdefs
    note = ""
    if (r.default_z, r.default_t, r.model) != (None, None, None):
        note = f"Rendering: default Z {_opt(r.default_z)}, default T {_opt(r.default_t)}, model {r.model or DASH}."
    return Section("Channels", ("Channel", "Label", "Colour", "Window", "Active", "Inverted"), tuple(rows),
                   tuple(swatches), 2, note)


def label_section(image: OmeImage) -> Section:
    """A label image's values: colour and properties of each (the last colour of a value wins)."""
    lab = image.label
    assert lab is not None
    colours = lab.color_map()
    values = sorted(set(colours) | {p["label-value"] for p in lab.properties if isinstance(p.get("label-value"), int)})
    rows, swatches = [], []
    for v in values[:MAX_ROWS]:
        rgba = colours.get(v)
        props = lab.properties_of(v)
        rows.append((str(v), "#" + "".join(f"{x:02X}" for x in rgba) if rgba else DASH,
                     ", ".join(f"{k}: {p}" for k, p in props.items()) or DASH))
        swatches.append(rgba[:3] if rgba else None)
    note = f"Source image: {lab.source or DASH}."
    if len(values) > MAX_ROWS:
        note += f" {len(values) - MAX_ROWS:,} more values not shown."
    return Section("Label values", ("Value", "Colour (RGBA)", "Properties"), tuple(rows), tuple(swatches), 1, note)


def plate_sections(plate: OmePlate) -> list[Section]:
    acqs = ", ".join(f"{a.id}" + (f" ({a.name})" if a.name else "") for a in plate.acquisitions) or DASH
    summary = Section("Plate", ("Rows", "Columns", "Wells", "Fields per well", "Acquisitions"),
                      ((f"{len(plate.rows)}: {' '.join(plate.rows)}", f"{len(plate.columns)}: {' '.join(plate.columns)}",
                        f"{len(plate.wells)} of {len(plate.rows) * len(plate.columns)}", _opt(plate.field_count),
                        acqs),),
                      note="Also a bioformats2raw layout." if plate.bioformats2raw else "")
    rows = tuple((w.path, _name(plate.rows, w.row), _name(plate.columns, w.column)) for w in plate.wells[:MAX_ROWS])
    more = f"{len(plate.wells) - MAX_ROWS:,} more wells not shown." if len(plate.wells) > MAX_ROWS else ""
    return [summary, Section("Wells", ("Path", "Row", "Column"), rows, note=more)]


def problems_section(problems: list[Problem]) -> Section:
    rows = tuple((p.severity, p.node, p.path, p.message) for p in problems)
    note = "" if problems else "None: the metadata keeps the specification's rules that zarrview checks."
    return Section(f"Problems ({problem_count([p.severity for p in problems])})" if problems else "Problems",
                   ("Severity", "Group", "JSON path", "Message"), rows, note=note,
                   severities=tuple(p.severity for p in problems))


def shape_text(t: tuple[int, ...] | None) -> str:
    return "(" + ", ".join(str(x) for x in t or ()) + ("," if t is not None and len(t) == 1 else "") + ")"


def numbers(t: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{x:.6g}" for x in t) + ")"


def count_text(counts: tuple[int, ...] | None) -> str:
    return f"{math.prod(counts or ()):,} ({'×'.join(map(str, counts or ()))})"


def _name(names: tuple[str, ...], i: int) -> str:
    return names[i] if 0 <= i < len(names) else str(i)


def _opt(v: object) -> str:
    return DASH if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


# -- Qt -----------------------------------------------------------------------------------------
_SEVERITY_COLOURS = {"error": QColor(200, 40, 40), "warning": QColor(190, 120, 0)}


class OmePanel(QScrollArea):
    """The OME tab's contents: a heading line, then each section's title, table and note."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.node: OmeNode | None = None
        self.labels: OmeLabels | None = None
        self.shown: list[Section] = []
        self.heading = QLabel()
        self.show_text("")

    # -- what the metadata panel calls ----------------------------------------------------------
    def show_text(self, text: str) -> None:
        """A line instead of tables: "Reading…", or why the metadata could not be read."""
        self.node, self.labels, self.shown = None, None, []
        self._rebuild(text, [])

    def show_ome(self, node: OmeNode, labels: OmeLabels | None = None) -> None:
        self.node, self.labels = node, labels
        self.shown = sections(node, labels)
        self._rebuild(heading(node, self.problem_severities()), self.shown)

    def set_labels(self, labels: OmeLabels | None) -> None:
        """The image's ``labels`` group, read after the image (its label images, its problems)."""
        if self.node is not None and labels is not None:
            self.show_ome(self.node, labels)

    # -- what tests read ---------------------------------------------------------------------------
    def problem_severities(self) -> tuple[str, ...]:
        """The severity of every problem listed (the last section is always the problems)."""
        return self.shown[-1].severities if self.shown else ()

    def titles(self) -> list[str]:
        return [s.title for s in self.shown]

    def tables(self) -> dict[str, QTableWidget]:
        """Each section's table, by title, as drawn."""
        content = self.widget()
        return {t.property("section"): t for t in content.findChildren(QTableWidget)} if content is not None else {}

    def rows(self, title: str) -> list[list[str]]:
        """The words in the table of the section ``title``, read off the widget."""
        table = self.tables()[title]
        cells = [[table.item(r, c) for c in range(table.columnCount())] for r in range(table.rowCount())]
        return [[item.text() if item is not None else "" for item in row] for row in cells]

    # -- drawing -----------------------------------------------------------------------------------
    def _rebuild(self, heading_text: str, shown: list[Section]) -> None:
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        self.heading = QLabel(heading_text)
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bold = self.heading.font()
        bold.setBold(True)
        self.heading.setFont(bold)
        layout.addWidget(self.heading)
        for section in shown:
            title = QLabel(section.title)
            title.setFont(bold)
            layout.addSpacing(4)
            layout.addWidget(title)
            if section.rows:
                layout.addWidget(_table(section))
            if section.note:
                note = QLabel(section.note)
                note.setWordWrap(True)
                note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                layout.addWidget(note)
        layout.addStretch(1)
        self.setWidget(content)  # the previous contents are deleted


def _table(section: Section) -> QTableWidget:
    table = QTableWidget(len(section.rows), len(section.headers))
    table.setProperty("section", section.title)
    table.setHorizontalHeaderLabels(list(section.headers))
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    for r, row in enumerate(section.rows):
        items = [QTableWidgetItem(text) for text in row]
        for c, item in enumerate(items):
            item.setToolTip(item.text())
            table.setItem(r, c, item)
        swatch = section.swatches[r] if r < len(section.swatches) else None
        if swatch is not None and section.swatch_column is not None and section.swatch_column < len(items):
            items[section.swatch_column].setData(Qt.ItemDataRole.DecorationRole, QColor(*swatch))
        if items and r < len(section.severities) and section.severities[r] in _SEVERITY_COLOURS:
            items[0].setForeground(QBrush(_SEVERITY_COLOURS[section.severities[r]]))
    # as tall and as wide as its rows: the tab scrolls, not each table
    table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
    table.resizeColumnsToContents()
    table.setMinimumWidth(table.sizeHint().width())
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    table.setFixedHeight(header.sizeHint().height() + rows + 2 * table.frameWidth())
    return table
