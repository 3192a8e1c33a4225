"""The job's side of an external harness's conversation: the method's plugins (the tab, TODO
prompting, self-refine, the shown log) applied at the model endpoint, where every harness meets us.

The harness owns its tools and its loop; we own every model call. So, per call, before the model
sees the conversation:
- each tool result the harness sends for the first time is observed by the plugins as our own
  environment observes one (the harness's tool named as ours: `Bash`/`exec_command` as `bash`,
  `Read` as `read`), and what the plugins append (the tab's status line) is appended to that result;
- the plugins' system prompt blocks follow the harness's system prompt, and their tools (the tab's
  four operations) are offered beside the harness's;
and after it answers:
- a call of a plugin's tool is run here, its result added, and the model called again: the harness
  never sees it (its next request is spliced back into our copy of the conversation);
- the model's first stop is offered to the plugins' stop hook (the tab's finish check, self-refine's
  message): a message is added and the model called again, as our own loop does.

`messages` is the whole conversation as the model saw it, in our trajectory's format: the record,
the judges' view and the analyses read it as they read our own harness's.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from envs.environment import appendix_of
from envs.protocol import EnvPlugin, Observation, ToolCall, ToolResult
from runners.agent.loop import EpisodeResult, account_reply
from runners.core.messages import AssistantMessage, Model, ModelError, complete_async

log = logging.getLogger(__name__)

# A harness tool as ours: (our tool name, its arguments, the output as the agent saw it), or None.
ToolMap = Callable[[str, dict[str, Any], str], "tuple[str, dict[str, Any], str] | None"]
Shown = Callable[[str], str]  # a tool result as the model is sent it (`runners.harnesses.kinds.Harness.shown`)


class TurnBudget(ModelError):
    """The harness asked for a model call past `agent.max_turns`. The run stops with `turn_budget`."""


class HarnessConversation:
    """Answers each model request of one harness run (`answer`), keeping our copy of the conversation."""

    def __init__(
        self, model: Model, plugins: list[EnvPlugin], tool_map: ToolMap, max_turns: int,
        on_message: Callable[[dict[str, Any]], None] = lambda m: None, secret: str = "", shown: Shown = lambda t: t,
    ) -> None:
        self.shown = shown
        self.model, self.plugins, self.tool_map, self.max_turns = model, plugins, tool_map, max_turns
        self.secret = secret  # the job's endpoint token: never shown to the model, never recorded
        self.on_message = on_message
        self.result = EpisodeResult(stop_reason="")  # "finished" only once the model stops for good
        self.messages = self.result.messages
        self._seen = 0  # harness messages already taken into `messages`
        self._calls: dict[str, tuple[str, str]] = {}  # call id -> (tool name, arguments), of calls the harness ran
        self._plugin_tool: dict[str, EnvPlugin] = {t["function"]["name"]: p for p in plugins for t in p.tools()}
        self._stopped_once = False

    @property
    def turn(self) -> int:
        return self.result.turns

    @property
    def commands_handed(self) -> int:
        """The tool calls of the harness's own (its shell, its file tools) handed to it to run: from the
        first one on, what the harness does may be the agent's doing (runners/harnesses/run.py `_stop`)."""
        return len(self._calls)

    async def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The reply the harness gets for a request with these (chat-format) messages and tools."""
        self._take(messages, tools)
        offered = [*tools, *[t for p in self.plugins for t in p.tools()]]
        while True:
            if self.turn >= self.max_turns:
                self.result.stop_reason = "turn_budget"
                raise TurnBudget(f"the job's turn budget ({self.max_turns}) is spent")
            reply = await complete_async(self.model, self._model_view(), offered)
            self.result.turns += 1
            self._add(account_reply(self.result, reply), self.turn)
            own = [c for c in reply.tool_calls if c.name in self._plugin_tool]
            theirs = [c for c in reply.tool_calls if c.name not in self._plugin_tool]
            for call in own:
                self._add(self._run_plugin_tool(call), self.turn)
            if theirs:
                for call in theirs:
                    self._calls[call.id] = (call.name, call.arguments)
                return AssistantMessage(reply.content, theirs, reply.usage, reply.latency_s, reply.extra)
            if own:
                continue
            nudge = self._on_stop()
            if nudge is None:
                self.result.stop_reason = "finished"
                self.result.final_answer = reply.content or ""
                return reply
            self._add({"role": "user", "content": nudge, "stop_hook": True}, self.turn)

    def _take(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        """Add what the harness sent since its last request: its own messages and its tool results
        (observed by the plugins); its copy of our replies is ours already."""
        if len(messages) < self._seen:  # the harness compacted its history: take what follows its last reply
            log.warning("the harness rewrote its conversation (%d messages, %d before): taking only its new messages",
                        len(messages), self._seen)
            last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
            self._seen = last + 1
        if not self.messages:
            system = next((m for m in messages if m["role"] == "system"), None)
            blocks = [b.strip() for b in (p.system_prompt() for p in self.plugins) if b and b.strip()]
            text = "\n\n".join([system["content"] if system else "", *blocks]).strip()
            self._add({"role": "system", "content": text, "tools": [*tools, *[t for p in self.plugins for t in p.tools()]]}, 0)
            messages = [m for m in messages if m is not system]
            self._seen = 0
        for msg in messages[self._seen:]:
            if msg["role"] == "assistant":
                continue
            if msg["role"] == "tool":
                self._add(self._observed(msg), self.turn)
            else:
                content = msg.get("content")
                if self.secret and isinstance(content, str):
                    content = content.replace(self.secret, "[job token]")
                self._add({"role": msg["role"], "content": content}, self.turn)
        self._seen = len(messages)

    def _observed(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A harness tool result, observed by the plugins as our environment observes one."""
        text = self.shown(msg.get("content") or "")
        if self.secret:
            text = text.replace(self.secret, "[job token]")
        name, raw = self._calls.get(msg.get("tool_call_id", ""), ("", "{}"))
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            args = {}
        ours = self.tool_map(name, args if isinstance(args, dict) else {}, text)
        appendix = ""
        if ours is not None:
            tool, arguments, output = ours
            obs = Observation(tool=tool, arguments=arguments, output=output, is_error=text.startswith("[error]"),
                              turn=self.turn)
            appendix = appendix_of(self.plugins, obs)
            if tool in ("read", "bash"):
                self.result.chars_read += len(output)
        return {"role": "tool", "tool_call_id": msg.get("tool_call_id"), "name": name,
                "content": f"{text}\n{appendix}" if appendix else text, "appendix": appendix, "chars": len(text)}

    def _run_plugin_tool(self, call: ToolCall) -> dict[str, Any]:
        plugin = self._plugin_tool[call.name]
        try:
            args = json.loads(call.arguments or "{}")
            result = plugin.call(call.name, args if isinstance(args, dict) else {}, self.turn)
        except json.JSONDecodeError as e:
            result = ToolResult(f"Invalid JSON arguments for {call.name}: {e}", is_error=True)
        except Exception as e:  # a plugin's failure is the model's error result, never the job's end
            log.exception("plugin tool %s failed", call.name)
            result = ToolResult(f"Tool '{call.name}' failed: {type(e).__name__}: {e}", is_error=True)
        return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result.content,
                "is_error": result.is_error, "appendix": "", "chars": len(result.content), "hidden": True}

    def _on_stop(self) -> str | None:
        for plugin in self.plugins:
            message = plugin.on_stop(self.turn)
            if message is not None:
                return message
        return None

    def _model_view(self) -> list[dict[str, Any]]:
        return [{k: m[k] for k in ("role", "content", "tool_calls", "tool_call_id") if k in m} for m in self.messages]

    def _add(self, msg: dict[str, Any], turn: int) -> None:
        msg = {**msg, "turn": turn, "time": time.time()}
        self.messages.append(msg)
        self.on_message(msg)
