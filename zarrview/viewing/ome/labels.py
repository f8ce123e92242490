"""``labels`` (the list in an image's ``labels/`` group) and ``image-label`` (a label image's
colours, properties and source)."""

from __future__ import annotations

from typing import Any

from .doc import Reporter, is_int, kind_of
from .model import LabelColor, OmeLabel


def parse_labels_list(value: Any, rep: Reporter) -> tuple[str, ...]:
    if not isinstance(value, list):
        rep.error("labels", f'"labels" MUST be a list of paths to label images, not {kind_of(value)}')
        return ()
    out = []
    for i, p in enumerate(value):
        if not isinstance(p, str) or not p.strip("/"):
            rep.error(f"labels[{i}]", f"a label entry must be a path, not {p!r}")
            continue
        out.append(p.strip("/"))
    return tuple(out)


def parse_image_label(value: Any, rep: Reporter) -> OmeLabel:
    if not isinstance(value, dict):
        rep.error("image-label", f'"image-label" must be an object, not {kind_of(value)}')
        return OmeLabel()
    colors = []
    for i, c in enumerate(rep.get_list(value, "colors", "image-label") or []):
        where = f"image-label.colors[{i}]"
        if not isinstance(c, dict):
            rep.error(where, f"a colour entry must be an object, not {kind_of(c)}")
            continue
        v = c.get("label-value")
        if not is_int(v):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                rep.error(f"{where}.label-value", f'each colour MUST have an integer "label-value", not {v!r}')
                continue
        rgba = c.get("rgba")
        if rgba is not None and not (isinstance(rgba, list) and len(rgba) == 4
                                     and all(is_int(x) and 0 <= x <= 255 for x in rgba)):
            rep.error(f"{where}.rgba", f"label {v}: rgba MUST be four integers from 0 to 255, not {rgba!r}")
            rgba = None
        colors.append(LabelColor(int(v), tuple(rgba) if rgba is not None else None))  # type: ignore[arg-type]
    props = []
    for i, p in enumerate(rep.get_list(value, "properties", "image-label") or []):
        where = f"image-label.properties[{i}]"
        if not isinstance(p, dict):
            rep.error(where, f"a properties entry must be an object, not {kind_of(p)}")
            continue
        if not is_int(p.get("label-value")):
            rep.error(f"{where}.label-value", f'each properties entry MUST have an integer "label-value", '
                                              f"not {p.get('label-value')!r}")
            continue
        props.append(dict(p))
    source = value.get("source")
    image = None
    if isinstance(source, dict):
        image = rep.get_str(source, "image", "image-label.source")
    elif source is not None:
        rep.error("image-label.source", f'"source" MUST be an object, not {kind_of(source)}')
    version = value.get("version") if isinstance(value.get("version"), str) else None
    return OmeLabel(tuple(colors), tuple(props), image, version)
