"""The shown log: every excerpt of a workspace file's content the agent received, kept for every job
whatever its method (`shown.json`), by the same capture as the tab's read log.

The analyses that ask whether a value was shown to the agent (Figure 2, Figure 4, the side-by-side
pages) count only this: never harness text, paths, error messages, listings or the prompt, which
hold digits and words by accident. It adds nothing to what the agent sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envs.protocol import Observation, ToolResult
from tab.capture.file_reads import FileReads

NAME = "shown"


class ShownLog:
    """An `EnvPlugin` with no tools, prompt or status line: it only records (see the module)."""

    name = NAME

    def __init__(
        self, root: str | Path, exclude: Iterable[str] = (), cap: int | None = None, aliases: Iterable[str] = (),
        urls: Iterable[tuple[str, str]] = (), reads: FileReads | None = None,
    ) -> None:
        """`reads`: a capture of the same workspace with the same settings to share (the tab's), so
        that an observation is captured once for both."""
        self.reads = reads or FileReads(root, exclude, cap, aliases, urls, listings=False)
        self.excerpts: list[dict[str, Any]] = []
        self._seen: set[tuple[str, str]] = set()

    def system_prompt(self) -> str:
        return ""

    def tools(self) -> list[dict[str, Any]]:
        return []

    def call(self, name: str, arguments: dict[str, Any], turn: int) -> ToolResult:
        return ToolResult(f"{NAME} has no tool {name!r}", is_error=True)

    def observe(self, obs: Observation) -> str:
        for path, excerpt in self.reads(obs).reads:
            if (path, excerpt) not in self._seen:  # a re-read of the same lines shows nothing new
                self._seen.add((path, excerpt))
                self.excerpts.append({"turn": obs.turn, "path": path, "excerpt": excerpt})
        return ""

    def on_stop(self, turn: int) -> str | None:
        return None

    def record(self) -> dict[str, Any]:
        return {"excerpts": self.excerpts}

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages
