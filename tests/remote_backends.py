"""Run a remote-read test module once per backend: fsspec/aiohttp and obstore.

A module that imports ``backend`` (an autouse, parametrized fixture) has each of its tests
run with ``ZARRLIB_REMOTE_BACKEND`` set to each backend in turn, so every ``zl.open`` of an
``http://`` URL in it reads through that backend; the obstore runs are skipped where obstore
is not installed.
"""

from __future__ import annotations

import importlib.util

import pytest

BACKENDS = [
    pytest.param("fsspec", id="fsspec"),
    pytest.param("obstore", id="obstore", marks=pytest.mark.skipif(
        importlib.util.find_spec("obstore") is None, reason="obstore is part of the cloud and test extras")),
]


@pytest.fixture(autouse=True, params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ZARRLIB_REMOTE_BACKEND", request.param)
    return str(request.param)
