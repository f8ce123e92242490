"""A plane whose look is known when its read is asked is placed and rendered by the job that
reads it: the scene carries pixels equal to numpy's mapping of the plane written, the tile the
controller would have placed itself, and a frame the view shows only where it still draws alike
(same tile, levels, table and reduction)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from drawn import expected_rgba
from zarrview.viewing import initial_state
from zarrview.viewing.image.colour_maps import lookup_table
from zarrview.viewing.image.pixels import unpack
from zarrview.viewing.image.prepared import Prepared, Recipe, ready_frame
from zarrview.viewing.image.rendering import FrameOrder, Look, reduction

from view_harness import Harness

PLANES = np.random.default_rng(11).integers(0, 3000, (3, 90, 70), dtype=np.uint16)


def test_a_known_look_is_rendered_with_the_read_and_shown_only_where_it_still_applies(tmp_path: Path) -> None:
    a = zarr.create_array(tmp_path / "s", shape=PLANES.shape, chunks=(1, 45, 35), dtype="u2")
    a[...] = PLANES
    table = lookup_table("viridis")
    recipe = Recipe(table, (0.25, 0.5))  # 4 and 2 data pixels per device pixel
    h = Harness()
    try:
        h.ctl.recipe = lambda: recipe
        state = initial_state(zl.open(tmp_path / "s"), {0: 0})
        first = h.show(state)
        assert not first.prepared  # its levels come from it: it could not be rendered before it was read
        scene = h.show(state.with_(indices=(2, 0, 0)))
        assert len(scene.prepared) == 1
        made = scene.prepared[0]
        assert isinstance(made, Prepared) and made.tile is scene.detail and scene.levels == first.levels
        np.testing.assert_array_equal(made.tile.values, PLANES[2])
        assert made.rendered.step == (4, 2)
        want = expected_rgba(PLANES[2][::4, ::2], scene.levels, table)
        np.testing.assert_array_equal(unpack(made.rendered.pixels), want)
        steps = (reduction(made.tile, recipe.scale), (1, 1))
        order = FrameOrder(made.tile, None, Look(scene.levels, table), steps)
        frame = ready_frame(order, scene.prepared)
        assert frame is not None and frame.base is made.rendered and frame.histogram_of is made.tile
        assert frame.histogram is not None and frame.histogram[1].sum() == PLANES[2].size
        # another table, other levels or another zoom: rendered anew, not this frame
        assert ready_frame(FrameOrder(made.tile, None, Look(scene.levels, lookup_table("magma")), steps),
                           scene.prepared) is None
        assert ready_frame(FrameOrder(made.tile, None, Look((0.0, 10.0), table), steps), scene.prepared) is None
        assert ready_frame(FrameOrder(made.tile, None, Look(scene.levels, table), ((2, 2), (1, 1))),
                           scene.prepared) is None
        fixed = h.show(state.with_(indices=(1, 0, 0), contrast=(100.0, 200.0)))  # levels set by hand
        assert fixed.prepared and fixed.prepared[0].rendered.look_key == Look((100.0, 200.0), table).key()
    finally:
        h.close()
