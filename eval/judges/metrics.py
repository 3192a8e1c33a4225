"""Per-task metrics (written into each job's scores.json) and their aggregation over tasks.

Metric names and meanings (each a number in [0, 1]):
  rubric_pass_rate  Workspace-Bench's Rubric Pass Rate, as the benchmark computes it: passed rows
             over the rows its judge wrote, pooled over tasks (not a mean of task rates). A row is
             a judged rubric, or an extra row the judge wrote for a repeated or out-of-range index
             (`extra_rows` of scores.json); a rubric the judge left out has no row. This is the
             number the benchmark's site publishes (docs/benchmarks.md, "Metrics").
  pass_rate  variant: passed rubrics over every rubric of the task, a rubric the judge never judged
             counting as failed ("unjudged as failed"), extra rows ignored; pooled over tasks
  pass_rate_judged  variant: passed rubrics over the judged rubrics, one per rubric (extra rows
             ignored); per task from the LLM rubric judges, pooled over tasks for every judge
  tcr70      1 if a task passes at least 70% of its rubrics; over tasks, the share of such tasks
  success    1 if a checkpoint task's final result equals its total; over tasks, the mean
  score      0.5 * result / total + 0.5 * success (TheAgentCompany); over tasks, the mean
  acc0/acc1  answer correct at 0% / 1% relative tolerance; over tasks, the mean
`counts()` says how many rubrics there were, how many were judged and how many extra rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TCR_THRESHOLD = 0.7
METRICS = ("rubric_pass_rate", "tcr70", "success", "score", "acc0", "acc1")  # the headline metrics, in table order
RUBRIC_VARIANTS = ("pass_rate", "pass_rate_judged")  # the other pass rates, reported beside the headline
_PER_TASK = METRICS[1:]  # metrics whose aggregate is the mean of the per-task values


def rubric_metrics(passed: list[bool], judged: list[bool] | None = None, extra: list[bool] | None = None) -> dict[str, float]:
    """A task's pass rates and TCR@70. `judged`: one flag per rubric (all judged when None); `extra`:
    whether each extra row the judge wrote passed. The Rubric Pass Rate is absent when the judge
    wrote no row (nothing to divide by); the judged rate is given with `judged`, when some rubric was."""
    flags = judged if judged is not None else [True] * len(passed)
    extra = extra or []
    share = sum(passed) / len(passed) if passed else 0.0
    out = {"pass_rate": share, "tcr70": 1.0 if passed and share >= TCR_THRESHOLD - 1e-12 else 0.0}
    n_judged, passed_judged = sum(flags), sum(p for p, j in zip(passed, flags, strict=True) if j)
    if n_judged + len(extra):
        out["rubric_pass_rate"] = (passed_judged + sum(extra)) / (n_judged + len(extra))
    if judged is not None and n_judged:
        out["pass_rate_judged"] = passed_judged / n_judged
    return out


def checkpoint_metrics(result: float, total: float) -> dict[str, float]:
    """Success and Score from a final (result, total) — the scoring strategy's, not the raw sum."""
    if total <= 0:
        return {"success": 0.0, "score": 0.0}
    success = 1.0 if result >= total else 0.0
    return {"success": success, "score": 0.5 * min(result, total) / total + 0.5 * success}


def answer_metrics(correct: dict[str, bool]) -> dict[str, float]:
    return {name: 1.0 if ok else 0.0 for name, ok in correct.items()}


def _rubric_items(scores: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in scores.get("items", []) if i.get("kind") == "rubric"]


def _extra_rows(scores: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in scores.get("extra_rows") or [] if isinstance(r, dict)]


def rubric_parts(scores: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """One job's (passed, denominator) for each pass rate; sums over jobs give the pooled rates."""
    rubrics = _rubric_items(scores)
    if not rubrics:
        return {}
    passed = [i.get("passed") is True for i in rubrics]
    judged = [bool(i.get("judged", True)) for i in rubrics]
    extra = sum(1 for r in _extra_rows(scores) if r.get("passed") is True)
    passed_judged = sum(p for p, j in zip(passed, judged, strict=True) if j)
    return {"rubric_pass_rate": (float(passed_judged + extra), float(sum(judged) + len(_extra_rows(scores)))),
            "pass_rate": (float(sum(passed)), float(len(rubrics))),
            "pass_rate_judged": (float(passed_judged), float(sum(judged)))}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(scores_list: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Benchmark-level metrics over the scores of many jobs (only the metrics that occur): the pass
    rates pooled over rubrics (or rows), the others the mean of the per-task values."""
    scores_list = list(scores_list)
    out: dict[str, float] = {}
    sums: dict[str, list[float]] = {}
    for s in scores_list:
        for name, (num, den) in rubric_parts(s).items():
            acc = sums.setdefault(name, [0.0, 0.0])
            acc[0], acc[1] = acc[0] + num, acc[1] + den
    for name in ("rubric_pass_rate", *RUBRIC_VARIANTS):
        if name in sums and sums[name][1]:
            out[name] = sums[name][0] / sums[name][1]
    for name in _PER_TASK:
        mean = _mean([s["metrics"][name] for s in scores_list if name in s.get("metrics", {})])
        if mean is not None:
            out[name] = mean
    return out


def counts(scores_list: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many tasks, rubrics, unjudged rubrics, extra rows (repeated or out-of-range indices the
    judge wrote) and failed judge calls the aggregate covers."""
    scores_list = list(scores_list)
    rubrics = [i for s in scores_list for i in _rubric_items(s)]
    return {
        "tasks": len(scores_list),
        "rubrics": len(rubrics),
        "unjudged": sum(1 for i in rubrics if not i.get("judged", True)),
        "extra_rows": sum(len(_extra_rows(s)) for s in scores_list),
        "judge_failures": sum(int(s.get("judge_failures", 0)) for s in scores_list),
    }
