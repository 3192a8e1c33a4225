"""Optional `write` and `edit` tools (off in the paper's setting, where the agent writes through bash)."""

from __future__ import annotations

import os
from typing import Any

from envs import prompts
from envs.paths import ToolError, resolve_inside
from envs.protocol import ToolResult, function_schema


def write_schema() -> dict[str, Any]:
    return _schema("write", prompts.WRITE_DESCRIPTION, {
        "path": {"type": "string", "description": "Path to the file (relative to the workspace, or absolute)"},
        "content": {"type": "string", "description": "Content to write"},
    })


def edit_schema() -> dict[str, Any]:
    return _schema("edit", prompts.EDIT_DESCRIPTION, {
        "path": {"type": "string", "description": "Path to the file (relative to the workspace, or absolute)"},
        "old_text": {"type": "string", "description": "Exact text to find and replace"},
        "new_text": {"type": "string", "description": "New text to replace the old text with"},
    })


def write_file(root: str, path: str, content: str) -> ToolResult:
    real = resolve_inside(root, path)
    if os.path.isdir(real):
        raise ToolError(f"{path} is a directory")
    os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, "w", encoding="utf-8") as f:
        f.write(content)
    return ToolResult(f"Successfully wrote {len(content.encode())} bytes to {path}", meta={"path": os.path.relpath(real, root)})


def edit_file(root: str, path: str, old_text: str, new_text: str) -> ToolResult:
    real = resolve_inside(root, path)
    if not os.path.isfile(real):
        raise ToolError(f"File not found: {path}")
    with open(real, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    count = text.count(old_text) if old_text else 0
    if count == 0:
        raise ToolError(f"Could not find the exact text in {path}. old_text must match exactly, including whitespace.")
    if count > 1:
        raise ToolError(f"Found {count} occurrences of the text in {path}; give more context so it is unique.")
    with open(real, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text.replace(old_text, new_text, 1))
    return ToolResult(f"Successfully replaced text in {path}.", meta={"path": os.path.relpath(real, root)})


def _schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return function_schema(name, description, properties, list(properties))
