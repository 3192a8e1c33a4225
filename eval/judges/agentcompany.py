"""TheAgentCompany's protocol: run the task's own `evaluator.py` against the deliverable.

The evaluator runs unchanged in a bubblewrap sandbox shaped like the task's Docker image
(eval/tac/sandbox.py: /workspace, /utils, /data as its Dockerfile builds them, cwd /workspace,
the host's tools hidden, no network, no secrets), with stand-ins for the benchmark's
`common`/`scoring`/`config` modules (eval/tac/compat): file-server reads come from the final
workspace, LLM checkpoints go through our cached judge client over a Unix socket. The final
score is the evaluator's scoring strategy's (`Result.final_score`), not the sum of its checkpoints.
Dockerfile steps that were not replayed are listed in scores.json (`image_skipped`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from eval.config import JudgeConfig
from eval.judges.base import JudgeError, scores_doc
from eval.judges.client import CachedLLM, judge_llm
from eval.metrics import checkpoint_metrics
from eval.tac import dockerfile
from eval.tac.llm_server import LLMProxy
from eval.tac.sandbox import SandboxError, build_files_view, bwrap_argv, install_base_utils, sandbox_env
from eval.tac.trajectory import trajectory_text
from runners.core.job_record import JobRecord
from runners.core.messages import Model
from runners.core.task import Task


class AgentCompanyJudge:
    name = "agentcompany"

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm: CachedLLM | None = judge_llm(cfg, model) if (model is not None or cfg.model is not None) else None

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        evaluator = Path(task.extra.get("evaluator") or "")
        task_dir = Path(task.extra.get("task_dir") or "")
        if not evaluator.is_file():
            raise JudgeError(
                f"task {task.id!r}: evaluator.py not found at {evaluator or task_dir / 'evaluator.py'}; the agentcompany "
                "judge runs the task's own evaluator from a TheAgentCompany checkout (benchmark.tasks_dir)"
            )
        try:
            plan = dockerfile.plan(task_dir)
        except dockerfile.DockerfileError as e:
            raise JudgeError(f"task {task.id!r}: {e}") from e
        with tempfile.TemporaryDirectory(prefix="rt-tac-") as tmp:
            result, stderr, llm_errors = self._run(task, JobRecord(job_dir), evaluator, task_dir, plan, Path(tmp))
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
            image_skipped=[{"step": line, "reason": why} for line, why in plan.skipped],
        )  # fmt: skip

    def _image(self, task: Task, record: JobRecord, evaluator: Path, task_dir: Path, plan: dockerfile.Plan, tmp: Path) -> dict[str, Path]:
        """The image's top-level folders on the host, built for this job."""
        root = tmp / "image"
        tops = dockerfile.build(plan, root)
        install_base_utils(root / "utils", evaluator)
        if (task_dir / "task.md").is_file():
            shutil.copyfile(task_dir / "task.md", root / "instruction" / "task.md")
        image = {top: root / top for top in tops if top != "workspace"}
        image["workspace"] = build_files_view(task, record, tmp / "workspace")
        image["outputs"] = tmp / "outputs"
        image["outputs"].mkdir()
        (image["outputs"] / "trajectory").write_text(trajectory_text(record, image["workspace"]), encoding="utf-8")
        return image

    def _run(self, task: Task, record: JobRecord, evaluator: Path, task_dir: Path, plan: dockerfile.Plan, tmp: Path) -> tuple[dict, str, int]:
        image = self._image(task, record, evaluator, task_dir, plan, tmp)
        sock_dir = tmp / "sock"
        sock_dir.mkdir()
        result = image["outputs"] / "result.json"
        command = ["python", "/utils/run_evaluator.py", "/utils/evaluator.py", "/outputs/trajectory", "/outputs/result.json"]
        with LLMProxy(self.llm, sock_dir / "llm.sock") as proxy:
            try:
                argv = bwrap_argv(image, sock_dir, command)
            except SandboxError as e:
                raise JudgeError(f"task {task.id!r}: {e}") from e
            try:
                proc = subprocess.run(argv, env=sandbox_env(), capture_output=True, text=True, timeout=self.cfg.evaluator_timeout_s)
            except subprocess.TimeoutExpired as e:
                raise JudgeError(f"task {task.id!r}: evaluator timed out after {self.cfg.evaluator_timeout_s}s") from e
            errors = proxy.errors
        if proc.returncode != 0 or not result.is_file():
            raise JudgeError(f"task {task.id!r}: evaluator.py failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        return json.loads(result.read_text()), proc.stderr, errors
