"""The judge's LLM client: every call cached on disk by a hash of its full input.

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
from typing import Any

from envs.safeio import write_json
from eval.config import DEFAULT_CACHE, JudgeConfig
from runners.messages import Model

# The model settings that can change an answer (timeouts, retries and prices cannot).
ANSWER_FIELDS = ("kind", "name", "base_url", "temperature", "top_p", "max_tokens", "seed", "extra_body")


class JudgeModelError(RuntimeError):
    """The judge needs a model and none is configured, or it could not be built."""


class CachedLLM:
    """`complete(messages) -> text` over a `Model`, with a content-addressed disk cache."""

    def __init__(self, model: Model, identity: dict[str, Any], cache_dir: Path):
        self.model = model
        self.identity = identity
        self.cache_dir = Path(cache_dir)
        self.calls = 0  # calls that reached the model (cache misses)
        self._lock = threading.Lock()

    def key(self, messages: list[dict[str, Any]]) -> str:
        blob = json.dumps({"model": self.identity, "messages": messages}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(self, messages: list[dict[str, Any]]) -> str:
        key = self.key(messages)
        path = self.cache_dir / key[:2] / f"{key}.json"
        if path.is_file():
            with open(path, encoding="utf-8") as f:
                return json.load(f)["content"]
        with self._lock:  # models are not guaranteed thread-safe (the TAC LLM server is threaded)
            reply = self.model.complete(messages, [])
            self.calls += 1
        content = reply.content or ""
        write_json(path, {"content": content, "model": self.identity.get("name"), "usage": asdict(reply.usage)})
        return content


def judge_llm(cfg: JudgeConfig, model: Model | None = None) -> CachedLLM:
    """The cached client for the configured judge model (or for `model`, e.g. a test double)."""
    cache = Path(cfg.cache_dir).expanduser() if cfg.cache_dir else DEFAULT_CACHE / "judge"
    if model is not None:
        return CachedLLM(model, {"name": getattr(model, "name", type(model).__name__), **cfg.model}, cache)
    if not cfg.model:
        raise JudgeModelError(
            f"judge {cfg.name!r} calls an LLM but judge.model is empty; "
            "use a judge config with a model node (e.g. judge=llm_rubric) or set judge.model.*"
        )
    from runners.models import build_model, model_config  # lazy: the runner's model stack

    mc = model_config(dict(cfg.model))
    identity = {k: getattr(mc, k) for k in ANSWER_FIELDS}
    return CachedLLM(build_model(mc), identity, cache)
