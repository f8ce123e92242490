"""Python that reads exactly what a view shows ("Copy as Python"), for zarr-python 3, xarray,
TensorStore or zarrlib itself.

A scientist who found the plane in the window wants the same numbers in a notebook. The snippet
leaves in ``data`` the array ``zarrview export ... -o x.npy`` writes for the same location,
``--slice``, ``--level`` and ``--raw``: it is made from the same ``PlaneSpec`` (the array read,
a pyramid's level array included, and the selection in that array's indices) and decodes CF
values by the same rules (``cf.values.value_coding``), written out with numpy where the library
does not apply them itself. Where a library cannot read the array (a codec, a data type, a
store it has no driver for) a ``SnippetError`` says so, instead of a snippet that fails when
pasted.

Nothing secret is written: access keys, secret keys, session tokens, passwords, account keys
and SAS or signed query strings are left out (a comment says where credentials come from),
while ``endpoint_url``, ``region`` and ``anon`` stay. The xarray snippet lists the array's group
(xarray opens it as one dataset) and so reads metadata: make it off the GUI thread.
"""

from __future__ import annotations

import itertools
import json
import keyword
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import __version__
from ..zarrlib import Array, ZarrError
from ..zarrlib.icechunk import IcechunkStore
from ..zarrlib.icechunk.versions import Version
from ..zarrlib.storage import split_node_path
from ..zarrlib.storage.access import AUTHORIZE, policy_of
from ..zarrlib.storage.credentials import is_secret, public_location
from ..zarrlib.storage.local import local_path
from ..zarrlib.storage.ozx import ZIP_SUFFIXES
from ..zarrlib.storage.references import Pointer, ReferenceStore
from ..zarrlib.storage.zip import ZipStore
from .cf.decoded import decoding_of
from .cf.values import ValueCoding
from .export.plane import PlaneSpec

__all__ = ["KINDS", "LibraryCannotRead", "NotADataset", "NotAPlaneRead", "SnippetError", "Source", "numpy_decoding", "snippet",
           "source_of", "tensorstore_refusal", "zarr_python_refusal"]

#: the libraries a snippet is written for
KINDS = ("zarr", "xarray", "tensorstore", "zarrlib")

#: storage options that are zarrview's own: they mean nothing to another library
_OWN_OPTIONS = ("io_retries", "io_timeout", "io_concurrency", "backend", "version", "fo", AUTHORIZE)

#: Zarr v3 data types and codecs zarr-python 3 reads (and xarray through it)
_ZARR_V3_TYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                            "float16", "float32", "float64", "complex64", "complex128", "string", "bytes",
                            "variable_length_bytes", "fixed_length_utf32", "null_terminated_bytes",
                            "numpy.datetime64", "numpy.timedelta64", "structured"})
_ZARR_V3_CODECS = frozenset({"bytes", "endian", "transpose", "gzip", "zstd", "blosc", "crc32c", "sharding_indexed",
                             "vlen-utf8", "vlen-bytes"})
#: numcodecs' codecs, which zarr-python reads in Zarr v2 (and in v3 as ``numcodecs.<id>``)
_NUMCODECS = frozenset({"blosc", "zstd", "lz4", "zlib", "gzip", "bz2", "lzma", "delta", "fixedscaleoffset",
                        "quantize", "packbits", "categorize", "astype", "shuffle", "bitround", "crc32", "crc32c",
                        "adler32", "fletcher32", "jenkins_lookup3", "vlen-utf8", "vlen-bytes", "vlen-array",
                        "json2", "msgpack2", "pickle", "base64", "zfpy", "pcodec"})
#: what TensorStore's ``zarr3`` driver reads
_TS_V3_TYPES = frozenset({"bool", "int2", "int4", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
                          "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
                          "float8_e5m2fnuz", "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn"})
_TS_V3_CODECS = frozenset({"bytes", "transpose", "gzip", "blosc", "zstd", "crc32c", "sharding_indexed"})
#: and its ``zarr`` (v2) driver: these compressors, no filters, numbers only
_TS_V2_COMPRESSORS = frozenset({"blosc", "zlib", "gzip", "bz2", "zstd"})
#: the key-value stores TensorStore has for a URL's scheme
_TS_SCHEMES = {"http": "http", "https": "http", "s3": "s3", "gs": "gcs", "gcs": "gcs"}
#: calendars in which xarray decodes times to datetime64, as the view does
_GREGORIAN = (None, "standard", "gregorian", "proleptic_gregorian")
_TIME_UNITS = ("day", "hour", "minute", "second", "millisecond", "microsecond")


class SnippetError(Exception):
    """No snippet can be written for this view with this library; the message says why in one line."""


class LibraryCannotRead(SnippetError):
    """The library cannot read the array (its format, a codec, its data type) or its store (an
    Icechunk repository or a reference set without a driver there), or cannot decode its values
    as the view shows them."""


