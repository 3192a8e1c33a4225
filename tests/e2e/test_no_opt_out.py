"""Issue 48: no opt-out. Each attack a failing agent had to take its own 0 out of the tables, run as
a real sweep (scripted model, bubblewrap on) beside an honest job of the same Table 1 row: the
failing job is a result, scored on what it left, and Table 1 counts both (planned, results).

Row 1: TheAgentCompany, a `link.txt` that is not UTF-8 (the evaluator raises on it) and a workspace
file swapped for a folder (the judge's view building raised FileExistsError): unscored before.
Row 2: a production harness SIGKILLed by the agent's own command: `env_error` before (errored, left
out, run again on resume, where it did it again).
(Row 5, an outage that exits non-zero: tests/runners/preflight/test_preflight.py.)
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envs.sandbox import bwrap_problem
from tests.conftest import write_native, write_script

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bwrap_problem() is not None, reason="the attacks run in bubblewrap (CI installs it)")]
REPO = Path(__file__).resolve().parents[2]
PREFIX = os.environ.get("RUNNINGTAB_AGENTS_PREFIX", "")


def _sweep(tmp: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    """The honest and the failing job are two tasks of one Table 1 row (one script per task)."""
    cmd = [sys.executable, "-m", "runners.sweep", "tracker=jsonl", f"out={tmp / 'out'}", "sweep=s", "method=dci",
           "model=scripted", f"model.script_dir={tmp / 'scripts'}", "env.sandbox=bwrap", "model.cache=off", *overrides]
    return subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"},
                          capture_output=True, text=True, timeout=1200)


def _script(path: Path, turns: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_script(path, turns)


def _table1(tmp: Path) -> list[dict[str, Any]]:
    with open(tmp / "out" / "s" / "report" / "table1.csv", newline="") as f:
        return list(csv.DictReader(f))


def _results(tmp: Path) -> dict[str, dict[str, Any]]:
    """Each task's result.json and scores.json."""
    out = {}
    for d in (tmp / "out" / "s").iterdir():
        if (d / "job.json").is_file():
            task = json.loads((d / "job.json").read_text())["task_id"]
            scores = d / "scores.json"
            out[task] = {"result": json.loads((d / "result.json").read_text()),
                         "scores": json.loads(scores.read_text()) if scores.is_file() else None}
    return out


def test_theagentcompany_evaluator_failures_on_what_the_agent_left_are_results(tmp_path: Path) -> None:
    """Three copies of one task, served as the paper preset serves it: `honest` makes the task's
    reference deliverable (3/3), `link` a `link.txt` that is not UTF-8, `swap` the reference with
    `template.md` (which the evaluator reads) swapped for a folder. Before: `link` and `swap` left
    unscored (the swap's view building raised), Table 1's score 100.00 over 1 job; now 3 results, 44.44
    over 3 ((100 + 0 + 33.33) / 3: TheAgentCompany's score is 0.5 · partial + 0.5 · success)."""
    import shutil

    from eval.tac.references import deliverable
    from eval.tac.scripted_agent import _bash, _write, agent_script
    from tests.helpers.http_stub import Reply, StubServer, completion
    from tests.helpers.tac_seven import TASKS, write_export

    task = "hr-new-grad-job-description"
    export = write_export(tmp_path / "export")
    honest = agent_script(deliverable(task, TASKS / task, tmp_path), served=True)
    scripts = {"honest": honest, "link": [_bash(_write("link.txt", b"\xff\xfe http://the-agent-company.com:8092/\n")), {"content": "Done."}],
               "swap": [*honest[:-1], _bash("rm template.md && mkdir template.md && echo x > template.md/part.md"), {"content": "Done."}]}
    for name, turns in scripts.items():
        shutil.copytree(TASKS / task, tmp_path / "tasks" / f"{task}-{name}")
        _script(tmp_path / "scripts" / f"{task}-{name}.jsonl", turns)
    with StubServer(default=Reply(200, completion("yes"))) as judge_model:  # the evaluator's LLM checkpoint asks it
        r = _sweep(tmp_path, "benchmark=agentcompany", f"benchmark.tasks_dir={tmp_path / 'tasks'}", f"benchmark.export_dir={export}",
                   "benchmark.file_server=served", f"judge.model.base_url={judge_model.url}", "judge.model.api_key_env=null",
                   f"judge.cache_dir={tmp_path / 'judge-cache'}")
    assert r.returncode == 0, r.stderr[-4000:]
    jobs = {k.removeprefix(f"{task}-"): v for k, v in _results(tmp_path).items()}
    assert all(j["result"]["stop_reason"] == "finished" and j["scores"] is not None for j in jobs.values()), jobs
    finals = {name: j["scores"]["final_score"] for name, j in jobs.items()}
    assert finals == {"honest": {"total": 3, "result": 3}, "link": {"total": 3, "result": 0}, "swap": {"total": 3, "result": 2}}, finals
    assert "evaluator_failure" not in jobs["honest"]["scores"]
    link = jobs["link"]["scores"]["evaluator_failure"]  # the evaluator raised on the agent's link.txt: its outcome named
    assert (link["outcome"], link["error"], link["agent_files_read"]) == ("raised", "UnicodeDecodeError", ["link.txt"]), link
    # the judge's view has the folder where the agent left it; the evaluator's own grader fails checkpoint 3 on it
    assert "evaluator_failure" not in jobs["swap"]["scores"] and "Is a directory" in jobs["swap"]["scores"]["evaluator_log"]
    (row,) = _table1(tmp_path)
    assert (row["planned"], row["results"], row["errored"], row["unscored"], row["not_started"]) == ("3", "3", "0", "0", "0"), row
    scores = [j["scores"]["metrics"]["score"] for j in jobs.values()]  # TheAgentCompany's: 0.5 · partial + 0.5 · success
    assert sorted(scores) == pytest.approx([0.0, 1 / 3, 1.0]) and float(row["score"]) == pytest.approx(100 * sum(scores) / 3, abs=0.01), row


