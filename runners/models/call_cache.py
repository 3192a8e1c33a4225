"""The model-call cache: one store for the agents' calls and the judges', content-addressed on disk.

An entry is one reply (`<root>/<key[:2]>/<key>.json`), written atomically; a folder several sweeps
share is safe (the same key always holds the same call). With `storage=s3` a second tier in the bucket
(runners/models/call_cache_s3.py) is read on a disk miss and written after the disk.

Keys hash what can change a reply and nothing else:
- `full_key` (the judges): the model's identity, the messages and the tools as one JSON document —
  the judges' keys from before this module, unchanged;
- `CallKeys` (the agents): the same inputs — the model's name, `base_url`, sampling parameters and
  seed, the job's seed, the messages as sent (`wire_messages`) and the tools — with each message
  hashed once while it stays in the history and the key's hash kept running over their digests
  (an episode's calls would otherwise hash its whole history every turn), plus the index of the call among identical calls in the job, so that sampling
  at temperature > 0 still differs across seeds and repeats.

Entries are read with a size cap and only as regular files reached without links (without
bubblewrap the agent's shell could write there), and checked field by field (`entry_problem`): a bad
one, on disk or in the bucket, is a miss, logged once, that the next reply replaces.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any, Protocol, TypeVar

from envs.names import json_bytes, json_utf8
from envs.protocol import ToolCall
from envs.safeio import read_regular, write_bytes
from runners.core.config_fields import Enters, names
from runners.core.messages import AssistantMessage, Usage
from runners.models.config import ApiModelConfig, ModelConfig
from runners.models.server import ServerConfig
from runners.models.weights import served_weights
from runners.models.wire import wire_messages

log = logging.getLogger(__name__)

BESIDE_RECORDS = Path(".cache") / "calls"  # the default folder, under `out`
MODES = ("off", "read", "write", "read_write")
M = TypeVar("M", bound=ModelConfig)
MAX_ENTRY_BYTES = 64 << 20
# The model settings that can change an answer (timeouts, retries and prices cannot), as each field
# declares (`Enters.CACHE_KEY`, runners/core/config_fields.py); a served model's weights and settings.
ANSWER_FIELDS = names([ApiModelConfig], Enters.CACHE_KEY)
_SERVED = names([ServerConfig], Enters.CACHE_KEY)
_USAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Usage))
_USAGE = set(_USAGE_FIELDS)
_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(ToolCall))
_reported: set[str] = set()  # keys of bad entries this process has logged


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
        """The entry under `key`, or None: absent, unreadable, or not a valid entry (then a miss,
        logged once, that the next reply replaces). A bad entry on disk is looked up in the tier."""
        try:
            data = read_regular(self.root, f"{key[:2]}/{key}.json", MAX_ENTRY_BYTES + 1)
        except OSError:  # no cache folder yet
            data = None
        entry = None if data is None else _checked(key, data, self.root)
        if entry is None and self.tier is not None:
            data = self.tier.get(key)
            entry = None if data is None else _checked(key, data, "the bucket")
            if entry is not None:
                self._write_local(key, entry)
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self._write_local(key, entry)
        if self.tier is not None:
            self.tier.put(key, json.dumps(entry, ensure_ascii=False, default=str).encode())

    def _write_local(self, key: str, entry: dict[str, Any]) -> None:
        # Not synced: a crash can only cut an entry short or zero it, which reads as a miss (it
        # cannot parse), so an fsync per model call would buy nothing. Compact: nobody reads it by eye.
        write_bytes(self.path(key), json_bytes(entry), durable=False)


def _checked(key: str, data: bytes, where: object) -> dict[str, Any] | None:
    """The entry in `data`, or None (logged once per key and process) when it is not one."""
    problem = "larger than the cap" if len(data) > MAX_ENTRY_BYTES else None
    d: Any = None
    if problem is None:
        try:
            d = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            problem = "not JSON"
        else:
            problem = entry_problem(d)
    if problem is None:
        return d
    if key not in _reported:
        _reported.add(key)
        log.warning("model-call cache entry %s in %s is not a valid entry (%s): a miss; the next reply replaces it", key, where, problem)
    return None


def entry_problem(d: Any) -> str | None:
    """What makes `d` something other than a cache entry (None: it is one). Entries are data from
    a folder or a bucket other processes write: every field a reply is built from is checked."""
    if not isinstance(d, dict):
        return "not an object"
    usage = d.get("usage")
    if not isinstance(usage, dict):
        return "usage is not an object"
    for k in sorted(_USAGE & usage.keys()):
        v = usage[k]
        if not (_count(v) if k != "cost" else _amount(v)):
            return f"usage.{k} is {v!r:.40}, not a {'count' if k != 'cost' else 'non-negative amount'}"
    if d.get("content") is not None and not isinstance(d["content"], str):
        return "content is not text"
    if d.get("latency_s") is not None and not _amount(d["latency_s"]):
        return "latency_s is not a non-negative number"
    if d.get("extra") is not None and not isinstance(d["extra"], dict):
        return "extra is not an object"
    calls = d.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(
            isinstance(c, dict) and all(isinstance(c.get(f), str) for f in ("id", "name", "arguments")) for c in calls)):
        return "tool_calls is not a list of calls with a text id, name and arguments"
    return None


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _amount(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def full_key(identity: dict[str, Any], messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """The judges' key: tool-less calls hash without a `tools` field (as they always did)."""
    inputs: dict[str, Any] = {"model": identity, "messages": messages}
    if tools:
        inputs["tools"] = tools
    blob = json.dumps(inputs, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(json_utf8(blob)).hexdigest()  # a lone surrogate as its escape; valid text as before


class CallKeys:
    """The agent's keys for one job. A key is the digest of one JSON document,
    `[identity, [digest of each message as sent, …], digest of the tools]`, computed as a running
    hash: the hash state after the last call's messages is kept, so a call that extends the history
    hashes only its new messages (an episode of n turns hashes O(n) bytes, not O(n²)); a history
    that is not an extension (a compaction replaced earlier messages) is hashed again from its
    first message, each unchanged message's digest reused. Messages must not change once sent (the
    loop's context view gives a changed message as a new object). A count of identical calls makes
    the n-th repeat of a call its own entry."""

    def __init__(self, identity: dict[str, Any], echo: list[str]) -> None:
        self._echo = echo
        head = json.dumps(json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str), ensure_ascii=False)
        self._head = hashlib.sha256(f"[{head}, [".encode())
        self._messages: list[dict[str, Any]] = []  # the last call's history, and their digests
        self._digests: list[str] = []
        self._running = self._head.copy()  # the document's hash through the digests of `_messages`
        self._tools: tuple[list[dict[str, Any]], str] | None = None
        self._seen: Counter[str] = Counter()

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        n = len(self._messages)
        known: dict[int, str] = {}
        if len(messages) >= n and messages[:n] == self._messages:  # an extension (`==` is `is` first)
            fresh = messages[n:]
        else:  # both lists are alive here: an id names one message
            known = {id(m): d for m, d in zip(self._messages, self._digests, strict=True)}
            self._messages, self._digests, self._running = [], [], self._head.copy()
            fresh = messages
        for m in fresh:
            self._feed(m, known.get(id(m)) or self._message_digest(m))
        if self._tools is None or self._tools[0] is not tools:
            self._tools = (tools, _digest(tools))
        tail = f'], "{self._tools[1]}"]'.encode()
        h = self._running.copy()
        h.update(tail)
        base = h.hexdigest()
        n = self._seen[base]
        self._seen[base] += 1
        return base if n == 0 else _digest([base, n])

    def _feed(self, message: dict[str, Any], digest: str) -> None:
        piece = f'{", " if self._messages else ""}"{digest}"'.encode()
        self._running.update(piece)
        self._messages.append(message)
        self._digests.append(digest)

    def _message_digest(self, message: dict[str, Any]) -> str:
        return _digest(wire_messages([message], self._echo)[0])


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def model_identity(mc: ModelConfig) -> dict[str, Any]:
    """The part of a model config that can change an answer (what the judges' key hashes)."""
    return {k: getattr(mc, k, None) for k in ANSWER_FIELDS}


