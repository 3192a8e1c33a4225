"""The recovery probe (paper Figure 4, right): can the same model recover a requirement's masked
values (a) with nothing more, (b) from the tab's review for that requirement plus the entries it
opens with `tab_show`, (c) from the whole read log? Each call goes through the job's own model
config and a disk cache, so re-running the probe costs nothing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.config import DEFAULT_CACHE
from eval.probe.cache import CachedModel, identity
from eval.probe.items import ProbeItem, probe_items
from eval.probe.prompts import text
from eval.report.figure4 import CONDITIONS, PROBE_FILE
from eval.report.load import Job, Sweep, load_sweep
from eval.report.values import Haystack
from runners.messages import Model, ModelError
from runners.record import write_json
from tab.config import TabConfig
from tab.match import clip, word_set
from tab.review import ExcerptIndex
from tab.state import Entry

log = logging.getLogger(__name__)
MASK = re.compile(r"\[V\d+\]")


@dataclass
class ProbeConfig:
    """`base_url` overrides every job's model endpoint (e.g. a model served elsewhere)."""

    methods: list[str] = field(default_factory=lambda: ["runningtab"])
    max_show: int = 5  # tab_show calls allowed in the review condition
    max_log_chars: int = 300_000  # the whole read log is cut here (and the record says so)
    cache_dir: str | None = None
    base_url: str | None = None
    workers: int = 4
    limit: int | None = None


def _show_tool() -> dict[str, Any]:
    return {"type": "function", "function": {"name": "tab_show", "description": text("tool_show"), "parameters": {
        "type": "object", "properties": {"entry_id": {"type": "string", "description": text("tool_show_entry_id")}},
        "required": ["entry_id"]}}}  # fmt: skip


def _messages(item: ProbeItem, context: str) -> list[dict[str, Any]]:
    parts = [text("task", task=item.task), text("requirement", requirement=item.masked)]
    parts += [context] if context else []
    parts.append(text("ask", labels=", ".join(item.labels)))
    return [{"role": "system", "content": text("system")}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_answer(content: str) -> dict[str, str]:
    """The JSON object of the reply (fenced or bare); {} when there is none."""
    m = re.search(r"\{.*\}", content or "", re.DOTALL)
    if not m:
        return {}
    try:
        obj = json.loads(m.group())
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in obj.items() if v is not None} if isinstance(obj, dict) else {}


def _entries(job: Job) -> list[dict[str, Any]]:
    return list((job.tab or {}).get("read_log", []))


def read_log_context(job: Job, limit: int) -> tuple[str, bool]:
    """The whole read log as one block, cut at `limit` characters; (text, was it cut)."""
    blocks = [text("log_entry", id=e["id"], path=e.get("path", ""), turn=e.get("turn", ""),
                   command=e.get("command", ""), excerpt=e.get("excerpt", "")) for e in _entries(job)]  # fmt: skip
    full = text("log_header") + "\n\n" + "\n\n".join(blocks)
    if len(full) <= limit:
        return full, False
    return full[:limit] + "\n" + text("log_cut", left=len(full) - limit), True


def review_context(item: ProbeItem, cfg: ProbeConfig) -> str:
    """What `tab_review` would show for the masked requirement over the job's final read log (with the
    job's own review settings)."""
    tab = TabConfig.coerce((item.job.config.get("method") or {}).get("tab"))
    index = ExcerptIndex()
    for e in _entries(item.job):
        index.add(Entry(e["id"], str(e.get("path", "")), str(e.get("command", "")), int(e.get("turn", 0)), str(e.get("excerpt", ""))))
    words = word_set(MASK.sub(" ", item.masked))  # the masks' own "1", "2" are no words of the requirement
    lines = index.best_lines(words, tab.review_lines) if words else []
    shown = [text("review_line", id=m.entry, path=m.path, line=clip(m.line, words, tab.line_chars)) for m in lines]
    return "\n".join([text("review_header"), *(shown or [text("review_empty")]), "", text("review_show")])


