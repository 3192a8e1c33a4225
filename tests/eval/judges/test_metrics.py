"""Metrics against hand-computed values, and the scoring strategies of TheAgentCompany."""

from __future__ import annotations

import pytest

from eval.judges.metrics import (
    aggregate,
    answer_metrics,
    checkpoint_metrics,
    counts,
    rubric_metrics,
)
from eval.judges.rule.judge import checkpoint_final
from eval.tac.compat.scoring import (
    Checkpoint,
    Result,
    bonus_for_completing_any,
    bonus_for_completing_any_of_given_checkpoints,
    bonus_for_completing_final,
)


def _rubric_scores(passed: list[bool], unjudged: int = 0) -> dict:
    items = [{"kind": "rubric", "index": i, "passed": p, "judged": i >= unjudged} for i, p in enumerate(passed)]
    return {"metrics": rubric_metrics(passed), "items": items}


def test_rubric_metrics_threshold() -> None:
    assert rubric_metrics([True, True, False]) == {"rubric_pass_rate": pytest.approx(2 / 3), "pass_rate": pytest.approx(2 / 3), "tcr70": 0.0}
    assert rubric_metrics([True] * 7 + [False] * 3)["tcr70"] == 1.0  # exactly 70%
    assert rubric_metrics([]) == {"pass_rate": 0.0, "tcr70": 0.0}  # no rows: no Rubric Pass Rate, never a zero


def test_rubric_pass_rate_counts_rows_not_rubrics() -> None:
    """Workspace-Bench's own count: unjudged rubrics have no row, extra rows count (tests/eval/judges/test_metrics_site.py)."""
    m = rubric_metrics([True, False, True, False], [True, True, True, False], extra=[True, False])
    assert m["rubric_pass_rate"] == pytest.approx(3 / 5) and m["pass_rate"] == 0.5 and m["pass_rate_judged"] == pytest.approx(2 / 3)


def test_pass_rate_is_pooled_not_averaged() -> None:
    a = _rubric_scores([True, False])  # 1/2, below 70%
    b = _rubric_scores([True] * 9 + [False])  # 9/10, above
    agg = aggregate([a, b])
    assert agg["rubric_pass_rate"] == agg["pass_rate"] == pytest.approx(10 / 12)  # pooled; the mean of task rates would be 0.7
    assert agg["tcr70"] == pytest.approx(0.5)
    assert set(agg) == {"rubric_pass_rate", "pass_rate", "pass_rate_judged", "tcr70"}


def test_unjudged_rubrics_fail_and_are_counted() -> None:
    s = _rubric_scores([False, False, True, True], unjudged=2)
    s["judge_failures"] = 1
    assert aggregate([s])["pass_rate"] == pytest.approx(0.5)  # unjudged as failed
    assert aggregate([s])["pass_rate_judged"] == aggregate([s])["rubric_pass_rate"] == pytest.approx(1.0)  # over the 2 judged rubrics
    s["extra_rows"] = [{"index": 9, "passed": False, "reason": "x"}]
    assert aggregate([s])["rubric_pass_rate"] == pytest.approx(2 / 3) and aggregate([s])["pass_rate_judged"] == 1.0
    assert counts([s, _rubric_scores([True])]) == {"tasks": 2, "rubrics": 5, "unjudged": 2, "extra_rows": 1, "judge_failures": 1}


def test_checkpoint_metrics() -> None:
    assert checkpoint_metrics(3, 4) == {"success": 0.0, "score": pytest.approx(0.375)}
    assert checkpoint_metrics(4, 4) == {"success": 1.0, "score": 1.0}
    assert checkpoint_metrics(0, 5) == {"success": 0.0, "score": 0.0}
    agg = aggregate([{"metrics": checkpoint_metrics(3, 4)}, {"metrics": checkpoint_metrics(4, 4)}, {"metrics": checkpoint_metrics(1, 5)}])
    assert agg == {"success": pytest.approx(1 / 3), "score": pytest.approx((0.375 + 1 + 0.1) / 3)}


def test_answer_metrics() -> None:
    tasks = [{"metrics": answer_metrics({"acc0": a, "acc1": b})} for a, b in [(True, True), (False, True), (False, False), (False, True)]]
    assert aggregate(tasks) == {"acc0": 0.25, "acc1": 0.75}


def test_scoring_strategies() -> None:
    cps = [Checkpoint(1, 0), Checkpoint(2, 1), Checkpoint(2, 2)]
    assert Result(cps).final_score == {"total": 5, "result": 3}
    assert bonus_for_completing_final(cps) == {"total": 5, "result": 5}  # last checkpoint complete
    assert bonus_for_completing_final(cps[:2]) == {"total": 3, "result": 1}
    assert bonus_for_completing_any(cps) == {"total": 5, "result": 4}  # first checkpoint credited
    assert bonus_for_completing_any([Checkpoint(1, 0), Checkpoint(2, 1)]) == {"total": 3, "result": 1}
    assert bonus_for_completing_any_of_given_checkpoints([2])(cps) == {"total": 5, "result": 3}
    assert bonus_for_completing_any_of_given_checkpoints([3])(cps) == {"total": 5, "result": 4}
    assert Result(cps, bonus_for_completing_final).to_dict()["final_score"] == {"total": 5, "result": 5}
    with pytest.raises(ValueError):
        Checkpoint(1, 2)
    items = [{"points": 1, "earned": 0}, {"points": 3, "earned": 3}]
    assert checkpoint_final(items, "sum") == {"total": 4, "result": 3}
    assert checkpoint_final(items, "bonus_for_completing_final") == {"total": 4, "result": 4}
