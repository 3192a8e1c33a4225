"""The model-call cache: one store for the agents' calls and the judges', content-addressed on disk.

An entry is one reply (`<root>/<key[:2]>/<key>.json`), written atomically; a folder several sweeps
share is safe (the same key always holds the same call). With `storage=s3` a second tier in the bucket
(runners/models/call_cache_s3.py) is read on a disk miss and written after the disk.

Keys hash what can change a reply and nothing else:
- `full_key` (the judges): the model's identity, the messages and the tools as one JSON document —
  the judges' keys from before this module, unchanged;
- `CallKeys` (the agents): the same inputs — the model's name, `base_url`, sampling parameters and
  seed, the job's seed, the messages as sent (`wire_messages`) and the tools — with each message
  hashed once while it stays in the history (an episode's calls would otherwise hash its whole
  history every turn), plus the index of the call among identical calls in the job, so that sampling
  at temperature > 0 still differs across seeds and repeats.

Entries are read with a size cap and only as regular files reached without links: without
bubblewrap the agent's shell could write there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

from envs.names import json_utf8
from envs.protocol import ToolCall
from envs.safeio import read_regular, write_json
from runners.core.config_fields import Enters, names
from runners.core.messages import AssistantMessage, Usage
from runners.models.config import ApiModelConfig, ModelConfig
from runners.models.server import ServerConfig
from runners.models.wire import wire_messages

log = logging.getLogger(__name__)

DEFAULT_DIR = Path(__file__).resolve().parents[2] / ".cache" / "calls"
MODES = ("off", "read", "write", "read_write")
MAX_ENTRY_BYTES = 64 << 20
# The model settings that can change an answer (timeouts, retries and prices cannot), as each field
# declares (`Enters.CACHE_KEY`, runners/core/config_fields.py); a served model's weights and settings.
ANSWER_FIELDS = names([ApiModelConfig], Enters.CACHE_KEY)
_SERVED = names([ServerConfig], Enters.CACHE_KEY)
_USAGE = {f.name for f in dataclasses.fields(Usage)}


class Tier(Protocol):
    """A second store behind the disk (the bucket): bytes by key; `get` None when absent."""

    def get(self, key: str) -> bytes | None: ...

    def put(self, key: str, data: bytes) -> None: ...


class CallCache:
    """Replies by key on disk under `root`, with an optional `tier` behind it."""

    def __init__(self, root: Path, tier: Tier | None = None) -> None:
        self.root, self.tier = Path(root), tier

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry under `key`, or None (absent, unreadable, or not an entry: then a miss)."""
        try:
            data = read_regular(self.root, f"{key[:2]}/{key}.json", MAX_ENTRY_BYTES + 1)
        except OSError:  # no cache folder yet
            data = None
        if data is None and self.tier is not None:
            data = self.tier.get(key)
            entry = None if data is None or len(data) > MAX_ENTRY_BYTES else _entry(data)
            if entry is not None:
                self._write_local(key, entry)
        return None if data is None or len(data) > MAX_ENTRY_BYTES else _entry(data)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self._write_local(key, entry)
        if self.tier is not None:
            self.tier.put(key, json.dumps(entry, ensure_ascii=False, default=str).encode())

    def _write_local(self, key: str, entry: dict[str, Any]) -> None:
        write_json(self.path(key), entry)


def _entry(data: bytes) -> dict[str, Any] | None:
    try:
        d = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    ok = isinstance(d, dict) and isinstance(d.get("usage"), dict) and (d.get("content") is None or isinstance(d.get("content"), str))
    return d if ok else None


