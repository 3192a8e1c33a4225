"""The rule judge: native checks for rubrics and checkpoints, the OfficeQA rule for answers.

No LLM: a rubric or checkpoint without a `check` cannot be judged here and counts as failed
(`judged: false`), so that the report can say how many there were.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.judges.base import JudgeError, scores_doc
from eval.judges.metrics import answer_metrics, checkpoint_metrics, rubric_metrics
from eval.judges.officeqa_reward import (
    DEFAULT,
    TOLERANCES,
    extract_final_answer,
    score_answer,
    version,
)
from eval.judges.rule.check_kinds import Context, run_check
from eval.judges.rule.final_files import FinalFiles
from eval.tac.compat.scoring import STRATEGIES
from eval.tac.compat.scoring import Checkpoint as TacCheckpoint
from runners.core.job_record import JobRecord
from runners.core.task import Task
from runners.core.task_extras import IdPart, TaskExtras, extra_field

UNJUDGED = "no check: the rule judge cannot judge this item"


@dataclass(frozen=True)
class RuleExtras(TaskExtras):
    """What the rule judge reads of any task's extras: the checkpoints' scoring strategy (a native
    task's `extra.scoring`) and, for an answer, the OfficeQA reward version (`benchmark.reward`)."""

    scoring: str = extra_field(IdPart.VALUE, default="sum")
    reward: str = extra_field(IdPart.JUDGING, default=DEFAULT)


class RuleJudge:
    name = "rule"

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        record = JobRecord(job_dir)
        if task.kind == "answer":
            return score_answer_task(self.name, task, record)
        ctx = Context(FinalFiles(task, record), task.output, record.final_answer)
        if task.kind == "rubrics":
            items = [_judge_item(ctx, "rubric", i, r.text, r.check) for i, r in enumerate(task.rubrics)]
            return scores_doc(self.name, task, rubric_metrics([it["passed"] for it in items], [it["judged"] for it in items]), items)
        if task.kind == "checkpoints":
            items = []
            for i, c in enumerate(task.checkpoints):
                item = _judge_item(ctx, "checkpoint", i, c.text, c.check)
                items.append({**item, "points": c.points, "earned": c.points if item["passed"] else 0})
            final = checkpoint_final(items, task.extra_as(RuleExtras).scoring)
            return scores_doc(self.name, task, checkpoint_metrics(final["result"], final["total"]), items, final_score=final)
        raise JudgeError(f"task {task.id!r} has no rubrics, checkpoints or answer to score")


def _judge_item(ctx: Context, kind: str, index: int, text: str, check: dict[str, Any] | None) -> dict[str, Any]:
    if check is None:
        return {"kind": kind, "index": index, "text": text, "passed": False, "judged": False, "reason": UNJUDGED}
    out = run_check(ctx, check)
    return {"kind": kind, "index": index, "text": text, "passed": out.passed, "judged": True, "reason": out.reason, "check": check}


def checkpoint_final(items: list[dict[str, Any]], strategy: str) -> dict[str, int]:
    """Combine checkpoint items with a TheAgentCompany scoring strategy by name."""
    if strategy not in STRATEGIES:
        raise JudgeError(f"unknown checkpoint scoring {strategy!r}; valid: {', '.join(STRATEGIES)}")
    return STRATEGIES[strategy]([TacCheckpoint(it["points"], it["earned"]) for it in items])


def score_answer_task(judge: str, task: Task, record: JobRecord) -> dict[str, Any]:
    """Acc@0% and Acc@1% for an answer task, by the OfficeQA reward version the task names
    (`benchmark.reward`; the newest for answer tasks of other benchmarks)."""
    if task.answer is None:
        raise JudgeError(f"task {task.id!r} has no answer; the {judge} judge scores answer tasks only")
    rule = version(task.extra_as(RuleExtras).reward)
    pred = extract_final_answer(record.final_answer, rule.name)
    verdicts = {name: score_answer(task.answer, pred, tol, rule.name) for name, tol in TOLERANCES.items()}
    item = {
        "kind": "answer", "index": 0, "text": task.prompt[:500], "expected": task.answer, "predicted": pred,
        "passed": verdicts["acc0"][0], **{f"{n}_reason": v[1] for n, v in verdicts.items()},
        **{n: v[0] for n, v in verdicts.items()},
    }
    metrics = answer_metrics({n: v[0] for n, v in verdicts.items()})
    return scores_doc(judge, task, metrics, [item], rule=rule.label, reward_version=rule.name)


class OfficeQAJudge:
    """OfficeQA Pro's reward at 0% and 1% tolerance (answer tasks only)."""

    name = "officeqa"

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        return score_answer_task(self.name, task, JobRecord(job_dir))
