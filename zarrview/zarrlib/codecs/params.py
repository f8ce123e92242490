"""Validators for codec configuration values, each naming the codec, the field and the value.

A configuration comes from the store: ``"level": "x"``, ``[1]``, ``NaN`` or a number with
thousands of digits must be a ``MetadataError`` at open, not a ``ValueError`` from ``int()``
or an ``OverflowError`` from a C library at read time.
"""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError, short


def parse_int(config: dict[str, Any], key: str, codec: str, where: str, *, default: int | None = None,
              lo: int | None = None, hi: int | None = None) -> int:
    """An integer field (``true`` is not an integer here) within ``[lo, hi]``."""
    value = config.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MetadataError(f"{codec} codec in {where}: {key} must be an integer, not {short(value)}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"from {lo} to {hi}" if lo is not None and hi is not None else \
            (f"at least {lo}" if lo is not None else f"at most {hi}")
        raise MetadataError(f"{codec} codec in {where}: {key} must be {bounds}, not {short(value)}")
    return value


def parse_bool(config: dict[str, Any], key: str, codec: str, where: str, *, default: bool = False) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise MetadataError(f"{codec} codec in {where}: {key} must be true or false, not {short(value)}")
    return value


def parse_choice(config: dict[str, Any], key: str, codec: str, where: str, choices: tuple[Any, ...],
                 *, default: Any = None) -> Any:
    value = config.get(key, default)
    if isinstance(value, bool) or value not in choices or isinstance(value, (list, dict)):
        raise MetadataError(f"{codec} codec in {where}: {key} must be one of {list(choices)}, not {short(value)}")
    return value


def parse_int_list(value: Any, what: str, where: str, *, lo: int = 0, hi: int = 2**62) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise MetadataError(f"{what} in {where} must be a list of integers, not {short(value)}")
    for v in value:
        if not lo <= v <= hi:
            raise MetadataError(f"{what} {short(value)} in {where} has an invalid value {v}")
    return tuple(value)



def checked_configuration(spec: dict[str, Any], known: set[str], codec: str, where: str) -> dict[str, Any]:
    """The codec's configuration, refused where it holds keys beyond ``known``."""
    from .base import configuration

    config = configuration(spec, where)
    check_fields(config, known, codec, where)
    return config


def check_fields(config: dict[str, Any], known: set[str], codec: str, where: str) -> None:
    """A configuration with keys beyond ``known`` is invalid (the registry reserves them)."""
    extra = set(config) - known
    if extra:
        raise MetadataError(f"{codec} codec in {where} has unknown fields {sorted(extra)}")
