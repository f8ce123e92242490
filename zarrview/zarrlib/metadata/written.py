"""What an array's metadata says, read field by field without building a codec pipeline.

An array whose codec or data type zarrlib cannot read is still shown: its shape, chunks and
codecs as the document writes them. Each field is read on its own, so one that is malformed
leaves the others standing (and is then None), and nothing here can raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ZarrError
from ..grid import RectilinearGrid, parse_rectilinear
from .model import parse_shape


@dataclass(frozen=True)
class WrittenArray:
    shape: tuple[int, ...] | None
    chunks: tuple[int, ...] | None
    #: the data type as the document names it (``"float8_e4m3"``, ``"<f8"``)
    data_type: str | None
    #: codec names in document order, joined with arrows
    codecs: str | None
    #: the rectilinear chunk grid, where the document has a readable one
    grid: RectilinearGrid | None = None


def written_array(doc: dict[str, Any], zarr_format: int, draft: bool = False) -> WrittenArray:
    if zarr_format == 2:
        listed = doc.get("filters")
        filters: list[Any] = listed if isinstance(listed, list) else []
        compressor = doc.get("compressor")
        chain = [*filters, *([compressor] if compressor is not None else [])]
        return WrittenArray(_shape(doc.get("shape")), _shape(doc.get("chunks")), _text(doc.get("dtype")),
                            _codec_names(chain, "id") if chain else "none")
    grid = doc.get("chunk_grid")
    rectilinear = None
    if draft:
        chunks = _shape(grid.get("chunk_shape")) if isinstance(grid, dict) else None
        compressor = doc.get("compressor")
        codecs = _codec_names([compressor], "codec") if compressor is not None else "none"
    else:
        config = grid.get("configuration") if isinstance(grid, dict) else None
        chunks = _shape(config.get("chunk_shape")) if isinstance(config, dict) else None
        if isinstance(grid, dict) and isinstance(config, dict) and grid.get("name") == "rectilinear":
            rectilinear = _rectilinear(config, doc.get("shape"))
            chunks = rectilinear.largest if rectilinear is not None else None
        codecs = _codec_names(doc.get("codecs"), "name")
    return WrittenArray(_shape(doc.get("shape")), chunks, _text(doc.get("data_type")), codecs, rectilinear)


def _rectilinear(config: dict[str, Any], shape: Any) -> RectilinearGrid | None:
    """A rectilinear grid, whose largest chunk is the chunk shape to show of an unreadable array."""
    try:
        return parse_rectilinear(config, parse_shape(shape, "shape", ""), "")
    except ZarrError:
        return None


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return parse_shape(value, "shape", "")
    except ZarrError:
        return None


def _text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("name")
    if isinstance(value, str):
        return value if len(value) <= 80 else value[:77] + "..."
    return None if value is None else _short_json(value)


def _codec_names(items: Any, key: str, depth: int = 0) -> str | None:
    if not isinstance(items, list) or depth > 3:
        return None
    names: list[str] = []
    for item in items[:64]:
        if isinstance(item, dict) and isinstance(item.get(key), str):
            inner = item.get("configuration", {})
            nested = inner.get("codecs") if isinstance(inner, dict) else None
            sub = _codec_names(nested, key, depth + 1) if isinstance(nested, list) else None
            names.append(f"{_text(item[key])}[{sub}]" if sub else str(_text(item[key])))
        else:
            names.append(str(_text(item)))
    return " → ".join(names)


def _short_json(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
