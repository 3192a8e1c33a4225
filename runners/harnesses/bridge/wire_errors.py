"""A request body the harness sent that the bridge cannot translate: a 400 with the reason, never a crash."""

from __future__ import annotations

from typing import Any


class WireError(ValueError):
    """The request does not have the shape its API documents."""


def require(ok: bool, text: str) -> None:
    if not ok:
        raise WireError(text)


def as_list(value: Any, where: str) -> list[Any]:
    require(isinstance(value, list), f"{where} must be a list")
    return value


def as_str(value: Any, where: str) -> str:
    require(isinstance(value, str), f"{where} must be a string")
    return value
