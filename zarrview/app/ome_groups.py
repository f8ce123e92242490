"""What the window does with the OME-Zarr metadata it read for a selected group.

The window reads ``detect(group, labels=False)`` off the GUI thread when a group is selected (it
opens the level arrays) and hands the answer to ``OmeGroupHandler.show_found``, once. The handler
says what each part of the window is to show, as signals the window connects: the metadata for
the metadata panel's OME tab; an image's ``labels`` group, read after it (so the image's first
pixels do not wait for it), for the OME tab and as the data view's label layers; a plate, for
the plate view; a well, labels group or bioformats2raw collection summed up where its data would
be, until views of their own exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing.labels.layers import labels_group, layers_of
from ..viewing.ome import OmeImage, OmeLabels, OmeNode, OmePlate, describe
from ..viewing.spatialdata.scene import label_layers, mates_of
from ..viewing.spatialdata.store import is_element
from ..zarrlib import Group, Node
from .bridge import post


class OmeGroupHandler(QObject):
    """Turns what ``detect`` found for a selected group into signals: ``metadata_found(found,
    error)`` first, then for an image ``labels_read(labels)`` and ``labels_found(image group,
    layers)`` once its labels are read (only while it is still ``selected()``; a SpatialData
    image's are the label elements of its coordinate systems, and ``spatial_found`` follows), for a plate
    ``plate_found(plate, group)``, and for anything else ``message(text)``."""

    metadata_found = Signal(object, object)  # OmeNode | None, BaseException | None
    labels_read = Signal(object)  # OmeLabels | None
    labels_found = Signal(object, object)  # Group, tuple[LabelLayer, ...]
    #: a SpatialData image's store and the notes on its labels: (Group, (Mates, tuple[str, ...]))
    spatial_found = Signal(object, object)
    plate_found = Signal(object, object)  # OmePlate, Group
    message = Signal(str)

    def __init__(self, pool: WorkerPool, selected: Callable[[], Node | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the node selected now: labels read for an image no longer selected are dropped
        self.selected = selected
        #: the labels of the image shown, read after it: a newer image's replace them
        self.driver: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._labels_read, post=lambda fn: post(fn, self), name="OME labels")

    @property
    def reading(self) -> int:
        """Label reads under way (0 or 1), for the window's ``is_settled``."""
        return int(self.driver.busy())

    def show_found(self, group: Group, found: Any, error: BaseException | None) -> bool:
        """Show what ``detect`` found for ``group`` (the node still selected); True when it is an
        image for the data view to show."""
        self.metadata_found.emit(found, error)
        if error is not None or found is None:
            return False
        if isinstance(found, OmeImage):
            if not found.is_label:
                self._read_labels(group, found)
            return True
        if isinstance(found, OmePlate):  # a grid of its wells; a click opens a well's first field
            self.plate_found.emit(found, group)
            return False
        self.message.emit(summary(found))
        return False

    def _read_labels(self, image: Group, found: OmeImage) -> None:
        def read() -> tuple[OmeLabels | None, tuple[Any, ...], Any]:
            labels = labels_group(image, found)
            layers = layers_of(labels)
            mates = mates_of(image) if is_element(image.attrs) else None  # a SpatialData image
            if mates is None:
                return labels, layers, None
            placed, notes = label_layers(mates, found)
            return labels, layers + placed, (mates, notes)

        self.driver.show(Task(call_job(read, label=f"labels of {image.path}"), about=image))

    def _labels_read(self, done: Done[tuple[OmeLabels | None, tuple[Any, ...], Any]]) -> None:
        """The labels of the image still selected, as signals (another image's read replaced
        the read of one selected before)."""
        image, answer = done.task.about, done.answer
        if answer.cancelled:
            return
        labels, layers, spatial = answer.value if isinstance(answer.value, tuple) else (None, (), None)
        if self.selected() is image:  # still the selected group
            self.labels_read.emit(labels if isinstance(labels, OmeLabels) else None)
            self.labels_found.emit(image, layers)
            if spatial is not None:
                self.spatial_found.emit(image, spatial)


def summary(node: OmeNode) -> str:
    """The words the data view shows for an OME group that is not an image."""
    lines = describe(node)
    lines = [line.strip() for line in lines[: next((i for i, x in enumerate(lines) if x.startswith("  Problems")),
                                                    len(lines))]]
    what = {"plate": "a well's field", "well": "a field", "labels": "a label image", "bioformats2raw": "a series"}
    lines.append(f"\nExpand it in the tree and select {what.get(node.kind, 'an image')} to see its image.")
    if node.problems:
        lines.append(f"Its metadata has {len(node.problems)} problem{'s' if len(node.problems) != 1 else ''}: "
                     f"see the OME tab.")
    return "\n".join(lines)
