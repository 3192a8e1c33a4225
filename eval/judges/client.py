"""The judges' (and the recovery probe's) LLM client: every call cached on disk by a hash of its full input.

Re-scoring the same deliverables with the same judge costs nothing; a changed prompt, model or
setting is a new key. The identity hashed is the part of the model config that can change an
answer (configs hold only the *name* of a key variable, never a key) plus the messages; a retry
after an unparseable answer carries that answer and a correction, so it is a new call.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.names import json_utf8
from envs.protocol import ToolCall
from envs.safeio import write_json
from eval.config import DEFAULT_CACHE, JudgeConfig
from runners.core.messages import AssistantMessage, Model, Usage

if TYPE_CHECKING:
    from runners.models.config import ModelConfig

# The model settings that can change an answer (timeouts, retries and prices cannot).
ANSWER_FIELDS = ("kind", "name", "base_url", "temperature", "top_p", "max_tokens", "seed", "extra_body")


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
        self.serial = serial
        self.calls = 0  # calls that reached the model (cache misses)
        self._lock = threading.Lock()

    def key(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        """Tool-less calls hash without a `tools` field, so judge caches written before it stay valid."""
        inputs: dict[str, Any] = {"model": self.identity, "messages": messages}
        if tools:
            inputs["tools"] = tools
        blob = json.dumps(inputs, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(json_utf8(blob)).hexdigest()  # a lone surrogate as its escape; valid text as before

    def complete(self, messages: list[dict[str, Any]]) -> str:
        return self.reply(messages, []).content or ""

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        key = self.key(messages, tools)
        path = self.cache_dir / key[:2] / f"{key}.json"
        if path.is_file():
            with open(path, encoding="utf-8") as f:
                return _message(json.load(f))
        if self.serial:
            with self._lock:
                reply = self.model.complete(messages, tools)
                self.calls += 1
        else:
            reply = self.model.complete(messages, tools)
            with self._lock:
                self.calls += 1
        record: dict[str, Any] = {"content": reply.content or "", "model": self.identity.get("name"), "usage": asdict(reply.usage)}
        if reply.tool_calls:
            record["tool_calls"] = [asdict(c) for c in reply.tool_calls]
        if reply.extra:
            record["extra"] = reply.extra  # an agent judge's next turn sends it back: a replay must too
        write_json(path, record)
        return reply


def _message(d: dict[str, Any]) -> AssistantMessage:
    """A cached reply (judge entries have no `tool_calls`)."""
    calls = [ToolCall(**c) for c in d.get("tool_calls", [])]
    return AssistantMessage(content=d["content"] if d["content"] or not calls else None, tool_calls=calls, usage=Usage(**d["usage"]),
                            extra=d.get("extra", {}))  # fmt: skip


def model_identity(mc: ModelConfig) -> dict[str, Any]:
    """The part of a model config that can change an answer (what the cache key hashes)."""
    return {k: getattr(mc, k) for k in ANSWER_FIELDS}


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
