"""LLM rubric judges: an LLM judges every rubric of a task in one call.

`llm_rubric` (the default for Workspace-Bench) follows the benchmark's own judge: its
instructions (in our words, with its leniency for small file-naming and file-finding mistakes),
its evidence object (eval/judges/workspace_bench/protocol.py) and its reading of the answer
(eval/judges/workspace_bench/verdicts.py), in one call: the benchmark's judge does not ask again when the answer
cannot be read. `llm_rubric_fulltext` is RunningTab's earlier variant: stricter wording, files as
full text up to `judge.max_file_chars` each and `judge.max_total_chars` in all, and an unreadable
answer asked again up to `judge.max_retries` times with a correction. Both read the evaluator view
(tab traces already removed). What the agent wrote reaches the model only inside the fence of
eval/judges/untrusted.py, and the system message says it is data (issue 25, item 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.config import JudgeConfig
from eval.judges.base import JudgeError
from eval.judges.client import CachedLLM, judge_llm
from eval.judges.extract.session import current
from eval.judges.untrusted import fence
from eval.judges.workspace_bench import judge_texts, protocol
from eval.judges.workspace_bench.verdicts import Verdicts, read_answer, rubric_scores
from runners.core.job_record import JobRecord
from runners.core.messages import Model
from runners.core.task import Task


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


def deliverable_files(record: JobRecord, expected: list[str], per_file: int, total: int) -> list[dict[str, Any]]:
    """The deliverable files as text, expected outputs first, within the character budget."""
    out, used, files = [], 0, current()
    for rel in protocol.ordered_outputs(record.deliverable_files(), expected):
        text = files.get(record.deliverable_dir, rel).shown() or "(no readable text)"
        entry: dict[str, Any] = {"path": protocol.shown(rel)}
        if used + min(len(text), per_file) > total:
            out.append({**entry, "note": judge_texts.OMITTED})
            continue
        if len(text) > per_file:
            entry["note"] = judge_texts.TRUNCATED.format(n=per_file)
        used += min(len(text), per_file)
        out.append({**entry, "text": text[:per_file]})
    return out


def ask(
    llm: CachedLLM, messages: list[dict[str, Any]], n: int, retries: int,
    tools: list[dict[str, Any]] | None = None, answer: str | None = None,
) -> Verdicts:
    """The verdicts in the model's answer to `messages` (or in `answer`, an answer it already gave);
    an answer without a verdict object is asked again, with the answer and a correction appended, up
    to `retries` times. `tools`: the tools the conversation used, offered again so that it stays valid."""
    if answer is None:
        answer = llm.reply(messages, tools or []).content or ""
    verdicts = read_answer(answer, n)
    for _ in range(retries):
        if verdicts.problem is None:
            break
        messages = [*messages, {"role": "assistant", "content": answer},
                    {"role": "user", "content": judge_texts.RUBRIC_RETRY.format(error=verdicts.problem)}]
        answer = llm.reply(messages, tools or []).content or ""
        verdicts = read_answer(answer, n)
    return verdicts


class LLMRubricJudge:
    """Workspace-Bench's own judge protocol (module doc)."""

    name = "llm_rubric"
    retries = False  # the benchmark's judge makes one call

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm = judge_llm(cfg, model)

    def messages(self, task: Task, record: JobRecord) -> list[dict[str, Any]]:
        body = protocol.payload(task, record)
        fenced = fence(body)
        text = judge_texts.WB_INSTRUCTIONS.format(start=fenced.start, end=fenced.end, fenced=fenced.text)
        images = protocol.image_parts(body)
        content: str | list[dict[str, Any]] = [{"type": "text", "text": text}, *images] if images else text
        system = f"{judge_texts.WB_SYSTEM} {judge_texts.UNTRUSTED_NOTE}"
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        if not task.rubrics:
            raise JudgeError(f"task {task.id!r} has no rubrics; the {self.name} judge scores rubric tasks only")
        messages = self.messages(task, JobRecord(job_dir))
        verdicts = ask(self.llm, messages, len(task.rubrics), self.cfg.max_retries if self.retries else 0)
        return rubric_scores(self.name, task, verdicts)


class FullTextRubricJudge(LLMRubricJudge):
    """RunningTab's earlier variant (module doc): stricter wording, deliverables as full text."""

    name = "llm_rubric_fulltext"
    retries = True

    def messages(self, task: Task, record: JobRecord) -> list[dict[str, Any]]:
        expected = protocol.expected_outputs(task)
        agent_text = {
            "files": deliverable_files(record, expected, self.cfg.max_file_chars, self.cfg.max_total_chars),
            "final_message": _clip(record.final_answer, 4000),
            "trajectory": trajectory_summary(record.view.get("messages") or [], self.cfg.max_trajectory_chars),
        }
        fenced = fence(agent_text)
        user = judge_texts.RUBRIC_USER.format(
            task=task.prompt,
            expected="\n".join(f"- {e}" for e in expected),
            rubrics="\n".join(f"{i}. {' '.join(r.text.split())}" for i, r in enumerate(task.rubrics)),
            start=fenced.start, end=fenced.end, fenced=fenced.text,
        )
        system = f"{judge_texts.RUBRIC_SYSTEM} {judge_texts.UNTRUSTED_NOTE}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