class NotADataset(SnippetError):
    """xarray opens an array's group as one dataset: the array or a sibling has no dimension
    names, or two arrays give one dimension different sizes."""


class NotAPlaneRead(SnippetError):
    """The view's values are computed (a projection), or its store was handed over in memory:
    there is no location to read them from."""


@dataclass(frozen=True)
class Source:
    """Where the store is, as another library opens it: ``form`` is "folder", "zip",
    "icechunk" or "references"; ``url`` an absolute local path or a URL, without secrets."""

    form: str
    url: str
    #: storage options without secrets and without zarrview's own
    options: Mapping[str, Any]
    #: the repository's version (``form`` "icechunk")
    version: Version | None = None
    #: URL prefixes the store may read outside itself (``--authorize``)
    authorize: tuple[str, ...] = ()
    #: whether credentials were left out (of the options or of the URL)
    hidden: bool = False
    #: the protocol of the files a reference set points into ("file", "s3"...)
    targets: str | None = None

    @property
    def local(self) -> bool:
        return local_path(self.url) is not None

    @property
    def location(self) -> str:
        """The location as zarrview spells it (``zarrview.zarrlib.open`` takes it)."""
        if self.form == "icechunk":
            return f"{self.url}@{self.version}"
        if self.form == "references":
            return f"reference::{self.url}"
        if self.form == "zip" and not self.url.lower().split("?", 1)[0].endswith(ZIP_SUFFIXES):
            return f"zip::{self.url}"
        return self.url

    @property
    def scheme(self) -> str:
        return "file" if self.local else self.url.partition("://")[0].lower()


def snippet(spec: PlaneSpec, location: str, options: Mapping[str, Any] | None, kind: str) -> str:
    """Python for ``kind`` (one of ``KINDS``) that leaves in ``data`` the values ``spec`` holds
    as ``zarrview export`` writes them to .npy: ``location`` is what the view was opened from
    (``::/node`` after it is ignored: the array is ``spec.array``) and ``options`` its storage
    options. Raises a ``SnippetError`` where the library cannot read it; the xarray snippet
    reads the metadata of the array's group (call it off the GUI thread)."""
    if kind not in KINDS:
        raise SnippetError(f"no snippet for {kind!r}: choose one of {', '.join(KINDS)}")
    if spec.values is not None:
        raise NotAPlaneRead(f"{spec.label} is computed, not read: no snippet reads it")
    source = source_of(spec.array, location, options or {})
    writer = {"zarr": _zarr, "xarray": _xarray, "tensorstore": _tensorstore, "zarrlib": _zarrlib}[kind]
    code = writer(spec, source)
    note = ["# credentials are not written here: they come from the environment or your configuration"] \
        if source.hidden else []
    return "\n".join([_header(spec, source), *note, *code.text()]) + "\n"


# -- where the store is ---------------------------------------------------------------------------


def source_of(arr: Array, location: str, options: Mapping[str, Any]) -> Source:
    """The store ``arr`` was read from, as ``location`` (and ``options``) name it, without
    secrets; its form from the store that was opened (an Icechunk repository, a reference set,
    a zip archive or a folder)."""
    store = arr.store
    loc, _ = split_node_path(location)
    opts = dict(options)
    authorize = opts.get(AUTHORIZE)
    allowed = policy_of(authorize, loc).allowed() if authorize is not None else ()
    kept, hidden = _public_options(opts)
    if isinstance(store, IcechunkStore):
        url, hid = _public_url(store.base.url)
        return Source("icechunk", url, kept, store.version, allowed, hidden or hid)
    if isinstance(store, ReferenceStore):
        refs = store.url.removeprefix("reference::")
        if refs.startswith("memory-"):
            raise NotAPlaneRead(f"the reference set of {arr.path} was given as a mapping in memory: no snippet "
                                "can open it")
        url, hid = _public_url(refs)
        return Source("references", url, kept, None, allowed, hidden or hid, _targets_protocol(store, arr))
    if isinstance(store, ZipStore):
        url, hid = _public_url(_absolute(loc.removeprefix("zip::")))
        return Source("zip", url, kept, None, allowed, hidden or hid)
    url, hid = _public_url(_absolute(loc))
    return Source("folder", url.rstrip("/") or url, kept, None, allowed, hidden or hid)


def _targets_protocol(store: ReferenceStore, arr: Array) -> str:
    """The protocol of the files the reference set points into, from the array's first chunk
    (else the first pointer among the set's first keys): fsspec's reference file system looks
    for it through every reference where it is not told, and a Parquet set's groups trip it."""
    first = [arr.meta.stored_key((0,) * arr.ndim)] if arr.ndim else []
    for key in itertools.chain(first, itertools.islice(store.refs.keys(), _POINTERS_LOOKED_AT)):
        try:
            entry = store.refs.lookup(key)
        except ZarrError:
            continue
        if isinstance(entry, Pointer):
            if "://" in entry.url:
                return entry.url.partition("://")[0].lower()
            return "file" if entry.url.startswith("/") else store.base.partition("://")[0].lower() or "file"
    return "file"


