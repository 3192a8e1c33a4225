"""A tool call runs in a worker thread (runners/agent/loop.py `_in_thread`): it sees the episode's
context variables (the job's deadline), and an episode cancelled meanwhile interrupts the call and
waits for it to end before the cancellation goes on."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from runners.agent.loop import _in_thread

JOB = contextvars.ContextVar("job", default=None)


def test_the_tool_sees_the_episodes_context_and_its_result_comes_back() -> None:
    async def episode() -> tuple[str | None, str]:
        JOB.set("job-1")
        return await _in_thread(lambda: None, lambda suffix: (JOB.get(), threading.current_thread().name + suffix), "!")

    job, thread = asyncio.run(episode())
    assert job == "job-1" and thread != threading.main_thread().name + "!"


def test_a_cancelled_episode_interrupts_the_call_and_waits_for_it() -> None:
    stop = threading.Event()
    ended: list[str] = []

    def tool() -> None:
        stop.wait(10)
        ended.append("ended")

    async def episode() -> list[str]:
        call = asyncio.ensure_future(_in_thread(stop.set, tool))
        await asyncio.sleep(0.1)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            return list(ended)  # what had ended when the cancellation reached the episode
        raise AssertionError("not cancelled")

    assert asyncio.run(episode()) == ["ended"]
