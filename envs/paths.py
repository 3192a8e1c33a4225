"""Confining host-side file tools (`read`, `write`, `edit`) to the workspace."""

from __future__ import annotations

import os


class ToolError(Exception):
    """A tool call the agent got wrong; the message becomes an error result the model sees."""


def resolve_inside(root: str, path: str) -> str:
    """The real path of `path` (relative to the workspace, or absolute), refused if it leaves the workspace.

    `root` must already be a real path. Symlinks are resolved before the check, so a link that
    points outside is refused like `../x` or `/etc/passwd`.
    """
    p = path.strip()
    if p.startswith("@"):  # some models prefix paths with @ (as in Pi's @file mentions)
        p = p[1:]
    if not p:
        raise ToolError("path is empty: give a file path inside the workspace")
    full = os.path.normpath(p if os.path.isabs(p) else os.path.join(root, p))
    real = os.path.realpath(full)
    if _inside(root, real):
        return real
    if _inside(root, full):
        raise ToolError(
            f"{path} resolves (through a symbolic link) to {real}, which is outside the workspace {root}; "
            "the file tools only reach files inside the workspace"
        )
    raise ToolError(f"{path} is outside the workspace {root}; the file tools only reach files inside it")


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
