"""The judges' (and the recovery probe's) LLM client: every call cached by a hash of its full input.

Re-scoring the same deliverables with the same judge costs nothing; a changed prompt, model or
setting is a new key. The cache is the model-call cache the agents' calls use
(runners/models/call_cache.py: one store, one entry format); the judges keep their own key, a hash of
the model's identity (the part of the model config that can change an answer: configs hold only
the *name* of a key variable, never a key) plus the messages and tools as one document, so every
judge entry written before the move is still found. A retry after an unparseable answer carries
that answer and a correction, so it is a new call.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from eval.config import DEFAULT_CACHE, JudgeConfig
from runners.core.messages import AssistantMessage, Model
from runners.models.call_cache import (
    ANSWER_FIELDS,
    CallCache,
    full_key,
    model_identity,
    reply_entry,
    reply_of,
)

__all__ = ["ANSWER_FIELDS", "CachedLLM", "JudgeModelError", "judge_llm", "model_identity"]


class JudgeModelError(RuntimeError):
    """The judge needs a model and none is configured, or it could not be built."""


class CachedLLM:
    """A `Model` behind a content-addressed disk cache: `complete(messages) -> text` for the judges,
    `reply(messages, tools)` (tool calls kept) for the recovery probe.

    `serial` holds one call at a time (models are not guaranteed thread-safe: the TAC LLM server is
    threaded); the probe, whose clients are thread-safe, lets its workers call concurrently.
    """

    def __init__(self, model: Model, identity: dict[str, Any], cache_dir: Path, serial: bool = True):
        self.model = model
        self.identity = identity
        self.cache_dir = Path(cache_dir)
        self.store = CallCache(self.cache_dir)
        self.serial = serial
        self.calls = 0  # calls that reached the model (cache misses)
        self._lock = threading.Lock()

    def key(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        """Tool-less calls hash without a `tools` field, so judge caches written before it stay valid."""
        return full_key(self.identity, messages, tools)

    def complete(self, messages: list[dict[str, Any]]) -> str:
        return self.reply(messages, []).content or ""

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        key = self.key(messages, tools)
        entry = self.store.get(key)
        if entry is not None:
            return reply_of(entry)
        if self.serial:
            with self._lock:
                reply = self.model.complete(messages, tools)
                self.calls += 1
        else:
            reply = self.model.complete(messages, tools)
            with self._lock:
                self.calls += 1
        self.store.put(key, reply_entry(reply, self.identity.get("name")))
        return reply


def judge_llm(cfg: JudgeConfig, model: Model | None = None) -> CachedLLM:
    """The cached client for the configured judge model (or for `model`, e.g. a test double)."""
    cache = Path(cfg.cache_dir).expanduser() if cfg.cache_dir else DEFAULT_CACHE / "judge"
    if model is not None:
        known = model_identity(cfg.model) if cfg.model is not None else {}
        return CachedLLM(model, {"name": getattr(model, "name", type(model).__name__), **known}, cache)
    if cfg.model is None:
        raise JudgeModelError(
            f"judge {cfg.name!r} calls an LLM but judge.model is empty; "
            "use a judge config with a model node (e.g. judge=llm_rubric) or set judge.model.*"
        )
    from runners.models import build_model  # lazy: the runner's model stack

    return CachedLLM(build_model(cfg.model), model_identity(cfg.model), cache)
