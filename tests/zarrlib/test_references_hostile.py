"""Hostile reference sets: pointers out of the reference set's folder or host, ranges past the
end of a file, bad numbers, bad JSON, base64 garbage and template or ``gen`` bombs each cost
an error naming the key, through the reader's per-chunk failure path, and nothing is read
from where the references must not reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview import zarrlib as zl
from zarrview.zarrlib.errors import StoredChunkTooLargeError
from zarrview.zarrlib.storage.access import AccessDeniedError, AccessPolicy
from zarrview.zarrlib.storage.references import BadReferenceError

DATA = bytes(range(100))


def zarray(n: int) -> str:
    return json.dumps({"zarr_format": 2, "shape": [n], "chunks": [1], "dtype": "|u1", "compressor": None,
                       "fill_value": 0, "order": "C", "filters": None})


def write(folder: Path, chunks: list[Any], extra: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.bin").write_bytes(DATA)
    refs = {".zgroup": '{"zarr_format": 2}', "x/.zarray": zarray(len(chunks))}
    refs.update({f"x/{i}": c for i, c in enumerate(chunks)})
    doc = {"version": 1, "refs": refs, **(extra or {})}
    (folder / "refs.json").write_text(json.dumps(doc))
    return folder / "refs.json"


def read(path: Path, **options: Any) -> tuple[np.ndarray, dict[str, str]]:
    arr = zl.open(f"reference::{path}::/x", **options)
    failures: list = []
    out = arr.read(failures=failures)
    return out, {f.key: f.message for f in failures}


CASES = [
    (["file:///etc/passwd", 0, 4], AccessDeniedError, "file:///etc/passwd"),
    (["../outside.bin", 0, 1], AccessDeniedError, "outside.bin"),
    (["sub/../../outside.bin", 0, 1], AccessDeniedError, "outside.bin"),
    (["http://127.0.0.2:9/x.bin", 0, 1], AccessDeniedError, "http://127.0.0.2:9/x.bin"),
    (["data.bin", 1000, 1], BadReferenceError, "ends before byte 1001"),
    # longer than its chunk can be stored as (its codecs store 1 byte): refused before it is read
    (["data.bin", 99, 5], StoredChunkTooLargeError, "5 bytes, more than the 1 bytes allowed for one chunk"),
    (["data.bin", 0, -1], BadReferenceError, "must be integers, 0 or more"),
    (["data.bin", -5, 1], BadReferenceError, "must be integers, 0 or more"),
    (["data.bin", 0, 1 << 50], BadReferenceError, "more than"),
    (["data.bin", "0", 1], BadReferenceError, "must be integers"),
    ("base64:%%%not base64", BadReferenceError, "base64"),
    (["missing.bin", 0, 1], BadReferenceError, "does not exist"),
    ([17, 0, 1], BadReferenceError, "not a string"),
    ([1, 2], BadReferenceError, "expected a string"),
    (["{{nope}}", 0, 1], BadReferenceError, "unknown template"),
]


@pytest.mark.parametrize(("entry", "error", "words"), CASES)
def test_a_bad_entry_is_its_chunks_failure(tmp_path: Path, entry: Any, error: type, words: str) -> None:
    (tmp_path / "outside.bin").write_bytes(b"\x07" * 10)  # exists: a refusal is the policy's, not a missing file
    path = write(tmp_path / "set", [["data.bin", 5, 1], entry, "base64:" + "Kg=="])
    out, failed = read(path)
    assert list(failed) == ["x/1"], failed
    assert "x/1" in failed["x/1"] and words in failed["x/1"]
    np.testing.assert_array_equal(out, [5, 0, 42])  # the good chunks read, the bad one at the fill value
    with pytest.raises(error, match="x/1"):
        zl.open(f"reference::{path}::/x")[1:2]


def test_authorised_prefixes_widen_the_policy(tmp_path: Path) -> None:
    (tmp_path / "outside.bin").write_bytes(b"\x07" * 10)
    path = write(tmp_path / "set", [["../outside.bin", 3, 1]])
    with pytest.raises(AccessDeniedError) as denied:
        zl.open(f"reference::{path}::/x")[...]
    assert denied.value.prefix == f"file://{tmp_path}/" and denied.value.url == f"file://{tmp_path}/outside.bin"
    np.testing.assert_array_equal(zl.open(f"reference::{path}::/x", authorize=[denied.value.prefix])[...], [7])
    policy = AccessPolicy()
    arr = zl.open(f"reference::{path}::/x", authorize=policy)
    with pytest.raises(AccessDeniedError):
        arr[...]
    policy.allow(denied.value.prefix)  # what the window does once the user agrees
    np.testing.assert_array_equal(arr[...], [7])


def test_etc_passwd_is_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import os

    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: (opened.append(str(f)), real_open(f, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda f, *a, **k: (opened.append(str(f)), real_os_open(f, *a, **k))[1])
    path = write(tmp_path, [["file:///etc/passwd", 0, 10], ["/etc/passwd"]])
    _, failed = read(path)
    assert sorted(failed) == ["x/0", "x/1"]
    assert not [f for f in opened if Path(f).name == "passwd"]  # (the test's own folder has "passwd" in its name)


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "refs.json").write_text('{"version": 1, "refs": {".zgroup": ')
    with pytest.raises(BadReferenceError, match="refs.json is not a JSON reference set"):
        zl.open(f"reference::{tmp_path}/refs.json")


def test_a_gen_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    gen = [{"key": "x/{{i}}", "url": "data.bin", "offset": "{{i}}", "length": "1",
            "dimensions": {"i": {"start": 0, "stop": 10**6}, "j": {"start": 0, "stop": 10**6}}}]
    path = write(tmp_path, [], {"gen": gen})
    with pytest.raises(BadReferenceError, match=r"gen\[0\] makes 1000000000000 keys.*chunks_per_read"):
        zl.open(f"reference::{path}")


def test_gen_makes_keys_within_the_bound(tmp_path: Path) -> None:
    gen = [{"key": "x/{{i}}", "url": "{{f}}", "offset": "{{i * 10 + 1}}", "length": "1",
            "dimensions": {"i": {"start": 0, "stop": 4}}}]
    path = write(tmp_path, [0, 0, 0, 0], {"gen": gen, "templates": {"f": "data.bin"}})
    doc = json.loads(path.read_text())
    for i in range(4):
        del doc["refs"][f"x/{i}"]
    path.write_text(json.dumps(doc))
    np.testing.assert_array_equal(zl.open(f"reference::{path}::/x")[...], [1, 11, 21, 31])


def test_a_template_bomb_costs_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, [["{{a}}" * 5000, 0, 1]], {"templates": {"a": "y" * 8000}})
    _, failed = read(path)
    assert "longer than 8192 characters" in failed["x/0"]


def test_an_evaluator_runs_nothing_but_arithmetic(tmp_path: Path) -> None:
    gen = [{"key": "x/{{i}}", "url": "data.bin", "offset": "{{__import__('os').getpid()}}", "length": "1",
            "dimensions": {"i": {"start": 0, "stop": 1}}}]
    with pytest.raises(BadReferenceError, match="cannot evaluate"):
        zl.open(f"reference::{write(tmp_path, [], {'gen': gen})}")


def test_gen_entries_share_one_bound(tmp_path: Path) -> None:
    from zarrview.zarrlib.limits import configure, restore

    gen = [{"key": f"x/{{{{i + {100 * g}}}}}", "url": "data.bin", "offset": "{{i}}", "length": "1",
            "dimensions": {"i": {"start": 0, "stop": 60}}} for g in range(3)]
    path = write(tmp_path, [], {"gen": gen})
    old = configure(chunks_per_read=150)  # each entry's 60 keys fit; all three's 180 do not
    try:
        with pytest.raises(BadReferenceError, match=r"gen\[2\] makes 60 keys, more than the 30 left"):
            zl.open(f"reference::{path}")
    finally:
        restore(old)


def test_version_0_references(tmp_path: Path) -> None:
    """Spec version 0: the keys at the top level, no ``version`` or ``refs``."""
    path = write(tmp_path, [["data.bin", 9, 1], "base64:" + "BQ==", "\x03"])
    doc = json.loads(path.read_text())["refs"]
    path.write_text(json.dumps(doc))
    np.testing.assert_array_equal(zl.open(path)["x"][...], [9, 5, 3])  # a plain .json path, sniffed as references


def test_a_link_beside_the_set_cannot_lead_out_of_it(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.bin").write_bytes(b"\x09" * 4)
    path = write(tmp_path / "set", [["link/secret.bin", 0, 1]])
    (tmp_path / "set" / "link").symlink_to(tmp_path / "outside")
    _, failed = read(path)
    assert "not authorised" in failed["x/0"] and f"{tmp_path}/outside/secret.bin" in failed["x/0"]


def test_whole_file_and_inline_text_entries(tmp_path: Path) -> None:
    path = write(tmp_path, [["one.bin"], ["file://" + str(tmp_path / "one.bin")], "\x04", ["data.bin", 0, 0]])
    (tmp_path / "one.bin").write_bytes(b"\x08")
    out, failed = read(path)
    np.testing.assert_array_equal(out[:3], [8, 8, 4])
    assert list(failed) == ["x/3"]  # a zero-length chunk does not decode to one byte: named, not a crash
