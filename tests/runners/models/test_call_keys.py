"""The agent's call-cache keys (runners/models/call_cache.py, `CallKeys`): kept as a running digest,
they are the keys the cache has always had for the same conversation (existing caches stay valid),
a changed earlier message changes them, and an episode's hashing grows linearly with its length."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from envs.context import ContextView
from envs.harness_texts import CONTEXT_PLACEHOLDER
from runners.agent.episode import model_fields as _model_fields
from runners.models import call_cache
from runners.models.call_cache import CallKeys, agent_identity
from runners.models.config import ApiModelConfig
from runners.models.wire import wire_messages

MC = ApiModelConfig(kind="openai", name="qwen/qwen3-32b", base_url="https://openrouter.ai/api/v1", temperature=0.6,
                    echo_extra=["reasoning_content"])
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Run a command in the workspace.",
                                           "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
# The first keys of the conversation below, as the cache computed them before the running digest
# (whole document hashed each call): a cache written then must be read now.
PINNED = ["56b989a2c95a8ccd005033475a1b4e7a8dcda4f09a8325c18e94384c9c1cad36",
          "330310044c86a97c50bc212800fcd8d6c1fa0377e9b44d7c40cfe46e14faaba7"]


def conversation(turns: int, output: str = "") -> list[dict[str, Any]]:
    """An episode as the loop records it: system, task, then per turn a reply with a bash call (with
    reasoning the provider wants echoed, and a finish_reason it does not) and the tool's result."""
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You work in /workspace, the company's shared drive. Answer with <FINAL_ANSWER>…</FINAL_ANSWER>."},
        {"role": "user", "content": "Compare budget.xlsx with actual_spending.xlsx and flag every category over 10 % — café bills included ☕."},
    ]
    for t in range(turns):
        out.append({"role": "assistant", "content": None if t % 2 else f"Looking at step {t}.",
                    "tool_calls": [{"id": f"call_{t}", "type": "function",
                                    "function": {"name": "bash", "arguments": json.dumps({"command": f"ls -la dir{t} | head"})}}],
                    "extra": {"reasoning_content": f"I should list dir{t}.", "finish_reason": "tool_calls"}, "turn": t})
        out.append({"role": "tool", "tool_call_id": f"call_{t}", "content": f"total {t}\n-rw-r--r-- 1 agent agent 1{t} budget_{t}.xlsx\n{output}",
                    "turn": t, "wall_s": 0.01})
    return out


def reference_key(identity: dict[str, Any], messages: list[dict[str, Any]], tools: list[dict[str, Any]], echo: list[str]) -> str:
    """The key by its definition, from scratch: the document `[identity, [message digests], tools digest]`."""
    def digest(obj: Any) -> str:
        return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    ident = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return digest([ident, [digest(m) for m in wire_messages(messages, echo)], digest(tools)])


def episode_keys(keys: CallKeys, history: list[dict[str, Any]], level: int = 3) -> list[tuple[str, list[dict[str, Any]]]]:
    """The key of each model call of the episode, as the loop asks: its context view of the history so far."""
    view, out = ContextView(level, project=_model_fields), []
    for n in range(2, len(history) + 1, 2):
        sent = view(history[:n])
        out.append((keys(sent, TOOLS), sent))
    return out


def test_keys_are_the_caches_keys_of_before() -> None:
    identity = agent_identity(MC, 0)
    got = episode_keys(CallKeys(identity, ["reasoning_content"]), conversation(12))
    assert [k for k, sent in got] == [reference_key(identity, sent, TOOLS, ["reasoning_content"]) for k, sent in got]
    assert [got[0][0], got[-1][0]] == PINNED


def test_a_compacted_history_keys_as_from_scratch() -> None:
    """Level 3 replaces old tool results once 240,000 characters have accumulated: the history sent
    is then no extension of the one before, and its key is still the one from scratch."""
    identity = agent_identity(MC, 0)
    got = episode_keys(CallKeys(identity, ["reasoning_content"]), conversation(30, output="x" * 15_000))
    assert any(len(sent) > 3 and sent[3]["content"] == CONTEXT_PLACEHOLDER for _, sent in got)  # compacted
    assert [k for k, _ in got] == [reference_key(identity, sent, TOOLS, ["reasoning_content"]) for _, sent in got]


def test_a_changed_earlier_message_changes_the_key() -> None:
    identity, history = agent_identity(MC, 0), conversation(4)
    keys = CallKeys(identity, ["reasoning_content"])
    keys(history[:6], TOOLS)
    before = CallKeys(identity, ["reasoning_content"])(history, TOOLS)
    changed = [*history[:3], {**history[3], "content": "total 0 (another listing)"}, *history[4:]]
    after = keys(changed, TOOLS)
    assert after != before and after == reference_key(identity, changed, TOOLS, ["reasoning_content"])
    echoed = [*history[:2], {**history[2], "extra": {"reasoning_content": "other thoughts"}}, *history[3:]]
    assert keys(echoed, TOOLS) != before  # what is echoed back is sent, so it is in the key


class _CountingSha256:
    """hashlib.sha256 that adds every byte it hashes to `total`."""

    total = 0

    def __init__(self, data: bytes = b"", _h: Any = None) -> None:
        self._h = _h or hashlib.sha256()
        self.update(data)

    def update(self, data: bytes) -> None:
        _CountingSha256.total += len(data)
        self._h.update(data)

    def copy(self) -> _CountingSha256:
        return _CountingSha256(_h=self._h.copy())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _bytes_hashed(turns: int, monkeypatch: pytest.MonkeyPatch) -> int:
    class Counting:
        sha256 = _CountingSha256
    monkeypatch.setattr(call_cache, "hashlib", Counting)
    _CountingSha256.total = 0
    episode_keys(CallKeys(agent_identity(MC, 0), ["reasoning_content"]), conversation(turns), level=0)
    return _CountingSha256.total


def test_an_episodes_hashing_grows_linearly(monkeypatch: pytest.MonkeyPatch) -> None:
    short, long = _bytes_hashed(100, monkeypatch), _bytes_hashed(400, monkeypatch)
    assert long < 4.4 * short, (short, long)  # linear: ~4x for 4x the turns (quadratic would be ~16x)