@pytest.mark.skipif(not (PREFIX and Path(PREFIX, "node_modules/.bin/claude").exists()),
                    reason="RUNNINGTAB_AGENTS_PREFIX does not name an npm prefix with claude and codex (.ci/agents-up.sh)")
@pytest.mark.parametrize("harness", ["claude_code", "codex"])
def test_a_harness_its_agent_kills_is_a_result(tmp_path: Path, harness: str) -> None:
    """Task `honest` answers (100), task `kill` SIGKILLs its harness first. Before: `kill` ended in
    `env_error`, errored, Table 1 100.00 over 1 job, and every resume ran it again; now a result
    (`harness_exit`), 50.00 over 2, and a resume has nothing to run."""
    bench = write_native(tmp_path / "b", [{"id": t, "prompt": "Copy the number.", "workspace": "w", "answer": "3"} for t in ("honest", "kill")],
                         {"w/notes.txt": "3\n"})

    def shell(command: str) -> dict[str, Any]:
        name, key = ("Bash", "command") if harness == "claude_code" else ("exec_command", "cmd")
        return {"tool_calls": [{"name": name, "arguments": {key: command}}]}

    _script(tmp_path / "scripts" / "honest.jsonl", [shell("cat notes.txt"), {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    _script(tmp_path / "scripts" / "kill.jsonl", [shell("kill -9 $(pgrep -f -o 'claude|codex')"), {"content": "no"}])
    overrides = ["benchmark=native", f"benchmark.path={bench}", f"agent.harness={harness}"]
    first = _sweep(tmp_path, *overrides)
    assert first.returncode == 0, first.stderr[-4000:]
    jobs = _results(tmp_path)
    assert (jobs["kill"]["result"]["stop_reason"], jobs["kill"]["result"]["errored"]) == ("harness_exit", False), jobs["kill"]["result"]
    assert jobs["kill"]["scores"]["metrics"]["acc0"] == 0.0 and jobs["honest"]["scores"]["metrics"]["acc0"] == 1.0
    (row,) = _table1(tmp_path)
    assert (row["planned"], row["results"], row["errored"], float(row["acc0"])) == ("2", "2", "0", 50.0), row
    again = _sweep(tmp_path, *overrides)
    assert again.returncode == 0 and "2 already complete, 0 to run" in again.stdout + again.stderr, again.stderr[-3000:]
