"""The native format, the benchmark registry, the rule judge and re-scoring (`eval.score`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.native_format import NativeFormatError, load_native
from eval.config import BenchmarkConfig, JudgeConfig
from eval.judges import make_judge
from eval.score.records import find_jobs, score_job
from eval.score.rescore import main
from tests.conftest import write_native
from tests.helpers.eval_records import FIXTURES, make_job

NATIVE = FIXTURES / "native"
GUIDE = "# Guide\n\n## Approval\nTrips over 5 days need approval.\n\n## Reimbursement\nHotels up to 600 yuan.\n"


def _job(tmp_path: Path, name: str, task_id: str, **kw) -> Path:
    job = {"job_id": name, "benchmark": "native", "task_id": task_id, "method": "dci", "model": "m", "seed": 0, "config": {"benchmark": {"name": "native", "path": str(NATIVE)}, "judge": {"name": "auto"}}}
    return make_job(tmp_path / name, job=job, **kw)


def test_native_fixture_loads() -> None:
    tasks = {t.id: t for t in load_native(NATIVE)}
    assert [t.kind for t in tasks.values()] == ["rubrics", "checkpoints", "answer"]
    assert tasks["guide"].output == "output/guide.md" and tasks["guide"].rubrics[4].check is None
    assert tasks["orders"].checkpoints[1].points == 2 and tasks["orders"].extra == {"scoring": "bonus_for_completing_final"}
    assert tasks["price"].output == "output/" and tasks["price"].workspace == NATIVE / "workspaces" / "office"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"tasks.jsonl:1:"),
        ({"id": "a", "prompt": "p", "workspace": "nope", "answer": "1"}, "workspace folder .* does not exist"),
        ({"id": "a", "prompt": "p", "workspace": "w"}, "exactly one of 'rubrics', 'checkpoints', 'answer'"),
        ({"id": "a", "prompt": "p", "workspace": "w", "answer": "1", "rubrics": ["x"]}, "exactly one of"),
        ({"id": "a", "prompt": "p", "workspace": "w", "answer": "1", "colour": 1}, r"unknown field\(s\) \['colour'\]"),
        ({"id": "a", "workspace": "w", "answer": "1"}, "field 'prompt' is missing"),
        ({"id": "a", "prompt": "p", "workspace": "w", "rubrics": [{"text": "t", "check": {"type": "nope"}}]}, "rubric 0: unknown check type 'nope'"),
        ({"id": "a", "prompt": "p", "workspace": "w", "checkpoints": [{"text": "t", "points": 0}]}, "'points' must be a positive integer"),
        ({"id": "a", "prompt": "p", "workspace": "..", "answer": "1"}, "must be a folder inside .*workspaces"),
        ({"id": "a", "prompt": "p", "workspace": "../..", "answer": "1"}, "must be a folder inside .*workspaces"),
        ({"id": "a", "prompt": "p", "workspace": ".", "answer": "1"}, "must be a folder inside .*workspaces"),
        ({"id": "a", "prompt": "p", "workspace": "/tmp", "answer": "1"}, "must be a folder inside .*workspaces"),
    ],
)
def test_native_errors_say_what_is_wrong(tmp_path: Path, line, message: str) -> None:
    root = write_native(tmp_path / "b", [], {"w/a.txt": "x"})
    (root / "tasks.jsonl").write_text((line if isinstance(line, str) else json.dumps(line)) + "\n")
    with pytest.raises(NativeFormatError, match=message):
        load_native(root)


def test_every_bad_line_of_a_task_file_is_named_at_once(tmp_path: Path) -> None:
    """Three mistakes in tasks.jsonl are three lines of one error (it named the first alone: one per run)."""
    good = {"id": "a", "prompt": "p", "workspace": "w", "answer": "1"}
    lines = [json.dumps(good), "{bad", json.dumps({**good, "id": "b", "workspace": "nope"}), json.dumps(good),
             json.dumps({**good, "id": "c"})]
    root = write_native(tmp_path / "b", [], {"w/a.txt": "x"})
    (root / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(NativeFormatError) as e:
        load_native(root)
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in e.value.problems] == ["2", "3", "4"], e.value.problems
    assert "duplicate task id 'a' (first on line 1)" in e.value.problems[2] and "nope" in e.value.problems[1]


def test_native_missing_folder_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(NativeFormatError, match="no tasks.jsonl"):
        load_native(tmp_path)
    t = {"id": "a", "prompt": "p", "workspace": "w", "answer": "1"}
    with pytest.raises(NativeFormatError, match="duplicate task id 'a'"):
        load_native(write_native(tmp_path / "d", [t, t], {"w/a.txt": "x"}))


def test_registry_selection_and_errors(tmp_path: Path) -> None:
    bench = load_benchmark(BenchmarkConfig(name="native", path=str(NATIVE)))
    assert bench.default_judge == "rule" and len(bench.tasks()) == 3
    assert [t.id for t in load_benchmark(BenchmarkConfig(name="native", path=str(NATIVE), limit=2)).tasks()] == ["guide", "orders"]
    assert [t.id for t in load_benchmark(BenchmarkConfig(name="native", path=str(NATIVE), ids=["price", "guide"])).tasks()] == ["price", "guide"]
    with pytest.raises(KeyError, match="no task 'zzz'; tasks: guide, orders, price"):
        bench.task("zzz")
    with pytest.raises(BenchmarkError, match="unknown benchmark 'nope'; valid benchmarks: builtin, native"):
        load_benchmark(BenchmarkConfig(name="nope"))
    with pytest.raises(BenchmarkError, match="needs benchmark.path"):
        load_benchmark(BenchmarkConfig(name="native"))
    many = write_native(tmp_path / "many", [{"id": f"t{i}", "prompt": "p", "workspace": "w", "answer": "1"} for i in range(30)], {"w/a": "x"})
    with pytest.raises(KeyError, match=r"t19, … \(30 in all\)"):
        load_benchmark(BenchmarkConfig(name="native", path=str(many))).task("x")


def test_rule_judge_rubrics(tmp_path: Path) -> None:
    task = load_benchmark(BenchmarkConfig(name="native", path=str(NATIVE))).task("guide")
    judge = make_judge(JudgeConfig(name="auto"), "rule")
    good = judge.score(task, make_job(tmp_path / "good", {"output/guide.md": GUIDE}))
    assert [i["passed"] for i in good["items"]] == [True, True, True, True, False]
    assert good["items"][4]["judged"] is False  # no check: the rule judge cannot judge it
    assert good["metrics"] == {"rubric_pass_rate": 1.0, "pass_rate": 0.8, "pass_rate_judged": 1.0, "tcr70": 1.0}  # the unjudged rubric has no row
    bad = judge.score(task, make_job(tmp_path / "bad", {"output/guide.md": "# Guide\n\n## Reimbursement\n## Approval\n5 days"}))
    assert [i["passed"] for i in bad["items"]] == [True, False, True, False, False]
    empty = judge.score(task, make_job(tmp_path / "empty"))
    assert empty["metrics"] == {"rubric_pass_rate": 0.0, "pass_rate": 0.0, "pass_rate_judged": 0.0, "tcr70": 0.0}


def test_rule_judge_checkpoints_use_the_strategy(tmp_path: Path) -> None:
    task = load_benchmark(BenchmarkConfig(name="native", path=str(NATIVE))).task("orders")
    judge = make_judge(JudgeConfig(name="rule"), "rule")
    rows_only = judge.score(task, make_job(tmp_path / "a", {"output/orders.csv": "Name,Value\nCedar Trading,55000\nHarbor Logistics,1200\n"}))
    assert [i["earned"] for i in rows_only["items"]] == [0, 2]
    assert rows_only["final_score"] == {"total": 3, "result": 3}  # bonus_for_completing_final
    assert rows_only["metrics"] == {"success": 1.0, "score": 1.0}
    header_only = judge.score(task, make_job(tmp_path / "b", {"output/orders.csv": "Supplier,Amount\n"}))
    assert header_only["metrics"] == {"success": 0.0, "score": pytest.approx(0.5 * 1 / 3)}


def test_score_job_rebuilds_the_task_and_writes_scores(tmp_path: Path) -> None:
    job = _job(tmp_path, "j1", "price", final_answer="38 + 96 <FINAL_ANSWER>134</FINAL_ANSWER>")
    scores = score_job(job)
    assert scores["metrics"] == {"acc0": 1.0, "acc1": 1.0} and scores["judge"] == "rule" and scores["job_id"] == "j1"
    assert json.loads((job / "scores.json").read_text()) == scores
    assert not [p for p in job.iterdir() if p.name.startswith(".")]  # atomic write left no temp file
    assert score_job(job, JudgeConfig(name="none")) is None


def test_score_cli_rescoring(tmp_path: Path, capsys) -> None:
    _job(tmp_path / "sweep", "j1", "guide", deliverable={"output/guide.md": GUIDE})
    _job(tmp_path / "sweep", "j2", "price", final_answer="<FINAL_ANSWER>135</FINAL_ANSWER>")
    unfinished = _job(tmp_path / "sweep", "j3", "price")
    (unfinished / "result.json").unlink()
    assert len(find_jobs([tmp_path / "sweep"])) == 3
    assert main([str(tmp_path / "sweep"), "--judge", "rule"]) == 0
    out = capsys.readouterr().out
    assert "skip" in out and "unfinished" in out
    assert "aggregate native:" in out and '"pass_rate": 0.8' in out and '"acc0": 0.0' in out and '"rubrics": 5' in out and '"unjudged": 1' in out
    assert (tmp_path / "sweep" / "j1" / "scores.json").is_file()
    bad = _job(tmp_path, "j4", "nope")
    assert main([str(bad)]) == 1
    assert "no task 'nope'" in capsys.readouterr().out
