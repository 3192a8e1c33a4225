"""Per-task metrics (written into each job's scores.json) and their aggregation over tasks.

Metric names and meanings (each a number in [0, 1]):
  pass_rate  rubric share; over tasks it is *pooled* over all rubrics (not a mean of task rates),
             a rubric the judge never judged counting as failed ("unjudged as failed": the
             paper's denominator, 1,850 instances over Workspace-Bench-Lite's 100 tasks)
  pass_rate_judged  the same share over judged rubrics only ("over judged"): per task from the
             LLM rubric judges (Workspace-Bench's own judge counts a task's rubrics that way), pooled
             over tasks for every judge, which is how the benchmark's site pools in some settings;
             reported beside pass_rate, never instead
  tcr70      1 if a task passes at least 70% of its rubrics; over tasks, the share of such tasks
  success    1 if a checkpoint task's final result equals its total; over tasks, the mean
  score      0.5 * result / total + 0.5 * success (TheAgentCompany); over tasks, the mean
  acc0/acc1  answer correct at 0% / 1% relative tolerance; over tasks, the mean
`counts()` says how many rubrics there were and how many were judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

TCR_THRESHOLD = 0.7
METRICS = ("pass_rate", "tcr70", "success", "score", "acc0", "acc1")


def rubric_metrics(passed: list[bool], judged: list[bool] | None = None) -> dict[str, float]:
    """Pass rate and TCR@70 over all rubrics; with `judged` (one flag per rubric), also the pass rate
    over the judged ones when there are any."""
    share = sum(passed) / len(passed) if passed else 0.0
    out = {"pass_rate": share, "tcr70": 1.0 if passed and share >= TCR_THRESHOLD - 1e-12 else 0.0}
    if judged is not None and any(judged):
        out["pass_rate_judged"] = sum(p for p, j in zip(passed, judged, strict=True) if j) / sum(judged)
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


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(scores_list: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Benchmark-level metrics over the scores of many jobs (only the metrics that occur)."""
    scores_list = list(scores_list)
    out: dict[str, float] = {}
    rubrics = [i for s in scores_list for i in _rubric_items(s)]
    if rubrics:
        passed = sum(1 for i in rubrics if i.get("passed") is True)
        judged = sum(1 for i in rubrics if i.get("judged", True))
        out["pass_rate"] = passed / len(rubrics)
        if judged:
            out["pass_rate_judged"] = passed / judged
    per_task: Callable[[str], list[float]] = lambda m: [s["metrics"][m] for s in scores_list if m in s.get("metrics", {})]  # noqa: E731
    for name in METRICS[1:]:
        mean = _mean(per_task(name))
        if mean is not None:
            out[name] = mean
    return out


def counts(scores_list: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many tasks, rubrics, unjudged rubrics and failed judge calls the aggregate covers."""
    scores_list = list(scores_list)
    rubrics = [i for s in scores_list for i in _rubric_items(s)]
    return {
        "tasks": len(scores_list),
        "rubrics": len(rubrics),
        "unjudged": sum(1 for i in rubrics if not i.get("judged", True)),
        "judge_failures": sum(int(s.get("judge_failures", 0)) for s in scores_list),
    }
