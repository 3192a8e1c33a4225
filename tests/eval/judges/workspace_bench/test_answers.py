"""The judge's answer read as Workspace-Bench's own judge reads it (`evaluation/src/agent_eval.py`):
the first JSON value of the answer, one call, a rubric left out not counted, an answer without a
verdict object failing every rubric. Each form's expected counts are what the benchmark's code
gives (passed over the rows it writes), which `rubric_pass_rate` must equal; the variants over
every rubric and over the judged rubrics are in the task's scores too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.judges.metrics import aggregate
from runners.core.task import Rubric, Task
from tests.helpers.eval_records import FakeModel, make_job

TASK = Task(id="wb-4", prompt="Write the report.", workspace=Path("/nonexistent"), output="report.md",
            rubrics=tuple(Rubric(f"rubric {i}") for i in range(4)), extra={"output_files": ["report.md"]})


def entries(*passed: object) -> list[dict]:
    return [{"index": i, "passed": p, "confidence": 0.9, "evidence": "e"} for i, p in enumerate(passed)]


def verdict(*passed: object) -> str:
    return json.dumps({"rubrics": entries(*passed)})


ALL = verdict(True, True, True, True)


def with_extra(*extra: dict) -> str:
    return json.dumps({"rubrics": [*entries(True, False, True, True), *extra]})


# (form, answer, passed, judged, rows): passed and judged count the task's 4 rubrics (one verdict
# each); rows is the benchmark's denominator, the rows its code writes, and (passed rows, rows) its
# pass rate: an extra entry that passes adds a passed row.
FORMS = [
    ("the object alone", ALL, 4, 4, (4, 4)),
    ("in a json code fence", f"```json\n{ALL}\n```", 4, 4, (4, 4)),
    ("prose before and after", f"Here is my verdict:\n{ALL}\nI hope this helps.", 4, 4, (4, 4)),
    ("then text holding {1}", f"{ALL}\nEvidence for rubric {{1}} is in the table.", 4, 4, (4, 4)),
    ("then a second object", f'{ALL}\n{{"summary": "all met"}}', 4, 4, (4, 4)),
    ("a rubric left out", verdict(True, True, True), 3, 3, (3, 3)),
    ("[1] before the object", f"[1] {ALL}", 0, 4, (0, 4)),
    ("an array of entries", json.dumps(entries(True, True, True, True)), 0, 4, (0, 4)),
    ("an entry without passed", json.dumps({"rubrics": [*entries(True, True, True), {"index": 3}]}), 3, 4, (3, 4)),
    ("passed not a JSON boolean", verdict(True, "true", 1, True), 2, 4, (2, 4)),
    ("no JSON at all", "All four rubrics are met.", 0, 4, (0, 4)),
    ("an index out of range", with_extra({"index": 4, "passed": True}), 3, 4, (4, 5)),
    ("a negative index", with_extra({"index": -1, "passed": True}), 3, 4, (4, 5)),
    ("a second entry for one index", with_extra({"index": 1, "passed": True}), 3, 4, (4, 5)),
    ("a failing extra entry", with_extra({"index": 9, "passed": False}), 3, 4, (3, 5)),
    ("a string index", json.dumps({"rubrics": [*entries(True, True, True), {"index": "3", "passed": True}]}), 3, 3, (3, 3)),
]


def score(tmp_path: Path, answer: str) -> tuple[dict, FakeModel]:
    model = FakeModel(answer)
    judge = make_judge(JudgeConfig(name="llm_rubric", cache_dir=str(tmp_path / "cache")), "llm_rubric", model)
    return judge.score(TASK, make_job(tmp_path / "job", {"report.md": "# Report\n"})), model


@pytest.mark.parametrize(("form", "answer", "passed", "judged", "rows"), FORMS, ids=[f[0] for f in FORMS])
def test_answer_forms_score_as_the_benchmark_scores_them(
    tmp_path: Path, form: str, answer: str, passed: int, judged: int, rows: tuple[int, int],
) -> None:
    scores, model = score(tmp_path, answer)
    assert len(model.sent) == 1  # one call, as the benchmark's judge makes
    extra, extra_passed = rows[1] - judged, rows[0] - passed
    assert scores["rubric_counts"] == {"rubrics": 4, "judged": judged, "passed": passed, "extra_rows": extra,
                                       "extra_rows_passed": extra_passed, "extra_rows_dropped": 0}
    metrics = scores["metrics"]
    assert metrics["rubric_pass_rate"] == pytest.approx(rows[0] / rows[1])  # the benchmark's own count
    assert metrics["pass_rate"] == pytest.approx(passed / 4)
    assert metrics["pass_rate_judged"] == pytest.approx(passed / judged)
    assert scores["judge_failures"] == int(form in {"[1] before the object", "an array of entries", "no JSON at all"})
    agg = aggregate([scores])
    assert agg["rubric_pass_rate"] == pytest.approx(rows[0] / rows[1])
    assert agg["pass_rate"] == pytest.approx(passed / 4) and agg["pass_rate_judged"] == pytest.approx(passed / judged)


def test_an_empty_rubrics_list_has_no_rows(tmp_path: Path) -> None:
    """The benchmark writes no row (0 of 0): no Rubric Pass Rate for the task, never a zero."""
    scores, _ = score(tmp_path, json.dumps({"rubrics": []}))
    assert "rubric_pass_rate" not in scores["metrics"] and "rubric_pass_rate" not in aggregate([scores])
    assert scores["metrics"]["pass_rate"] == 0.0


def test_an_answer_without_a_verdict_object_fails_every_rubric_with_its_reason(tmp_path: Path) -> None:
    scores, _ = score(tmp_path, "[1] " + ALL)
    assert [(i["passed"], i["judged"]) for i in scores["items"]] == [(False, True)] * 4
    assert "no verdict object" in scores["items"][0]["reason"] and "array" in scores["items"][0]["reason"]


def test_a_rubric_left_out_is_not_counted_by_the_judge(tmp_path: Path) -> None:
    scores, _ = score(tmp_path, verdict(True, True, True))
    left = scores["items"][3]
    assert (left["passed"], left["judged"], left["reason"]) == (False, False, "the judge's answer has no verdict for this rubric")


def test_extra_rows_are_kept_as_data_and_never_move_an_item(tmp_path: Path) -> None:
    """Where the benchmark's code writes a row for no rubric of the task (an index out of range, a
    second entry for one index), the items stay one per rubric (the first verdict of an index
    counts) and the rows are kept in `extra_rows`, for the benchmark's own pass rate only."""
    extra = [*entries(True, False, True, True), {"index": 4, "passed": True}, {"index": -1, "passed": True}, {"index": 1, "passed": True}]
    scores, _ = score(tmp_path, json.dumps({"rubrics": extra}))
    assert [i["passed"] for i in scores["items"]] == [True, False, True, True]
    assert [(r["index"], r["passed"]) for r in scores["extra_rows"]] == [(4, True), (-1, True), (1, True)]
    assert "names no rubric" in scores["extra_rows"][0]["reason"] and "second entry" in scores["extra_rows"][2]["reason"]
    assert scores["metrics"]["pass_rate"] == 0.75 and scores["metrics"]["rubric_pass_rate"] == pytest.approx(6 / 7)


