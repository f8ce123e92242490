"""The native decoders' versions as loaded (codecs/native_versions.py) and ``zarrview decoders``.

Truths beside the modules' own answers: the compressors c-blosc names in the frames it writes
(``cbuffer_complib``), and, on Linux, the file names of the shared libraries this process
mapped (liblzma and libz carry their full version in them).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numcodecs import blosc

import zarrview.zarrlib as zl
from zarrview.zarrlib.codecs.native_versions import describe, native_decoders, summary

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?")


def _by_name() -> dict[str, str | None]:
    return {d.name: d.version for d in native_decoders()}


def test_every_decoder_installed_here_has_a_version() -> None:
    found = _by_name()
    for name in ("c-blosc", "zstd (numcodecs)", "lz4 (numcodecs)", "zlib", "libbz2", "liblzma", "pcodec", "zfp",
                 "msgpack"):
        version = found[name]
        assert version is not None and VERSION.match(version), (name, version)
    assert found["c-blosc"] == blosc.VERSION_STRING


def test_blosc_compressors_are_the_ones_its_frames_name() -> None:
    data = np.arange(4096, dtype="<u4").tobytes()
    written = {blosc.cbuffer_complib(blosc.compress(data, c.encode(), 5, 1)) for c in blosc.list_compressors()}
    listed = {name.removeprefix("c-blosc's ") for name in _by_name() if name.startswith("c-blosc's ")}
    assert listed == written and "BloscLZ" in listed


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_linked_library_versions_match_the_mapped_files() -> None:
    import lzma  # noqa: F401  (loads the libraries being checked)
    import zlib  # noqa: F401

    maps = Path("/proc/self/maps").read_text()
    found = _by_name()
    checked = 0
    for name, lib in (("liblzma", "liblzma"), ("zlib", "libz")):
        mapped = set(re.findall(rf"/{lib}\.so\.(\d+\.\d+\.\d+)", maps))
        if mapped:
            assert mapped == {found[name]}, (name, mapped, found[name])
            checked += 1
    assert checked or sys.platform != "linux"


def test_cli_lists_every_decoder_without_qt() -> None:
    code = ("import sys; from zarrview.cli import main; rc = main(['decoders']); "
            "assert not [m for m in sys.modules if m.startswith('PySide6')]; sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(Path(zl.__file__).parents[2]), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == describe() and len(lines) == len(native_decoders())
    assert any(line.startswith("c-blosc ") and blosc.VERSION_STRING in line for line in lines)
    assert f"c-blosc {blosc.VERSION_STRING} (BloscLZ " in summary()