#: keys of a reference set looked through for one that points into a file
_POINTERS_LOOKED_AT = 10_000


def _absolute(loc: str) -> str:
    path = local_path(loc)
    return str(path.resolve()) if path is not None else loc


def _public_url(url: str) -> tuple[str, bool]:
    """``url`` without a signed query (``public_location``) and without a password; whether
    anything was left out."""
    if local_path(url) is not None:
        return url, False
    shown = public_location(url)
    return shown, shown != url


def _public_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The options another library takes, without credentials (at any depth) and without
    zarrview's own; whether any credential was left out."""
    hidden = False

    def clean(value: Any) -> Any:
        nonlocal hidden
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                if isinstance(k, str) and is_secret(k, v) or not _plain(v):
                    hidden = True  # a credential, or an object (a session, a credentials provider)
                    continue
                out[k] = clean(v)
            return out
        return value

    kept = clean({k: v for k, v in options.items() if k not in _OWN_OPTIONS})
    return kept, hidden


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON-like (what a snippet writes as a literal), not an object."""
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, bool, int, float))


# -- the header and the selection -----------------------------------------------------------------


def _header(spec: PlaneSpec, source: Source) -> str:
    """The comment line that says what the snippet reads: a line break in a path or URL is
    escaped, so that nothing of them becomes code."""
    how = "CF-decoded" if spec.decode and decoding_of(spec.array).active else "as stored"
    what = f"{source.location}::{spec.array.path}[{_index_text(spec.selection)}]"
    what = "".join(c if c.isprintable() else repr(c)[1:-1] for c in what)
    return f"# zarrview {__version__}: {what} ({how}), the values `zarrview export` writes to .npy"


def _index_text(selection: Sequence[int | slice]) -> str:
    if not selection:
        return "()"
    return ", ".join(_one_index(s) for s in selection)


def _one_index(s: int | slice) -> str:
    if isinstance(s, slice):
        text = f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
        return text + (f":{s.step}" if s.step not in (None, 1) else "")
    return str(int(s))


def _literal(value: Any) -> str:
    """A Python literal of JSON-like ``value`` (dicts, lists, strings, numbers, booleans)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)  # None, a bool or an int (``_public_options`` keeps no other kind)


def _number(x: float | int) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "np.nan"
    if isinstance(x, float) and math.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def _key(path: str) -> str:
    """A node path as a key below the store's root ("" for the root)."""
    return path.strip("/")


# -- what each library can read --------------------------------------------------------------------


def _type_name(arr: Array) -> str:
    doc = arr.doc.document
    if arr.zarr_format == 2:
        dtype = doc.get("dtype")
        return "structured" if isinstance(dtype, list) else str(dtype)
    name = doc.get("data_type")
    return str(name.get("name") if isinstance(name, Mapping) else name)


def _v3_codecs(codecs: Any) -> list[str]:
    """Every codec name in a v3 chain, those inside sharding included."""
    names: list[str] = []
    for codec in codecs if isinstance(codecs, list) else []:
        name = codec.get("name") if isinstance(codec, Mapping) else codec
        names.append(str(name))
        config = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(config, Mapping):
            names += _v3_codecs(config.get("codecs")) + _v3_codecs(config.get("index_codecs"))
    return names


def _v2_codecs(arr: Array) -> tuple[str | None, list[str]]:
    doc = arr.doc.document
    compressor = doc.get("compressor")
    filters = doc.get("filters") or []
    comp = str(compressor.get("id")) if isinstance(compressor, Mapping) else None
    return comp, [str(f.get("id")) if isinstance(f, Mapping) else str(f) for f in filters]


def _grid(arr: Array) -> str:
    grid = arr.doc.document.get("chunk_grid")
    return str(grid.get("name")) if isinstance(grid, Mapping) else "regular"


def zarr_python_refusal(arr: Array) -> str | None:
    """Why zarr-python 3 cannot read ``arr``, or None where it can."""
    if arr.format_name not in ("v2", "v3"):
        return f"{arr.path} is Zarr {arr.format_name}, which zarr-python does not read"
    name = _type_name(arr)
    if arr.zarr_format == 2:
        comp, filters = _v2_codecs(arr)
        unknown = [c for c in [comp, *filters] if c is not None and c not in _NUMCODECS]
    else:
        if name not in _ZARR_V3_TYPES:
            return f"{arr.path} holds {name} values, which zarr-python does not read"
        if _grid(arr) != "regular":
            return f"{arr.path} has a {_grid(arr)} chunk grid, which zarr-python does not read"
        unknown = [c for c in _v3_codecs(arr.doc.document.get("codecs"))
                   if c not in _ZARR_V3_CODECS and not (c.startswith("numcodecs.") and c[10:] in _NUMCODECS)]
    if unknown:
        return f"{arr.path} is stored with the codec {unknown[0]}, which zarr-python does not read"
    return None


