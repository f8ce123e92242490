"""Each channel's histogram without Qt: counted by a job on the pool from the tile the view model
read of an ome-zarr-py image, checked against numpy's histogram of the same plane written here,
NaN and infinities left out; each carries the window Auto contrast gives its channel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.scheduling import Answer, Context, Lane
from zarrview.viewing.image.histograms import HISTOGRAM_BINS, ChannelHistogram, channel_histograms, histogram_job, histogram_source
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.view import image_state
from zarrview.zarrlib import CancelToken, ChunkCache, ReadCancelled

from view_harness import Harness

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402


def _written(path: Path) -> np.ndarray:
    rng = np.random.default_rng(5)
    data = rng.normal(100.0, 30.0, (3, 2, 40, 36)).astype("f4")
    data[0, 1, :5, :5] = np.nan
    data[0, 1, 7, 7] = np.inf
    data[1, 1] = rng.exponential(20.0, (40, 36))
    data[2, 1] = 7.0  # uniform
    data[2, 1, 0, :9] = np.nan
    ome_zarr_image(path, "0.5", data, "czyx", scale_factors=(), chunks=(1, 1, 20, 36))
    return data


def test_counts_are_numpys_histogram_of_each_channel_plane(tmp_path: Path) -> None:
    data = _written(tmp_path / "img.zarr")
    img = detect(zl.open(str(tmp_path / "img.zarr")))
    assert isinstance(img, OmeImage)
    state = image_state(img, {1: 1})
    assert state is not None and state.composite and state.indices[1] == 1
    h = Harness()
    try:
        scene = h.show(state)
        state = h.ctl.state
        assert state is not None
        source = histogram_source(scene, state)
        assert source is not None and source.values.shape == (40, 36, 3)
        answers: list[Answer[tuple[ChannelHistogram, ...]]] = []
        Lane(h.pool, h.inbox.put, "histograms").submit(histogram_job(source, state), answers.append)
        h.settle()
    finally:
        h.close()
    [answer] = answers
    assert answer.error is None and answer.value is not None
    hists = answer.value
    assert [x.index for x in hists] == [0, 1, 2]
    for c, hist in enumerate(hists[:2]):
        plane = data[c, 1].astype("f8")
        finite = plane[np.isfinite(plane)]
        counts, edges = np.histogram(finite, bins=HISTOGRAM_BINS, range=(finite.min(), finite.max()))
        np.testing.assert_array_equal(hist.counts, counts)
        np.testing.assert_allclose(hist.edges, edges, rtol=1e-6)
        np.testing.assert_allclose(hist.auto, np.percentile(finite, (0.5, 99.5)), rtol=1e-5)
    assert hists[0].counts.sum() == 40 * 36 - 26  # 25 NaN and an infinity are not counted
    uniform = hists[2]
    assert uniform.span == (6.5, 7.5) and uniform.counts.sum() == 40 * 36 - 9
    assert uniform.counts[HISTOGRAM_BINS // 2] == 40 * 36 - 9 and uniform.auto == (6.5, 7.5)
    # in single mode there is no composite to describe
    assert histogram_source(scene, state.with_channel_mode("single")) is None


def test_a_cancelled_count_stops_and_complex_values_are_reduced() -> None:
    token = CancelToken()
    token.cancel()
    values = (np.arange(24) * (1 + 1j)).reshape(2, 4, 3)
    with pytest.raises(ReadCancelled):
        channel_histograms(values, (0, 1, 2), ctx=Context(token, ChunkCache()))
    [hist] = channel_histograms(values, (1, 5), "imaginary", bins=4)  # channel 5 does not exist
    np.testing.assert_array_equal(hist.counts, np.histogram(np.arange(1, 24, 3), bins=4, range=(1, 22))[0])
