"""Methods as configuration plus hooks: each builds the plugins it adds to the environment.

`dci` adds nothing; `todo` adds a system-prompt block; `self_refine` adds a one-time stop message;
`self_tracking` both; `runningtab` the tab (`method.tab`, with its ablation switches; null for no tab). Adding a
method is a YAML file in `conf/method/` (and, for a new kind of hook, a small plugin here); the
loop never changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envs.protocol import EnvPlugin, Observation, ToolResult
from runners.config import MethodConfig
from runners.prompts import text


class _Hooks:
    """A plugin with no tools and no record: the base of the prompt-only methods."""

    name = "hooks"

    def system_prompt(self) -> str:
        return ""

    def tools(self) -> list[dict[str, Any]]:
        return []

    def call(self, name: str, arguments: dict[str, Any], turn: int) -> ToolResult:
        return ToolResult(f"{self.name} has no tool {name!r}", is_error=True)

    def observe(self, obs: Observation) -> str:
        return ""

    def on_stop(self, turn: int) -> str | None:
        return None

    def record(self) -> dict[str, Any] | None:
        return None

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages


class PromptBlock(_Hooks):
    """Adds a block to the system prompt (TODO prompting)."""

    def __init__(self, name: str, block: str) -> None:
        self.name, self.block = name, block

    def system_prompt(self) -> str:
        return self.block


class StopMessage(_Hooks):
    """At the first stop, sends one message instead of ending the run (Self-Refine)."""

    def __init__(self, name: str, message: str) -> None:
        self.name, self.message, self.sent = name, message, False

    def on_stop(self, turn: int) -> str | None:
        if self.sent:
            return None
        self.sent = True
        return self.message


def build_plugins(method: MethodConfig, root: Path, output: str, context_level: int = 0) -> list[EnvPlugin]:
    """The plugins a method adds to a job's environment rooted at `root`; `output` is where the
    deliverable goes (the agent's own writing there is not reading). `context_level` is the agent's:
    the tab records a tool result as the model receives it under that level's cap."""
    plugins: list[EnvPlugin] = []
    if method.todo:
        plugins.append(PromptBlock("todo", text("todo", method.texts)))
    if method.self_refine:
        plugins.append(StopMessage("self_refine", text("self_refine", method.texts)))
    if method.tab is not None:
        from envs.context import CAPS
        from tab.tab import Tab  # the tab is imported only by the methods that use it

        plugins.append(Tab(root, method.tab, exclude=[output], cap=CAPS.get(context_level)))
    return plugins
