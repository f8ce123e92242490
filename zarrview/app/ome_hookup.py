"""What the window does with the OME-Zarr metadata it read for a selected group.

The window reads ``detect(group, labels=False)`` off the GUI thread when a group is selected (it
opens the level arrays) and hands the answer here, once: the metadata panel's OME tab shows it,
an image's ``labels`` group is read after it (so the image's first pixels do not wait for it;
its label images become the data view's label layers),
and a plate, well, labels group or bioformats2raw collection is summed up where its data would
be, until views of their own exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..viewing.labels.layers import labels_group, layers_of
from ..viewing.ome import OmeImage, OmeLabels, OmeNode, OmePlate, describe
from ..scheduling import Answer, call_job
from ..zarrlib import Group
from .label_controls import show_labels
from .plate_view import show_plate

if TYPE_CHECKING:
    from .window import MainWindow


def show_found(window: MainWindow, group: Group, found: Any, error: BaseException | None) -> bool:
    """Show what ``detect`` found for ``group`` (the node still selected); True when it is an
    image for the data view to show."""
    window.meta.show_ome(found, error)
    if error is not None or found is None:
        return False
    if isinstance(found, OmeImage):
        if not found.is_label:
            _read_labels(window, group)
        return True
    if isinstance(found, OmePlate):  # a grid of its wells; a click opens a well's first field
        show_plate(window, found, group)
        return False
    window.data.show_message(summary(found))
    return False


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


def _read_labels(window: MainWindow, image: Group) -> None:
    window.pending_opens += 1

    def done(answer: Answer[tuple[OmeLabels | None, tuple[Any, ...]]]) -> None:
        window.pending_opens -= 1
        if answer.stale or answer.cancelled:
            return  # another image selected meanwhile
        labels, layers = answer.value if isinstance(answer.value, tuple) else (None, ())
        if window.looking_at is image:  # still the selected group
            window.meta.show_ome_labels(labels if isinstance(labels, OmeLabels) else None)
            show_labels(window.data, image, layers)

    def read() -> tuple[OmeLabels | None, tuple[Any, ...]]:
        labels = labels_group(image)
        return labels, layers_of(labels)

    window.labels_lane.submit(call_job(read, label=f"labels of {image.path}"), done)