def tensorstore_refusal(arr: Array) -> str | None:
    """Why TensorStore's zarr drivers cannot read ``arr``, or None where they can."""
    if arr.format_name not in ("v2", "v3"):
        return f"{arr.path} is Zarr {arr.format_name}, which TensorStore does not read"
    name = _type_name(arr)
    if arr.zarr_format == 2:
        comp, filters = _v2_codecs(arr)
        if arr.stored_dtype.names or arr.stored_dtype.kind not in "biufc" and name != "bfloat16":
            return f"{arr.path} holds {name} values, which TensorStore's zarr driver does not read whole"
        if filters:
            return f"{arr.path} is stored with the filter {filters[0]}, which TensorStore's zarr driver does not read"
        if comp is not None and comp not in _TS_V2_COMPRESSORS:
            return f"{arr.path} is stored with the compressor {comp}, which TensorStore's zarr driver does not read"
        return None
    if name not in _TS_V3_TYPES:
        return f"{arr.path} holds {name} values, which TensorStore does not read"
    if _grid(arr) != "regular":
        return f"{arr.path} has a {_grid(arr)} chunk grid, which TensorStore does not read"
    unknown = [c for c in _v3_codecs(arr.doc.document.get("codecs")) if c not in _TS_V3_CODECS]
    if unknown:
        return f"{arr.path} is stored with the codec {unknown[0]}, which TensorStore does not read"
    return None


def _is_text(arr: Array) -> bool:
    """Strings or bytes of variable length, which a read returns as objects and export writes
    fixed-width (``export.plane.fixed_width``)."""
    if arr.dtype.kind not in "OT":
        return False
    if arr.zarr_format == 3:
        return _type_name(arr) in ("string", "bytes", "variable_length_bytes")
    comp, filters = _v2_codecs(arr)
    return any(f in ("vlen-utf8", "vlen-bytes") for f in filters) or comp in ("vlen-utf8", "vlen-bytes")


def _objects_refusal(arr: Array, library: str) -> str | None:
    if arr.dtype.kind in "OT" and not _is_text(arr):
        return f"{arr.path} holds Python objects other than text, which {library} returns otherwise than zarrview"
    return None


# -- decoding written out ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Decode:
    """What the snippet does to the values read: decode them as CF says (``coding``; None:
    nothing) or as times (``times``), and write text fixed-width."""

    coding: ValueCoding | None
    times: bool
    text: bool


def _decode_of(spec: PlaneSpec) -> _Decode:
    arr = spec.array
    text = _is_text(arr)
    if not spec.decode:
        return _Decode(None, False, text)
    decoding = decoding_of(arr)
    if decoding.times is not None:
        return _Decode(decoding.coding, True, text)
    coding = decoding.coding
    active = coding.active and np.dtype(arr.dtype).kind in "iuf"
    return _Decode(coding if active else None, False, text)


def numpy_decoding(coding: ValueCoding, dtype: np.dtype[Any], var: str = "data") -> list[str]:
    """``coding.decode`` of values of ``dtype`` in ``var``, written out with numpy: the same
    operations in the same order, so the result is the same to the bit."""
    lines: list[str] = []
    data = np.dtype(dtype)
    if coding.unsigned and data.kind == "i":
        data = np.dtype(data.str.replace("i", "u"))
        lines.append(f"{var} = {var}.view({_dtype_text(data)})  # _Unsigned: the stored integers are unsigned")
    masks: list[str] = []
    bits = data.itemsize * 8
    for fill in coding.fill_values:
        if isinstance(fill, float) and math.isnan(fill):
            if data.kind == "f":
                masks.append(f"np.isnan({var})")
        elif _fits(fill, data):
            masks.append(f"({var} == {_number(fill)})")
        elif coding.unsigned and data.kind == "u" and _fits(fill + (1 << bits), data):
            masks.append(f"({var} == {_number(fill + (1 << bits))})")
    if coding.valid_min is not None:
        masks.append(f"({var} < {_number(coding.as_read(coding.valid_min, data))})")
    if coding.valid_max is not None:
        masks.append(f"({var} > {_number(coding.as_read(coding.valid_max, data))})")
    target = coding.decoded_dtype
    if target.kind != "f":
        return lines
    said = ", ".join(_said(coding))
    if masks:
        lines.append(f"missing = {' | '.join(masks)}  # {said}")
    lines.append(f"{var} = {var}.astype({_dtype_text(target)})")
    if coding.scale_factor is not None:
        lines.append(f"{var} *= {_number(coding.scale_factor)}  # scale_factor")
    if coding.add_offset is not None:
        lines.append(f"{var} += {_number(coding.add_offset)}  # add_offset")
    if masks:
        lines.append(f"{var}[missing] = np.nan")
    return lines


def _dtype_text(dtype: np.dtype[Any]) -> str:
    """A dtype as a string literal: its name in the machine's byte order, else with its own."""
    native = dtype.byteorder in "=|" or dtype == dtype.newbyteorder("=")
    return _str(dtype.name if native else dtype.str)