def agent_identity(mc: ModelConfig, job_seed: int, cache_dir: Path | None = None) -> dict[str, Any]:
    """What an agent call's key hashes of its model: `model_identity`, the job's seed, the served
    model's weights and settings (a sweep serves it at a new URL each time: the URL is not in it,
    the configured `base_url` is), the scripted model's script. The weights a sweep serves are
    keyed by their content (runners/models/weights.py, remembered under `cache_dir`); raises
    `WeightsUnknown` when they are not local files."""
    out = {**model_identity(mc), "job_seed": job_seed}
    server = getattr(mc, "server", None)
    if server is not None:
        out["server"] = {k: getattr(server, k) for k in _SERVED}
        weights = served_weights(mc, cache_dir)
        if weights is not None:
            out["server"]["model_path"] = weights
    script = getattr(mc, "script", None)
    if script:
        p = Path(script)
        out["script"] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else script
    return out


def echo_fields(mc: ModelConfig) -> list[str]:
    return list(mc.echo_extra) if isinstance(mc, ApiModelConfig) else []


def reply_entry(reply: AssistantMessage, model: str | None) -> dict[str, Any]:
    """A reply as the cache keeps it (version 2: `content` exactly as received, null included)."""
    usage = {k: getattr(reply.usage, k) for k in _USAGE_FIELDS}  # flat fields: no `asdict` (it deep-copies)
    entry: dict[str, Any] = {"v": 2, "content": reply.content, "model": model, "usage": usage, "latency_s": reply.latency_s}
    if reply.tool_calls:
        entry["tool_calls"] = [{k: getattr(c, k) for k in _CALL_FIELDS} for c in reply.tool_calls]
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


