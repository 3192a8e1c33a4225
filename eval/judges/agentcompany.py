"""TheAgentCompany's protocol: run the task's own `evaluator.py` against the deliverable.

The evaluator runs in a subprocess (its own imports and state, a timeout, no secrets in its
environment) with stand-ins for the benchmark's `common`/`scoring`/`config` modules
(eval/tac/compat): file-server reads come from the final workspace, LLM checkpoints go through
our cached judge client via a local HTTP endpoint. The final score is the evaluator's scoring
strategy's (`Result.final_score`), not the sum of its checkpoints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval.config import JudgeConfig
from eval.judges.base import JudgeError, scores_doc
from eval.judges.client import CachedLLM, judge_llm
from eval.metrics import checkpoint_metrics
from eval.record import JobRecord
from eval.tac.llm_server import LLMProxy
from eval.tac.sandbox import build_files_view, rewrite_paths, trajectory_text
from eval.task import Task
from runners.messages import Model

COMPAT_DIR = Path(__file__).resolve().parent.parent / "tac" / "compat"
RUNNER = Path(__file__).resolve().parent.parent / "tac" / "run_evaluator.py"
_ENV_PASS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


class AgentCompanyJudge:
    name = "agentcompany"

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm: CachedLLM | None = judge_llm(cfg, model) if (model is not None or cfg.model) else None

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        evaluator = Path(task.extra.get("evaluator") or "")
        task_dir = Path(task.extra.get("task_dir") or "")
        if not evaluator.is_file():
            raise JudgeError(
                f"task {task.id!r}: evaluator.py not found at {evaluator or task_dir / 'evaluator.py'}; the agentcompany "
                "judge runs the task's own evaluator from a TheAgentCompany checkout (benchmark.tasks_dir)"
            )
        record = JobRecord(job_dir)
        with tempfile.TemporaryDirectory(prefix="rt-tac-") as tmp:
            result, stderr, llm_errors = self._run(task, record, evaluator, task_dir, Path(tmp))
        final = result["final_score"]
        checkpoints = result["checkpoints"]
        texts = [c.text for c in task.checkpoints] if len(task.checkpoints) == len(checkpoints) else []
        items = [
            {"kind": "checkpoint", "index": i, "text": texts[i] if texts else "", "points": c["total"], "earned": c["result"],
             "passed": c["result"] == c["total"]}
            for i, c in enumerate(checkpoints)
        ]  # fmt: skip
        return scores_doc(
            self.name, task, checkpoint_metrics(final["result"], final["total"]), items,
            judge_failures=llm_errors, final_score=final, evaluator_log=stderr[-4000:],
        )  # fmt: skip

    def _run(self, task: Task, record: JobRecord, evaluator: Path, task_dir: Path, tmp: Path) -> tuple[dict, str, int]:
        files = build_files_view(task, record, tmp / "files")
        utils = tmp / "utils"
        shutil.copytree(task_dir, utils, symlinks=True)
        instruction = tmp / "instruction"
        instruction.mkdir()
        if (task_dir / "task.md").is_file():
            shutil.copyfile(task_dir / "task.md", instruction / "task.md")
        outputs = tmp / "outputs"
        outputs.mkdir()
        traj = outputs / "trajectory.json"
        traj.write_text(trajectory_text(record, files), encoding="utf-8")
        run_dir = tmp / "run"
        run_dir.mkdir()
        mounts = {"workspace": files, "utils": utils, "instruction": instruction, "outputs": outputs}
        (run_dir / "evaluator.py").write_text(rewrite_paths(evaluator.read_text(encoding="utf-8"), mounts), encoding="utf-8")
        out = tmp / "result.json"
        with LLMProxy(self.llm) as proxy:
            env = {k: os.environ[k] for k in _ENV_PASS if k in os.environ}
            env.update(PYTHONPATH=f"{run_dir}{os.pathsep}{COMPAT_DIR}", RT_TAC_FILES=str(files), RT_TAC_LLM_URL=proxy.url)
            try:
                proc = subprocess.run(
                    [sys.executable, str(RUNNER), str(run_dir / "evaluator.py"), str(traj), str(out)],
                    cwd=utils, env=env, capture_output=True, text=True, timeout=self.cfg.evaluator_timeout_s,
                )  # fmt: skip
            except subprocess.TimeoutExpired as e:
                raise JudgeError(f"task {task.id!r}: evaluator timed out after {self.cfg.evaluator_timeout_s}s") from e
            errors = proxy.errors
        if proc.returncode != 0 or not out.is_file():
            raise JudgeError(f"task {task.id!r}: evaluator.py failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text()), proc.stderr, errors
