"""One episode's record and limits, kept once for every harness: the message add, the turn budget, the
job's deadline on each model call, and which exception ends the episode with which stop reason.

Our own loop (`runners/agent/loop.py`) and a production harness's conversation at the job's endpoint
(`runners/harnesses/conversation.py`) each drive an `Episode`; what the environment adds (plugin tools,
status lines, the stop hook, the system blocks) comes from the one `WorkspaceEnv` both drive.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from envs.context import ContextView
from runners.config.runner import AgentConfig
from runners.core import deadline
from runners.core.messages import (
    AssistantMessage,
    BudgetExceeded,
    ContextLengthError,
    Model,
    ModelError,
    OutOfTime,
    complete_async,
)

READING_TOOLS = ("read", "bash")
View = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass
class EpisodeResult:
    """Totals of one episode; becomes `result.json` (with what the job adds): each field but
    `messages` is the `Result` field of the same name, carried over whole by `totals`."""

    stop_reason: str = "finished"
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    chars_read: int = 0
    final_answer: str = ""
    wall_s: float = 0.0
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def totals(self) -> dict[str, Any]:
        """The fields `result.json` takes from the episode, by name: all but the trajectory's `messages`."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "messages"}


class TurnBudget(ModelError):
    """A model call past `agent.max_turns`: the episode stops with `turn_budget`."""


# The model's stops that end an episode, and their stop reasons (the first match wins: `OutOfTime`
# and `TurnBudget` are `ModelError`s too).
_STOPS: tuple[tuple[type[BaseException], str], ...] = (
    (OutOfTime, "time_limit"), (TurnBudget, "turn_budget"), (ContextLengthError, "context_length"),
    (BudgetExceeded, "budget"), (ModelError, "model_error"),
)


def stop_of(error: BaseException) -> tuple[str, str | None]:
    """The stop reason and error text an exception of the model ends the episode with (a time or
    turn limit is a stop, not an error)."""
    reason = next(r for kind, r in _STOPS if isinstance(error, kind))
    return reason, None if reason in ("time_limit", "turn_budget") else str(error)


class Episode:
    """The record being written (`result`, whose `messages` `on_message` sees as each is added), the
    turn count against `agent.max_turns` and the time left of `agent.time_limit_s`."""

    def __init__(self, agent: AgentConfig, on_message: Callable[[dict[str, Any]], None] = lambda m: None,
                 clock: Callable[[], float] = time.monotonic, view: View | None = None) -> None:
        """`view`: what the model is sent of the conversation (default: our context management at
        `agent.context_level`; a production harness manages its own context)."""
        self.agent, self.on_message, self.clock = agent, on_message, clock
        self.start = clock()
        self.result = EpisodeResult()
        self.view = view or ContextView(agent.context_level, project=model_fields)

    @property
    def turn(self) -> int:
        return self.result.turns

    def add(self, msg: dict[str, Any], turn: int | None = None) -> None:
        msg = {**msg, "turn": self.turn if turn is None else turn, "time": time.time()}
        self.result.messages.append(msg)
        self.on_message(msg)

    def time_left(self) -> float:
        return self.agent.time_limit_s - (self.clock() - self.start)

    async def call(self, model: Model, tools: list[dict[str, Any]]) -> AssistantMessage:
        """The next turn's model call on the conversation so far (as the context level shows it), ended
        by the job's deadline: `TurnBudget` past the turn budget, `OutOfTime` past the time limit.
        The reply is counted, accounted and added."""
        if self.turn >= self.agent.max_turns:
            raise TurnBudget(f"the job's turn budget ({self.agent.max_turns}) is spent")
        left = self.time_left()
        if left <= 0:
            raise OutOfTime("the job's time limit has passed")
        reply = await call_until(model, self.view(self.result.messages), tools, left)
        self.result.turns += 1  # a call the model answered
        self.add(account_reply(self.result, reply))
        return reply

    def stop(self, error: BaseException) -> None:
        """End the episode on the model's stop (`stop_of`)."""
        self.result.stop_reason, self.result.error = stop_of(error)

    def tool_result(self, call_id: str, name: str, content: str, is_error: bool, appendix: str, chars: int,
                    read: int | None = None, **extra: Any) -> None:
        """Add a tool's result as the model is sent it (`content` ends with `appendix`, what the
        environment appended to the tool's own `chars` characters); `read`: the characters it read of
        the workspace (default: `chars` for our reading tools, else none)."""
        self.result.chars_read += (chars if name in READING_TOOLS else 0) if read is None else read
        self.add({"role": "tool", "tool_call_id": call_id, "name": name, "content": content, "is_error": is_error,
                  "appendix": appendix, "chars": chars, **extra})

    def finish(self) -> EpisodeResult:
        self.result.wall_s = self.clock() - self.start
        return self.result


async def call_until(model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]], time_left: float) -> AssistantMessage:
    """One model call that ends within `time_left` seconds (`OutOfTime` past it): the client is told
    the deadline, and a model that ignores it is cut off there."""
    limit = asyncio.timeout(time_left)
    with deadline.until(time.monotonic() + time_left):
        try:
            async with limit:
                return await complete_async(model, messages, tools)
        except TimeoutError:
            if not limit.expired():  # a TimeoutError of the model's own
                raise
            raise OutOfTime(f"the model did not answer within the job's remaining {time_left:.1f} s") from None


def account_reply(res: EpisodeResult, reply: AssistantMessage) -> dict[str, Any]:
    """Add the reply's usage to the totals; returns its message for the record."""
    res.tokens_in += reply.usage.input_tokens
    res.tokens_out += reply.usage.output_tokens
    res.cost += reply.usage.cost
    res.final_answer = reply.content or ""
    usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens, "cost": reply.usage.cost}
    if reply.usage.cached_tokens:
        usage["cached_tokens"] = reply.usage.cached_tokens
    return {**reply.to_message(), "usage": usage, "latency_s": round(reply.latency_s, 4), "extra": reply.extra}


_MODEL_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "extra")


def model_fields(message: dict[str, Any]) -> dict[str, Any]:
    """What the model is sent of a (context-managed) message: our bookkeeping fields dropped."""
    return {k: message[k] for k in _MODEL_FIELDS if k in message}