def test_extra_rows_are_bounded(tmp_path: Path) -> None:
    """A judge talked into writing rows without end costs the record at most MAX_EXTRA_ROWS of them;
    the rest are counted, and the task's own items are untouched."""
    from eval.judges.workspace_bench.verdicts import MAX_EXTRA_ROWS

    flood = [{"index": 7, "passed": True}] * (MAX_EXTRA_ROWS + 5)
    scores, _ = score(tmp_path, json.dumps({"rubrics": [*entries(False, False, False, False), *flood]}))
    assert len(scores["extra_rows"]) == MAX_EXTRA_ROWS and scores["rubric_counts"]["extra_rows_dropped"] == 5
    assert scores["metrics"]["pass_rate"] == 0.0 and scores["rubric_counts"]["passed"] == 0


def test_verdict_fields_are_kept_as_the_benchmark_keeps_them(tmp_path: Path) -> None:
    answer = json.dumps({"rubrics": [{"index": 0, "passed": True, "confidence": "high", "evidence": {"file": "x"}},
                                     {"index": 1, "passed": False, "confidence": 1, "evidence": "table row 3"}]})
    items = score(tmp_path, answer)[0]["items"]
    assert (items[0]["confidence"], items[0]["evidence"]) == (None, "")
    assert (items[1]["confidence"], items[1]["evidence"]) == (1.0, "table row 3")
