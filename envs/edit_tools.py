"""Optional `write` and `edit` tools (off in the paper's setting, where the agent writes through bash)."""

from __future__ import annotations

import os
from typing import Any

from envs import harness_texts
from envs.paths import ToolError, resolve_inside
from envs.protocol import ToolResult, function_schema
from envs.safeio import UnsafePath, open_for_write, read_regular


def write_schema() -> dict[str, Any]:
    return _schema("write", harness_texts.WRITE_DESCRIPTION, {
        "path": {"type": "string", "description": "Path to the file (relative to the workspace, or absolute)"},
        "content": {"type": "string", "description": "Content to write"},
    })


def edit_schema() -> dict[str, Any]:
    return _schema("edit", harness_texts.EDIT_DESCRIPTION, {
        "path": {"type": "string", "description": "Path to the file (relative to the workspace, or absolute)"},
        "old_text": {"type": "string", "description": "Exact text to find and replace"},
        "new_text": {"type": "string", "description": "New text to replace the old text with"},
    })


def write_file(root: str, path: str, content: str) -> ToolResult:
    real = resolve_inside(root, path)
    if os.path.isdir(real):
        raise ToolError(f"{path} is a directory")
    _write(root, real, path, content.encode("utf-8", errors="surrogateescape"))
    return ToolResult(f"Successfully wrote {len(content.encode())} bytes to {path}", meta={"path": os.path.relpath(real, root)})


def edit_file(root: str, path: str, old_text: str, new_text: str) -> ToolResult:
    real = resolve_inside(root, path)
    data = read_regular(root, os.path.relpath(real, root)) if real != root else None
    if data is None:
        raise ToolError(f"File not found: {path} (or not a regular file)")
    text = data.decode("utf-8", errors="surrogateescape")
    count = text.count(old_text) if old_text else 0
    if count == 0:
        raise ToolError(f"Could not find the exact text in {path}. old_text must match exactly, including whitespace.")
    if count > 1:
        raise ToolError(f"Found {count} occurrences of the text in {path}; give more context so it is unique.")
    _write(root, real, path, text.replace(old_text, new_text, 1).encode("utf-8", errors="surrogateescape"))
    return ToolResult(f"Successfully replaced text in {path}.", meta={"path": os.path.relpath(real, root)})


def _write(root: str, real: str, path: str, data: bytes) -> None:
    """Write through safeio: a link or FIFO swapped in after the path check is refused, not followed."""
    try:
        with open_for_write(root, os.path.relpath(real, root)) as f:
            f.write(data)
    except UnsafePath as e:
        raise ToolError(f"Cannot write {path}: {e}") from e


def _schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return function_schema(name, description, properties, list(properties))
