"""The job's side of a production harness's conversation, at the model endpoint where every harness
meets us: the harness owns its tools and its loop; the job's `WorkspaceEnv` and `Episode` own the rest,
as for our own loop (`runners/agent/loop.py`).

Per request, before the model sees the conversation:
- only a continuation of the conversation is taken (`bridge/continuation.py`);
- each tool result the harness sends is observed by the environment as one of its own (the harness's
  tool read as ours by `Harness.as_ours`: `Bash`/`exec_command` as `bash`, `Read` as `read`), and
  what it appends (the tab's status line) is appended to that result;
- the environment's plugin prompt follows the harness's system prompt, and its plugin tools (the
  tab's four operations) are offered beside the harness's;
and after the model answers:
- a call of a plugin tool is run by the environment (`WorkspaceEnv.execute`: its arguments checked,
  its status line appended), its result added and the model called again: the harness never sees it;
- the model's first stop (`Harness.finishes`: an answer without a call of the harness's tools, or
  the harness's own finishing call) is offered to the environment's stop hook (the tab's finish
  check, self-refine's message): its message is added and the model called again.

`messages` is the whole conversation as the model saw it, in our trajectory's format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envs.environment import WorkspaceEnv
from envs.protocol import Observation, ToolCall
from runners.agent.episode import READING_TOOLS, Episode
from runners.config.runner import AgentConfig
from runners.core.messages import AssistantMessage, Model, ModelError
from runners.harnesses.bridge.continuation import Continuation, NotContinuation

if TYPE_CHECKING:
    from runners.harnesses.harness import Harness

log = logging.getLogger(__name__)
_SENT = ("role", "content", "tool_calls", "tool_call_id")


def harness_view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the model is sent under a production harness: the conversation whole (the harness manages
    its own context), our bookkeeping fields dropped."""
    return [{k: m[k] for k in _SENT if k in m} for m in messages]


class HarnessConversation:
    """Answers each model request of one harness run (`answer`), keeping our copy of the conversation."""

    def __init__(self, model: Model, env: WorkspaceEnv, harness: Harness, agent: AgentConfig,
                 on_message: Callable[[dict[str, Any]], None] = lambda m: None, secret: str = "") -> None:
        self.model, self.env, self.harness = model, env, harness
        self.secret = secret  # the job's endpoint token: never shown to the model, never recorded
        self.episode = Episode(agent, on_message, view=harness_view)
        self.result = self.episode.result
        self.result.stop_reason = ""  # "finished" only once the model stops for good
        self.messages = self.result.messages
        self.continuation = Continuation(harness.compaction_marker, harness.keeps_answers)
        self.refused: list[dict[str, Any]] = []  # requests that did not continue the conversation (the record's)
        self._calls: dict[str, tuple[str, str]] = {}  # call id -> (tool name, arguments), of calls the harness ran
        self._own = {t["function"]["name"] for t in env.plugin_tools()}

    @property
    def turn(self) -> int:
        return self.episode.turn

    @property
    def commands_handed(self) -> int:
        """How many of the harness's own tool calls were handed to it (its commands ran from the first)."""
        return len(self.continuation.ids)

    async def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The reply the harness gets for a request with these (chat-format) messages and tools;
        `NotContinuation` for a request that does not continue the conversation (recorded), the
        model's stop (`ModelError`) once the episode ends on one."""
        try:
            new, compacted = self.continuation.take(messages)
        except NotContinuation as e:
            log.warning("refused a request to the job's endpoint: %s", e)
            self.refused.append({"turn": self.turn, "messages": len(messages), "reason": str(e)})
            raise
        if compacted:
            log.warning("the harness compacted its conversation: taking its summary and what follows")
        self._take(new, tools)
        offered = [*tools, *self.env.plugin_tools()]
        while True:
            try:
                reply = await self.episode.call(self.model, offered)
            except ModelError as e:
                self.episode.stop(e)
                raise
            theirs = [c for c in reply.tool_calls if c.name not in self._own]
            for call in reply.tool_calls:
                if call.name in self._own:
                    self._run_plugin_tool(call)
            if reply.tool_calls and not theirs:
                continue  # the environment's own calls only: the model goes on
            if self.harness.finishes(theirs):
                nudge = self.env.on_stop(self.turn)
                if nudge is not None:
                    self._stop_hook(theirs, nudge)
                    continue
                self.result.stop_reason = "finished"
            for call in theirs:
                self._calls[call.id] = (call.name, call.arguments)
            return self.continuation.hand_out(AssistantMessage(reply.content, theirs, reply.usage, reply.latency_s, reply.extra))

    def _take(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        """Add what the harness sent since its last request: its own messages and its tool results
        (observed by the environment)."""
        if not self.messages:
            system = next((m for m in messages if m["role"] == "system"), None)
            text = "\n\n".join(b for b in (system["content"] if system else "", self.env.plugin_prompt()) if b).strip()
            self.episode.add({"role": "system", "content": text, "tools": [*tools, *self.env.plugin_tools()]}, 0)
            messages = [m for m in messages if m is not system]
        for msg in messages:
            if msg["role"] == "tool":
                self._observed(msg)
            else:
                content = msg.get("content")
                if self.secret and isinstance(content, str):
                    content = content.replace(self.secret, "[job token]")
                self.episode.add({"role": msg["role"], "content": content})

    def _observed(self, msg: dict[str, Any]) -> None:
        """A harness tool result, observed by the environment as one of its own."""
        text = self.harness.shown(msg.get("content") or "")
        if self.secret:
            text = text.replace(self.secret, "[job token]")
        name, raw = self._calls.get(msg.get("tool_call_id", ""), ("", "{}"))
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            args = {}
        ours = self.harness.as_ours(name, args if isinstance(args, dict) else {}, text)
        appendix, read, failed = "", 0, text.startswith("[error]")
        if ours is not None:
            tool, arguments, output = ours
            appendix = self.env.observe(Observation(tool, arguments, output, failed, self.turn))
            read = len(output) if tool in READING_TOOLS else 0
        self.episode.tool_result(msg.get("tool_call_id", ""), name, f"{text}\n{appendix}" if appendix else text, failed, appendix,
                                 len(text), read=read)

    def _stop_hook(self, calls: list[ToolCall], nudge: str) -> None:
        """The stop hook's message where the model stopped: after an answer, as a user message (as in our
        own loop); a harness's own finishing call (`Harness.finishes`) is answered with it instead. The
        harness sees neither."""
        if not calls:
            self.episode.add({"role": "user", "content": nudge, "stop_hook": True})
        for call in calls:
            self.episode.tool_result(call.id, call.name, nudge, False, "", 0, read=0, hidden=True, stop_hook=True)

    def _run_plugin_tool(self, call: ToolCall) -> None:
        """A plugin tool the model called, run by the environment as in our own loop; the harness never sees it."""
        result = self.env.execute(call, self.turn, time_left=self.episode.time_left())
        self.episode.tool_result(call.id, call.name, result.content, result.is_error, result.appendix, result.own_chars,
                                 hidden=True)
