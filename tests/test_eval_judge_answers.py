"""The judge's answer read as Workspace-Bench's own judge reads it (`evaluation/src/agent_eval.py`):
the first JSON value of the answer, one call, a rubric left out not counted, an answer without a
verdict object failing every rubric. Each form's expected counts are what the benchmark's code
gives (passed over the rows it writes); both denominators are in the task's scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.judges.metrics import aggregate
from runners.core.task import Rubric, Task
from tests.test_eval_helpers import FakeModel, make_job

TASK = Task(id="wb-4", prompt="Write the report.", workspace=Path("/nonexistent"), output="report.md",
            rubrics=tuple(Rubric(f"rubric {i}") for i in range(4)), extra={"output_files": ["report.md"]})


def entries(*passed: object) -> list[dict]:
    return [{"index": i, "passed": p, "confidence": 0.9, "evidence": "e"} for i, p in enumerate(passed)]


def verdict(*passed: object) -> str:
    return json.dumps({"rubrics": entries(*passed)})


ALL = verdict(True, True, True, True)
# (form, answer, passed, judged): judged is the benchmark's denominator (the rows it writes); the
# other denominator is always the task's 4 rubrics.
FORMS = [
    ("the object alone", ALL, 4, 4),
    ("in a json code fence", f"```json\n{ALL}\n```", 4, 4),
    ("prose before and after", f"Here is my verdict:\n{ALL}\nI hope this helps.", 4, 4),
    ("then text holding {1}", f"{ALL}\nEvidence for rubric {{1}} is in the table.", 4, 4),
    ("then a second object", f'{ALL}\n{{"summary": "all met"}}', 4, 4),
    ("a rubric left out", verdict(True, True, True), 3, 3),
    ("[1] before the object", f"[1] {ALL}", 0, 4),
    ("an array of entries", json.dumps(entries(True, True, True, True)), 0, 4),
    ("an entry without passed", json.dumps({"rubrics": [*entries(True, True, True), {"index": 3}]}), 3, 4),
    ("passed not a JSON boolean", verdict(True, "true", 1, True), 2, 4),
    ("no JSON at all", "All four rubrics are met.", 0, 4),
]


def score(tmp_path: Path, answer: str) -> tuple[dict, FakeModel]:
    model = FakeModel(answer)
    judge = make_judge(JudgeConfig(name="llm_rubric", cache_dir=str(tmp_path / "cache")), "llm_rubric", model)
    return judge.score(TASK, make_job(tmp_path / "job", {"report.md": "# Report\n"})), model


@pytest.mark.parametrize(("form", "answer", "passed", "judged"), FORMS, ids=[f[0] for f in FORMS])
def test_answer_forms_score_as_the_benchmark_scores_them(tmp_path: Path, form: str, answer: str, passed: int, judged: int) -> None:
    scores, model = score(tmp_path, answer)
    assert len(model.sent) == 1  # one call, as the benchmark's judge makes
    assert scores["rubric_counts"] == {"rubrics": 4, "judged": judged, "passed": passed}
    metrics = scores["metrics"]
    assert metrics["pass_rate"] == pytest.approx(passed / 4)
    assert metrics["pass_rate_judged"] == pytest.approx(passed / judged)
    assert scores["judge_failures"] == int(form in {"[1] before the object", "an array of entries", "no JSON at all"})
    agg = aggregate([scores])
    assert agg["pass_rate"] == pytest.approx(passed / 4) and agg["pass_rate_judged"] == pytest.approx(passed / judged)


def test_an_answer_without_a_verdict_object_fails_every_rubric_with_its_reason(tmp_path: Path) -> None:
    scores, _ = score(tmp_path, "[1] " + ALL)
    assert [(i["passed"], i["judged"]) for i in scores["items"]] == [(False, True)] * 4
    assert "no verdict object" in scores["items"][0]["reason"] and "array" in scores["items"][0]["reason"]


def test_a_rubric_left_out_is_not_counted_by_the_judge(tmp_path: Path) -> None:
    scores, _ = score(tmp_path, verdict(True, True, True))
    left = scores["items"][3]
    assert (left["passed"], left["judged"], left["reason"]) == (False, False, "the judge's answer has no verdict for this rubric")


def test_entries_the_benchmark_would_count_as_extra_rows_are_ignored(tmp_path: Path) -> None:
    """Where the benchmark's code writes a row for no rubric of the task (an index out of range, a
    second entry for one index), the items stay one per rubric: the first verdict of an index counts."""
    extra = [*entries(True, False, True, True), {"index": 4, "passed": True}, {"index": -1, "passed": True}, {"index": 1, "passed": True}]
    scores, _ = score(tmp_path, json.dumps({"rubrics": extra}))
    assert scores["rubric_counts"] == {"rubrics": 4, "judged": 4, "passed": 3}
    assert [i["passed"] for i in scores["items"]] == [True, False, True, True]


def test_verdict_fields_are_kept_as_the_benchmark_keeps_them(tmp_path: Path) -> None:
    answer = json.dumps({"rubrics": [{"index": 0, "passed": True, "confidence": "high", "evidence": {"file": "x"}},
                                     {"index": 1, "passed": False, "confidence": 1, "evidence": "table row 3"}]})
    items = score(tmp_path, answer)[0]["items"]
    assert (items[0]["confidence"], items[0]["evidence"]) == (None, "")
    assert (items[1]["confidence"], items[1]["evidence"]) == (1.0, "table row 3")
