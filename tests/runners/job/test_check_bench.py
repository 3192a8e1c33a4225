"""Issue 50 (6): `runningtab check-bench DIR` on a benchmark that mixes rubric, checkpoint and answer
tasks: the reference solutions reach full marks, an empty and a stuffing deliverable do not, and a
task that fails a check is named with why (before, `bench.bench_stuffing --native` died with
KeyError 'acc1' on such a benchmark)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runners.job.baselines import full_marks, summary
from runners.job.check_bench import main
from tests.helpers.eval_records import FIXTURES

REPO = Path(__file__).resolve().parents[3]
GUIDE = "printf '# Approval\\nTrips over 5 days need approval.\\n\\n# Reimbursement\\nHotels up to 600 yuan a night.\\n' > output/guide.md"
ORDERS = "printf 'Supplier,Amount\\nCedar Trading,55000\\nHarbor Logistics,1200\\n' > output/orders.csv"


def bash(command: str) -> dict:
    return {"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": f"mkdir -p output && {command}"}}]}


def write_bench(root: Path, answer: str = "134", guard_guide: bool = True) -> Path:
    """The native fixture (a rubric, a checkpoint and an answer task) with reference solutions; the
    guide's unjudgeable rubric left out, and (`guard_guide`) an `absent` check the stuffer fails."""
    shutil.copytree(FIXTURES / "native", root)
    tasks = [json.loads(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
    tasks[0]["rubrics"] = [r for r in tasks[0]["rubrics"] if "check" in r]
    if guard_guide:
        tasks[0]["rubrics"].append({"text": "Does not copy the policy's title.", "check": {"type": "absent", "values": ["Travel Policy"]}})
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    done = {"content": "Done."}
    final = {"content": f"<FINAL_ANSWER>{answer}</FINAL_ANSWER>"}
    solutions = {"guide": [bash(GUIDE), done, done], "orders": [bash(ORDERS), done, done], "price": [final, final]}
    (root / "solutions").mkdir()
    for task, turns in solutions.items():
        (root / "solutions" / f"{task}.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    return root


def scores(kind: str, **fields) -> dict:
    return {"kind": kind, **fields}


def test_the_summary_takes_every_kind_of_task() -> None:
    """Before: one dict for one kind, KeyError 'acc1' when rubric and checkpoint tasks were mixed."""
    mixed = [
        scores("rubrics", items=[{"kind": "rubric", "passed": True}, {"kind": "rubric", "passed": False}], metrics={"tcr70": 0.0}),
        scores("checkpoints", items=[{"kind": "checkpoint", "earned": 1, "points": 3}], metrics={"success": 0.0}, final_score={"total": 3, "result": 1}),
        scores("answer", items=[{"kind": "answer"}], metrics={"acc0": 1.0, "acc1": 1.0}),
    ]
    got = summary(mixed)
    assert got["rubrics"] == {"passed": 1, "total": 2, "rate": 0.5, "tasks_ok": 0, "tasks": 1}
    assert got["checkpoints"]["passed"] == 1 and got["checkpoints"]["total"] == 3
    assert got["answer"]["tasks_ok"] == 1
    assert [full_marks(s) for s in mixed] == [False, False, True]


@pytest.mark.slow
def test_a_mixed_benchmark_passes_its_checks(tmp_path: Path, capsys) -> None:
    bench = write_bench(tmp_path / "my_bench")
    assert main([str(bench)]) == 0
    out = capsys.readouterr().out
    for task, kind in (("guide", "rubrics"), ("orders", "checkpoints"), ("price", "answer")):
        assert f"ok    {task}  [{kind}]  reference 100%  empty 0%" in out, out
    for baseline in ("reference", "empty", "stuffing"):
        assert all(f"{baseline:<10} {kind:<11} pass" in out for kind in ("rubrics", "checkpoints", "answer")), out
    assert "3 of 3 task(s) pass the checks" in out


@pytest.mark.slow
def test_what_fails_is_named(tmp_path: Path, capsys) -> None:
    """A rubric task whose checks only ask for presence (the stuffer passes it), and a reference
    solution that answers wrongly: each named, and the command exits 1."""
    bench = write_bench(tmp_path / "weak", answer="150", guard_guide=False)
    assert main([str(bench), "--task", "guide", "--task", "price"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  guide  [rubrics]" in out and "a stuffing deliverable reaches full marks: its checks only ask for presence" in out, out
    assert "FAIL  price  [answer]" in out and "its reference solution misses full marks (answer 1:" in out, out
    assert "0 of 2 task(s) pass the checks; 2 fail" in out
    assert main([str(tmp_path / "nothing")]) == 2
    assert "no tasks.jsonl" in capsys.readouterr().err


def test_the_verb_from_another_folder(tmp_path: Path) -> None:
    """`runningtab check-bench` is registered, and a relative folder is taken from where it runs."""
    (tmp_path / "elsewhere").mkdir()
    r = subprocess.run([sys.executable, "-m", "runners", "check-bench", "no_such_bench"], cwd=tmp_path / "elsewhere",
                       capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2 and f"{tmp_path / 'elsewhere' / 'no_such_bench'}" in r.stderr, r.stderr
