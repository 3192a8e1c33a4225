"""Confining host-side file tools (`read`, `write`, `edit`) to the workspace."""

from __future__ import annotations

import os
from dataclasses import dataclass


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


@dataclass(frozen=True)
class PathView:
    """Where the agent sees the workspace and the runner's saved outputs, and where they are on the
    host. Under bubblewrap the two differ (a fixed path for every job); host-side tools take the
    agent's paths in and give the agent's paths back, never the host's scratch path."""

    host_root: str
    agent_root: str
    host_outputs: str
    agent_outputs: str

    def to_host(self, path: str) -> str:
        """An absolute path the agent gave, as the host path it names (other paths unchanged)."""
        for agent, host in ((self.agent_outputs, self.host_outputs), (self.agent_root, self.host_root)):
            if path == agent or path.startswith(agent + "/"):
                return host + path[len(agent):]
        return path

    def to_agent(self, text: str) -> str:
        """`text` (a host-side tool's result) with the host folders written as the agent sees them."""
        for host, agent in ((self.host_outputs, self.agent_outputs), (self.host_root, self.agent_root)):
            if host != agent:
                text = text.replace(host, agent)
        return text
