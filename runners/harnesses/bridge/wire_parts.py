"""What every wire shares: a request body the bridge cannot translate (a 400 with the reason, never a
crash), the reader of a content's text, the placeholder for what our models cannot read, a tool
call's arguments as the object an API sends, and the writer of one server-sent event."""

from __future__ import annotations

import json
from typing import Any

IMAGE_PLACEHOLDER = "[image omitted: the job's model reads text only]"


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


def text_of(value: Any, where: str, texts: tuple[str, ...], media: tuple[str, ...]) -> str:
    """A content's text: a string, or its parts of a `texts` type joined by newlines, each part of a
    `media` type as `IMAGE_PLACEHOLDER` (the part types are the wire's own)."""
    if isinstance(value, str):
        return value
    parts = []
    for j, part in enumerate(as_list(value, where)):
        require(isinstance(part, dict), f"{where}[{j}] must be an object")
        if part.get("type") in texts:
            parts.append(as_str(part.get("text"), f"{where}[{j}].text"))
        elif part.get("type") in media:
            parts.append(IMAGE_PLACEHOLDER)
    return "\n".join(parts)


def event(name: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def arguments_object(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as an object, for an API that sends them as one; text that is not a JSON
    object is passed on whole under `_raw`, so that the harness reports the bad call to the model, as
    our own harness does."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}
