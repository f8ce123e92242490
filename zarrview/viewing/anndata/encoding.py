"""What an element of an AnnData store is, from its ``encoding-type`` and ``encoding-version``
attributes alone (no request): the tree, the metadata panel and the window ask this first."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...zarrlib import Array, Group, MetadataError, Node

#: the encodings a group of an AnnData store may carry, and what each is in words
GROUP_KINDS = {
    "anndata": "an AnnData object",
    "dataframe": "a dataframe",
    "csr_matrix": "a sparse matrix (rows compressed)",
    "csc_matrix": "a sparse matrix (columns compressed)",
    "categorical": "a categorical column",
    "nullable-integer": "a nullable integer column",
    "nullable-boolean": "a nullable boolean column",
    "nullable-string-array": "a nullable string column",
    "dict": "a mapping",
    "awkward-array": "an awkward array",
}
ARRAY_KINDS = {
    "array": "a dense array",
    "string-array": "an array of strings",
    "numeric-scalar": "a number",
    "string": "a string",
}


class AnnDataError(MetadataError):
    """An element whose encoding attributes or members break the AnnData format; the message
    names the node and what is wrong."""


class Encoding(NamedTuple):
    type: str
    version: str

    def text(self) -> str:
        return f"{self.type} {self.version}".strip()


def encoding_of(node: Node | Any) -> Encoding | None:
    """The element's encoding from its attributes; None where it declares none."""
    attrs = node.attrs if isinstance(node, (Array, Group)) else node
    if not isinstance(attrs, dict):
        return None
    kind = attrs.get("encoding-type")
    if not isinstance(kind, str) or not kind:
        return None
    version = attrs.get("encoding-version")
    return Encoding(kind, version if isinstance(version, str) else "")


def encoding_rows(node: Node) -> list[tuple[str, str]]:
    """The metadata panel's and ``zarrview info``'s rows for an AnnData element: its encoding
    and what that makes it."""
    enc = encoding_of(node)
    if enc is None:
        return []
    kinds = GROUP_KINDS if isinstance(node, Group) else ARRAY_KINDS
    what = kinds.get(enc.type, "an encoding zarrview does not know")
    rows = [("AnnData encoding", f"{enc.text()} ({what})")]
    shape = node.attrs.get("shape") if enc.type in ("csr_matrix", "csc_matrix") else None
    if isinstance(shape, list) and len(shape) == 2:
        rows.append(("Matrix shape", f"{shape[0]:,} × {shape[1]:,}"))
    return rows


def member(group: Group, name: str, kind: type[Node] = Array) -> Any:
    """``group[name]``, which the format requires to be a ``kind``; AnnDataError naming both if not."""
    try:
        node = group[name]
    except MetadataError as e:
        raise AnnDataError(f"{group.path}: its member {name!r} cannot be read: {e}") from e
    except KeyError:
        raise AnnDataError(f"{group.path} ({encoding_text(group)}) has no member {name!r}") from None
    if not isinstance(node, kind):
        raise AnnDataError(f"{group.path}/{name} is a {node.kind}, where {encoding_text(group)} needs "
                           f"{'an array' if kind is Array else 'a group'}")
    return node


def encoding_text(node: Node) -> str:
    enc = encoding_of(node)
    return "an element" if enc is None else f"a {enc.type} element"
