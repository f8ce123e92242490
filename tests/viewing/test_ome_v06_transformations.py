"""OME-Zarr 0.6 (RFC-5) transformations, one type at a time: the examples of the 0.6rc0
specification (tests/data/ome/0.6/transformations/) read into maps and applied to random points,
against the function each defines worked out by hand with numpy from its parameters; the
dialects written before 0.6rc0; and broken ones, which fail with a TransformationError naming
the place, never another exception."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ome_stores import DATA
from zarrview.viewing.ome.affine import AffineMap, TransformationError, UnsupportedTransformation
from zarrview.viewing.ome.coordinate_transformations import MAX_DEPTH, Dims, read_transformation

RNG = np.random.default_rng(7)
Points = np.ndarray


def example(name: str) -> dict[str, Any]:
    return json.loads((DATA / "0.6" / "transformations" / f"{name}.json").read_text())


def read(doc: dict[str, Any], index: int = 0) -> AffineMap:
    """The ``index``-th transformation of an example, with the dimensions its systems give."""
    t = doc["coordinateTransformations"][index]
    systems = {s["name"]: s for s in doc["coordinateSystems"]}

    def end(ref: Any) -> dict[str, Any]:
        return systems[ref["name"] if isinstance(ref, dict) else ref]
    a, b = end(t["input"]), end(t["output"])
    return read_transformation(t, "$", Dims(len(a["axes"]), len(b["axes"]), tuple(x["name"] for x in a["axes"]),
                                            tuple(x["name"] for x in b["axes"])))


def cols(*columns: np.ndarray) -> Points:
    return np.stack(columns, axis=1)


# (example, transformation index, input axes, the function by hand: input columns -> output points)
CASES: list[tuple[str, int, int, Callable[[Points], Points]]] = [
    # in (j, i) -> out (y, x): "x = 3.12 * i, y = 2 * j"
    ("scale", 0, 2, lambda p: cols(2 * p[:, 0], 3.12 * p[:, 1])),
    # "x = i + 9, y = j - 1.42" as the vector [9, -1.42] is written: y = j + 9, x = i - 1.42
    ("translation", 0, 2, lambda p: cols(p[:, 0] + 9, p[:, 1] - 1.42)),
    ("identity", 0, 2, lambda p: p.copy()),
    ("mapAxis1", 0, 2, lambda p: p.copy()),
    ("mapAxis1", 1, 2, lambda p: cols(p[:, 1], p[:, 0])),
    # "y = 1*j + 2*i + 3, x = 4*j + 5*i + 6"
    ("affine2d2d", 0, 2, lambda p: cols(p[:, 0] + 2 * p[:, 1] + 3, 4 * p[:, 0] + 5 * p[:, 1] + 6)),
    # M rows of N + 1 columns, the last the translation (the normative form; the example's prose
    # reads the first column as the translation instead): z = i, y = 2i + 3j + 4, x = 5i + 6j + 7
    ("affine2d3d", 0, 2, lambda p: cols(p[:, 0], 2 * p[:, 0] + 3 * p[:, 1] + 4, 5 * p[:, 0] + 6 * p[:, 1] + 7)),
    # [[0, -1], [1, 0]] times the column (j, i): y = -i, x = j
    ("rotation", 0, 2, lambda p: cols(-p[:, 1], p[:, 0])),
    # translation [0.1, 0.9], then scale [2, 3]
    ("sequence", 0, 2, lambda p: cols((p[:, 0] + 0.1) * 2, (p[:, 1] + 0.9) * 3)),
    # x (axis 1) from i (axis 1) translated by -1; y (0) from j (0) scaled by 2
    ("byDimension1", 0, 2, lambda p: cols(2 * p[:, 0], p[:, 1] - 1)),
    # in (l, j, k, i) -> out (z, y, x): (y, x) = (i, k) + (0.5, 1.5); z = 2 j
    ("byDimension2", 0, 4, lambda p: cols(2 * p[:, 1], p[:, 3] + 0.5, p[:, 2] + 1.5)),
    # (i, j) -> (c, z, y, x): "c = 0, z = 0, y = i, x = j"
    ("projectAxis", 0, 2, lambda p: cols(0 * p[:, 0], 0 * p[:, 0], p[:, 0], p[:, 1])),
    # (c, i, j) -> (z, y, x): c dropped, z created: "z = 0, y = i, x = j"
    ("projectAxis2", 0, 3, lambda p: cols(0 * p[:, 0], p[:, 1], p[:, 2])),
]


@pytest.mark.parametrize(("name", "index", "n", "by_hand"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_spec_example_maps_points_as_defined(name: str, index: int, n: int,
                                             by_hand: Callable[[Points], Points]) -> None:
    points = RNG.uniform(-50, 50, (20, n))
    amap = read(example(name), index)
    np.testing.assert_allclose(amap.apply(points), by_hand(points), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["scale", "translation", "rotation", "sequence", "byDimension1", "affine2d2d"])
def test_invertible_examples_round_trip(name: str) -> None:
    amap = read(example(name))
    points = RNG.uniform(-10, 10, (15, 2))
    np.testing.assert_allclose(amap.inverse().apply(amap.apply(points)), points, atol=1e-9)


def test_a_sequence_is_the_product_of_its_steps() -> None:
    steps = [{"type": "scale", "scale": [2.0, 0.5, 3.0]}, {"type": "translation", "translation": [1.0, -2.0, 0.25]},
             {"type": "affine", "affine": [[0, 1, 0, 5], [1, 0, 0, -1], [0, 0, 2, 0]]}, {"type": "mapAxis", "mapAxis": [2, 0, 1]}]
    amap = read_transformation({"type": "sequence", "transformations": steps}, "$", Dims(3, 3))
    points = RNG.uniform(-5, 5, (10, 3))
    p = points * [2.0, 0.5, 3.0] + [1.0, -2.0, 0.25]
    p = p @ np.array([[0, 1, 0], [1, 0, 0], [0, 0, 2]]).T + [5, -1, 0]
    np.testing.assert_allclose(amap.apply(points), p[:, [2, 0, 1]])


@pytest.mark.parametrize(("name", "words"), [("byDimensionInvalid1", "outside"), ("byDimensionInvalid2", "already given")])
def test_invalid_spec_examples_are_refused(name: str, words: str) -> None:
    with pytest.raises(TransformationError, match=words):
        read(example(name))


@pytest.mark.parametrize("name", ["bijection", "xarrayLike", "byDimensionXarray", "sequenceSubspace1"])
def test_coordinate_fields_are_unsupported_not_wrong(name: str) -> None:
    doc = example(name)
    with pytest.raises(UnsupportedTransformation, match="not applied"):
        read(doc)


def test_a_bijection_uses_the_inverse_it_states() -> None:
    t = {"type": "bijection", "forward": {"type": "translation", "translation": [1, 1]},
         "inverse": {"type": "translation", "translation": [10, 10]}}
    amap = read_transformation(t, "$", Dims(2, 2))
    np.testing.assert_allclose(amap.apply([[1, 2]]), [[2, 3]])
    np.testing.assert_allclose(amap.inverse().apply([[1, 2]]), [[11, 12]])


# -- the dialects before 0.6rc0 -------------------------------------------------------------------

NAMES = Dims(2, 2, ("j", "i"), ("y", "x"))


def test_dev2_map_axis_by_names() -> None:
    amap = read_transformation({"type": "mapAxis", "mapAxis": {"y": "i", "x": "j"}}, "$", NAMES)
    np.testing.assert_allclose(amap.apply([[3, 4]]), [[4, 3]])


@pytest.mark.parametrize("item_keys", [("input_axes", "output_axes"), ("inputAxes", "outputAxes")])
@pytest.mark.parametrize("wrapped", [True, False])
@pytest.mark.parametrize("named", [True, False])
def test_by_dimension_items_in_every_spelling(item_keys: tuple[str, str], wrapped: bool, named: bool) -> None:
    """dev2: the transformation inline, axes by name; dev3/dev4: wrapped, snake_case indices; rc0: camelCase."""
    def item(t: dict[str, Any], i: int, o: int) -> dict[str, Any]:
        axes = {item_keys[0]: [NAMES.names_in[i] if named else i],  # type: ignore[index]
                item_keys[1]: [NAMES.names_out[o] if named else o]}  # type: ignore[index]
        return {"transformation": t, **axes} if wrapped else {**t, **axes}
    t = {"type": "byDimension", "transformations": [item({"type": "translation", "translation": [-1.0]}, 1, 1),
                                                    item({"type": "scale", "scale": [2.0]}, 0, 0)]}
    np.testing.assert_allclose(read_transformation(t, "$", NAMES).apply([[3, 4]]), [[6, 3]])


def test_dev2_inverse_of() -> None:
    t = {"type": "inverseOf", "transformation": {"type": "scale", "scale": [2, 4]}}
    np.testing.assert_allclose(read_transformation(t, "$", Dims(2, 2)).apply([[2, 2]]), [[1, 0.5]])


# -- broken transformations -----------------------------------------------------------------------

@pytest.mark.parametrize(("t", "dims", "words"), [
    ({"type": "scale", "scale": [1, 2, 3]}, Dims(2, 2), "3 values; the input has 2 axes"),
    ({"type": "translation", "translation": "up"}, Dims(2, 2), "non-empty list of numbers"),
    ({"type": "scale", "path": "params"}, Dims(2, 2), "stored in a Zarr array"),
    ({"type": "affine", "affine": [[1, 0], [0, 1, 0]]}, Dims(2, 2), "differ in length"),
    ({"type": "rotation", "rotation": [[1, 0, 0], [0, 1, 0]]}, Dims(2, 2), "N × N"),
    ({"type": "mapAxis", "mapAxis": [0, 5]}, Dims(2, 2), "outside the 2 input axes"),
    ({"type": "sequence", "transformations": []}, Dims(2, 2), "non-empty"),
    ({"type": "warp"}, Dims(2, 2), "unknown transformation type"),
    ({"type": "identity"}, Dims(2, 3), "cannot map 2 axes to 3"),
    ({"type": "affine", "affine": [[1, 0, 0]]}, Dims(2, 2), "gives 1 axes; its output has 2"),
    ({"type": "bijection", "forward": {"type": "scale", "scale": [1, 1]}}, Dims(2, 2), "forward.*inverse"),
    ({"type": "scale", "scale": [0, 1]}, Dims(2, 2), "singular"),
])
def test_broken_transformations_name_what_is_wrong(t: dict[str, Any], dims: Dims, words: str) -> None:
    with pytest.raises(TransformationError, match=words):
        read_transformation(t, "$", dims).inverse()


def test_a_transformation_that_contains_itself_is_an_error() -> None:
    t: dict[str, Any] = {"type": "sequence", "transformations": []}
    t["transformations"].append(t)
    with pytest.raises(TransformationError, match="contains itself"):
        read_transformation(t, "$", Dims(2, 2))


def test_nesting_is_bounded() -> None:
    t: dict[str, Any] = {"type": "scale", "scale": [1, 1]}
    for _ in range(MAX_DEPTH * 50):
        t = {"type": "sequence", "transformations": [t]}
    with pytest.raises(TransformationError, match="nested more than"):
        read_transformation(t, "$", Dims(2, 2))


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["type", "scale", "translation", "affine", "mapAxis", "transformations",
                                         "transformation", "inputAxes", "output_axes", "forward", "inverse",
                                         "droppedInputs", "createdOutputs"]), inner, max_size=5), max_leaves=25)
TYPES = st.sampled_from(["sequence", "byDimension", "bijection", "mapAxis", "affine", "projectAxis", "scale"])


@settings(max_examples=300, deadline=None)
@given(TYPES, JSON, st.integers(1, 4) | st.none())
def test_any_json_is_read_or_refused_with_a_transformation_error(typ: str, body: Any, n: int | None) -> None:
    t = {**body, "type": typ} if isinstance(body, dict) else {"type": typ, "transformations": body}
    try:
        amap = read_transformation(t, "$", Dims(n, None))
    except TransformationError:
        return
    assert np.all(np.isfinite(amap.matrix))


@pytest.mark.parametrize("t", [
    {"type": "scale", "scale": [1.0] * 10**6},
    {"type": "byDimension", "transformations": [{"transformation": {"type": "scale", "scale": [2]},
                                                 "inputAxes": [0], "outputAxes": [10**9]}]},
    {"type": "projectAxis", "createdOutputs": list(range(10**5))},
    {"type": "affine", "affine": [[0.0] * 3] * 10**5},
], ids=["scale", "byDimension", "projectAxis", "affine"])
def test_sizes_from_the_document_are_bounded(t: dict[str, Any]) -> None:
    """No matrix is sized by a number the document makes up (a million-axis scale would be 8 TB)."""
    with pytest.raises(TransformationError, match="more than the 64"):
        read_transformation(t, "$", Dims(None if t["type"] != "projectAxis" else 2, None))
