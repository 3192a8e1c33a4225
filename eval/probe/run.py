"""The recovery probe (paper Figure 4, right): can the same model recover a requirement's masked
values (a) with nothing more, (b) from the tab's review for that requirement plus the entries it
opens with `tab_show`, (c) from the whole read log? The review and `tab_show` are the tab's own
(`tab.recorded.RecordedTab` over the job's record and tab config). Each call goes through the job's
own model config and the judges' cached client (`eval.judges.client.CachedLLM`), so re-running the
probe costs nothing.
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

from envs.safeio import write_json
from eval.judges.client import CachedLLM, model_identity
from eval.probe.items import ProbeItem, probe_items
from eval.probe.probe_texts import text
from eval.report.analyses.figure4 import CONDITIONS, PROBE_FILE
from eval.report.analyses.values import Haystack
from eval.report.load import Job, Sweep, load_sweep
from runners.core.messages import ModelError
from runners.models.call_cache import beside_records
from tab.match import requirement_words
from tab.recorded import RecordedTab

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
                   command=e.get("command", ""), excerpt=e.get("excerpt", "")) for e in _entries(job)]
    full = text("log_header") + "\n\n" + "\n\n".join(blocks)
    if len(full) <= limit:
        return full, False
    return full[:limit] + "\n" + text("log_cut", left=len(full) - limit), True


def recorded_tab(job: Job) -> RecordedTab:
    """The job's tab as its record holds it, under the job's own tab config."""
    if job.tab is None:
        raise ValueError(f"{job.job_id}: no tab record (tab.json) to probe")
    return RecordedTab(job.tab, (job.config.get("method") or {}).get("tab"))


def review_context(item: ProbeItem, cfg: ProbeConfig) -> str:
    """What `tab_review` replies for the masked requirement over the job's final read log (the tab's
    own review and wording, the job's settings), matched on its words without the masks."""
    words = requirement_words(MASK.sub(" ", item.masked))  # the masks' own "1", "2" are no words of it
    review = recorded_tab(item.job).review(item.masked, words)
    return "\n".join([text("review_header"), review, "", text("review_show")])


def ask_with_show(llm: CachedLLM, item: ProbeItem, context: str, cfg: ProbeConfig) -> tuple[str, int, list[str]]:
    """The review condition's exchange, `tab_show` answered by the tab; returns (answer, characters of
    the replies that showed an entry, ids shown)."""
    tab = recorded_tab(item.job)
    messages, tools, opened, chars = _messages(item, context), [tab.show_tool()], [], 0
    for _ in range(cfg.max_show + 2):  # past the limit every call is answered "answer now"
        reply = llm.reply(messages, tools)
        if not reply.tool_calls:
            return reply.content or "", chars, opened
        messages.append(reply.to_message())
        for call in reply.tool_calls:
            try:
                args = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                args = {}
            if len(opened) >= cfg.max_show:
                out = text("show_limit")
            else:
                result, entry = tab.show(args.get("entry_id") if isinstance(args, dict) else None)
                out = result.content
                if entry is not None:
                    opened.append(entry.id)
                    chars += len(out)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
    return "", chars, opened


def probe_one(llm: CachedLLM, item: ProbeItem, condition: str, cfg: ProbeConfig) -> dict[str, Any]:
    j = item.job
    rec: dict[str, Any] = {"job_id": j.job_id, "benchmark": j.benchmark, "task_id": j.task_id, "method": j.method,
                           "model": j.model, "seed": j.seed, "rubric": item.rubric, "condition": condition,
                           "requirement": item.masked, "values": len(item.targets), "error": None}
    try:
        if condition == "none":
            answer, chars = llm.reply(_messages(item, ""), []).content or "", 0
        elif condition == "review":
            context = review_context(item, cfg)
            answer, opened_chars, opened = ask_with_show(llm, item, context, cfg)
            chars, rec["opened"] = len(context) + opened_chars, opened
        else:
            context, cut = read_log_context(j, cfg.max_log_chars)
            answer, chars = llm.reply(_messages(item, context), []).content or "", len(context)
            rec["cut"] = cut
    except ModelError as e:
        log.warning("probe call failed for %s rubric %d (%s): %s", j.job_id, item.rubric, condition, e)
        return {**rec, "error": str(e), "recovered": 0, "context_chars": 0}
    got = parse_answer(answer)
    labels = {lab: {"expected": v.text, "answer": got.get(lab), "recovered": lab in got and Haystack(got[lab]).has(v)}
              for lab, v in item.labels.items() if lab in item.targets}
    return {**rec, "recovered": sum(x["recovered"] for x in labels.values()), "context_chars": chars, "labels": labels, "answer": answer}


class Models:
    """One cached client per distinct model config, servers started once and stopped at the end."""

    def __init__(self, cfg: ProbeConfig, stack: ExitStack, out: Path) -> None:
        """`out`: the folder of the sweeps, beside whose records the answers are cached (`<out>/.cache/probe`)."""
        self.cfg, self.stack = cfg, stack
        self.urls: dict[str, str | None] = {}
        self.models: dict[str, CachedLLM] = {}
        self.cache = beside_records(cfg.cache_dir, out, "probe")

    def for_job(self, job: Job) -> CachedLLM:
        from runners.models import ApiModelConfig, build_model, model_config, served
        from runners.models.registry import seeded

        mc = model_config(job.config.get("model") or {}, recorded=True)
        if not isinstance(mc, ApiModelConfig):
            raise ModelError(f"job {job.job_id}: its model (kind {mc.kind}) is not an API model the probe can ask")
        if self.cfg.base_url:
            mc = dataclasses.replace(mc, base_url=self.cfg.base_url)
        server_key = _key(dataclasses.replace(mc, seed=None))  # one server per model, whatever the seeds
        if server_key not in self.urls:
            self.urls[server_key] = self.stack.enter_context(served(mc))
        mc = seeded(mc, job.seed)  # sampled as the job was
        key = _key(mc)
        if key not in self.models:
            self.models[key] = CachedLLM(build_model(mc, self.urls[server_key]), model_identity(mc), self.cache, serial=False)
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
        models = Models(cfg, stack, sweep.dir.parent)
        work = [(models.for_job(it.job), it, c) for it in items for c in CONDITIONS]
        with ThreadPoolExecutor(max_workers=max(1, cfg.workers)) as pool:
            records = list(pool.map(lambda w: probe_one(*w, cfg), work))
    tmp = out.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tmp.replace(out)
    write_json(out.parent / "probe_config.json", {**dataclasses.asdict(cfg), "items": len(items),
               "calls": sum(m.calls for m in models.models.values())})
    return out
