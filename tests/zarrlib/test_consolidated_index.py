"""The consolidated-metadata index (``metadata/json_spans.py``, ``metadata/consolidated.py``)
against Python's json, the truth: every entry it locates decodes to what ``json.loads`` of the
whole document holds, whatever the keys and strings contain (quotes, backslashes, brackets,
NUL, non-ASCII) and however the document is laid out; what json refuses is refused with the
message ``load_json_object`` gives."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrview.zarrlib.errors import MetadataError
from zarrview.zarrlib.jsonutil import load_json_object
from zarrview.zarrlib.metadata.consolidated import index_v2, index_v3_root

NASTY = st.text(alphabet=st.sampled_from(list('ab/"\\{}[]:, é\0\n')), max_size=8)
SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | NASTY
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NASTY, inner, max_size=3),
                      max_leaves=8)
ENTRIES = st.dictionaries(NASTY, VALUES | st.dictionaries(NASTY, VALUES, max_size=4), max_size=6)
LAYOUTS = st.sampled_from([{"indent": 2}, {}, {"separators": (",", ":")}, {"indent": "\t", "separators": (" ,", " : ")}])


def _name(path: str) -> str:
    return f"entry {path}"


@settings(max_examples=150, deadline=None)
@given(entries=ENTRIES, attributes=st.dictionaries(NASTY, VALUES, max_size=3), layout=LAYOUTS,
       ascii_only=st.booleans())
def test_v3_entries_decode_as_json_decodes_the_document(entries: dict[str, Any], attributes: dict[str, Any],
                                                         layout: dict[str, Any], ascii_only: bool) -> None:
    doc = {"attributes": attributes, "zarr_format": 3, "node_type": "group",
           "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": entries}}
    text = json.dumps(doc, ensure_ascii=ascii_only, **layout).encode()
    outer, cons = index_v3_root(text, "zarr.json", _name)
    truth = json.loads(text)
    assert outer == {**truth, "consolidated_metadata": {**truth["consolidated_metadata"], "metadata": {}}}
    objects = {k: v for k, v in truth["consolidated_metadata"]["metadata"].items() if isinstance(v, dict)}
    assert cons is not None and cons.entry_count == len(objects)
    for key, value in objects.items():
        path = "/" + key.strip("/")
        if sum("/" + k.strip("/") == path for k in objects) == 1:  # keys that name one node
            assert cons.entry(path) == value


@settings(max_examples=60, deadline=None)
@given(entries=ENTRIES, layout=LAYOUTS)
def test_v2_entries_decode_as_json_decodes_the_document(entries: dict[str, Any], layout: dict[str, Any]) -> None:
    metadata = {f"{k}/.zattrs": v for k, v in entries.items() if isinstance(v, dict) and "/" not in k and k}
    text = json.dumps({"metadata": metadata, "zarr_consolidated_format": 1}, **layout).encode()
    cons = index_v2(text, ".zmetadata", _name)
    assert cons is not None
    for key, value in metadata.items():
        assert cons.entry("/" + key.rsplit("/", 1)[0]) == {".zattrs": value}


@pytest.mark.parametrize("text", [
    b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {"a": {"x": 1}}',  # truncated
    b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {"a": {"x": 1}}}} trailing',
    b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {"a" {"x": 1}}}}',  # no colon
    b'["not", "an", "object"]',
    b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {"\xff": {}}}}',  # not UTF-8
    b'{"a": ' + b"[" * 200 + b"]" * 200 + b', "consolidated_metadata": {"metadata": {}}}',  # too deep
])
def test_what_json_refuses_is_refused_with_its_message(text: bytes) -> None:
    with pytest.raises(MetadataError) as expected:
        load_json_object(text, "zarr.json")
    with pytest.raises(MetadataError) as got:
        index_v3_root(text, "zarr.json", _name)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("raw", [b"\x00", b"\n", b"\x1f"])
@pytest.mark.parametrize("v2", [False, True])
def test_a_raw_control_character_in_a_key_is_refused_as_json_refuses_it(raw: bytes, v2: bool) -> None:
    """JSON escapes control characters in strings. A raw one in a key (one byte inserted by a
    broken writer or disk) is refused with json's message, naming the document; a raw NUL once
    shifted every key after it onto the next entry's span and past the last one."""
    key = b'"g/a' + raw + b'b/.zattrs"' if v2 else b'"a' + raw + b'b"'
    head = b'{"zarr_consolidated_format": 1, "metadata": {' if v2 else b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {'
    text = head + b'"x/.zgroup": {"zarr_format": 2}, ' + key + b': {"k": 1}, "z/.zattrs": {}}' + (b"}" if v2 else b"}}")
    name = ".zmetadata" if v2 else "zarr.json"
    with pytest.raises(MetadataError) as expected:
        load_json_object(text, name)
    assert "control character" in str(expected.value)
    with pytest.raises(MetadataError) as got:
        index_v2(text, name, _name) if v2 else index_v3_root(text, name, _name)
    assert str(got.value) == str(expected.value)


def test_a_broken_entry_is_named_when_it_is_read() -> None:
    text = b'{"zarr_format": 3, "consolidated_metadata": {"metadata": {"a": {"x": tru}, "b": {"y": NaN}}}}'
    _, cons = index_v3_root(text, "zarr.json", _name)
    assert cons is not None and math.isnan(cons.entry("/b")["y"])  # a v2 writer's bare NaN, as json reads it
    with pytest.raises(MetadataError, match="entry /a is not valid JSON"):
        cons.entry("/a")


def test_children_come_from_one_index_including_implied_groups() -> None:
    entries = {"a/b/c": {}, "a/x": {}, "z": {}, "a/b/d": {}}
    text = json.dumps({"zarr_format": 3, "consolidated_metadata": {"metadata": entries}}).encode()
    _, cons = index_v3_root(text, "zarr.json", _name)
    assert cons is not None
    assert (cons.children("/"), cons.children("/a"), cons.children("/a/b")) == (["a", "z"], ["b", "x"], ["c", "d"])
    assert cons.paths() == ["/a/b/c", "/a/b/d", "/a/x", "/z"] and "/a" not in cons
