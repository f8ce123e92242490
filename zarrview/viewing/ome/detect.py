"""``detect(group)``: what OME-NGFF node a group is, read into the model with its problems.

Precedence: ``plate`` (also over ``bioformats2raw.layout``), ``well``, ``multiscales`` (a label
image when ``image-label`` is there too), ``bioformats2raw.layout``, ``labels``. Bad metadata
never raises: each broken rule is a :class:`Problem` on the returned node, and whatever can be
read still is (a level that cannot be opened is a level without an array).
"""

from __future__ import annotations

from typing import Any

from ...zarrlib import Group, NodeNotFoundError, ZarrError
from ..conventions.declared import ome_attributes
from .flavour import schema_document
from .doc import Namespace, Reporter, namespace
from .hcs import parse_plate, parse_well
from .labels import parse_image_label, parse_labels_list
from .model import Bioformats2raw, OmeImage, OmeLabels, OmeNode, OmePlate, OmeWell
from .multiscales import parse_multiscales
from .omero import parse_omero
from .scene import parse_scene
from .schema import validate

#: numbered series groups probed one by one where the store cannot list
MAX_PROBED_SERIES = 10_000


def detect(group: Group, *, labels: bool = True, image: tuple[str, int | None] | None = None) -> OmeNode | None:
    """The OME node ``group`` is, or None where its attributes hold no OME metadata.

    ``labels=False`` skips opening an image's ``labels/`` group (one request less). ``image``
    (version, levels) is the image whose ``labels/`` group ``group`` is: its label images are
    checked against it (``image_labels``)."""
    problems: list = []
    attrs = ome_attributes(group.attrs) if isinstance(group.attrs, dict) else {}
    ns = namespace(attrs, group.path, problems)
    if ns is None:
        return None
    rep = Reporter(group.path, ns.prefix, problems)
    _check_format(group, ns, rep)
    keys = ns.keys
    node: OmeNode
    if "plate" in keys:
        name, rows, cols, wells, acqs, fields = parse_plate(keys["plate"], rep)
        node = OmePlate(ns.version, group, (), name, rows, cols, wells, acqs, fields,
                        bioformats2raw="bioformats2raw.layout" in keys)
    elif "well" in keys:
        node = OmeWell(ns.version, group, (), parse_well(keys["well"], rep, ns.version))
    elif "multiscales" in keys or "image-label" in keys:
        node = _image(group, ns, rep, labels)
    elif "bioformats2raw.layout" in keys:
        node = _bioformats2raw(group, ns, rep)
    elif "scene" in keys:
        node = parse_scene(group, ns, rep)
    else:
        if image is not None and ns.version != image[0]:
            rep.error("", f"the labels group is {ns.version} metadata in a {image[0]} image; the version "
                          f"MUST be the same throughout")
        node = OmeLabels(ns.version, group, (), parse_labels_list(keys["labels"], rep))
        _check_label_images(group, node.labels, rep, levels=image[1] if image is not None else None)
    problems += validate(schema_document(attrs, ns.prefix) if ns.writer else attrs, ns.version,
                         "label" if getattr(node, "is_label", False) else node.kind, group.path, problems,
                         dialect=ns.dialect)
    return _with_problems(node, problems)


def _with_problems(node: OmeNode, problems: list) -> OmeNode:
    import dataclasses

    return dataclasses.replace(node, problems=tuple(problems))


def _check_format(group: Group, ns: Namespace, rep: Reporter) -> None:
    if ns.version in ("0.5", "0.6") and group.zarr_format != 3:
        rep.error("", f"{ns.version} metadata MUST be in a Zarr v3 group; this one is {group.format_name}")
    elif ns.version == "0.4" and group.zarr_format != 2:
        rep.warning("", f"0.4 metadata is for Zarr v2; this group is {group.format_name}")


def _image(group: Group, ns: Namespace, rep: Reporter, with_labels: bool) -> OmeImage:
    keys = ns.keys
    label = parse_image_label(keys["image-label"], rep) if "image-label" in keys else None
    multiscales = parse_multiscales(group, ns, rep, label=label is not None)
    first = multiscales[0] if multiscales else None
    omero = parse_omero(keys.get("omero"), rep, first, labelled_only=ns.writer is not None)
    name = (first.name if first is not None else None) or (omero.name if omero is not None else None)
    found: tuple[str, ...] = ()
    if with_labels and label is None:
        found = _labels_of(group, ns, len(first.levels) if first is not None else None, rep)
    return OmeImage(ns.version, group, (), name, multiscales, omero, found, label)


