"""LLM rubric judges: an LLM judges every rubric of a task in one call.

`llm_rubric` (the default for Workspace-Bench) follows the benchmark's own judge: its
instructions (in our words, with its leniency for small file-naming and file-finding mistakes)
and its evidence object (eval/judges/wb_protocol.py: file names, sizes, 2,000-character excerpts
of at most 10 files, rubric types, up to 3 images attached). `llm_rubric_fulltext` is
RunningTab's earlier variant: stricter wording, files as full text up to `judge.max_file_chars`
each and `judge.max_total_chars` in all. Both answer strict JSON
`{"rubrics": [{"index": 0, "passed": true, "confidence": 0.8, "evidence": "…"}]}` from the
evaluator view (tab traces already removed). Only a JSON `true` passes. An answer that cannot be
parsed is retried (`judge.max_retries`) with a correction; if it still cannot be parsed, every
rubric of the task is unjudged (it counts as failed; `rubric_counts` says how many were judged).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from eval.config import JudgeConfig
from eval.extraction import current
from eval.judges import judge_prompts, wb_protocol
from eval.judges.base import JudgeError, scores_doc
from eval.judges.client import judge_llm
from eval.metrics import rubric_metrics
from runners.core.job_record import JobRecord
from runners.core.messages import Model
from runners.core.task import Task


class VerdictError(ValueError):
    """The judge's answer is not the JSON the protocol asks for."""


def parse_verdicts(text: str, n: int) -> dict[int, dict[str, Any]]:
    """Rubric index → verdict entry, from the judge's answer (code fences and chatter tolerated)."""
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        obj = json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise VerdictError("no JSON object in the answer") from None
        try:
            obj = json.loads(body[start : end + 1])
        except json.JSONDecodeError as e:
            raise VerdictError(f"invalid JSON: {e.msg}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("rubrics"), list):
        raise VerdictError('the object has no "rubrics" list')
    out: dict[int, dict[str, Any]] = {}
    for entry in obj["rubrics"]:
        if isinstance(entry, dict) and isinstance(entry.get("index"), int) and not isinstance(entry["index"], bool):
            if 0 <= entry["index"] < n and entry["index"] not in out:
                out[entry["index"]] = entry
    if not out:
        raise VerdictError(f"no entry with a valid index (0..{n - 1})")
    return out


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def trajectory_summary(messages: list[dict[str, Any]], limit: int) -> str:
    """One line per assistant message and tool call, a clipped line per tool result."""
    lines = []
    for m in messages:
        turn = m.get("turn", "?")
        if m.get("role") == "assistant":
            if m.get("content"):
                lines.append(f"[turn {turn}] assistant: {_clip(m['content'], 400)}")
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                lines.append(f"[turn {turn}] {fn.get('name')}: {_clip(fn.get('arguments') or '', 300)}")
        elif m.get("role") == "tool":
            lines.append(f"    -> {'error: ' if m.get('is_error') else ''}{_clip(m.get('content') or '', 200)}")
    text = "\n".join(lines) or "(no trajectory recorded)"
    if len(text) > limit:
        head = limit // 3
        text = text[:head] + "\n[… middle of the trajectory omitted …]\n" + text[-(limit - head) :]
    return text


def deliverable_section(record: JobRecord, expected: list[str], per_file: int, total: int) -> str:
    """The deliverable files as text, expected outputs first, within the character budget."""
    rels = record.deliverable_files()
    if not rels:
        return judge_prompts.NO_FILES
    wanted = [e.strip("/") for e in expected if e.strip("/")]
    rels.sort(key=lambda r: (not any(r == w or r.startswith(w + "/") for w in wanted), r))
    parts, used, files = [], 0, current()
    for rel in rels:
        text = files.get(record.deliverable_dir, rel).shown() or "(no readable text)"
        note = judge_prompts.TRUNCATED.format(n=per_file) if len(text) > per_file else ""
        text = text[:per_file]
        if used + len(text) > total:
            parts.append(judge_prompts.OMITTED.format(path=rel))
            continue
        used += len(text)
        parts.append(judge_prompts.FILE_HEADER.format(path=rel, note=note) + text)
    return "\n\n".join(parts)


class LLMRubricJudge:
    """Workspace-Bench's own judge protocol (module doc)."""

    name = "llm_rubric"

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm = judge_llm(cfg, model)

    def messages(self, task: Task, record: JobRecord) -> list[dict[str, Any]]:
        body, images = wb_protocol.payload(task, record)
        text = judge_prompts.WB_INSTRUCTIONS.format(evidence=json.dumps(body, ensure_ascii=False))
        content: str | list[dict[str, Any]] = text
        if images:
            content = [{"type": "text", "text": text}, *wb_protocol.image_parts(record, images)]
        return [{"role": "system", "content": judge_prompts.WB_SYSTEM}, {"role": "user", "content": content}]

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        if not task.rubrics:
            raise JudgeError(f"task {task.id!r} has no rubrics; the {self.name} judge scores rubric tasks only")
        messages = self.messages(task, JobRecord(job_dir))
        verdicts, error = None, ""
        for _ in range(self.cfg.max_retries + 1):
            answer = self.llm.complete(messages)
            try:
                verdicts = parse_verdicts(answer, len(task.rubrics))
                break
            except VerdictError as e:
                error = str(e)
                messages = messages + [
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": judge_prompts.RUBRIC_RETRY.format(error=error)},
                ]
        items = _items(task, verdicts, error)
        judged = sum(1 for it in items if it["judged"])
        counts = {"rubrics": len(items), "judged": judged, "passed": sum(1 for it in items if it["passed"])}
        return scores_doc(
            self.name, task, rubric_metrics([it["passed"] for it in items]), items,
            judge_failures=int(verdicts is None), rubric_counts=counts,
        )  # fmt: skip


def _items(task: Task, verdicts: dict[int, dict[str, Any]] | None, error: str) -> list[dict[str, Any]]:
    items = []
    types = list(task.extra.get("rubric_types") or [])
    for i, r in enumerate(task.rubrics):
        v = (verdicts or {}).get(i)
        item: dict[str, Any] = {"kind": "rubric", "index": i, "text": r.text, "judged": v is not None, "passed": bool(v and v.get("passed") is True)}
        if i < len(types):
            item["type"] = types[i]  # Workspace-Bench's rubric type, for grouping in analyses
        if v is not None:
            item.update(confidence=v.get("confidence"), evidence=v.get("evidence"))
        else:
            item["reason"] = f"judge answer unparseable: {error}" if verdicts is None else "judge left this rubric out"
        items.append(item)
    return items


class FullTextRubricJudge(LLMRubricJudge):
    """RunningTab's earlier variant (module doc): stricter wording, deliverables as full text."""

    name = "llm_rubric_fulltext"

    def messages(self, task: Task, record: JobRecord) -> list[dict[str, Any]]:
        expected = list(task.extra.get("output_files") or [task.output])
        user = judge_prompts.RUBRIC_USER.format(
            task=task.prompt,
            expected="\n".join(f"- {e}" for e in expected),
            files=deliverable_section(record, expected, self.cfg.max_file_chars, self.cfg.max_total_chars),
            final=_clip(record.final_answer, 4000) or "(none)",
            trajectory=trajectory_summary(record.view.get("messages") or [], self.cfg.max_trajectory_chars),
            rubrics="\n".join(f"{i}. {r.text}" for i, r in enumerate(task.rubrics)),
        )
        return [{"role": "system", "content": judge_prompts.RUBRIC_SYSTEM}, {"role": "user", "content": user}]