def _said(coding: ValueCoding) -> list[str]:
    words = []
    if coding.fill_values:
        words.append("fill and missing values")
    if coding.valid_min is not None or coding.valid_max is not None:
        words.append("outside the valid range")
    return words or ["missing values"]


def _fits(value: float | int, dtype: np.dtype[Any]) -> bool:
    if dtype.kind == "f":
        return True
    info = np.iinfo(dtype)
    whole = isinstance(value, int) or float(value).is_integer()
    return whole and info.min <= value <= info.max


def _xarray_decodes(coding: ValueCoding) -> bool:
    """Whether xarray's ``mask_and_scale`` decodes as the view does: it applies no valid range,
    and an attribute the view leaves out (a note) it may use or refuse."""
    return not coding.notes and coding.valid_min is None and coding.valid_max is None


def _after_read(spec: PlaneSpec, decode: _Decode, native: bool, *, widen: bool = False) -> list[str]:
    """The lines between a read and ``data`` as export writes it: the stored byte order where
    the library gives native numbers (``native``), ML types as float32 (``widen``), CF values
    decoded with numpy, text fixed-width."""
    arr = spec.array
    lines: list[str] = []
    stored = np.dtype(arr.stored_dtype)
    if native and stored.byteorder == ">" and not stored.names:
        lines.append(f"data = data.astype({_dtype_text(stored)})  # the stored byte order, as zarrview reads it")
    if widen and np.dtype(arr.dtype) != stored:  # an ML or sub-byte type, read widened as the window shows it
        lines.append(f"data = data.astype({_dtype_text(np.dtype(arr.dtype))})  # as zarrview shows it")
    if decode.coding is not None:
        lines += numpy_decoding(decode.coding, np.dtype(arr.dtype))
    if decode.text:
        lines.append("data = np.array(data.tolist())  # text as fixed-width strings, as zarrview writes .npy")
    return lines


def _times_refusal(spec: PlaneSpec, decode: _Decode, library: str) -> None:
    if decode.times:
        raise LibraryCannotRead(f"{spec.array.path} holds CF times, which this snippet cannot decode with {library} "
                                "as zarrview does: use --for xarray or zarrlib, or --raw")


# -- the libraries ----------------------------------------------------------------------------------


@dataclass
class _Code:
    """A snippet's parts: the modules it imports (numpy is added where used) and its lines."""

    imports: list[str]
    body: list[str]

    def text(self) -> list[str]:
        numpy = ["import numpy as np"] if any("np." in line for line in self.body) else []
        return [*numpy, *self.imports, "", *self.body]


#: the width a snippet's lines are kept to where a call can be broken
WIDTH = 100


def _call(head: str, args: Sequence[str], tail: str = "") -> list[str]:
    """``head(args)tail`` on one line, or with its arguments on lines of their own, packed to
    ``WIDTH``, where one line would be longer."""
    line = f"{head}({', '.join(args)}){tail}"
    if len(line) <= WIDTH or not args:
        return [line]
    lines, current = [f"{head}("], "   "
    for arg in args:
        if len(current) + len(arg) + 2 > WIDTH and current.strip():
            lines.append(current)
            current = "   "
        current += f" {arg},"
    return [*lines, current, f"){tail}"]


def _str(text: str) -> str:
    """A string literal in double quotes."""
    return json.dumps(text, ensure_ascii=False)


def _zarr_store(source: Source, library: str) -> tuple[list[str], str, list[str]]:
    """(imports, the store expression, the lines before it) through which zarr-python (and
    xarray) reads ``source``; a ``storage_options`` variable where it takes options."""
    options = dict(source.options)
    if source.form == "icechunk":
        return _icechunk_session(source, library)
    if source.form == "references":
        fs: dict[str, Any] = {"fo": source.url}
        general = {k: v for k, v in options.items() if k not in _REFERENCE_OPTIONS}
        for name in ("target_options", "remote_options"):  # zarrview's general options go to both
            merged = {**general, **dict(options.get(name) or {})}
            if merged:
                fs[name] = merged
        fs.update({k: options[k] for k in ("remote_protocol", "target_protocol") if k in options})
        fs.setdefault("remote_protocol", source.targets or "file")
        return [], _str("reference://"), [f"storage_options = {_literal(fs)}"]
    options = _fsspec_options(source.scheme, options)
    before = [f"storage_options = {_literal(options)}"] if options and not source.local else []
    if source.form == "zip":
        if source.local:
            return [], f'zarr.storage.ZipStore({_str(source.url)}, mode="r")', []
        chained = {source.scheme: options} if options else {}  # the options of the archive's file system
        return [], _str("zip::" + source.url), [f"storage_options = {_literal(chained)}"] if chained else []
    return [], _str(source.url), before


