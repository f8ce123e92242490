"""Which numcodecs codecs may run, and what kind each one is.

Only codecs on this allow-list are ever instantiated: ``pickle`` (and anything unknown)
could execute code from the store, so it is refused by name before numcodecs sees it.
"""

from __future__ import annotations

from typing import Any

import numcodecs
from numcodecs.abc import Codec as NumcodecsCodec

from ..errors import MetadataError, UnsupportedCodecError, short

BYTES_BYTES = {
    "zlib", "gzip", "bz2", "lzma", "zstd", "blosc", "lz4", "shuffle", "adler32", "fletcher32",
    "crc32", "crc32c", "jenkins_lookup3", "base64",
}
ARRAY_ARRAY = {"delta", "fixedscaleoffset", "quantize", "bitround", "packbits", "astype", "categorize", "bitinfo"}
ARRAY_BYTES = {"pcodec", "zfpy", "vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2"}
REFUSED = {"pickle": "it can execute arbitrary code when decoded"}
_PACKAGES = {"msgpack2": "msgpack", "pcodec": "pcodec", "zfpy": "zfpy", "lz4": "lz4 support in numcodecs"}


def make_numcodecs(codec_id: str, config: dict[str, Any], where: str) -> NumcodecsCodec:
    if codec_id in REFUSED:
        raise UnsupportedCodecError(f"codec {short(codec_id)} in {where} is refused: {REFUSED[codec_id]}")
    if codec_id not in BYTES_BYTES | ARRAY_ARRAY | ARRAY_BYTES:
        raise UnsupportedCodecError(f"codec {short(codec_id)} in {where} is not supported "
                                    f"(supported: {', '.join(sorted(BYTES_BYTES | ARRAY_ARRAY | ARRAY_BYTES))})")
    try:
        return numcodecs.get_codec({**config, "id": codec_id})
    except (ImportError, ModuleNotFoundError) as e:
        need = _PACKAGES.get(codec_id, codec_id)
        raise UnsupportedCodecError(f"codec {short(codec_id)} in {where} needs {need}, which is not installed") from e
    except ValueError as e:
        if "not available" in str(e) or "codec not available" in str(e):
            need = _PACKAGES.get(codec_id, codec_id)
            raise UnsupportedCodecError(f"codec {short(codec_id)} in {where} needs {need}, which is not installed") from e
        raise MetadataError(f"codec {short(codec_id)} in {where} has a bad configuration: {e}") from e
    except Exception as e:  # numcodecs' constructors raise what their arguments make them raise
        raise MetadataError(f"codec {short(codec_id)} in {where} has a bad configuration: {type(e).__name__}: {e}") from e
