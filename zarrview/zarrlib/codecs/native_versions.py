"""Which native decoders read stored bytes in this process, and their versions, found at run time.

Every compressed chunk reaches compiled code: c-blosc (bundled in numcodecs, with its own
BloscLZ, LZ4, Zlib and Zstd), numcodecs' LZ4 and Zstd, the system libzstd where it loads,
CPython's zlib, bz2 and lzma modules (linked to libz, libbz2 and liblzma), and the optional
pcodec, zfpy and msgpack. A report against one of them is only actionable knowing the
version actually loaded, not the version a package was built from, so each is asked
itself: a version constant the module exports, a C function through ctypes, or the
installed distribution's metadata where nothing else says.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class NativeDecoder:
    name: str
    #: what decodes with it: the codecs or formats that reach it
    decodes: str
    #: None: not installed or not loadable here
    version: str | None
    #: where the version was read
    source: str


def _module(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _c_string(library_file: str, function: str) -> str | None:
    """A C function without arguments that returns a version string, found through the library
    (or, through its dependencies, the extension module linked to it)."""
    try:
        fn = getattr(ctypes.CDLL(library_file), function)
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    value = fn()
    # libbz2 adds its release date ("1.0.8, 13-Jul-2019"): the version is what comes first
    return value.decode("ascii", "replace").split(",")[0] if value else None


def _blosc_complibs() -> dict[str, str]:
    """The compressors c-blosc was built with, each with its library's version."""
    blosc = _module("numcodecs.blosc")
    if blosc is None:
        return {}
    try:
        fn = ctypes.CDLL(blosc.__file__).blosc_get_complib_info
    except (OSError, AttributeError):
        return {}
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    fn.restype = ctypes.c_int
    found = {}
    for name in ("blosclz", "lz4", "zlib", "zstd", "snappy"):
        lib, version = ctypes.c_char_p(), ctypes.c_char_p()
        # c-blosc copies both strings for the caller: a few bytes, once per process (cached)
        if fn(name.encode(), ctypes.byref(lib), ctypes.byref(version)) >= 0 and lib.value and version.value:
            found[lib.value.decode()] = version.value.decode()
    return found


def _distribution(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _blosc() -> list[NativeDecoder]:
    blosc = _module("numcodecs.blosc")
    version = getattr(blosc, "VERSION_STRING", None) if blosc else None
    decoders = [NativeDecoder("c-blosc", "blosc (whole chunks, and parts through blosc_getitem)", version,
                              "numcodecs.blosc.VERSION_STRING")]
    decoders += [NativeDecoder(f"c-blosc's {lib}", f"blosc chunks compressed with {lib}", v,
                               "blosc_get_complib_info") for lib, v in _blosc_complibs().items()]
    return decoders


def _one(name: str, decodes: str, find: Callable[[], str | None], source: str) -> NativeDecoder:
    try:
        version = find()
    except (OSError, AttributeError, ValueError):
        version = None
    return NativeDecoder(name, decodes, version, source)


def _attribute(module: str, attribute: str) -> Callable[[], str | None]:
    def find() -> str | None:
        m = _module(module)
        value = getattr(m, attribute, None) if m is not None else None
        if isinstance(value, tuple):  # msgpack: (1, 0, 8)
            return ".".join(map(str, value))
        return None if value is None else str(value)
    return find


def _linked(module: str, function: str) -> Callable[[], str | None]:
    def find() -> str | None:
        m = _module(module)
        return _c_string(m.__file__, function) if m is not None and getattr(m, "__file__", None) else None
    return find


def _libzstd() -> str | None:
    from .libzstd import version

    return version()


def _numcodecs_zstd() -> str | None:
    m = _module("numcodecs.zstd")
    v = getattr(m, "VERSION_NUMBER", None) if m is not None else None
    return None if v is None else f"{v // 10000}.{v // 100 % 100}.{v % 100}"


@lru_cache(maxsize=1)
def native_decoders() -> tuple[NativeDecoder, ...]:
    """Every native decoder zarrview may hand stored bytes to, with the version loaded here."""
    return (
        *_blosc(),
        _one("zstd (numcodecs)", "zstd, numcodecs.zstd", _numcodecs_zstd, "numcodecs.zstd.VERSION_NUMBER"),
        _one("libzstd (system)", "zstd chunks where it loads, Icechunk's compressed locations", _libzstd, "ZSTD_versionNumber"),
        _one("lz4 (numcodecs)", "numcodecs.lz4", _attribute("numcodecs.lz4", "VERSION_STRING"),
             "numcodecs.lz4.VERSION_STRING"),
        _one("zlib", "gzip, zlib", _attribute("zlib", "ZLIB_RUNTIME_VERSION"), "zlib.ZLIB_RUNTIME_VERSION"),
        _one("libbz2", "bz2", _linked("_bz2", "BZ2_bzlibVersion"), "BZ2_bzlibVersion"),
        _one("liblzma", "lzma", _linked("_lzma", "lzma_version_string"), "lzma_version_string"),
        _one("pcodec", "pcodec (Rust)", lambda: _distribution("pcodec"), "package metadata"),
        _one("zfp", "zfpy", lambda: _distribution("zfpy"), "package metadata (zfpy follows zfp's versions)"),
        _one("msgpack", "msgpack2", _attribute("msgpack", "version"), "msgpack.version"),
    )


def describe() -> list[str]:
    """One line a decoder, as ``zarrview decoders`` prints them."""
    rows = native_decoders()
    width = max(len(d.name) for d in rows)
    shown = [d.version or "not available" for d in rows]
    vwidth = max(map(len, shown))
    return [f"{d.name:<{width}}  {v:<{vwidth}}  {d.decodes} (version from {d.source})" for d, v in zip(rows, shown)]


def summary() -> str:
    """The loaded decoders on one line (the About box): c-blosc with its compressors first."""
    rows = [d for d in native_decoders() if d.version]
    inside = "c-blosc's "
    inner = [f"{d.name[len(inside):]} {d.version}" for d in rows if d.name.startswith(inside)]
    parts = [f"{d.name} {d.version}" + (f" ({', '.join(inner)})" if d.name == "c-blosc" and inner else "")
             for d in rows if not d.name.startswith(inside)]
    return " · ".join(parts)
