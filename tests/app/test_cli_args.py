"""The command line as a person types it: help that names every command, and malformed values
answered with one line and exit status 2 before any window opens."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "zarrview", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def test_help_lists_the_headless_commands():
    out = run("--help")
    assert out.returncode == 0
    assert "zarrview tree LOCATION" in out.stdout and "zarrview info LOCATION" in out.stdout


@pytest.mark.parametrize("args,words", [
    (["--slice", "5,x,:"], "--slice takes integers"), (["--slice", "1.5,:,:"], "--slice takes integers"),
    (["--region", "1:2"], "--region must look like"), (["--region", "a:b,c:d"], "--region must look like"),
    (["--region", "5:2,0:3"], "--region '5:2,0:3' is empty"), (["--region=0:2,3:3"], "is empty"),
    (["--contrast", "5,1"], "runs backwards"), (["--colormap", "rainbow9"], "no colour map"),
    (["--tools", "grid,paint"], "no tool is named 'paint'"), (["--channels", "mixed;0:FF0000"], "--channels starts"),
    (["--axes", "1,2"], "--axes orders"), (["--options", "[1]"], "--options must be a JSON object"),
])
def test_malformed_values_are_one_line_and_status_2(tmp_path, args, words):
    out = run(str(tmp_path), *args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("zarrview: ")
    assert "Traceback" not in out.stderr


def test_slice_text_names_the_fixed_indices():
    from zarrview.app.main import parse_slice

    assert parse_slice(":,128,:") == {1: 128}  # the two ':' are the displayed dimensions
    assert parse_slice("5,:,:") == {0: 5} and parse_slice(None) == {}
