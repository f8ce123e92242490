"""CF values (masking, unpacking, _Unsigned, flags, titles) against xarray: stores written by xarray
in Zarr v2 and v3, consolidated and not, read raw with zarrlib and decoded by ``value_coding``,
compared with what ``xr.open_zarr`` decodes from the same store. xarray leaves ``valid_*`` alone,
so those masks are checked against xarray's values masked by its own raw values; bad attributes
(stores written by zarr-python) against xarray reading the store once the bad attribute is gone."""

from __future__ import annotations

import tracemalloc
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from cf_datasets import set_attributes, write_array_with_attributes, write_cf_dataset  # noqa: E402
from xarray.backends.zarr import FillValueCoder  # noqa: E402
from zarrview import zarrlib  # noqa: E402
from zarrview.viewing.cf.flags import FlagLegend, flag_legend  # noqa: E402
from zarrview.viewing.cf.values import initial_range, value_coding, value_title  # noqa: E402
from zarrview.zarrlib.errors import short  # noqa: E402

FORMATS = [(2, False), (2, True), (3, False), (3, True)]
#: variables xarray decodes completely (everything but the valid_* masks)
DECODED_BY_XARRAY = ["t2m", "sst", "rain", "small", "count", "twofills", "u8", "u8raw", "plain", "qc", "status"]


def open_xarray(path: Path, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # several fill values; consolidated v3 metadata
        return xr.open_zarr(path, consolidated=None, **kwargs).load()


@dataclass
class Written:
    path: Path
    group: zarrlib.Group
    decoded: Any  # xarray's CF-decoded dataset
    stored: Any   # xarray's dataset with decode_cf=False

    def read(self, name: str) -> tuple[np.ndarray, Any]:
        arr = self.group[name]
        return arr[...], value_coding(arr)


@pytest.fixture(scope="module", params=FORMATS, ids=[f"v{f}{'-consolidated' if c else ''}" for f, c in FORMATS])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Written:
    zarr_format, consolidated = request.param
    path = write_cf_dataset(tmp_path_factory.mktemp("cf") / "cf.zarr", zarr_format, consolidated)
    return Written(path, zarrlib.open(str(path)), open_xarray(path), open_xarray(path, decode_cf=False))


def missing(values: np.ndarray) -> np.ndarray:
    return np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)


