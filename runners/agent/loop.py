"""The agent loop (SPEC section 2): call the model, run every tool call in order, feed results back.

The loop knows nothing about methods: prompts, extra tools and stop hooks come through the
environment's plugins. The runner enforces the turn budget and the wall-clock limit itself: each
tool call gets the job's remaining time, and each model call ends by then too (the deadline is set
for the model client, `runners/core/deadline.py`, and the awaited call is cut off there), so
neither runs past the job's limit.

An episode is a coroutine, so that one process holds hundreds of them while they wait on their
models: model calls are awaited (`complete_async`), and each tool call, which blocks on its
subprocess, runs in a worker thread of the loop's executor. `run_episode` is the same episode for
synchronous callers.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from envs.context import ContextView
from envs.protocol import Environment
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


def run_episode(
    model: Model,
    env: Environment,
    task_prompt: str,
    agent: AgentConfig,
    on_message: Callable[[dict[str, Any]], None] = lambda m: None,
    clock: Callable[[], float] = time.monotonic,
) -> EpisodeResult:
    """`run_episode_async` for a caller without an event loop."""
    return asyncio.run(run_episode_async(model, env, task_prompt, agent, on_message, clock))


async def run_episode_async(
    model: Model,
    env: Environment,
    task_prompt: str,
    agent: AgentConfig,
    on_message: Callable[[dict[str, Any]], None] = lambda m: None,
    clock: Callable[[], float] = time.monotonic,
) -> EpisodeResult:
    """Run one episode; `on_message` sees every message in full as it is added (for the record)."""
    start = clock()
    res = EpisodeResult()
    tools = env.tools()
    model_view = ContextView(agent.context_level, project=_model_fields)

    def add(msg: dict[str, Any], turn: int) -> None:
        msg = {**msg, "turn": turn, "time": time.time()}
        res.messages.append(msg)
        on_message(msg)

    add({"role": "system", "content": env.system_prompt(), "tools": tools}, 0)
    add({"role": "user", "content": task_prompt}, 0)

    turn = 0
    while True:
        if turn >= agent.max_turns:
            res.stop_reason = "turn_budget"
            break
        if clock() - start >= agent.time_limit_s:
            res.stop_reason = "time_limit"
            break
        turn += 1
        try:
            reply = await _call_model(model, model_view(res.messages), tools, agent.time_limit_s - (clock() - start))
        except OutOfTime:
            res.stop_reason = "time_limit"
            break
        except ContextLengthError as e:
            res.stop_reason, res.error = "context_length", str(e)
            break
        except BudgetExceeded as e:
            res.stop_reason, res.error = "budget", str(e)
            break
        except ModelError as e:
            res.stop_reason, res.error = "model_error", str(e)
            break
        res.turns = turn
        add(account_reply(res, reply), turn)
        if not reply.tool_calls:
            nudge = env.on_stop(turn)
            if nudge is None:
                res.stop_reason = "finished"
                break
            add({"role": "user", "content": nudge, "stop_hook": True}, turn)
            continue
        if not await _run_tools(env, reply.tool_calls, turn, res, add, agent, clock, start):
            break
    res.wall_s = clock() - start
    return res


async def _call_model(model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]], time_left: float) -> AssistantMessage:
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
    """Add the reply's usage to the totals; returns its message for the record (our loop's and an
    external harness's conversation, `runners/harnesses/conversation.py`)."""
    res.tokens_in += reply.usage.input_tokens
    res.tokens_out += reply.usage.output_tokens
    res.cost += reply.usage.cost
    res.final_answer = reply.content or ""
    usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens, "cost": reply.usage.cost}
    if reply.usage.cached_tokens:
        usage["cached_tokens"] = reply.usage.cached_tokens
    return {**reply.to_message(), "usage": usage, "latency_s": round(reply.latency_s, 4), "extra": reply.extra}


async def _run_tools(env, calls, turn, res, add, agent, clock, start) -> bool:
    """Execute the turn's tool calls in order; False when the episode must stop."""
    for call in calls:
        if clock() - start >= agent.time_limit_s:
            res.stop_reason = "time_limit"
            return False
        try:
            time_left = agent.time_limit_s - (clock() - start)
            result = await _in_thread(env.interrupt, env.execute, call, turn, time_left=time_left)
        except Exception as e:  # an environment fault, not the model's: stop and say so
            res.stop_reason, res.error = "env_error", f"{type(e).__name__}: {e}"
            return False
        chars = result.own_chars
        if call.name in READING_TOOLS:
            res.chars_read += chars
        add(
            {
                "role": "tool",
                "tool_call_id": call.id,
                "name": call.name,
                "content": result.content,
                "is_error": result.is_error,
                "appendix": result.appendix,
                "chars": chars,
            },
            turn,
        )
        if result.stop is not None:  # the environment cannot go on (its disk quota): a result, scored as left
            res.stop_reason, res.error = result.stop, _last_line(result.content)
            return False
    return True


def _last_line(text: str) -> str:
    return text.rstrip().rpartition("\n")[2]


async def _in_thread(interrupt: Callable[[], None], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn` in a worker thread. If the episode is cancelled meanwhile (its job ran past the sweep's
    limit), the call is interrupted and waited for before the cancellation goes on, so that
    nothing closes the environment under a tool that is still running in it. The executor's future
    directly (what `asyncio.to_thread` awaits, with the context copied the same way), not a task
    wrapping `to_thread`'s coroutine: a task per tool call cost ~50 us of the loop's CPU."""
    ctx = contextvars.copy_context()
    call = asyncio.get_running_loop().run_in_executor(None, functools.partial(ctx.run, fn, *args, **kwargs))
    try:
        return await asyncio.shield(call)
    except asyncio.CancelledError:
        interrupt()
        await asyncio.wait([call])
        raise


_MODEL_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "extra")


def _model_fields(message: dict[str, Any]) -> dict[str, Any]:
    """What the model is sent of a (context-managed) message: our bookkeeping fields dropped."""
    return {k: message[k] for k in _MODEL_FIELDS if k in message}
