"""Capture: what an observation adds to the tab, without the agent asking.

A `read` result is one read-log entry (its continuation notice removed). A bash result is split
among the workspace files whose content it shows (`tab/streams.py` reads the command,
`tab/attribute.py` splits the output), and the files its listings name become candidates. Nothing
is executed: the command text, the output and the file system are all the capture looks at.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from envs.protocol import Observation
from tab.attribute import attribute
from tab.notices import bash_content, read_content
from tab.streams import analyse
from tab.workspace import Workspace

log = logging.getLogger(__name__)


@dataclass
class Captured:
    command: str = ""
    reads: list[tuple[str, str]] = field(default_factory=list)  # (path, excerpt) in order
    listed: list[str] = field(default_factory=list)


class Capture:
    """Turns observations into reads and listings of workspace files."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def __call__(self, obs: Observation) -> Captured:
        self.ws.refresh()
        if obs.tool == "read":
            return self.read(obs)
        if obs.tool == "bash":
            return self.bash(obs)
        return Captured()

    def read(self, obs: Observation) -> Captured:
        path = obs.arguments.get("path")
        if obs.is_error or not isinstance(path, str):
            return Captured()
        rel = self.ws.file(path)
        if rel is None:
            return Captured()
        extra = "".join(f" {k}={obs.arguments[k]}" for k in ("offset", "limit") if obs.arguments.get(k))
        command = f"read {path}{extra}"
        return Captured(command, [(rel, read_content(obs.output))])

    def bash(self, obs: Observation) -> Captured:
        command = obs.arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return Captured()
        try:
            streams = analyse(command, self.ws)
        except (ValueError, IndexError, RecursionError):  # an unparseable command records nothing
            log.debug("tab capture could not parse %r", command, exc_info=True)
            return Captured(command)
        if not any(s.kind != "none" for s in streams):
            return Captured(command)
        names = frozenset(n for s in streams for n in s.names)
        text = bash_content(obs.output, names, obs.is_error)
        reads, listed = attribute(text, streams, self.ws)
        return Captured(command, reads, listed)
