"""A model that replays a JSONL script: one assistant turn a line, for offline runs and tests.

    {"content": "Let me look.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}
    {"tool_calls": [{"name": "read", "arguments": "{\\"path\\": oops"}]}   <- raw text, kept as is
    {"content": "Done. <FINAL_ANSWER>42</FINAL_ANSWER>"}

Both keys are optional; `arguments` may be an object (JSON-dumped) or a string (kept raw, so that
malformed JSON can be scripted); an optional `usage` {"input_tokens", "output_tokens", "cost"}
feeds the accounting. When the script runs out the model answers "" with no tool call. A call is
answered with the turn after the assistant turns it is sent (so a job that skips turns it found in
the model-call cache goes on from there), or after the last turn it gave, whichever is later.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.protocol import ToolCall
from runners.core.config_fields import ALL, Enters, setting
from runners.core.messages import AssistantMessage, Usage
from runners.core.paths import PATH
from runners.models.config import ModelConfig

_TURN_KEYS = {"content", "tool_calls", "usage"}
_CALL_KEYS = {"name", "arguments", "id"}
_USAGE_KEYS = {"input_tokens", "output_tokens", "cost"}


@dataclass
class ScriptedModelConfig(ModelConfig):
    """Kind `scripted`: `script` is the JSONL file of turns; or `script_dir`, a folder holding one
    script per task, `<task_id>.jsonl` (e.g. a built-in benchmark's reference `solutions/`)."""

    # by content (runners/job/identity.py, runners/models/call_cache.py): the same script elsewhere is the same job
    script: str | None = setting(ALL, default=None, path=PATH)
    script_dir: str | None = setting(Enters.JOB_ID | Enters.JUDGE_KEY | Enters.SWEEP_NAME, default=None, path=PATH)

    def for_task(self, task_id: str) -> ScriptedModelConfig:
        if not self.script_dir:
            return self
        return dataclasses.replace(self, script=str(Path(self.script_dir) / f"{task_id}.jsonl"), script_dir=None)


class ScriptError(ValueError):
    """The script file is missing or a line of it is not a valid turn."""


class ScriptedModel:
    """`Model` that answers with the script's turns in order, whatever the messages say."""

    def __init__(self, cfg: ScriptedModelConfig):
        if not cfg.script:
            raise ScriptError(
                "model.kind=scripted needs model.script=PATH (a JSONL file, one assistant turn a line) or "
                "model.script_dir=DIR (one <task_id>.jsonl per task)"
            )
        self.name = cfg.name
        self.turns = load_script(cfg.script)
        self._next = 0

    def __repr__(self) -> str:
        return f"ScriptedModel(name={self.name!r}, turns={len(self.turns)}, next={self._next})"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The next turn: after the last one it gave, or after the last assistant turn it is sent,
        whichever is later — a job re-run from the model-call cache continues where its cached turns end."""
        index = max(self._next, sum(1 for m in messages if m.get("role") == "assistant"))
        self._next = index + 1
        if index >= len(self.turns):
            return AssistantMessage(content="")
        return self.turns[index]

    async def acomplete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        return self.complete(messages, tools)  # answers at once: no thread needed


def scripted_model(cfg: ScriptedModelConfig, base_url: str | None = None) -> ScriptedModel:
    """The kind's factory (`runners/models/registry.py`): a script needs no endpoint."""
    return ScriptedModel(cfg)


def load_script(path: str) -> list[AssistantMessage]:
    """Parse and check the whole script up front, so that a bad line fails before the run starts."""
    p = Path(path)
    if p.is_dir():
        raise ScriptError(f"model.script={path} is a directory; set it to a JSONL file (one assistant turn a line)")
    if not p.is_file():
        raise ScriptError(f"script file not found: {p.resolve()} (set model.script to a JSONL file, or put "
                          "<task_id>.jsonl in model.script_dir)")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ScriptError(f"{p} is not valid UTF-8 (byte {e.start}); save the script as UTF-8 JSONL") from None
    turns = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            turns.append(_turn(json.loads(line), index=len(turns) + 1))
        except (json.JSONDecodeError, ScriptError, TypeError, ValueError) as e:
            raise ScriptError(f"{p}:{lineno}: {e}") from None
    return turns


def _turn(obj: Any, index: int) -> AssistantMessage:
    if not isinstance(obj, dict):
        raise ScriptError(f"a turn must be a JSON object, got {type(obj).__name__}")
    _only(obj, _TURN_KEYS, "turn")
    content = obj.get("content")
    if content is not None and not isinstance(content, str):
        raise ScriptError("'content' must be a string")
    calls = obj.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ScriptError("'tool_calls' must be a list")
    usage = obj.get("usage") or {}
    if not isinstance(usage, dict):
        raise ScriptError("'usage' must be an object")
    _only(usage, _USAGE_KEYS, "usage")
    counted = Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)), float(usage.get("cost", 0.0)))
    if min(counted.input_tokens, counted.output_tokens) < 0 or not 0 <= counted.cost < float("inf"):
        raise ScriptError("'usage' counts tokens and USD: give numbers >= 0")  # else the record it makes is unreadable
    return AssistantMessage(content=content, tool_calls=[_call(c, index, i) for i, c in enumerate(calls)], usage=counted)


def _call(obj: Any, turn: int, i: int) -> ToolCall:
    if not isinstance(obj, dict):
        raise ScriptError(f"tool call {i} must be an object with 'name' and 'arguments'")
    _only(obj, _CALL_KEYS, f"tool call {i}")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ScriptError(f"tool call {i} needs a 'name' (string)")
    args = obj.get("arguments", {})
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return ToolCall(id=str(obj.get("id") or f"call_{turn}_{i}"), name=name, arguments=args)


def _only(obj: dict[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ScriptError(f"unknown key(s) {unknown} in {what}; allowed: {sorted(allowed)}")