def _labels_of(group: Group, ns: Namespace, levels: int | None, rep: Reporter) -> tuple[str, ...]:
    """The label images an image's ``labels/`` group lists, or () where it has none; the group's
    problems join the image's (``image_labels``)."""
    found = image_labels(group, ns.version, levels)
    if found is None:
        return ()
    rep.problems.extend(found.problems)
    return found.labels


def image_labels(image: Group, version: str, levels: int | None) -> OmeLabels | None:
    """The ``labels/`` group of the image ``image`` (OME ``version``, ``levels`` pyramid levels),
    detected with every check, the ones against its image too (the same version, as many levels
    in each label image): the one reading of it that ``zarrview info`` and the window's OME tab
    both list, so they list the same problems. None where the image has no such group."""
    try:
        sub = image["labels"]
    except ZarrError:
        return None
    found = detect(sub, image=(version, levels)) if isinstance(sub, Group) else None
    return found if isinstance(found, OmeLabels) else None


def _check_label_images(labels_group: Group, names: tuple[str, ...], rep: Reporter, levels: int | None) -> None:
    """Each listed label image exists, is a multiscale with ``image-label``, and has as many
    levels as its image (read from its attributes only: its arrays are not opened here)."""
    for i, name in enumerate(names):
        where = f"labels[{i}]"
        try:
            node = labels_group[name]
        except ZarrError as e:
            rep.error(where, f"label image {name!r} cannot be opened: {e}")
            continue
        if not isinstance(node, Group):
            rep.error(where, f"label image {name!r} MUST be a multiscale image group, not an array")
            continue
        ns = namespace(node.attrs, node.path, [])
        keys = ns.keys if ns is not None else {}
        if "multiscales" not in keys:
            rep.error(where, f'label image {name!r} MUST have "multiscales" metadata')
            continue
        if "image-label" not in keys:
            rep.warning(where, f'label image {name!r} has no "image-label" (colours, properties, source)')
        ms = keys["multiscales"]
        count = len(ms[0]["datasets"]) if (isinstance(ms, list) and ms and isinstance(ms[0], dict)
                                           and isinstance(ms[0].get("datasets"), list)) else None
        if levels is not None and count is not None and count != levels:
            rep.error(where, f"label image {name!r} has {count} levels; it MUST have as many as its image ({levels})")


def _bioformats2raw(group: Group, ns: Namespace, rep: Reporter) -> Bioformats2raw:
    layout = ns.keys["bioformats2raw.layout"]
    if layout != 3:
        rep.error("bioformats2raw.layout", f'"bioformats2raw.layout" MUST be 3, not {layout!r}')
    series = _series_attribute(group, ns, rep)
    if series is not None:
        return Bioformats2raw(ns.version, group, (), series, "OME/series")
    return Bioformats2raw(ns.version, group, (), _numbered(group, rep), "numbered groups")


def _series_attribute(group: Group, ns: Namespace, rep: Reporter) -> tuple[str, ...] | None:
    try:
        ome = group["OME"]
    except ZarrError:
        return None
    if not isinstance(ome, Group):
        return None
    attrs: Any = ome.attrs
    holder = attrs.get("ome") if ns.version != "0.4" and isinstance(attrs.get("ome"), dict) else attrs
    if "series" not in holder:
        return None
    series = holder["series"]
    sub = Reporter(ome.path, "$.ome" if holder is not attrs else "$", rep.problems)
    if not isinstance(series, list) or not all(isinstance(s, str) and s.strip("/") for s in series):
        sub.error("series", f'"series" MUST be a list of paths to image groups, not {series!r:.80}')
        return None
    return tuple(s.strip("/") for s in series)


def _numbered(group: Group, rep: Reporter) -> tuple[str, ...]:
    """Series "0", "1", ... : listed where the store lists, else probed until one is missing."""
    if group.can_list_members:
        numbers = sorted(int(n) for n in group.member_names() if n.isdigit() and str(int(n)) == n)
        if numbers != list(range(len(numbers))):
            rep.error("", f"series groups MUST be numbered consecutively from 0; found {numbers[:20]}")
        return tuple(str(n) for n in numbers)
    out = []
    for i in range(MAX_PROBED_SERIES):
        try:
            group[str(i)]
        except NodeNotFoundError:
            break
        except ZarrError as e:
            rep.error("", f"series {i} cannot be opened: {e}")
            break
        out.append(str(i))
    return tuple(out)
