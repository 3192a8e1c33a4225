"""A small TOML writer for the documents we write (`task.toml`); Python 3.11 reads TOML, not writes it.

Tables of scalars, lists of scalars, lists of inline tables at the top, and arrays of tables
(`[[environment.mcp_servers]]`). Strings are TOML basic strings (JSON's escapes are TOML's, UTF-8 kept).
"""

from __future__ import annotations

import json
from typing import Any


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k, ensure_ascii=False)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dumps(doc: dict[str, Any], top_inline: tuple[str, ...] = ()) -> str:
    """`doc` as TOML. Keys in `top_inline` that hold lists of tables are written inline at the top."""
    lines: list[str] = []
    _table(doc, [], lines, top_inline)
    return "\n".join(lines).strip() + "\n"


def _table(doc: dict[str, Any], path: list[str], lines: list[str], inline: tuple[str, ...]) -> None:
    tables = []
    for k, v in doc.items():
        if v is None:
            continue
        if isinstance(v, dict) or (_is_table_array(v) and k not in inline):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in tables:
        name = ".".join(_key(p) for p in [*path, k])
        if isinstance(v, dict):
            lines += ["", f"[{name}]"]
            _table(v, [*path, k], lines, ())
        else:
            for item in v:
                lines += ["", f"[[{name}]]"]
                _table(item, [*path, k], lines, ())