@pytest.mark.parametrize("name", DECODED_BY_XARRAY)
def test_decoded_values_are_xarrays(written: Written, name: str) -> None:
    raw, coding = written.read(name)
    expected = written.decoded[name].values
    decoded = coding.decode(raw)
    assert decoded.dtype == expected.dtype
    np.testing.assert_array_equal(missing(decoded), missing(expected))
    np.testing.assert_allclose(decoded, expected, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(coding.mask(raw), missing(expected))
    assert coding.notes == ()


def test_stored_integers_without_coding_come_back_themselves(written: Written) -> None:
    raw, coding = written.read("plain")
    assert not coding.active and coding.decode(raw) is raw
    raw, coding = written.read("sst")  # float32 with a NaN fill: nothing to change
    assert not coding.active and coding.decode(raw) is raw
    raw, coding = written.read("u8raw")  # _Unsigned alone: a view of the same memory
    decoded = coding.decode(raw)
    assert decoded.dtype == np.uint8 and np.shares_memory(decoded, raw)


def test_coding_holds_xarrays_encoding(written: Written) -> None:
    for name in ("t2m", "rain", "twofills", "u8", "count"):
        encoding = written.decoded[name].encoding
        coding = written.read(name)[1]
        expected = {float(encoding[k]) for k in ("_FillValue", "missing_value") if k in encoding}
        assert {float(f) for f in coding.fill_values} == expected, name
        assert coding.scale_factor == encoding.get("scale_factor")
        assert coding.add_offset == encoding.get("add_offset")
    assert written.read("u8")[1].unsigned and not written.read("t2m")[1].unsigned


@pytest.mark.parametrize("name", ["ranged", "above"])
def test_valid_range_masks_the_stored_values(written: Written, name: str) -> None:
    raw, coding = written.read(name)
    attrs = written.decoded[name].attrs
    lo, hi = attrs.get("valid_range", [attrs.get("valid_min", -np.inf), attrs.get("valid_max", np.inf)])
    stored = written.stored[name].values
    expected = np.where((stored < lo) | (stored > hi), np.nan, written.decoded[name].values)
    decoded = coding.decode(raw)
    assert decoded.dtype == expected.dtype
    assert ((stored < lo) | (stored > hi)).any()  # the dataset does test the range
    np.testing.assert_array_equal(missing(decoded), missing(expected))
    np.testing.assert_allclose(decoded, expected, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(coding.mask(raw), missing(expected))


@pytest.mark.parametrize("name", ["t2m", "u8", "ranged", "plain"])
def test_decode_scalar_is_decode_of_one_value(written: Written, name: str) -> None:
    raw, coding = written.read(name)
    decoded = coding.decode(raw)
    for stored, value in zip(raw.flat, decoded.flat):
        want = None if missing(np.asarray(value)) else float(value)
        assert coding.decode_scalar(stored) == want
        assert coding.decode_scalar(int(stored)) == want  # a Python number for a stored one


def test_flag_names_follow_the_attributes_xarray_reads(written: Written) -> None:
    qc, notes = flag_legend(written.group["qc"].attrs)
    attrs = written.decoded["qc"].attrs
    by_value = dict(zip(attrs["flag_values"], attrs["flag_meanings"].split()))
    assert qc is not None and notes == []
    for v in np.unique(written.decoded["qc"].values):
        assert qc.name_of(v) == by_value[int(v)]
    assert qc.name_of(7) is None
    status, notes = flag_legend(written.group["status"].attrs)
    attrs = written.decoded["status"].attrs
    bits = list(zip(attrs["flag_masks"], attrs["flag_meanings"].split()))
    assert status is not None and notes == []
    for v in np.unique(written.decoded["status"].values):
        assert status.name_of(v) == (" + ".join(m for mask, m in bits if int(v) & mask) or None)


def test_flag_masks_with_values_as_in_cf_example_3_8() -> None:
    legend, notes = flag_legend({"flag_masks": [1, 2, 12, 12, 12], "flag_values": [1, 2, 4, 8, 12],
                                 "flag_meanings": "low_battery hardware_fault offline_mode calibration_mode "
                                                  "maintenance_mode"})
    assert notes == [] and legend is not None
    assert legend.name_of(13) == "low_battery + maintenance_mode"
    assert legend.name_of(6) == "hardware_fault + offline_mode"
    assert legend.name_of(0) is None


@pytest.mark.parametrize("attrs, bad", [
    ({"flag_values": [0, 1], "flag_meanings": "a b c"}, "flag_values [0, 1]"),
    ({"flag_values": "0 1", "flag_meanings": "a b"}, "flag_values '0 1'"),
    ({"flag_masks": [1, 2.5], "flag_meanings": "a b"}, "flag_masks [1, 2.5]"),
    ({"flag_values": [0, 1], "flag_meanings": 3}, "flag_meanings 3"),
    ({"flag_meanings": "a b"}, "flag_meanings"),
])
def test_bad_flags_give_a_note_and_no_legend(attrs: dict[str, Any], bad: str) -> None:
    legend, notes = flag_legend(attrs)
    assert legend is None and any(n.startswith(bad) for n in notes), notes


def test_good_flag_values_survive_bad_masks() -> None:
    legend, notes = flag_legend({"flag_values": [1, 2], "flag_masks": "x", "flag_meanings": "a b"})
    assert legend == FlagLegend((1, 2), None, ("a", "b")) and notes[0].startswith("flag_masks 'x'")


def test_initial_range_and_titles(written: Written) -> None:
    group, attrs = written.group, written.decoded
    assert initial_range(group["sst"]) == tuple(attrs["sst"].attrs["actual_range"])
    # valid_range is in stored units: the contrast starts from its unpacked ends, as xarray unpacks them
    bounds = xr.Dataset({"b": ("n", np.array(attrs["ranged"].attrs["valid_range"], np.int16),
                                {"scale_factor": attrs["ranged"].encoding["scale_factor"]})})
    assert initial_range(group["ranged"]) == pytest.approx(tuple(xr.decode_cf(bounds)["b"].values))
    assert initial_range(group["t2m"]) is None and initial_range(group["above"]) is None  # no range, one end
    assert value_title(group["t2m"]) == (attrs["t2m"].attrs["long_name"], attrs["t2m"].attrs["units"])
    assert value_title(group["sst"]) == (attrs["sst"].attrs["standard_name"], "degC")
    assert value_title(group["small"]) == ("small", None)


@dataclass(frozen=True)
class Bad:
    """A store with a bad attribute: the note must name ``shown``; xarray reads the reference
    after ``drop`` is removed (and ``replace`` set)."""
    zarr_format: int
    data: np.ndarray
    attrs: dict[str, Any]
    shown: str
    drop: tuple[str, ...]
    fill_value: Any = None
    replace: dict[str, Any] = field(default_factory=dict)


INT16 = np.array([[-1, 0, 7], [300, -1, 12]], np.int16)
FLOAT32 = np.array([[np.nan, -9999.0, 1.5], [2.5, -9999.0, 0.0]], np.float32)
BAD = {
    "scale_factor string": Bad(3, INT16, {"scale_factor": "abc"}, "scale_factor 'abc'", ("scale_factor",)),
    "scale_factor list, fill applies": Bad(2, INT16, {"scale_factor": [1, 2], "add_offset": 5.0}, "scale_factor [1, 2]",
                                           ("scale_factor", "add_offset"), fill_value=-1),
    "add_offset dict": Bad(3, INT16, {"scale_factor": 2.0, "add_offset": {"a": 1}}, "add_offset {'a': 1}",
                           ("scale_factor", "add_offset")),
    "scale_factor bool": Bad(2, INT16, {"scale_factor": True}, "scale_factor True", ("scale_factor",)),
    "valid_range of 3": Bad(3, INT16, {"valid_range": [1, 2, 3], "_FillValue": -1}, "valid_range [1, 2, 3]",
                            ("valid_range",)),
    "fill not base64": Bad(3, FLOAT32, {"_FillValue": "not base64!"}, "_FillValue 'not base64!'", ("_FillValue",),
                           fill_value=np.nan),
    "fill of 3 bytes": Bad(3, FLOAT32, {"_FillValue": "AAAA"}, "_FillValue 'AAAA'", ("_FillValue",), fill_value=np.nan),
    "fill a plain number": Bad(3, FLOAT32, {"_FillValue": -9999.0}, "_FillValue -9999.0", (), fill_value=np.nan,
                               replace={"_FillValue": FillValueCoder.encode(-9999.0, np.dtype("f4"))}),
    "_Unsigned on float": Bad(3, FLOAT32, {"_Unsigned": "true"}, "_Unsigned 'true'", ("_Unsigned",), fill_value=np.nan),
    "_Unsigned maybe": Bad(2, INT16.astype(np.int8), {"_Unsigned": "maybe"}, "_Unsigned 'maybe'", ("_Unsigned",)),
    "missing_value string": Bad(3, INT16, {"missing_value": "x", "_FillValue": -1}, "missing_value 'x'",
                                ("missing_value",)),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_attribute_gives_a_note_and_the_rest_applies(case: Bad, tmp_path: Path) -> None:
    path = write_array_with_attributes(tmp_path / "bad.zarr", case.data, case.attrs, case.zarr_format, case.fill_value)
    arr = zarrlib.open(str(path))["v"]
    raw, coding = arr[...], value_coding(arr)
    assert any(n.startswith(case.shown) for n in coding.notes), coding.notes
    decoded = coding.decode(raw)
    set_attributes(path, "v", case.replace, remove=case.drop)
    expected = open_xarray(path)["v"].values
    assert decoded.dtype == expected.dtype
    np.testing.assert_array_equal(decoded, expected)
    if not coding.active:
        assert decoded is raw  # nothing else to apply: the stored values as they are


@dataclass
class FakeArray:
    attrs: Any
    dtype: np.dtype[Any]
    fill_value: Any
    zarr_format: int
    name: str = "v"
    path: str = "v"


JUNK = [None, "x", "", [], [1, 2, 3], [None], {"a": 1}, True, float("nan"), float("inf"), 10**30, -(10**400), [5]]
KEYS = ["_FillValue", "missing_value", "scale_factor", "add_offset", "valid_min", "valid_max", "valid_range",
        "_Unsigned", "actual_range", "long_name", "units", "flag_values", "flag_masks", "flag_meanings"]


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "int64"])
def test_junk_attributes_never_raise(dtype: str) -> None:
    raw = np.arange(-3, 9).astype(dtype).reshape(3, 4)
    for key in KEYS:
        for junk in JUNK:
            for zarr_format, fill in ((2, None), (2, raw.flat[0]), (3, raw.flat[0])):
                arr = FakeArray({key: junk, "flag_meanings": "a b"}, raw.dtype, fill, zarr_format)
                coding = value_coding(arr)  # type: ignore[arg-type]
                out = coding.decode(raw)
                assert out.shape == raw.shape and coding.mask(raw).shape == raw.shape
                coding.decode_scalar(raw.flat[1])
                initial_range(arr)  # type: ignore[arg-type]
                assert isinstance(value_title(arr)[0], str)  # type: ignore[arg-type]
                flag_legend(arr.attrs)
                if key in ("scale_factor", "add_offset") and isinstance(junk, (str, dict, bool)):
                    assert any(n.startswith(f"{key} {short(junk)}") for n in coding.notes)


def test_decoding_a_large_plane_allocates_one_float_plane() -> None:
    raw = np.random.default_rng(1).integers(-32768, 32767, (1000, 1000), dtype=np.int16)
    attrs = {"scale_factor": 0.01, "add_offset": 273.15, "valid_range": [-30000, 30000], "missing_value": -32768}
    coding = value_coding(FakeArray(attrs, raw.dtype, np.int16(-32767), 2))  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        out = coding.decode(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.dtype == np.float64 and np.isnan(out).any()
    assert peak <= out.nbytes + 2 * raw.size + 65536  # the result, the mask and one more boolean plane
