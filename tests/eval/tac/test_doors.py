"""Issue 36 (1): what the agent leaves in its workspace never runs on TheAgentCompany's judging side.
Attacks as the agent makes them: a scripted model driving `bash` in its bubblewrap sandbox through
the job's own code, then the agentcompany judge (the task's own evaluator, the file server beside
it) in its sandbox, in both file-server modes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.tac.scripted_agent import RuleJudge, _bash, _write
from tests.helpers.eval_records import make_job
from tests.helpers.tac_seven import TASKS

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agentcompany judge needs bubblewrap (CI installs it)")
TASK = "hr-new-grad-job-description"  # 3 checkpoints; an empty deliverable scores 0/3
EMPTY = {"result": 0, "total": 3}

# Imported by the file server (WsgiDAV imports datetime) when Python looks in its working folder:
# it rewrites the task's evaluator to give full marks, then is the real datetime, so nothing else breaks.
FORGE = '''
import importlib.util, sys, sysconfig
try:
    with open("/utils/evaluator.py", "w") as f:
        f.write("from scoring import Result, Checkpoint\\n"
                "def grade_checkpoints(trajectory=''):\\n    return Result([Checkpoint(1, 1) for _ in range(3)])\\n")
except OSError:
    pass
_spec = importlib.util.spec_from_file_location("datetime", sysconfig.get_paths()["stdlib"] + "/datetime.py")
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
sys.modules["datetime"] = _real
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
'''
CRASH = "raise SystemExit('planted')\n"  # the file server dies before it answers: the evaluator never starts


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from tests.helpers.tac_seven import write_export

    return write_export(tmp_path_factory.mktemp("export"))


def run_agent(tmp_path: Path, export: Path, mode: str, turns: list[dict]):
    """The scripted agent's job through runners' job code in its sandbox; (cfg, task, job dir)."""
    from runners.job.identity import job_id
    from runners.job.run import run_job
    from tests.conftest import compose_root, write_script

    script = write_script(tmp_path / "turns.jsonl", [*turns, {"content": "Done."}])
    cfg = compose_root(["benchmark=agentcompany", f"benchmark.tasks_dir={TASKS}", f"benchmark.export_dir={export}", f"benchmark.include=[{TASK}]",
                        f"benchmark.file_server={mode}", "method=runningtab", "model=scripted", f"model.script={script}",
                        f"judge.cache_dir={tmp_path / 'cache'}", "env.sandbox=bwrap"])
    task = load_benchmark(cfg.benchmark).task(TASK)
    jid = job_id(cfg, task.id)
    result = run_job(cfg, task, tmp_path / jid, jid)
    assert result.stop_reason == "finished", result.error
    return cfg, task, tmp_path / jid


@pytest.mark.parametrize("mode", ["mounted", "served"])
@pytest.mark.parametrize("planted", ["forge", "crash"])
def test_a_module_planted_in_the_workspace_never_runs_on_the_judging_side(tmp_path: Path, export: Path, mode: str, planted: str) -> None:
    """Before: `datetime.py` in the workspace was imported by the evaluator's file server (run with
    /workspace as its working folder): 3/3 for an empty deliverable, or the job left unscored."""
    from eval.score.records import score_job

    cfg, task, job_dir = run_agent(tmp_path, export, mode, [_bash(_write("datetime.py", (FORGE if planted == "forge" else CRASH).encode()))])
    assert "datetime.py" in json.loads((job_dir / "result.json").read_text())["deliverable"]
    scores = score_job(job_dir, cfg.judge, task=task, model=RuleJudge())
    assert scores["final_score"] == EMPTY, scores["evaluator_log"]


PROBE = '''
import os, subprocess, sys
import csv
from scoring import Result, Checkpoint
import common


def grade_checkpoints(trajectory=""):
    child = subprocess.run(["python", "-c", "import csv; print(getattr(csv, 'PLANTED', False))"], capture_output=True, text=True)
    script = subprocess.run(["python3", "-"], input="import csv; print(getattr(csv, 'PLANTED', False))", capture_output=True, text=True)
    checks = [
        not os.path.exists("/utils/planted-ran"),  # the file server imported nothing of /workspace
        not getattr(csv, "PLANTED", False),  # nor the evaluator itself
        os.getcwd() == "/workspace" and "" not in sys.path and "/workspace" not in sys.path,
        sys.path[0] == "/utils" and common.__file__ == "/utils/common.py",  # the helpers, from /utils
        child.stdout.strip() == "False",  # nor a Python the evaluator starts from /workspace
        script.stdout.strip() == "False",
    ]
    return Result([Checkpoint(1, int(c)) for c in checks])
'''


def test_every_python_on_the_evaluators_side_ignores_the_workspace(tmp_path: Path) -> None:
    """The evaluator, the file server and what the evaluator starts, each with modules planted in
    /workspace (its working folder) that would say so: none is imported, the helpers still are."""
    task_dir = tmp_path / "tasks" / "probe-imports"
    task_dir.mkdir(parents=True)
    (task_dir / "task.md").write_text("Probe.\n")
    (task_dir / "evaluator.py").write_text(PROBE)
    (tmp_path / "export").mkdir()
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(tmp_path / "tasks"), export_dir=str(tmp_path / "export"), include=["probe-imports"])
    task = load_benchmark(cfg).task("probe-imports")
    mark = "open('/utils/planted-ran', 'w').close()\n"
    planted = {"csv.py": "PLANTED = True\n", "datetime.py": mark + "raise ImportError('planted')\n", "runpy.py": mark, "argparse.py": mark,
               "sitecustomize.py": mark, "usercustomize.py": mark, "fileserver/__init__.py": mark, "fileserver/__main__.py": mark}
    scores = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c")), "agentcompany").score(
        task, make_job(tmp_path / "job", planted))
    assert [i["earned"] for i in scores["items"]] == [1] * 6, scores["evaluator_log"]
