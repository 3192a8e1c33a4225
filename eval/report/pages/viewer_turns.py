"""A job's trajectory turn by turn, each tool result as the model saw it after context management.

What the model saw is recomputed with the loop's own context view (`envs.context.ContextView`: what
`manage_context` gives, for a list that grows, rendering each message once rather than once a call)
at the job's context level, at each model call: a tool result is first seen at the next call (capped
at levels 1-3) and, at level 3, may later be replaced by the placeholder. The full text
stays in the record, and the page keeps it one click away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envs.context import ContextView
from envs.harness_texts import CONTEXT_PLACEHOLDER
from eval.report.load import Job
from runners.config.runner import AgentConfig


@dataclass
class Seen:
    """One message of the record and what the model saw of it."""

    message: dict[str, Any]
    seen: str | None  # the content at the first model call after it (None: never sent again)
    cleared_at: int | None = None  # the turn from which the model saw the placeholder instead

    @property
    def full(self) -> str:
        return str(self.message.get("content") or "")

    @property
    def changed(self) -> bool:
        """True when the model did not see this message's full text (cut, cleared or never sent)."""
        return self.message.get("role") == "tool" and (self.seen != self.full or self.cleared_at is not None)


@dataclass
class Turn:
    number: int
    messages: list[Seen] = field(default_factory=list)


def context_level(job: Job) -> tuple[int, bool]:
    """The job's context level, and whether the record states it (older records do not: the
    runner's default then applies)."""
    agent = job.config.get("agent")
    if isinstance(agent, dict) and "context_level" in agent:
        return int(agent["context_level"]), True
    return AgentConfig().context_level, False


def seen_messages(messages: list[dict[str, Any]], level: int) -> list[Seen]:
    """Each message with what the model saw of it, replaying every model call of the loop."""
    out = [Seen(m, str(m.get("content") or "") if m.get("role") != "tool" else None) for m in messages]
    tools = [i for i, m in enumerate(messages) if m.get("role") == "tool" and isinstance(m.get("content"), str)]
    calls = [a for a, m in enumerate(messages) if m.get("role") == "assistant"][1:]
    context = ContextView(level)  # the loop's own view, grown call by call: each message is rendered once, not once a call
    for a in calls:
        # below level 3 a result never changes once seen; at level 3 it may be cleared later
        pending = [i for i in tools if i < a and (out[i].seen is None or (level == 3 and out[i].cleared_at is None))]
        if not pending:
            continue
        view = context(messages[:a])
        turn = int(messages[a].get("turn") or 0)
        for i in pending:
            content = view[i].get("content")
            if out[i].seen is None:
                out[i].seen = content
            elif content == CONTEXT_PLACEHOLDER and view[i] is not messages[i]:
                out[i].cleared_at = turn
    return out


def turns(job: Job, messages: list[dict[str, Any]] | None = None) -> list[Turn]:
    """The trajectory grouped by turn (0: the system prompt and the task)."""
    if messages is None:
        return job.held("turns", lambda: turns(job, job.trajectory))  # a page and its side-by-sides share them
    msgs = messages
    by_turn: dict[int, Turn] = {}
    for s in seen_messages(msgs, context_level(job)[0]):
        t = int(s.message.get("turn") or 0)
        by_turn.setdefault(t, Turn(t)).messages.append(s)
    return [by_turn[t] for t in sorted(by_turn)]
