"""The image pane's frames as a view model (``rendering.Rendering``) on a driver, without Qt: one
frame is made at a time, what is asked meanwhile is made next (the newest only), the image shown
stays until a frame lands, a scene without tiles shows nothing, an order drawn already makes
nothing, and after a frame that could not be made the newest is still made."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from zarrview.viewing.image import rendering
from zarrview.viewing.image.rendering import BLANK, Frame, FrameOrder, Look, Rendering, Shown
from zarrview.viewing.image.scene import Tile

from driven import Driven


def _tile(value: int) -> Tile:
    image = np.full((8, 6), value, np.uint16)
    return Tile(image, image, 0, 0, 1, 1, ("plane", value))


def _order(tile: Tile, levels: tuple[float, float] = (0.0, 100.0)) -> FrameOrder:
    return FrameOrder(tile, None, Look(levels), ((1, 1), (1, 1)))


class Pane(Driven):
    """A driver of ``Rendering`` whose answers are queued as the GUI thread gets them."""

    def __init__(self) -> None:
        self.frames = Rendering()
        super().__init__(self.frames, "render")
        self.shown: list[Shown] = self.drawn


@pytest.fixture
def pane() -> Iterator[Pane]:
    p = Pane()
    yield p
    p.close()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event, list[FrameOrder]]:
    """Frames wait for ``release`` once ``started`` is set; every order made is listed."""
    started, release = threading.Event(), threading.Event()
    made: list[FrameOrder] = []
    real = rendering.make_frame

    def gated(order: FrameOrder) -> Frame:
        made.append(order)
        started.set()
        assert release.wait(10)
        return real(order)

    monkeypatch.setattr(rendering, "make_frame", gated)
    return started, release, made


def test_one_frame_at_a_time_and_only_the_newest_next(pane: Pane, gate: Any) -> None:
    started, release, made = gate
    a, b, c = _tile(1), _tile(2), _tile(3)
    pane.driver.show(_order(a))
    assert started.wait(10)
    pane.driver.show(_order(b))  # asked while a is made: b is never made, c is
    pane.driver.show(_order(c, (0.0, 50.0)))
    assert pane.driver.requests == 1 and pane.frames.making
    assert pane.shown == []  # the image shown stays until the frame lands
    release.set()
    pane.drain()
    assert [o.base for o in made] == [a, c]
    first, last = pane.shown
    assert first.frame is not None and first.frame.base is not None and first.frame.base.tile is a
    assert not first.newest  # shown even though a newer one is wanted: a drag shows every frame made
    assert last.frame is not None and last.frame.base is not None and last.frame.base.tile is c and last.newest
    assert made[1].shown == (first.frame.base, None)  # what is shown is handed to the next frame
    assert made[1].histogram_of is a  # the histogram of a was counted with its frame
    assert not pane.frames.making and not pane.driver.busy()


def test_a_drawn_order_makes_nothing_and_a_scene_without_tiles_shows_nothing(pane: Pane) -> None:
    a = _tile(1)
    pane.driver.show(_order(a))
    pane.drain()
    assert pane.driver.requests == 1 and len(pane.shown) == 1
    pane.driver.show(_order(a))  # another order that draws alike: nothing new
    pane.drain()
    assert pane.driver.requests == 1 and len(pane.shown) == 1
    pane.driver.show(None)  # no tiles: nothing shown, at once, and nothing made
    assert pane.shown[-1].frame is BLANK and not pane.shown[-1].made
    pane.driver.show(_order(a))  # the same tile again is made again: it is not shown any more
    pane.drain()
    assert pane.driver.requests == 2
    frame = pane.shown[-1].frame
    assert frame is not None and frame.base is not None and frame.base.tile is a
    assert frame.histogram is None  # its values were counted already


def test_a_scene_without_tiles_asked_while_a_frame_is_made_clears_it_once_landed(pane: Pane, gate: Any) -> None:
    started, release, _made = gate
    pane.driver.show(_order(_tile(1)))
    assert started.wait(10)
    pane.driver.show(None)
    assert pane.shown == []  # the frame being made lands first
    release.set()
    pane.drain()
    assert [s.frame for s in pane.shown] == [BLANK] and pane.shown[0].made and pane.shown[0].newest
    assert pane.driver.requests == 1


def test_after_a_frame_that_cannot_be_made_the_newest_is_asked_again(pane: Pane, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    real = rendering.make_frame
    bad = _tile(1)

    def failing(order: FrameOrder) -> Frame:
        if order.base is bad:
            started.set()
            assert release.wait(10)
            raise MemoryError("no room for the frame")
        return real(order)

    monkeypatch.setattr(rendering, "make_frame", failing)
    pane.driver.show(_order(bad))
    assert started.wait(10)
    good = _tile(2)
    pane.driver.show(_order(good))
    release.set()
    pane.drain()
    failed = pane.shown[0]
    assert failed.frame is None and isinstance(failed.error, MemoryError) and not failed.newest
    assert not pane.driver.busy()  # the driver reads on only after a frame: the view asks again
    pane.driver.show(pane.driver.state)
    pane.drain()
    frame = pane.shown[-1].frame
    assert frame is not None and frame.base is not None and frame.base.tile is good and pane.shown[-1].newest