def _fsspec_options(scheme: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """zarrview's spellings of S3 options (``region``, ``endpoint``) as s3fs takes them."""
    out = dict(options)
    if scheme in ("s3", "s3a"):
        region = out.pop("region", None) or out.pop("region_name", None)
        endpoint = out.pop("endpoint", None)
        if endpoint and "endpoint_url" not in out:
            out["endpoint_url"] = endpoint
        if region:
            out["client_kwargs"] = {"region_name": region, **dict(out.get("client_kwargs") or {})}
    return out


#: fsspec's reference file system options that are not a store's own
_REFERENCE_OPTIONS = ("target_options", "remote_options", "remote_protocol", "target_protocol")


def _icechunk_session(source: Source, library: str) -> tuple[list[str], str, list[str]]:
    version = source.version
    assert version is not None
    which = {"branch": "branch", "tag": "tag", "snapshot": "snapshot_id"}[version.kind]
    lines = [f"storage = {_icechunk_storage(source, library)}"]
    if source.authorize:  # the prefixes virtual chunks may be read from (--authorize)
        access = ", ".join(f"{_str(p)}: {_container_credentials(p)}" for p in source.authorize)
        lines += _call("repo = icechunk.Repository.open", ["storage", f"authorize_virtual_chunk_access={{{access}}}"])
    else:
        lines.append("repo = icechunk.Repository.open(storage)")
    lines.append(f"session = repo.readonly_session({which}={_str(version.name)})")
    return ["import icechunk"], "session.store", lines


def _container_credentials(prefix: str) -> str:
    scheme = prefix.partition("://")[0].lower() if "://" in prefix else "file"
    return {"file": "icechunk.credentials.LocalFileSystemAccess", "http": "icechunk.credentials.HttpAccess",
            "https": "icechunk.credentials.HttpAccess", "s3": "icechunk.s3_from_env_credentials()",
            "gs": "icechunk.gcs_from_env_credentials()", "gcs": "icechunk.gcs_from_env_credentials()"}.get(
        scheme, "None")


def _icechunk_storage(source: Source, library: str) -> str:
    if source.local:
        return f"icechunk.local_filesystem_storage({_str(source.url)})"
    scheme = source.scheme
    bucket, _, prefix = source.url.split("://", 1)[1].rstrip("/").partition("/")
    opts = dict(source.options)
    if scheme in ("s3", "s3a"):
        client: dict[str, Any] = dict(opts.pop("client_kwargs", None) or {})
        region = opts.pop("region", None) or opts.pop("region_name", None) or client.pop("region_name", None)
        endpoint = opts.pop("endpoint_url", None) or opts.pop("endpoint", None) or client.pop("endpoint_url", None)
        args = [f"bucket={_str(bucket)}", f"prefix={_str(prefix)}"]
        if region:
            args.append(f"region={_str(str(region))}")
        if endpoint:  # a custom endpoint names the bucket in the path
            args += [f"endpoint_url={_str(str(endpoint))}", "force_path_style=True"]
            if str(endpoint).startswith("http://"):
                args.append("allow_http=True")
        if opts.pop("anon", False):
            args.append("anonymous=True")
        if not opts and not client:
            return f"icechunk.s3_storage({', '.join(args)})"
    elif scheme in ("gs", "gcs") and not opts:
        return f"icechunk.gcs_storage(bucket={_str(bucket)}, prefix={_str(prefix)})"
    elif scheme in ("http", "https") and not opts:
        return f"icechunk.http_storage({_str(source.url)})"
    raise LibraryCannotRead(f"the snippet for {library} cannot open the Icechunk repository {source.url} through "
                            "icechunk with these storage options: use --for zarrlib")


def _zarr(spec: PlaneSpec, source: Source) -> _Code:
    arr = spec.array
    why = zarr_python_refusal(arr) or _objects_refusal(arr, "zarr-python")
    if why is not None:
        raise LibraryCannotRead(why)
    decode = _decode_of(spec)
    _times_refusal(spec, decode, "zarr-python")
    imports, store, before = _zarr_store(source, "zarr-python")
    args = [store]
    if _key(arr.path):
        args.append(f"path={_str(_key(arr.path))}")
    args += ['mode="r"', f"zarr_format={arr.zarr_format}"]
    if any(line.startswith("storage_options = ") for line in before):
        args.append("storage_options=storage_options")
    read = f"arr[{_index_text(spec.selection)}]"
    if not any(isinstance(s, slice) for s in spec.selection):  # one value: an array, as export writes it
        read = f"np.asarray({read})"
    body = [*before, *_call("arr = zarr.open_array", args), f"data = {read}", *_after_read(spec, decode, native=False)]
    return _Code([*imports, "import zarr"], body)


def _xarray(spec: PlaneSpec, source: Source) -> _Code:
    arr = spec.array
    why = zarr_python_refusal(arr) or _objects_refusal(arr, "xarray")
    if why is not None:
        raise LibraryCannotRead(why.replace("zarr-python", "xarray (through zarr-python)"))
    names = _dataset_dims(arr)
    group = arr.ancestor(1)
    decode = _decode_of(spec)
    if decode.times:
        _xarray_times(spec, decode)
    # xarray decodes where its rules are the view's; elsewhere the stored values are decoded below
    decoded = (decode.coding is not None or decode.times) and (decode.coding is None or _xarray_decodes(decode.coding))
    imports, store, before = _zarr_store(source, "xarray")
    if store.startswith("zarr."):
        imports.append("import zarr")
    args = [store, 'engine="zarr"']
    if _key(group.path):
        args.append(f"group={_str(_key(group.path))}")
    consolidated = bool(arr.hierarchy.consolidated) if group.path == "/" else None
    args += [f"consolidated={consolidated}", "chunks=None", f"zarr_format={arr.zarr_format}",
             f"mask_and_scale={decoded}", f"decode_times={decoded and decode.times}", "decode_timedelta=False",
             "concat_characters=False"]
    if any(line.startswith("storage_options = ") for line in before):
        args.append("storage_options=storage_options")
    fixed = {names[d]: s for d, s in enumerate(spec.selection) if s != slice(None)}
    pick = ""
    if fixed and all(n.isidentifier() and not keyword.iskeyword(n) for n in fixed):
        pick = ".isel(" + ", ".join(f"{n}={_isel_value(s)}" for n, s in fixed.items()) + ")"
    elif fixed:
        pick = ".isel({" + ", ".join(f"{_str(n)}: {_isel_value(s)}" for n, s in fixed.items()) + "})"
    body = [*before, *_call("ds = xr.open_dataset", args), f"data = ds[{_str(arr.name)}]{pick}.values"]
    if decoded:
        coding = decode.coding
        if coding is not None and not decode.times and coding.decoded_dtype.kind != "f":
            unsigned = np.dtype(np.dtype(arr.stored_dtype).str.replace("i", "u"))  # _Unsigned alone: a view
            if unsigned.byteorder == ">":
                body.append(f"data = data.astype({_dtype_text(unsigned)})  # the stored byte order, as zarrview "
                            "reads it")
        return _Code([*imports, "import xarray as xr"], body)
    hand = _Decode(decode.coding, False, decode.text)
    if hand.coding is not None:
        body.append("# decoded as CF says, not by xarray, which applies no valid range and reads some attributes "
                    "otherwise")
    return _Code([*imports, "import xarray as xr"], body + _after_read(spec, hand, native=True))


def _isel_value(s: int | slice) -> str:
    if isinstance(s, slice):
        return f"slice({s.start}, {s.stop}{'' if s.step in (None, 1) else f', {s.step}'})"
    return str(int(s))


def _dataset_dims(arr: Array) -> tuple[str, ...]:
    """``arr``'s dimension names, where xarray can open its group as a dataset; else
    ``NotADataset`` says why. Reads the metadata of the group's arrays."""
    names = arr.dimension_names
    if names is None or any(not n for n in names):
        raise NotADataset(f"{arr.path} has no dimension names (dimension_names or _ARRAY_DIMENSIONS), which xarray "
                          "needs: use --for zarr")
    if arr.path == "/" or len(set(names)) != len(names):
        raise NotADataset(f"xarray cannot open {arr.path} as a variable of a dataset: use --for zarr")
    group = arr.ancestor(1)
    if not group.can_list_members:
        raise NotADataset(f"xarray opens {group.path} by listing it, and its store lists nothing (no consolidated "
                          "metadata): use --for zarr")
    sizes: dict[str, tuple[int, str]] = {}
    for node in group.members():
        if not isinstance(node, Array):
            continue
        dims = node.dimension_names
        if dims is None or any(not n for n in dims):
            raise NotADataset(f"xarray opens {group.path} as one dataset, and its array {node.path} has no dimension "
                              "names: use --for zarr")
        why = zarr_python_refusal(node)
        if why is not None:
            raise NotADataset(f"xarray opens {group.path} as one dataset, and {why}: use --for zarr")
        for name, size in zip(dims, node.shape):
            seen = sizes.setdefault(str(name), (size, node.path))
            if seen[0] != size:
                raise NotADataset(f"xarray opens {group.path} as one dataset, and its dimension {name} has "
                                  f"{seen[0]} elements in {seen[1]} and {size} in {node.path}: use --for zarr")
    return tuple(str(n) for n in names)


def _xarray_times(spec: PlaneSpec, decode: _Decode) -> None:
    """Refuse times xarray decodes otherwise than the view: floats (the view puts them on the
    whole hour, minute... their precision allows), calendars without datetime64, units xarray
    refuses, other CF coding."""
    arr = spec.array
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    calendar = attrs.get("calendar")
    calendar = calendar.lower() if isinstance(calendar, str) else calendar
    unit = str(attrs.get("units", "")).lower().partition(" since ")[0].strip().rstrip("s")
    coding = decode.coding
    plain = coding is None or (_xarray_decodes(coding) and coding.scale_factor is None and coding.add_offset is None)
    if np.dtype(arr.dtype).kind not in "iu" or calendar not in _GREGORIAN or unit not in _TIME_UNITS or not plain:
        raise LibraryCannotRead(f"{arr.path} holds CF times that xarray decodes otherwise than zarrview (float "
                                "values, a calendar without datetime64, months or years): use --for zarrlib, or --raw")


def _tensorstore(spec: PlaneSpec, source: Source) -> _Code:
    arr = spec.array
    if source.form == "icechunk":
        raise LibraryCannotRead("TensorStore has no driver for Icechunk repositories: use --for zarr, xarray or zarrlib")
    if source.form == "references":
        raise LibraryCannotRead("TensorStore has no driver for kerchunk reference sets: use --for zarr or zarrlib")
    why = tensorstore_refusal(arr)
    if why is not None:
        raise LibraryCannotRead(why)
    decode = _decode_of(spec)
    _times_refusal(spec, decode, "TensorStore")
    kvstore = _ts_kvstore(source)
    if source.form == "zip":
        kvstore = {"driver": "zip", "base": kvstore}
    ts_spec: dict[str, Any] = {"driver": "zarr3" if arr.zarr_format == 3 else "zarr", "kvstore": kvstore}
    if _key(arr.path):
        ts_spec["path"] = _key(arr.path)
    read = f"arr[{_index_text(spec.selection)}]" if spec.selection else "arr"
    body = [f"spec = {_literal(ts_spec)}", "arr = ts.open(spec, read=True).result()", f"data = {read}.read().result()",
            *_after_read(spec, decode, native=True, widen=True)]
    return _Code(["import tensorstore as ts"], body)


def _ts_kvstore(source: Source) -> dict[str, Any]:
    """TensorStore's key-value store of ``source`` (a folder, or the file of a zip archive)."""
    folder = source.form != "zip"
    url = source.url.rstrip("/") + ("/" if folder else "")
    if source.local:
        return {"driver": "file", "path": url}
    driver = _TS_SCHEMES.get(source.scheme)
    if driver is None:
        raise LibraryCannotRead(f"TensorStore has no key-value store for {source.scheme}:// URLs: use --for zarr")
    opts = dict(source.options)
    if driver == "http":
        if "?" in url:
            raise LibraryCannotRead("TensorStore's http store takes no query in its URL: use --for zarr")
        out: dict[str, Any] = {"driver": "http", "base_url": url}
        headers = dict(opts.pop("headers", None) or {})
        if headers:
            out["headers"] = [f"{k}: {v}" for k, v in headers.items()]
        client: dict[str, Any] = {}
    else:
        bucket, _, path = url.split("://", 1)[1].partition("/")
        out = {"driver": driver, "bucket": bucket, "path": path}
        client = dict(opts.pop("client_kwargs", None) or {})
        endpoint = opts.pop("endpoint_url", None) or opts.pop("endpoint", None) or client.pop("endpoint_url", None)
        region = opts.pop("region", None) or opts.pop("region_name", None) or client.pop("region_name", None)
        if driver == "gcs" and (endpoint or region):
            raise LibraryCannotRead("TensorStore's gcs store takes no endpoint or region option: use --for zarr")
        if endpoint:
            out["endpoint"] = endpoint
        if region:
            out["aws_region"] = region
        if opts.pop("anon", False):
            out["aws_credentials"] = {"type": "anonymous"}
        if opts.pop("requester_pays", False):
            out["requester_pays"] = True
        if driver == "gcs" and opts.get("token") == "anon":
            opts.pop("token")
    left = sorted([*opts, *client])
    if left:
        raise LibraryCannotRead(f"TensorStore's {driver} store has no option {left[0]}: use --for zarr")
    return out


def _zarrlib(spec: PlaneSpec, source: Source) -> _Code:
    arr = spec.array
    decode = _decode_of(spec)
    location = source.location
    kwargs = [f"{k}={_literal(v)}" for k, v in source.options.items() if k.isidentifier()]
    if source.authorize:
        kwargs.insert(0, f"authorize={_literal(list(source.authorize))}")
    imports = ["import zarrview.zarrlib as zl"]
    body = _call("arr = zl.open", [_str(f"{location}::{arr.path}"), *kwargs])
    if np.dtype(arr.dtype) != np.dtype(arr.stored_dtype):  # an ML or sub-byte type, read widened
        body.append("arr.hierarchy.widen_ml_types = True  # read as float32, as zarrview shows it")
    body.append(f"data = arr[{_index_text(spec.selection)}]")
    if decode.coding is not None or decode.times:
        imports.append("from zarrview.viewing.cf.decoded import decoding_of")
        body.append("data = decoding_of(arr).values(data)  # CF values, as zarrview decodes them")
    if decode.text:
        imports.append("from zarrview.viewing.export.plane import fixed_width")
        body.append("data = fixed_width(data)  # text as fixed-width strings, as zarrview writes .npy")
    return _Code(imports, body)