def ask_with_show(model: Model, item: ProbeItem, context: str, cfg: ProbeConfig) -> tuple[str, int, list[str]]:
    """The review condition's exchange; returns (answer, characters of excerpts opened, ids opened)."""
    entries = {e["id"]: e for e in _entries(item.job)}
    messages, tools, opened, chars = _messages(item, context), [_show_tool()], [], 0
    for _ in range(cfg.max_show + 2):  # past the limit every call is answered "answer now"
        reply = model.complete(messages, tools)
        if not reply.tool_calls:
            return reply.content or "", chars, opened
        messages.append(reply.to_message())
        for call in reply.tool_calls:
            try:
                entry_id = str(json.loads(call.arguments or "{}").get("entry_id", ""))
            except (json.JSONDecodeError, AttributeError):
                entry_id = ""
            if len(opened) >= cfg.max_show:
                out = text("show_limit")
            elif entry_id in entries:
                out = str(entries[entry_id].get("excerpt", ""))
                opened.append(entry_id)
                chars += len(out)
            else:
                out = text("show_unknown", entry_id=entry_id, ids=", ".join(entries) or "none")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
    return "", chars, opened


def probe_one(model: Model, item: ProbeItem, condition: str, cfg: ProbeConfig) -> dict[str, Any]:
    j = item.job
    rec: dict[str, Any] = {"job_id": j.job_id, "benchmark": j.benchmark, "task_id": j.task_id, "method": j.method,
                           "model": j.model, "seed": j.seed, "rubric": item.rubric, "condition": condition,
                           "requirement": item.masked, "values": len(item.targets), "error": None}  # fmt: skip
    try:
        if condition == "none":
            answer, chars = model.complete(_messages(item, ""), []).content or "", 0
        elif condition == "review":
            context = review_context(item, cfg)
            answer, opened_chars, opened = ask_with_show(model, item, context, cfg)
            chars, rec["opened"] = len(context) + opened_chars, opened
        else:
            context, cut = read_log_context(j, cfg.max_log_chars)
            answer, chars = model.complete(_messages(item, context), []).content or "", len(context)
            rec["cut"] = cut
    except ModelError as e:
        log.warning("probe call failed for %s rubric %d (%s): %s", j.job_id, item.rubric, condition, e)
        return {**rec, "error": str(e), "recovered": 0, "context_chars": 0}
    got = parse_answer(answer)
    labels = {lab: {"expected": v.text, "answer": got.get(lab), "recovered": lab in got and Haystack(got[lab]).has(v)}
              for lab, v in item.labels.items() if lab in item.targets}  # fmt: skip
    return {**rec, "recovered": sum(x["recovered"] for x in labels.values()), "context_chars": chars, "labels": labels, "answer": answer}


class Models:
    """One cached client per distinct model config, servers started once and stopped at the end."""

    def __init__(self, cfg: ProbeConfig, stack: ExitStack) -> None:
        self.cfg, self.stack = cfg, stack
        self.urls: dict[str, str | None] = {}
        self.models: dict[str, CachedModel] = {}
        self.cache = Path(cfg.cache_dir).expanduser() if cfg.cache_dir else DEFAULT_CACHE / "probe"

    def for_job(self, job: Job) -> CachedModel:
        from runners.models import build_model, model_config, served

        mc = model_config(dict(job.config.get("model") or {}))
        if self.cfg.base_url:
            mc = dataclasses.replace(mc, base_url=self.cfg.base_url)
        server_key = _key(dataclasses.replace(mc, seed=None))  # one server per model, whatever the seeds
        if server_key not in self.urls:
            self.urls[server_key] = self.stack.enter_context(served(mc))
        if mc.seed is None:
            mc = dataclasses.replace(mc, seed=job.seed)  # sampled as the job was
        key = _key(mc)
        if key not in self.models:
            self.models[key] = CachedModel(build_model(mc, self.urls[server_key]), identity(mc), self.cache)
        return self.models[key]


def _key(mc: Any) -> str:
    return json.dumps(dataclasses.asdict(mc), sort_keys=True, default=str)


def run_probe(sweep_dir: Path, cfg: ProbeConfig) -> Path:
    """Probe every item of the sweep in every condition; writes and returns `<sweep>/probe/probe.jsonl`."""
    sweep: Sweep = load_sweep(sweep_dir)
    items = probe_items(sweep, tuple(cfg.methods))[: cfg.limit]
    out = sweep.dir / PROBE_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        models = Models(cfg, stack)
        work = [(models.for_job(it.job), it, c) for it in items for c in CONDITIONS]
        with ThreadPoolExecutor(max_workers=max(1, cfg.workers)) as pool:
            records = list(pool.map(lambda w: probe_one(*w, cfg), work))
    tmp = out.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tmp.replace(out)
    write_json(out.parent / "probe_config.json", {**dataclasses.asdict(cfg), "items": len(items),
               "calls": sum(m.calls for m in models.models.values())})  # fmt: skip
    return out
