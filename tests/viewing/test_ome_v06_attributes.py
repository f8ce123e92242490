"""The 0.6rc0 specification's attribute test documents (tests/data/ome/0.6-attributes/), each
made into a group with arrays where its datasets say: every invalid one gets an error, every
valid one none, except where the document breaks a rule the specification's text states but its
schemas cannot check (then the error given must be that rule's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import zarrview.zarrlib as zl
from ome_stores import DATA, write_group
from zarrview.viewing.ome import detect

CORPUS = DATA / "0.6-attributes"
CASES = sorted(str(p.relative_to(CORPUS).with_suffix("")) for p in CORPUS.rglob("*.json"))

#: valid by the schemas, but against a MUST of the specification's text: the words of the error
AGAINST_THE_TEXT = {
    # "[a scale's] input and output dimensionality MUST ... equal the length of the scale array"
    "spec/valid/image/mismatch_axes_units": "the scale has 2 values; the input has 3 axes",
    # byDimension: "every axis index in the ... output coordinate system MUST appear in exactly one"
    "spec/valid/image/multiscales_transform_additional_transforms": "output axes [2] are given by no item",
    # coordinate systems in multiscales: "axes MUST contain 2 or 3 entries of type:space"
    "spec/valid/transforms/byDimension": 'there MUST be 2 or 3 axes of type "space", not 0',
    # "One of input or output MUST reference the intrinsic coordinate system" (named "physical" here)
    "strict/valid/image/image_omero": "one end MUST be the intrinsic coordinate system 'physical'",
    # "The input object MUST specify a path field matching the path field of the dataset"
    "strict/valid/image/multiscales_example": "the input MUST be the dataset's path '1', not 's1'",
}


def _arrays(ome: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An array at each dataset path, with as many dimensions as the intrinsic system has axes."""
    out: dict[str, dict[str, Any]] = {}
    for ms in ome.get("multiscales") or []:
        systems = {s["name"]: len(s["axes"]) for s in ms.get("coordinateSystems") or []
                   if isinstance(s, dict) and isinstance(s.get("axes"), list) and "name" in s}
        for ds in ms.get("datasets") or []:
            if not (isinstance(ds, dict) and isinstance(ds.get("path"), str) and ds["path"].strip("/")):
                continue
            ts = ds.get("coordinateTransformations")
            output = ts[0].get("output") if isinstance(ts, list) and ts and isinstance(ts[0], dict) else None
            name = output.get("name") if isinstance(output, dict) else output
            out[ds["path"]] = {"shape": (4,) * systems.get(name, next(iter(systems.values()), 2))}
    return out


@pytest.mark.parametrize("case", CASES)
def test_attribute_document(tmp_path: Path, case: str) -> None:
    doc = json.loads((CORPUS / f"{case}.json").read_text())
    valid = doc.pop("_conformance", {}).get("valid", True)
    node = detect(zl.open(str(write_group(tmp_path / "g.zarr", "0.6", doc, _arrays(doc.get("ome", doc))))))
    if node is None:  # not OME metadata at all: a scene without "scene", for one
        assert not valid
        return
    errors = [p.message for p in node.problems if p.severity == "error"]
    if "/scene/" in case:  # the images a scene links are not part of the document
        errors = [e for e in errors if "cannot be opened" not in e]
    if not valid:
        assert errors, node.problems
    elif case in AGAINST_THE_TEXT:
        assert any(AGAINST_THE_TEXT[case] in e for e in errors), errors
    else:
        assert errors == [], node.problems


def test_every_document_is_copied() -> None:
    assert len(CASES) == 96
