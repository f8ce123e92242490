"""What the data area shows for the node selected in the tree.

What a node is shown as is decided once, without Qt (``viewing.decision``), for the window and
the commands alike; this only renders the decision. An array's, an unreadable node's or an AnnData
element's is made at once (it reads no more than the node's attributes); a group's reads its
OME-Zarr and GeoZarr metadata off the GUI thread, and meanwhile the group says it is one. An
image or a pyramid then shows its first view, a plate, an AnnData element or a SpatialData store
is handed to its presenter, and anything else says why there is nothing to show. The node looked
at is remembered, so an answer that arrives after another node was selected is dropped, and the
plane the command line asked for (``--slice``) is used once, for the node it was given with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import zarrlib as zl
from ..scheduling import Done, Driver, Task, Tasks, call_job
from ..viewing.decision import Kind, Refusal, Shown, decide
from ..viewing.labels.layers import layer_of
from .anndata_groups import AnnDataHandler
from .bridge import post
from .ome_groups import OmeGroupHandler
from .spatial_overlays import SpatialPresenter

if TYPE_CHECKING:
    from .window_host import DisplayHost


class NodeDisplay:
    """Shows the selected node in ``host``'s data view, metadata panel and status bar."""

    def __init__(self, host: DisplayHost) -> None:
        self.host = host
        #: the node shown, or whose OME metadata is being read: answers for others are dropped
        self.looking_at: zl.Node | None = None
        #: the plane the command line asked for, used by the next node shown
        self.initial_plane: dict[int, int] = {}
        owner = host.window()
        #: the decision for the group looked at, read off the GUI thread: only the newest is taken
        self._ome: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), host.pool, self._decided, post=lambda fn: post(fn, owner), name="OME metadata")
        self.ome_groups = OmeGroupHandler(host.pool, lambda: self.looking_at, owner)
        self.anndata = AnnDataHandler(host.pool, lambda: self.looking_at, owner)
        self.spatial = SpatialPresenter(host.pool, host.data, lambda: self.looking_at, owner)

    @property
    def reading(self) -> int:
        """Image groups whose OME metadata is being read (0 or 1: a newer group replaces the read)."""
        return int(self._ome.busy())

    def refuse_plane(self, why: str) -> None:
        """A plane asked for (--slice) that does not exist: say so where the image would be,
        rather than clamp to the nearest one."""
        self.host.data.show_problem(why)
        self.host.say(why)

    def plane_problem(self, arr: zl.Array, plane: dict[int, int]) -> str | None:
        """Why the command line's plane or level names nothing of ``arr``, as export says it."""
        refused = decide(arr, plane, self.host.data.pending_level, read=False).refused
        if refused is None:
            return None
        self._spend_level(refused)
        return refused.window

    def show(self, node: zl.Node) -> None:
        self.looking_at = node
        plane, self.initial_plane = self.initial_plane, {}
        level = self.host.data.pending_level
        shown = decide(node, plane, level, read=False)
        if not shown.pending:
            self._render(shown)
            return
        assert isinstance(node, zl.Group)
        self.host.data.show_message(shown.message)  # until its metadata says what else it is
        self._read_then_show(node, plane, level)
        self.spatial.show_store(node)

    def _render(self, shown: Shown) -> None:
        """An array, a node that cannot be read or an AnnData element, as decided at once (with
        the indices the command line asked for)."""
        node = shown.node
        if shown.anndata is not None:  # a table, a matrix, a scatter plot
            self.anndata.show(node)
        elif shown.refused is not None and shown.kind is Kind.ERROR:
            self.host.data.show_problem(shown.refused.window)
        elif shown.refused is not None:
            self._spend_level(shown.refused)
            self.refuse_plane(shown.refused.window)
        elif isinstance(node, zl.Array):
            self.host.data.show_array(shown)

    def _read_then_show(self, group: zl.Group, plane: dict[int, int], level: int | None) -> None:
        """A group's OME-Zarr and GeoZarr metadata is read off the GUI thread (it opens the level
        arrays), and the answer is dropped if another node was selected meanwhile."""
        self.looking_at = group
        self._ome.show(Task(call_job(lambda: decide(group, plane, level), label=f"OME metadata of {group.path}"),
                            about=group))

    def _decided(self, done: Done[Any]) -> None:
        """What the group still looked at is shown as; dropped if another node was selected
        meanwhile (an array shown since submits no read that would replace this one)."""
        group: zl.Group = done.task.about
        answer = done.answer
        if answer.cancelled or self.looking_at is not group:
            return
        shown = answer.value
        if answer.error is not None or not isinstance(shown, Shown):
            self.ome_groups.show_found(group, None, answer.error)
        elif shown.kind is Kind.PYRAMID:
            self._show_pyramid(shown)
        elif self.ome_groups.show_found(group, shown.ome, None) and shown.kind in (Kind.IMAGE, Kind.LABEL_IMAGE):
            self._show_image(shown)

    def _show_image(self, shown: Shown) -> None:
        """An OME-Zarr image at its first view; a label image in its colours (its own layer over
        its values)."""
        image, group = shown.image, shown.node
        assert image is not None and isinstance(group, zl.Group)
        if self._refused(shown.refused):
            return
        self.host.data.show_image(shown)
        if shown.kind is Kind.LABEL_IMAGE:
            own = layer_of(group.name, image, opacity=1.0)
            self.host.data.show_labels(group, (own,) if own is not None else ())

    def _show_pyramid(self, shown: Shown) -> None:
        """A multiscales convention pyramid (GeoZarr): shown like an OME-Zarr image, its metadata's
        problems said in the status bar, also where they leave no level to show."""
        found, refused = shown.pyramid, shown.refused
        assert found is not None
        if refused is not None and refused.request == "--slice":
            self._refused(refused)
            return
        if not self._refused(refused):
            self.host.data.show_pyramid(shown)
        problems = shown.problems
        if problems:
            said = "; ".join(f"{p.severity}: {p.path}: {p.message}" for p in problems[:5])
            self.host.meta.add_row("Problems", f"{len(problems)}: {said}")
            self.host.say(f"{found.path}: {len(problems)} problem"
                          f"{'s' if len(problems) != 1 else ''} in its conventions' metadata")

    def _refused(self, refused: Refusal | None) -> bool:
        """Whether an image or a pyramid cannot be shown (then said where it would be): a plane
        that ``--slice`` names nothing of is said in the status bar too."""
        if refused is None:
            return False
        self._spend_level(refused)
        if refused.request == "--slice":
            self.refuse_plane(refused.window)
        else:
            self.host.data.show_problem(refused.window)
        return True

    def _spend_level(self, refused: Refusal) -> None:
        """The command line's ``--level`` is used by the node it was refused for, as by the one
        it shows."""
        if refused.spends_level:
            self.host.data.pending_level = None
