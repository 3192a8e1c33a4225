"""Methods as configuration plus hooks: each builds the plugins it adds to the environment.

`dci` adds nothing; `todo` adds a system-prompt block; `self_refine` adds a one-time stop message;
`self_tracking` both; `runningtab` the tab (`method.tab`, with its ablation switches; null for no tab). Adding a
method is a YAML file in `conf/method/`; a new kind of hook is a plugin kind registered in `PLUGINS`
below plus the switch that turns it on (docs/extending.md). The loop never changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.context import CAPS
from envs.protocol import EnvPlugin, Observation, ToolResult
from runners.agent.agent_texts import text
from runners.config.runner import MethodConfig
from runners.core.registry import Registry

if TYPE_CHECKING:
    from tab.capture.file_reads import FileReads


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


@dataclass(frozen=True)
class PluginContext:
    """Where a job's plugins plug in: the workspace `root`, the deliverable's `output` path (the agent's
    own writing there is not reading) and the agent's `context_level` (the tab records a tool result
    as the model receives it under that level's cap). `reads` is the job's one capture of what the
    agent read, shared by the tab and the shown log: each observation is captured once for both."""

    root: Path
    output: str
    context_level: int = 0
    agent_root: str | None = None  # where the agent sees `root`, when not at its host path (a sandbox)
    urls: tuple[tuple[str, str], ...] = ()  # (URL prefix, workspace folder) a server in the sandbox serves
    reads: FileReads | None = None

    @property
    def aliases(self) -> tuple[str, ...]:
        return (self.agent_root,) if self.agent_root else ()


PluginFactory = Callable[[MethodConfig, PluginContext], EnvPlugin]
PLUGINS: Registry[PluginFactory] = Registry("method plugin kind")


@PLUGINS.register("todo")
def _todo(method: MethodConfig, ctx: PluginContext) -> EnvPlugin:
    return PromptBlock("todo", text("todo", method.texts))


@PLUGINS.register("self_refine")
def _self_refine(method: MethodConfig, ctx: PluginContext) -> EnvPlugin:
    return StopMessage("self_refine", text("self_refine", method.texts))


@PLUGINS.register("tab")
def _tab(method: MethodConfig, ctx: PluginContext) -> EnvPlugin:
    from tab.tab import Tab  # the tab is imported only by the methods that use it

    assert method.tab is not None
    return Tab(ctx.root, method.tab, exclude=[ctx.output], cap=CAPS.get(ctx.context_level), aliases=ctx.aliases, urls=ctx.urls,
               reads=ctx.reads)


def plugin_kinds(method: MethodConfig) -> list[str]:
    """The plugin kinds a method's switches turn on, in the order they plug in."""
    switches = {"todo": method.todo, "self_refine": method.self_refine, "tab": method.tab is not None}
    return [kind for kind, on in switches.items() if on] + list(method.plugins)


def build_plugins(
    method: MethodConfig, root: Path, output: str, context_level: int = 0, agent_root: str | None = None,
    urls: tuple[tuple[str, str], ...] = (),
) -> list[EnvPlugin]:
    """The plugins a method adds to a job's environment rooted at `root` (see PluginContext), then the
    shown log every job keeps whatever its method (`tab/shown.py`: what the analyses count as shown)."""
    from tab.capture.file_reads import FileReads
    from tab.shown import ShownLog

    kinds = plugin_kinds(method)
    cap, aliases = CAPS.get(context_level), ((agent_root,) if agent_root else ())
    reads = FileReads(root, [output], cap, aliases, urls, listings="tab" in kinds)  # listed files: the tab's alone
    ctx = PluginContext(root, output, context_level, agent_root, urls, reads)
    method_plugins = [PLUGINS.get(kind)(method, ctx) for kind in kinds]
    return [*method_plugins, ShownLog(root, [output], cap, aliases, urls, reads=reads)]
