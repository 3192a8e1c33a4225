"""The seams between the agent loop, the workspace environment and what plugs into it.

The loop talks to an `Environment`; methods (the tab, TODO prompting, self-refine) plug into the
environment as `EnvPlugin`s, so that the environment runs the same with or without them and a new
method never touches the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model made it. `arguments` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@dataclass
class ToolResult:
    """What a tool returns. `content` is exactly what the model sees (after the tool's own truncation).

    The environment fills the last two: `appendix`, what plugins appended to the tool's own output
    (the end of `content`), and `chars`, the length of that own output. `meta` holds what a tool
    reports of itself (`path`, `exit_code`, …). `stop`: the environment cannot go on, and the episode
    ends with this stop reason (`disk_quota`), its `content` saying why."""

    content: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    appendix: str = ""
    chars: int | None = None
    stop: str | None = None

    @property
    def own_chars(self) -> int:
        """Characters of the tool's own output (all of `content` when no environment measured it)."""
        return len(self.content) if self.chars is None else self.chars


@dataclass(frozen=True)
class Observation:
    """A finished tool call, handed to plugins so they can capture from it.

    `output` is the tool's text as the agent saw it (after truncation, before any plugin appendix);
    `arguments` are the parsed arguments (empty when the call was malformed).
    """

    tool: str
    arguments: dict[str, Any]
    output: str
    is_error: bool
    turn: int


def function_schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's schema in the OpenAI function-calling format (the one format every tool uses)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required, "additionalProperties": False},
        },
    }


@runtime_checkable
class EnvPlugin(Protocol):
    """Something a method plugs into the environment: prompt text, extra tools, hooks."""

    name: str

    def system_prompt(self) -> str:
        """Text appended to the system prompt ('' for none)."""

    def tools(self) -> list[dict[str, Any]]:
        """Extra tool schemas (OpenAI function-calling format)."""

    def call(self, name: str, arguments: dict[str, Any], turn: int) -> ToolResult:
        """Run one of this plugin's own tools."""

    def observe(self, obs: Observation) -> str:
        """Capture from an observation; return text to append to the tool result ('' for none)."""

    def on_stop(self, turn: int) -> str | None:
        """The model answered without a tool call: a message to send instead of stopping, or None."""

    def record(self) -> dict[str, Any] | None:
        """A JSON-able record written to the job directory (`<name>.json`), or None."""

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Remove this plugin's own traces from a trajectory before judges read it."""


class Environment(Protocol):
    """A workspace the agent works in, through tools."""

    root: str

    def system_prompt(self) -> str: ...

    def tools(self) -> list[dict[str, Any]]: ...

    def execute(self, call: ToolCall, turn: int, time_left: float | None = None) -> ToolResult: ...

    def on_stop(self, turn: int) -> str | None: ...

    def interrupt(self) -> None:
        """Stop the tool call running now, from another thread (its job was cancelled); later calls fail at once."""

    def close(self) -> None: ...
