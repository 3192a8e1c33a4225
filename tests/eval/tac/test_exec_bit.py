"""Issue 41 (3): what the agent made executable stays executable in its record, so a TheAgentCompany
evaluator can run it (sde-run-rising-wave-locally runs `/workspace/risingwave`); never setuid,
setgid or writable by others."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from eval.score.records import score_job
from runners.core.job_record import JobRecord
from tests.conftest import compose_root, write_script
from tests.helpers.eval_records import FIXTURES

TAC = FIXTURES / "agentcompany"
RUNS_THE_TOOL = """# ruff: noqa  (a TheAgentCompany-style evaluator, as sde-run-rising-wave-locally's)
import shutil
import subprocess
from scoring import Result, Checkpoint
from common import grader


@grader
def grade_checkpoint1():
    if not shutil.which("/workspace/tool"):
        return False
    return subprocess.run(["/workspace/tool"], capture_output=True, text=True, timeout=10).stdout.strip() == "tool ran"


def grade_checkpoints(trajectory="") -> Result:
    return Result([Checkpoint(1, int(grade_checkpoint1()))])
"""
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agent's and the evaluator's sandboxes need bubblewrap")


def test_an_evaluator_runs_the_script_the_agent_made_executable(tmp_path: Path) -> None:
    from runners.job.identity import job_id
    from runners.job.run import run_job

    tasks = tmp_path / "tasks"
    shutil.copytree(TAC / "tasks" / "fs-drinks-count", tasks / "fs-run-tool")
    (tasks / "fs-run-tool" / "evaluator.py").write_text(RUNS_THE_TOOL)
    command = "printf '#!/bin/sh\\necho tool ran\\n' > tool && chmod 6777 tool && ./tool"
    script = write_script(tmp_path / "turns.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                                                     {"content": "Done."}])
    cfg = compose_root(["benchmark=agentcompany", f"benchmark.tasks_dir={tasks}", f"benchmark.export_dir={TAC / 'export'}",
                        "method=dci", "model=scripted", f"model.script={script}", f"judge.cache_dir={tmp_path / 'cache'}",
                        "env.sandbox=bwrap"])
    task = load_benchmark(cfg.benchmark).task("fs-run-tool")
    jid = job_id(cfg, task.id)
    result = run_job(cfg, task, tmp_path / jid, jid)
    assert result.stop_reason == "finished", result.error
    assert "tool ran" in JobRecord(tmp_path / jid).trajectory()[3]["content"]
    mode = (tmp_path / jid / "deliverable" / "tool").stat().st_mode & 0o7777
    assert mode & 0o100 and not mode & 0o7002, oct(mode)  # before: 0o644; never setuid, setgid, sticky or others-write
    scores = score_job(tmp_path / jid, cfg.judge, task=task)
    assert scores["final_score"] == {"total": 1, "result": 1}, scores["evaluator_log"]  # before: 0 ("not found in PATH")
