"""Messages and the `Model` seam: messages + tool schemas in, one assistant message out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from envs.protocol import ToolCall


@dataclass
class Usage:
    """One reply's tokens and its cost in USD; `cached_tokens`: the part of the input the provider
    served from its prompt cache (billed at the cached-input price)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cached_tokens: int = 0


@dataclass
class AssistantMessage:
    """One model reply. `extra` keeps provider-specific fields (e.g. DeepSeek's reasoning_content)."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_message(self) -> dict[str, Any]:
        """The OpenAI chat-format message to send back to the model."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return msg


class ModelError(Exception):
    """The model could not answer (after retries). The run stops with `model_error`."""


class ContextLengthError(ModelError):
    """The request exceeded the model's context. The run stops with `context_length`."""


class BudgetExceeded(ModelError):
    """The job's cost reached its budget (`budget.job_usd`). The run stops with `budget`."""


class OutOfTime(ModelError):
    """The call ran into the job's deadline (`runners/core/deadline.py`). The run stops with `time_limit`."""


class Model(Protocol):
    """Anything that answers a chat: API models, vLLM or llama.cpp servers, the scripted model.

    A model may also define `async def acomplete(messages, tools)` (the same reply, awaited): the
    sweep's episodes then wait on it without holding a thread; otherwise `complete` runs in one."""

    name: str

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage: ...


async def complete_async(model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
    """One turn of `model` from a coroutine: its `acomplete` if it has one, else `complete` in a thread."""
    acomplete = getattr(model, "acomplete", None)
    if acomplete is not None:
        return await acomplete(messages, tools)
    return await asyncio.to_thread(model.complete, messages, tools)
