"""A sweep never runs a job twice because of where its data is or how it is judged (issue 35.2): a
sweep folder moved with its data resumes with nothing to run, and another OfficeQA reward version
re-scores every finished job and runs none."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.record_files import read_json
from tests.conftest import write_script
from tests.helpers.eval_records import SAMPLES

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
TAC = SAMPLES / "theagentcompany"
TAC_TASKS = ("admin-make-spreadsheet", "finance-budget-variance")
OQA_CSV = SAMPLES / "officeqa" / "officeqa_pro_head5.csv"
# right under the newest reward rule (the last tag), wrong under the first release (the first tag)
OQA_ANSWER = "<FINAL_ANSWER>1</FINAL_ANSWER> then <FINAL_ANSWER>2,602</FINAL_ANSWER>"


def sweep(out: Path, script: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "runners.sweep", "grid.method=[dci]", "grid.model=[scripted]", f"model.script={script}",
           "grid.seed=[0]", "tracker=jsonl", f"out={out}", "sweep=s", *overrides]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


def jobs_of(sweep_dir: Path) -> list[Path]:
    return sorted(d for d in sweep_dir.iterdir() if (d / "job.json").is_file())


def tac_overrides(root: Path) -> list[str]:
    return ["grid.benchmark=[agentcompany]", f"benchmark.tasks_dir={root / 'data' / 'tasks'}",
            f"benchmark.export_dir={root / 'data' / 'export'}", f"benchmark.include=[{','.join(TAC_TASKS)}]", "judge=none"]


def test_a_sweep_moved_with_its_data_resumes_with_nothing_to_run(tmp_path: Path) -> None:
    """TheAgentCompany's ids hold no path: another checkout path, machine or mount runs nothing again."""
    first = tmp_path / "first"
    for name in TAC_TASKS:
        shutil.copytree(TAC / name, first / "data" / "tasks" / name)
    (first / "data" / "export" / "Documents" / "Admin").mkdir(parents=True)
    (first / "data" / "export" / "Documents" / "Admin" / "notes.txt").write_text("office notes\n")
    script = write_script(first / "script.jsonl", [{"content": "Done."}])
    ran = sweep(first / "out", script, *tac_overrides(first))
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "0 already complete, 2 to run" in ran.stderr, ran.stderr[-3000:]
    ids = [d.name for d in jobs_of(first / "out" / "s")]
    assert len(ids) == 2

    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(first, moved)
    again = sweep(moved / "out", moved / "script.jsonl", *tac_overrides(moved))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 already complete, 0 to run" in again.stderr, again.stderr[-3000:]
    assert [d.name for d in jobs_of(moved / "out" / "s")] == ids


def test_another_officeqa_reward_rescores_every_job_and_runs_none(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "treasury_bulletin_1941_01.txt").write_text("Receipts, 1941: 2,602\n")
    script = write_script(tmp_path / "script.jsonl", [{"content": OQA_ANSWER}])
    bench = ["grid.benchmark=[officeqa]", f"benchmark.questions={OQA_CSV}", f"benchmark.corpus={corpus}",
             "benchmark.ids=[UID0001,UID0003]"]
    out = tmp_path / "out"
    first = sweep(out, script, *bench)
    assert first.returncode == 0, first.stderr[-3000:]
    jobs = jobs_of(out / "s")
    assert len(jobs) == 2
    ran = {d: (d / "result.json").stat().st_mtime_ns for d in jobs}
    before = {d.name.split("__")[1]: read_json(d / "scores.json") for d in jobs}
    assert before["UID0001"]["reward_version"] == "309dc01" and before["UID0001"]["metrics"]["acc0"] == 1.0

    second = sweep(out, script, *bench, "benchmark.reward=0da20e9")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "2 already complete, 0 to run" in second.stderr and "re-scored 2" in second.stderr, second.stderr[-3000:]
    assert jobs_of(out / "s") == jobs
    assert all((d / "result.json").stat().st_mtime_ns == ran[d] for d in jobs)  # the agent did not run again
    after = {d.name.split("__")[1]: read_json(d / "scores.json") for d in jobs}
    assert {s["reward_version"] for s in after.values()} == {"0da20e9"}
    assert after["UID0001"]["metrics"]["acc0"] == 0.0  # the first release takes the first tag
    assert all(after[t]["judge_key"] != before[t]["judge_key"] for t in after)

    third = sweep(out, script, *bench, "benchmark.reward=0da20e9")  # the same reward again: nothing to do
    assert third.returncode == 0 and "2 already complete, 0 to run" in third.stderr and "re-scored" not in third.stderr, \
        third.stderr[-3000:]
