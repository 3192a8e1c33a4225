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

The items stay one per rubric: of two entries for one index the first is the rubric's verdict,
and an entry whose index names no rubric of the task (negative, or past the last) is no rubric's.
The benchmark writes a row for each such entry too, and its Rubric Pass Rate counts those rows, so
they are kept as data, `extra_rows` of scores.json (at most MAX_EXTRA_ROWS, the rest counted in
`rubric_counts.extra_rows_dropped`): `rubric_pass_rate` counts them as the benchmark does, the
variants `pass_rate` and `pass_rate_judged` never do (eval/judges/metrics.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from eval.benchmarks.workspace_bench import Extras
from eval.judges.base import scores_doc
from eval.judges.metrics import rubric_metrics
from runners.core.task import Task

MAX_EXTRA_ROWS = 1_000
REPEATED = "a second entry for this rubric's index (the benchmark writes a row for each)"
OUT_OF_RANGE = "an index that names no rubric of the task (the benchmark writes a row for it)"
LEFT_OUT = "the judge's answer has no verdict for this rubric"
NO_OBJECT = "the judge's answer has no verdict object ({why}); the protocol fails every rubric"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    confidence: float | None
    evidence: str


@dataclass(frozen=True)
class ExtraRow:
    """An entry the benchmark's judge would write a row for that is no rubric's verdict."""

    index: int
    passed: bool
    reason: str


@dataclass(frozen=True)
class Verdicts:
    """The verdicts by rubric index, or `problem` when the answer has no verdict object; the extra
    rows (at most MAX_EXTRA_ROWS) and how many more there were."""

    by_index: dict[int, Verdict]
    problem: str | None = None
    extra_rows: tuple[ExtraRow, ...] = ()
    extra_rows_dropped: int = 0


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
    extra: list[ExtraRow] = []
    dropped = 0
    for entry in value["rubrics"]:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int):  # a JSON true/false is an int, as in the benchmark
            continue
        passed = entry.get("passed") is True
        if 0 <= index < n and index not in out:
            confidence = entry.get("confidence")
            evidence = entry.get("evidence")
            out[int(index)] = Verdict(
                passed=passed,
                confidence=float(confidence) if isinstance(confidence, int | float) else None,
                evidence=evidence if isinstance(evidence, str) else "",
            )
        elif len(extra) < MAX_EXTRA_ROWS:
            extra.append(ExtraRow(int(index), passed, REPEATED if 0 <= index < n else OUT_OF_RANGE))
        else:
            dropped += 1
    return Verdicts(out, extra_rows=tuple(extra), extra_rows_dropped=dropped)


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
    """The scores.json document: every pass rate in the metrics, the counts behind them in
    `rubric_counts`, and the extra rows the judge wrote."""
    items = rubric_items(task, verdicts)
    passed, judged = [it["passed"] for it in items], [it["judged"] for it in items]
    rows = [{"index": r.index, "passed": r.passed, "reason": r.reason} for r in verdicts.extra_rows]
    counts = {"rubrics": len(items), "judged": sum(judged), "passed": sum(passed), "extra_rows": len(rows),
              "extra_rows_passed": sum(r.passed for r in verdicts.extra_rows), "extra_rows_dropped": verdicts.extra_rows_dropped}
    metrics = rubric_metrics(passed, judged, [r.passed for r in verdicts.extra_rows])
    return scores_doc(judge, task, metrics, items, extra_rows=rows,
                      judge_failures=int(verdicts.problem is not None), rubric_counts=counts, **extra)
