"""A `Model` with a disk cache keyed by a hash of its full input, tools included.

The judge cache (`eval.judges.client.CachedLLM`) keeps only text replies of tool-less calls; the
probe's review condition offers `tab_show` as a tool, so it needs the tool calls back too. The
identity hashed is the same as the judge's: the model settings that can change an answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from envs.protocol import ToolCall
from eval.judges.client import ANSWER_FIELDS
from runners.messages import AssistantMessage, Model, Usage
from runners.models.config import ModelConfig
from runners.record import write_json


def identity(cfg: ModelConfig) -> dict[str, Any]:
    return {k: getattr(cfg, k) for k in ANSWER_FIELDS}


class CachedModel:
    """`complete(messages, tools)` answered from `cache_dir` when the same input was seen before."""

    def __init__(self, model: Model, ident: dict[str, Any], cache_dir: Path) -> None:
        self.model, self.identity, self.cache_dir = model, ident, Path(cache_dir)
        self.name = getattr(model, "name", "model")
        self.calls = 0  # calls that reached the model
        self._lock = threading.Lock()

    def key(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        blob = json.dumps({"model": self.identity, "messages": messages, "tools": tools}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        key = self.key(messages, tools)
        path = self.cache_dir / key[:2] / f"{key}.json"
        if path.is_file():
            with open(path, encoding="utf-8") as f:
                return _message(json.load(f))
        reply = self.model.complete(messages, tools)
        with self._lock:
            self.calls += 1
        write_json(path, {
            "content": reply.content,
            "tool_calls": [asdict(c) for c in reply.tool_calls],
            "usage": asdict(reply.usage),
            "model": self.identity.get("name"),
        })  # fmt: skip
        return reply


def _message(d: dict[str, Any]) -> AssistantMessage:
    return AssistantMessage(
        content=d.get("content"),
        tool_calls=[ToolCall(**c) for c in d.get("tool_calls", [])],
        usage=Usage(**d.get("usage", {})),
    )