def full_key(identity: dict[str, Any], messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """The judges' key: tool-less calls hash without a `tools` field (as they always did)."""
    inputs: dict[str, Any] = {"model": identity, "messages": messages}
    if tools:
        inputs["tools"] = tools
    blob = json.dumps(inputs, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(json_utf8(blob)).hexdigest()  # a lone surrogate as its escape; valid text as before


class CallKeys:
    """The agent's keys for one job: each message's digest kept while the message object stays in
    the history (the loop's context view keeps unchanged messages the same objects), and a count
    of identical calls so that the n-th repeat of a call is its own entry."""

    def __init__(self, identity: dict[str, Any], echo: list[str]) -> None:
        self._identity = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
        self._echo = echo
        self._digests: dict[int, tuple[dict[str, Any], str]] = {}
        self._tools: tuple[list[dict[str, Any]], str] | None = None
        self._seen: Counter[str] = Counter()

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        digests: dict[int, tuple[dict[str, Any], str]] = {}
        for m in messages:
            hit = self._digests.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, _digest(wire_messages([m], self._echo)[0]))
            digests[id(m)] = hit
        self._digests = digests
        if self._tools is None or self._tools[0] is not tools:
            self._tools = (tools, _digest(tools))
        base = _digest([self._identity, [digests[id(m)][1] for m in messages], self._tools[1]])
        n = self._seen[base]
        self._seen[base] += 1
        return base if n == 0 else _digest([base, n])


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def model_identity(mc: ModelConfig) -> dict[str, Any]:
    """The part of a model config that can change an answer (what the judges' key hashes)."""
    return {k: getattr(mc, k, None) for k in ANSWER_FIELDS}


def agent_identity(mc: ModelConfig, job_seed: int) -> dict[str, Any]:
    """What an agent call's key hashes of its model: `model_identity`, the job's seed, the served
    model's weights and settings (a sweep serves it at a new URL each time: the URL is not in it,
    the configured `base_url` is), the scripted model's script."""
    out = {**model_identity(mc), "job_seed": job_seed}
    server = getattr(mc, "server", None)
    if server is not None:
        out["server"] = {k: getattr(server, k) for k in _SERVED}
    script = getattr(mc, "script", None)
    if script:
        p = Path(script)
        out["script"] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else script
    return out


def echo_fields(mc: ModelConfig) -> list[str]:
    return list(mc.echo_extra) if isinstance(mc, ApiModelConfig) else []


def reply_entry(reply: AssistantMessage, model: str | None) -> dict[str, Any]:
    """A reply as the cache keeps it (version 2: `content` exactly as received, null included)."""
    entry: dict[str, Any] = {"v": 2, "content": reply.content, "model": model, "usage": dataclasses.asdict(reply.usage),
                             "latency_s": reply.latency_s}
    if reply.tool_calls:
        entry["tool_calls"] = [dataclasses.asdict(c) for c in reply.tool_calls]
    if reply.extra:
        entry["extra"] = reply.extra  # a next turn sends it back: a replay must too
    return entry


def reply_of(d: dict[str, Any]) -> AssistantMessage:
    """A cached reply (judge entries before version 2 kept "" for no content and had no tool calls)."""
    calls = [ToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in d.get("tool_calls") or []]
    content = d.get("content")
    if "v" not in d and not content and calls:
        content = None
    usage = Usage(**{k: v for k, v in d["usage"].items() if k in _USAGE})
    return AssistantMessage(content=content, tool_calls=calls, usage=usage, latency_s=float(d.get("latency_s") or 0.0),
                            extra=d.get("extra") or {})


def cache_mode(mode: str | None, default: str) -> str:
    """The mode to use: the config's, else the entry point's default."""
    mode = default if mode is None else mode
    if mode not in MODES:
        raise ValueError(f"model.cache={mode!r}: choose one of {', '.join(MODES)} (null: the entry point's default)")
    return mode


ROOT_VARIABLE = "RUNNINGTAB_CALL_CACHE"  # the default folder, for a whole machine or a test session


def cache_root(configured: str | None) -> Path:
    """Where calls are cached: `model.cache_dir`, else $RUNNINGTAB_CALL_CACHE, else `<repo>/.cache/calls`."""
    return Path(configured or os.environ.get(ROOT_VARIABLE) or DEFAULT_DIR).expanduser()
