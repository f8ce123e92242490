"""Run a remote-read test module once per backend: fsspec/aiohttp and obstore.

A module that imports ``backend`` (an autouse, parametrized fixture) has each of its tests
run with the backend an open takes when it names none (``storage.backend.PREFERRED``) set to
each backend in turn, so every ``zl.open`` of an ``http://`` URL in it reads through that
backend.
"""

from __future__ import annotations

import pytest

from zarrview.zarrlib.storage import backend as backends

BACKENDS = [pytest.param("fsspec", id="fsspec"), pytest.param("obstore", id="obstore")]


def prefer(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Opens that name no backend take ``name`` for the rest of the test."""
    monkeypatch.setattr(backends, "PREFERRED", name)


@pytest.fixture(autouse=True, params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``"obstore"``: the automatic choice, which takes obstore where it can and fsspec for what
    only fsspec reads (``memory://``, aiohttp's own options); ``"fsspec"``: fsspec for all."""
    prefer(monkeypatch, "auto" if request.param == "obstore" else "fsspec")
    return str(request.param)
