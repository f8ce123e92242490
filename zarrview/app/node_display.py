"""What the data area shows for the node selected in the tree.

An array shows a plane; an OME-Zarr image or a GeoZarr pyramid shows its first view once its
metadata is read off the GUI thread; a plate, an AnnData element or a SpatialData store is
handed to its presenter; anything else says why there is nothing to show. The node looked at
is remembered, so an answer that arrives after another node was selected is dropped, and the
plane the command line asked for (``--slice``) is used once, for the node it was given with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import zarrlib as zl
from ..scheduling import Answer, call_job
from ..viewing.conventions.geozarr import GeoMultiscale
from ..viewing.image.slice_spec import plane_error
from ..viewing.labels.layers import layer_of
from ..viewing.ome import Multiscale, OmeImage
from ..viewing.shown import shown_as
from .anndata_groups import AnnDataHandler
from .bridge import gui_lane
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
        #: image groups whose OME metadata is being read
        self.reading = 0
        owner = host.window()
        self._ome = gui_lane(host.pool, owner, "OME metadata")
        self.ome_groups = OmeGroupHandler(host.pool, lambda: self.looking_at, owner)
        self.anndata = AnnDataHandler(host.pool, lambda: self.looking_at, owner)
        self.spatial = SpatialPresenter(host.pool, host.data, lambda: self.looking_at, owner)

    def refuse_plane(self, why: str) -> None:
        """A plane asked for (--slice) that does not exist: say so where the image would be,
        rather than clamp to the nearest one."""
        self.host.data.show_problem(why)
        self.host.say(why)

    def plane_problem(self, arr: zl.Array, plane: dict[int, int]) -> str | None:
        """Why the command line's plane or level names nothing of ``arr``, as export says it."""
        if self.host.data.pending_level is not None:
            self.host.data.pending_level = None
            return f"--level is for an OME-Zarr image group; {arr.path} is an array"
        return plane_error(arr, plane)

    def show(self, node: zl.Node) -> None:
        self.looking_at = node
        if self.anndata.show(node):  # an AnnData element: a table, a matrix, a scatter plot
            self.initial_plane = {}
            return
        if isinstance(node, zl.Array):
            plane, self.initial_plane = self.initial_plane, {}
            bad = self.plane_problem(node, plane)
            if bad is not None:
                self.refuse_plane(bad)
                return
            self.host.data.set_array(node, plane)
        elif isinstance(node, zl.ErrorNode):
            self.host.data.show_problem(str(node.error))
        elif isinstance(node, zl.Group):
            self.host.data.show_message(f"{node.path} is a group: select an array to see its data.")
            self._show_if_image(node)
            self.spatial.show_store(node)

    def _show_if_image(self, group: zl.Group) -> None:
        """An OME-Zarr image group shows its image: its metadata is read off the GUI thread (it
        opens the level arrays), and the answer is dropped if another node was selected meanwhile."""
        plane, self.initial_plane = self.initial_plane, {}
        self.looking_at = group
        self.reading += 1

        def done(answer: Answer[Any]) -> None:
            self.reading -= 1
            if answer.stale or answer.cancelled:
                return  # another group selected meanwhile
            found = answer.value
            if isinstance(found, GeoMultiscale) and self.looking_at is group:
                self._show_pyramid(found, plane)
                return
            if self.looking_at is not group or not self.ome_groups.show_found(group, found, answer.error) \
                    or not isinstance(found, OmeImage):
                return
            if not found.multiscales:  # metadata too broken to name a level: the OME tab says why
                self.host.data.show_problem(f"The OME-Zarr metadata of {group.path} names no pyramid that can be "
                                            f"read: see its problems in the OME tab.")
                return
            if not self._plane_refused(found.first, plane):
                self.host.data.set_image(found, plane)
                if found.is_label:  # a label image in its colours (its own layer over its values)
                    own = layer_of(group.name, found, opacity=1.0)
                    self.host.data.show_labels(group, (own,) if own is not None else ())

        self._ome.submit(call_job(lambda: shown_as(group),
                                  label=f"OME metadata of {group.path}"), done)

    def _plane_refused(self, ms: Multiscale, plane: dict[int, int]) -> bool:
        """Whether ``--slice`` names no plane of the pyramid's first readable level (then said)."""
        level0 = next((lv.array for lv in ms.levels if lv.array is not None), None)
        bad = plane_error(level0, plane) if level0 is not None else None
        if bad is not None:
            self.refuse_plane(bad)
        return bad is not None

    def _show_pyramid(self, found: GeoMultiscale, plane: dict[int, int]) -> None:
        """A multiscales convention pyramid (GeoZarr): shown like an OME-Zarr image, its metadata's
        problems said in the status bar."""
        if self._plane_refused(found.multiscale, plane):
            return
        self.host.data.set_pyramid(found, plane)
        if found.problems:
            said = "; ".join(f"{p.severity}: {p.path}: {p.message}" for p in found.problems[:5])
            self.host.meta.add_row("Problems", f"{len(found.problems)}: {said}")
            self.host.say(f"{found.path}: {len(found.problems)} problem"
                          f"{'s' if len(found.problems) != 1 else ''} in its conventions' metadata")
