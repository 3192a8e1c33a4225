"""Checking a tool call's arguments against its schema, with messages a model can act on.

A small subset of JSON Schema (what tool schemas use: object properties, required, types, enum,
array items, additionalProperties false). Integral floats and digit strings count as integers,
since models often send `5.0` or `"5"`.
"""

from __future__ import annotations

import json
from typing import Any

from envs.paths import ToolError

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "boolean": (bool,), "array": (list,), "object": (dict,),
}


def parse_arguments(name: str, raw: str | None) -> dict[str, Any]:
    """The call's JSON arguments as a dict ('' or null mean no arguments)."""
    if raw is None or not raw.strip():
        return {}
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ToolError(f"The arguments of your '{name}' call are not valid JSON ({e.msg} at position {e.pos}): {raw[:200]}") from e
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise ToolError(f"The arguments of your '{name}' call must be a JSON object, got {type(args).__name__}")
    return args


def check_arguments(name: str, parameters: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """`args` checked (and integers coerced) against a tool's `parameters` schema."""
    props: dict[str, Any] = parameters.get("properties") or {}
    expected = ", ".join(f"{k} ({v.get('type', 'any')})" for k, v in props.items()) or "none"
    missing = [k for k in parameters.get("required") or [] if k not in args]
    if missing:
        raise ToolError(f"'{name}' is missing required argument(s) {', '.join(missing)}. Arguments: {expected}")
    if parameters.get("additionalProperties") is False:
        extra = [k for k in args if k not in props]
        if extra:
            raise ToolError(f"'{name}' got unknown argument(s) {', '.join(extra)}. Arguments: {expected}")
    out = dict(args)
    for key, value in args.items():
        if key in props and not (value is None and key not in (parameters.get("required") or [])):
            out[key] = _check_value(f"{name}.{key}", props[key], value)
        elif value is None:
            out.pop(key)
    return out


def _check_value(where: str, schema: dict[str, Any], value: Any) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        value = _as_int(where, value)
    elif kind in _TYPES:
        ok = isinstance(value, _TYPES[kind]) and not (kind == "number" and isinstance(value, bool))
        if not ok:
            raise ToolError(f"{where} must be a {kind}, got {json.dumps(value)[:100]}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{where} must be one of {schema['enum']}, got {json.dumps(value)[:100]}")
    if kind == "array" and "items" in schema:
        value = [_check_value(f"{where}[{i}]", schema["items"], v) for i, v in enumerate(value)]
    if kind == "object" and "properties" in schema:
        value = check_arguments(where, schema, value)
    return value


def _as_int(where: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ToolError(f"{where} must be an integer, got {json.dumps(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ToolError(f"{where} must be an integer, got {json.dumps(value)[:100]}")
