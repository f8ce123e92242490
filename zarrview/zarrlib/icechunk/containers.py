"""Named virtual chunk containers: what ``vcc://NAME/path`` locations are relative to.

A repository's configuration may name its virtual chunk containers, and chunks may then point
to ``vcc://NAME/file.nc`` instead of an absolute URL. Only the names and URL prefixes are read
here (spec 2: FlexBuffers in the ``repo`` file, looked up lazily, never expanded whole; spec 1:
``config.yaml``). A container is an address, never an authorisation: the resolved URL still
goes through the user's ``AccessPolicy``.
"""

from __future__ import annotations

from ..errors import StoreError
from ..storage.base import Store
from .binary import IcechunkFormatError

#: the largest spec 1 ``config.yaml`` read
CONFIG_BYTES = 1 << 20


def containers_v2(config: bytes | None, where: str) -> dict[str, str]:
    """``{name: url_prefix}`` of the named containers in a spec 2 repository's configuration."""
    if not config:
        return {}
    from flatbuffers import flexbuffers

    out: dict[str, str] = {}
    try:
        found = flexbuffers.GetRoot(config).AsMap
        if "virtual_chunk_containers" not in found.Keys.Value:
            return {}
        vccs = found["virtual_chunk_containers"].AsMap
        values = vccs.Values
        for i in range(min(len(vccs), 10_000)):
            entry = values[i].AsMap
            name, prefix = entry["name"], entry["url_prefix"]
            if name.IsString and prefix.IsString:
                out[name.AsString] = prefix.AsString
    except Exception as e:  # noqa: BLE001  # the FlexBuffers reader fails in many ways on a corrupt buffer
        raise IcechunkFormatError(f"{where}: cannot read the virtual chunk containers ({type(e).__name__})") from None
    return out


def containers_v1(store: Store) -> dict[str, str]:
    """``{name: url_prefix}`` from a spec 1 repository's ``config.yaml`` (its one nested list
    of containers, read line by line: no YAML library needed for two fields)."""
    try:
        data = store.get_bounded("config.yaml", CONFIG_BYTES)
    except StoreError:
        return {}
    if data is None:
        return {}
    out: dict[str, str] = {}
    inside = False
    name: str | None = None
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.startswith(" "):
            inside = line.strip() == "virtual_chunk_containers:"
            continue
        if not inside:
            continue
        key, _, value = line.strip().partition(": ")
        value = value.strip().strip("'\"")
        if key == "name":
            name = None if value in ("null", "~", "") else value
        elif key == "url_prefix" and name is not None:
            out[name] = value
            name = None
    return out
