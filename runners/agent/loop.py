"""The agent loop (SPEC section 2): call the model, run every tool call in order, feed results back.

The loop knows nothing about methods: prompts, extra tools and stop hooks come through the
environment's plugins. The turn budget and the wall-clock limit are the episode's
(`runners/agent/episode.py`, shared with the production harnesses): each tool call gets the job's
remaining time, and each model call ends by then too (the deadline is set for the model client,
`runners/core/deadline.py`, and the awaited call is cut off there), so neither runs past the job's
limit. The loop is the `dci` harness (`runners/agent/harnesses.py`).

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
from typing import Any

from envs.protocol import Environment, ToolCall
from runners.agent.episode import Episode, EpisodeResult
from runners.config.runner import AgentConfig
from runners.core.messages import Model, ModelError


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
    episode = Episode(agent, on_message, clock)
    tools = env.tools()
    episode.add({"role": "system", "content": env.system_prompt(), "tools": tools}, 0)
    episode.add({"role": "user", "content": task_prompt}, 0)
    while True:
        try:
            reply = await episode.call(model, tools)
        except ModelError as e:  # the turn budget, the time limit, the model's own stops
            episode.stop(e)
            break
        if not reply.tool_calls:
            nudge = env.on_stop(episode.turn)
            if nudge is None:
                episode.result.stop_reason = "finished"
                break
            episode.add({"role": "user", "content": nudge, "stop_hook": True})
            continue
        if not await _run_tools(env, reply.tool_calls, episode):
            break
    return episode.finish()


async def _run_tools(env: Environment, calls: list[ToolCall], episode: Episode) -> bool:
    """Execute the turn's tool calls in order; False when the episode must stop."""
    res = episode.result
    for call in calls:
        time_left = episode.time_left()
        if time_left <= 0:
            res.stop_reason = "time_limit"
            return False
        try:
            result = await _in_thread(env.interrupt, env.execute, call, episode.turn, time_left=time_left)
        except Exception as e:  # an environment fault, not the model's: stop and say so
            res.stop_reason, res.error = "env_error", f"{type(e).__name__}: {e}"
            return False
        episode.tool_result(call.id, call.name, result.content, result.is_error, result.appendix, result.own_chars)
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