ROOT_VARIABLE = "RUNNINGTAB_CALL_CACHE"  # the default folder, for a whole machine or a test session


# The model-call cache when the config says nothing (`model.cache` null), by entry point: a job's
# (`runners.job`, or a config made in Python) and a sweep's. Not part of an id: how calls are fetched, not which.
JOB_CACHE = "off"
SWEEP_CACHE = "read_write"


def settled(model: M, out: str, default_mode: str = JOB_CACHE) -> M:
    """The model's config with its call cache settled: `cache` the mode to use (null: the entry
    point's `default_mode`) and, when the cache is on, `cache_dir` its folder (`call_cache_folder`).
    The one place the cache is decided: `runners.config.schema.to_root` settles an entry point's
    config before the preflight checks it, and a job settles a config made by hand in Python the
    same way (a settled config comes back unchanged). Raises `ValueError` for a mode or a folder
    that cannot be used."""
    mode = default_mode if model.cache is None else model.cache
    if mode not in MODES:
        raise ValueError(f"model.cache={mode!r}: choose one of {', '.join(MODES)} (null: the entry point's default)")
    folder = str(call_cache_folder(model.cache_dir, out)) if mode != "off" else model.cache_dir
    return dataclasses.replace(model, cache=mode, cache_dir=folder)


def beside_records(configured: str | None, out: str | Path, kind: str) -> Path:
    """A call cache's folder: the configured one, else beside the records, `<out>/.cache/<kind>` (the
    judges' `judge`, the probe's `probe`): on the records' disk, shared by the sweeps of one `out`."""
    return Path(configured).expanduser() if configured else Path(out) / BESIDE_RECORDS.parent / kind


def call_cache_folder(configured: str | None, out: str | Path) -> Path:
    """Where calls are cached: `model.cache_dir`, else $RUNNINGTAB_CALL_CACHE, else beside the records,
    `<out>/.cache/calls`: it grows with the records, on their disk (not on a checkout's small home
    disk), and every sweep under one `out` shares it. None of these is part of a job id."""
    if configured:
        return Path(configured).expanduser()
    variable = os.environ.get(ROOT_VARIABLE)
    if variable:
        root = Path(variable).expanduser()
        if not root.is_absolute():
            raise ValueError(f"${ROOT_VARIABLE}={variable!r} is relative: give an absolute folder (every process of a sweep reads it from its own working folder)")
        return root
    return beside_records(None, out, BESIDE_RECORDS.name)
