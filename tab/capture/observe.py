"""Capture: what an observation adds to the tab, without the agent asking.

A `read` result is one read-log entry (its continuation notice removed). A bash result is split
among the workspace files whose content it shows (`pipelines.py` reads the command,
`attribution.py` splits the output), and the files its listings name become candidates. Nothing
is executed: the command text, the output and the file system are all the capture looks at.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from envs.protocol import Observation
from tab.capture.attribution import attribute
from tab.capture.notices import bash_content, read_content, saved_output
from tab.capture.own_text import own_lines
from tab.capture.pipelines import analyse
from tab.capture.workspace_files import Workspace

log = logging.getLogger(__name__)


@dataclass
class Captured:
    command: str = ""
    reads: list[tuple[str, str]] = field(default_factory=list)  # (path, excerpt) in order
    listed: list[str] = field(default_factory=list)
    unattributed: str = ""  # shown content that no file is proven to hold


class Capture:
    """Turns observations into reads and listings of workspace files."""

    def __init__(self, ws: Workspace, listings: bool = True) -> None:
        """`listings=False`: only reads are wanted (the shown log), so an output that can credit no
        file's content (only listings: `ls`, `find`) is not parsed for the names it lists."""
        self.ws = ws
        self.listings = listings
        # Outputs too long to show whole are saved by the harness; reading one shows that command's output.
        self.saved: dict[str, str] = {}

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
        extra = "".join(f" {k}={obs.arguments[k]}" for k in ("offset", "limit") if obs.arguments.get(k))
        command = f"read {path}{extra}"
        original = self.saved.get(self.ws.rel(path) or path)  # saved outputs live outside the workspace
        if original is not None:
            return self._attribute(f"{command} (saved output of: {original})", original, read_content(obs.output))
        rel = self.ws.file(path)
        if rel is None:
            return Captured()
        kept, lost = own_lines(read_content(obs.output), self.ws.own(rel))
        return Captured(command, [(rel, kept)] if kept.strip() else [], [], lost)

    def bash(self, obs: Observation) -> Captured:
        command = obs.arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return Captured()
        saved = saved_output(obs.output)
        if saved:
            self.saved[self.ws.rel(saved) or saved] = command
        return self._attribute(command, command, obs.output, obs.is_error)

    def _attribute(self, label: str, command: str, output: str, failed: bool = False) -> Captured:
        try:
            streams = analyse(command, self.ws)
        except (ValueError, IndexError, RecursionError):  # an unparseable command records nothing
            log.debug("tab capture could not parse %r", command, exc_info=True)
            return Captured(label)
        if not any(s.kind != "none" for s in streams):
            return Captured(label)
        if not self.listings and not any(s.markers or s.kind in ("content", "search") for s in streams):
            return Captured(label)
        names = frozenset(n for s in streams for n in s.names)
        reads, listed, unplaced = attribute(bash_content(output, names, failed), streams, self.ws)
        return Captured(label, reads, listed, unplaced)
