"""A rubric judge's answer read the way Workspace-Bench's own judge reads it, and the scores it gives.

The benchmark's judge (`evaluation/src/agent_eval.py`) decodes the first JSON value of the answer:
from the first `{` or `[`, whichever comes first, one value, whatever follows ignored. That value
must be an object with a "rubrics" list. Each entry of that list that is an object with an integer
"index" is a verdict: only a JSON `true` passes, a number is the confidence, a string the evidence.
A rubric that no entry names has no row in the benchmark's results, so its judged denominator
leaves it out. An answer whose first value is anything else (no JSON, a value that does not
decode, an array, an object without that list) has no verdicts, and the benchmark then writes
every rubric of the task as failed: here too they count as judged and failed, and the task's
`judge_failures` is 1.

Two differences, to keep the items one per rubric: an entry whose index names no rubric of the
task is ignored (the benchmark writes a row for it, which would count a rubric that does not
exist), and of two entries for one index the first counts (the benchmark counts both).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from eval.benchmarks.workspace_bench import Extras
from eval.judges.base import scores_doc
from eval.judges.metrics import rubric_metrics
from runners.core.task import Task

LEFT_OUT = "the judge's answer has no verdict for this rubric"
NO_OBJECT = "the judge's answer has no verdict object ({why}); the protocol fails every rubric"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    confidence: float | None
    evidence: str


@dataclass(frozen=True)
class Verdicts:
    """The verdicts by rubric index, or `problem` when the answer has no verdict object."""

    by_index: dict[int, Verdict]
    problem: str | None = None


def first_json_value(text: str) -> Any:
    """The JSON value that starts at the answer's first `{` or `[`; ValueError when there is none."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the answer")
    try:
        return json.JSONDecoder().raw_decode(text, min(starts))[0]
    except json.JSONDecodeError as e:
        raise ValueError(f"the first JSON value does not decode: {e.msg}") from None


def read_answer(text: str, n: int) -> Verdicts:
    """The verdicts in a judge's answer for a task of `n` rubrics (module doc)."""
    try:
        value = first_json_value(text)
    except ValueError as e:
        return Verdicts({}, str(e))
    if not isinstance(value, dict) or not isinstance(value.get("rubrics"), list):
        kind = "an array" if isinstance(value, list) else "an object without a \"rubrics\" list" if isinstance(value, dict) else "a bare value"
        return Verdicts({}, f"its first JSON value is {kind}")
    out: dict[int, Verdict] = {}
    for entry in value["rubrics"]:
        index = entry.get("index") if isinstance(entry, dict) else None
        if isinstance(index, int) and 0 <= index < n and index not in out:  # a JSON true/false is an int, as in the benchmark
            confidence = entry.get("confidence")
            evidence = entry.get("evidence")
            out[int(index)] = Verdict(
                passed=entry.get("passed") is True,
                confidence=float(confidence) if isinstance(confidence, int | float) else None,
                evidence=evidence if isinstance(evidence, str) else "",
            )
    return Verdicts(out)


def rubric_items(task: Task, verdicts: Verdicts) -> list[dict[str, Any]]:
    """One item per rubric of the task, with its verdict or the reason it has none."""
    types = list(task.extra_as(Extras).rubric_types or [])
    items = []
    for i, r in enumerate(task.rubrics):
        item: dict[str, Any] = {"kind": "rubric", "index": i, "text": r.text}
        if i < len(types):
            item["type"] = types[i]  # Workspace-Bench's rubric type, for grouping in analyses
        v = verdicts.by_index.get(i)
        if verdicts.problem is not None:
            item.update(judged=True, passed=False, reason=NO_OBJECT.format(why=verdicts.problem))
        elif v is None:
            item.update(judged=False, passed=False, reason=LEFT_OUT)
        else:
            item.update(judged=True, passed=v.passed, confidence=v.confidence, evidence=v.evidence)
        items.append(item)
    return items


def rubric_scores(judge: str, task: Task, verdicts: Verdicts, **extra: Any) -> dict[str, Any]:
    """The scores.json document: both denominators in the metrics and in `rubric_counts`."""
    items = rubric_items(task, verdicts)
    passed, judged = [it["passed"] for it in items], [it["judged"] for it in items]
    counts = {"rubrics": len(items), "judged": sum(judged), "passed": sum(passed)}
    return scores_doc(judge, task, rubric_metrics(passed, judged), items,
                      judge_failures=int(verdicts.problem is not None), rubric_counts=counts, **extra)
