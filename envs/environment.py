"""The workspace environment the loop talks to: tools, dispatch, plugins' observations and stop hooks."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from envs import harness_texts
from envs.bash_tool import BashTool, bash_schema
from envs.config import EnvConfig
from envs.disk_quota import DiskQuota
from envs.edit_tools import edit_file, edit_schema, write_file, write_schema
from envs.paths import ToolError
from envs.protocol import EnvPlugin, Observation, ToolCall, ToolResult
from envs.read_tool import read_file, read_schema
from envs.sandbox import NO_EXTRAS, Shell
from envs.sandbox_extras import SandboxExtras
from envs.tool_args import check_arguments, parse_arguments

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], int], ToolResult]
WRITING_TOOLS = ("write", "edit")  # host-side tools that write the workspace: measured against the disk quota


class WorkspaceEnv:
    """One job's workspace with `read`, `bash` (optionally `write`/`edit`) and the plugins' tools.
    `read_only`: bash sees the workspace read-only (bubblewrap only), for a judge's inspection.

    `execute` never raises for anything the model did: unknown tools, malformed JSON, arguments
    that fail the schema, paths outside the workspace become error results the model sees.
    """

    def __init__(
        self, root: Path, config: EnvConfig, plugins: Sequence[EnvPlugin] = (), extras: SandboxExtras = NO_EXTRAS,
        *, read_only: bool = False,
    ) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise FileNotFoundError(f"workspace {root} is not a directory (materialize it first)")
        self.root = real
        self.config = config
        self.plugins = list(plugins)
        self._schemas: dict[str, dict[str, Any]] = {}
        self._handlers: dict[str, Handler] = {}
        self._register(read_schema(config.read_max_lines, config.read_max_bytes), self._read)
        self._register(bash_schema(config), self._run_bash)
        if config.write_tool:
            self._register(write_schema(), lambda a, t: write_file(self.root, self._host(a["path"]), a["content"]))
            self._register(edit_schema(), lambda a, t: edit_file(self.root, self._host(a["path"]), a["old_text"], a["new_text"]))
        for plugin in self.plugins:
            for schema in plugin.tools():
                self._register(schema, _plugin_handler(plugin, schema["function"]["name"]), owner=plugin.name)
        self.shell = Shell(real, config, extras, read_only=read_only)  # last: it owns a scratch directory that close() removes
        self._bash = BashTool(real, config, self.shell)

    @property
    def agent_root(self) -> str:
        """Where the agent sees the workspace (a fixed path under bubblewrap: `env.agent_root`)."""
        return self.shell.view.agent_root

    @property
    def sandboxed(self) -> bool:
        return self.shell.mode == "bwrap"

    @property
    def sandbox_kind(self) -> str:
        """The sandbox the agent's shell actually runs in: "bwrap", or "none" (unsandboxed)."""
        return self.shell.mode

    @property
    def disk_quota(self) -> DiskQuota:
        """The quota on what the agent keeps on disk (watched during each call; an external harness's
        run watches it for its whole run: envs/program.py)."""
        return self._bash.quota

    @property
    def limits_hit(self) -> list[str]:
        """Caps hit so far (memory, processes, file_size, saved_output_bytes, tool_timeout_clamped,
        disk_quota), first hit first."""
        return list(self.shell.caps.hit)

    def system_prompt(self) -> str:
        lines = "\n".join(harness_texts.TOOL_LINES.get(n, f"- {n}") for n in self._handlers if n in harness_texts.TOOL_LINES)
        base = harness_texts.SYSTEM_PROMPT.format(root=self.agent_root, tool_lines=lines)
        return "\n\n".join(b for b in (base, self.plugin_prompt()) if b)

    def plugin_prompt(self) -> str:
        """The plugins' system prompt blocks (what follows our own prompt, or a production harness's)."""
        blocks = [p.system_prompt() for p in self.plugins]
        return "\n\n".join(b.strip() for b in blocks if b and b.strip())

    def tools(self) -> list[dict[str, Any]]:
        return list(self._schemas.values())

    def plugin_tools(self) -> list[dict[str, Any]]:
        """The plugins' tools (the tab's four operations): offered beside a production harness's own
        tools and run here, by `execute`, whoever's loop called them."""
        return [schema for p in self.plugins for schema in p.tools()]

    def observe(self, obs: Observation) -> str:
        """What the plugins append to the result of a tool the agent ran elsewhere (a production
        harness's own `Bash`, read as ours): the same capture and status line as after `execute`."""
        return appendix_of(self.plugins, obs)

    def execute(self, call: ToolCall, turn: int, time_left: float | None = None) -> ToolResult:
        """Run one call; `time_left` (the job's remaining seconds) bounds how long `bash` may run."""
        args: dict[str, Any] = {}
        try:
            parsed = parse_arguments(call.name, call.arguments)
            if call.name not in self._handlers:
                raise ToolError(f"Unknown tool '{call.name}'. Available tools: {', '.join(self._handlers)}")
            args = check_arguments(call.name, self._schemas[call.name]["function"]["parameters"], parsed)
            if call.name == "bash":
                result = self._bash.run(args["command"], args.get("timeout"), time_left)
            else:
                if call.name in WRITING_TOOLS:  # a service that fails after this may be the agent's doing
                    self._bash.pristine = False
                result = self._handlers[call.name](args, turn)
                if call.name in WRITING_TOOLS and self._bash.quota.check():  # the model's own bytes count too
                    result = self._bash.quota_result(result.content, result.meta)
        except ToolError as e:
            result = ToolResult(str(e), is_error=True)
        except Exception as e:  # a tool's own failure must not end the run
            log.exception("tool %s failed", call.name)
            result = ToolResult(f"Tool '{call.name}' failed: {type(e).__name__}: {e}", is_error=True)
        own = self.shell.view.to_agent(result.content)
        obs = Observation(tool=call.name, arguments=args, output=own, is_error=result.is_error, turn=turn)
        appendix = appendix_of(self.plugins, obs)
        content = f"{own}\n{appendix}" if appendix else own
        return ToolResult(content, result.is_error, result.meta, appendix=appendix, chars=len(own), stop=result.stop)

    def on_stop(self, turn: int) -> str | None:
        """The first plugin (in order) that has a message instead of stopping; None ends the run."""
        for plugin in self.plugins:
            message = plugin.on_stop(turn)
            if message is not None:
                return message
        return None

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The trajectory with every plugin's own traces removed (what judges read)."""
        for plugin in self.plugins:
            messages = plugin.evaluator_view(messages)
        return messages

    def interrupt(self) -> None:
        """Kill the running bash command, if any (the job was cancelled); the call returns at once."""
        self._bash.interrupt()

    def close(self) -> None:
        self.shell.close()

    def _register(self, schema: dict[str, Any], handler: Handler, owner: str = "the environment") -> None:
        name = schema["function"]["name"]
        if name in self._handlers:
            raise ValueError(f"tool name '{name}' from {owner} is already taken; plugin tools need unique names")
        self._schemas[name] = schema
        self._handlers[name] = handler

    def _read(self, args: dict[str, Any], turn: int) -> ToolResult:
        """`read` in the workspace, or of a saved bash output (the runner's folder the notices name)."""
        path = self._host(args["path"])
        outputs = self.shell.outputs
        root = outputs if os.path.normpath(path).startswith(outputs + os.sep) else self.root
        return read_file(
            root, path, args.get("offset"), args.get("limit"),
            self.config.read_max_lines, self.config.read_max_bytes,
        )

    def _host(self, path: str) -> str:
        """A path argument of a host-side file tool, with the agent's view of the folders made the host's."""
        return self.shell.view.to_host(path.strip().removeprefix("@"))

    def _run_bash(self, args: dict[str, Any], turn: int) -> ToolResult:
        return self._bash.run(args["command"], args.get("timeout"))


def appendix_of(plugins: Sequence[EnvPlugin], obs: Observation) -> str:
    """What the plugins append to an observation's result (our environment's, and an external
    harness's at the job's endpoint: runners/harnesses/conversation.py)."""
    return "\n".join(text for text in (_observe(p, obs) for p in plugins) if text)


def _observe(plugin: EnvPlugin, obs: Observation) -> str:
    try:
        return plugin.observe(obs) or ""
    except Exception:  # a plugin's bug must not cost the agent its tool result
        log.exception("plugin %s failed to observe a %s call", plugin.name, obs.tool)
        return ""


def _plugin_handler(plugin: EnvPlugin, name: str) -> Handler:
    return lambda args, turn: plugin.call(name, args, turn)
