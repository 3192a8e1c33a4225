"""TheAgentCompany's protocol: run the task's own `evaluator.py` against the deliverable.

The evaluator runs unchanged in a bubblewrap sandbox shaped like the task's Docker image
(eval/tac/sandbox.py: /workspace, /utils, /data as its Dockerfile builds them, cwd /workspace,
the host's tools hidden, no network, no secrets), with stand-ins for the benchmark's
`common`/`scoring`/`config` modules (eval/tac/compat): file-server reads come from the final
workspace, LLM checkpoints go through our cached judge client over a Unix socket. The final
score is the evaluator's scoring strategy's (`Result.final_score`), not the sum of its checkpoints;
the checkpoints are the evaluator's, named by checkpoints.md where they line up.
Dockerfile steps that were not replayed are listed in scores.json (`image_skipped`). An evaluator
this host's Python cannot run (eval/tac/evaluator_needs.py: 3.12 syntax, a module not installed)
leaves the job unscored with the reason, before anything runs. The evaluator runs under the
agent's caps (eval/tac/evaluation.py); one that fails (a limit, an exception) after it opened a path
the agent made, changed, removed or never made is a result: the checkpoints it had not finished
score 0 and `evaluator_failure` names the outcome. Only a failure on evidence the agent cannot write
(it never started, opened nothing of the agent's, or the judge model failed) leaves the job
unscored (eval/tac/outcome.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval.benchmarks.agentcompany import Extras, checkpoint_texts
from eval.config import JudgeConfig
from eval.judges.agentcompany.llm_server import LLMProxy
from eval.judges.base import InfrastructureFailure, JudgeError, scores_doc
from eval.judges.client import CachedLLM, judge_llm
from eval.judges.metrics import checkpoint_metrics
from eval.tac import dockerfile, evaluation, evaluator_needs, outcome
from eval.tac.image_state import OWNCLOUD, take_state
from eval.tac.sandbox import SandboxError, build_files_view, install_base_utils
from eval.tac.trajectory import trajectory_text
from runners.core.job_record import JobRecord
from runners.core.messages import Model
from runners.core.task import Task


def original_unchanged(task: Task, record: JobRecord) -> Callable[[str], bool]:
    """Whether a workspace-relative path is one of the task's own files the agent left as it was (the
    rest, made, changed, removed or never made, is the agent's doing)."""
    result = record.result
    agent = {*record.deliverable_files(), *result.deleted, *result.left_out}
    folders = {rel.rsplit("/", i)[0] for rel in agent for i in range(1, rel.count("/") + 1)}  # a file the agent made a folder
    root = task.workspace

    def unchanged(rel: str) -> bool:
        if rel in agent or rel in folders or result.left_out_rest or any(rel.startswith(d) for d in result.left_out if d.endswith("/")):
            return False
        if rel in task.stage:
            return True
        return root is not None and _regular(Path(root) / rel)

    return unchanged


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


class AgentCompanyJudge:
    name = "agentcompany"

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm: CachedLLM | None = judge_llm(cfg, model) if (model is not None or cfg.model is not None) else None

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        extra = task.extra_as(Extras)
        evaluator, task_dir = Path(extra.evaluator), Path(extra.task_dir)
        if not evaluator.is_file():
            raise JudgeError(
                f"task {task.id!r}: evaluator.py not found at {evaluator or task_dir / 'evaluator.py'}; the agentcompany "
                "judge runs the task's own evaluator from a TheAgentCompany checkout (benchmark.tasks_dir)"
            )
        why = evaluator_needs.problem(task_dir)
        if why is not None:  # this host's Python, not the agent's doing: re-score once it is fixed
            raise InfrastructureFailure(f"task {task.id!r} cannot be scored here: {why}")
        try:
            plan = dockerfile.plan(task_dir)
        except dockerfile.DockerfileError as e:
            raise JudgeError(f"task {task.id!r}: {e}") from e
        record = JobRecord(job_dir)
        with tempfile.TemporaryDirectory(prefix="rt-tac-") as tmp:
            done, llm_errors = self._run(task, record, evaluator, task_dir, plan, Path(tmp))
        result, failure = self._outcome(task, record, done, llm_errors)
        final = result["final_score"]
        checkpoints = result["checkpoints"]
        md = task_dir / "checkpoints.md"
        texts = checkpoint_texts(md.read_text(encoding="utf-8") if md.is_file() else "", [c["total"] for c in checkpoints])
        items = [
            {"kind": "checkpoint", "index": i, "text": texts[i], "points": c["total"], "earned": c["result"],
             "passed": c["result"] == c["total"]}
            for i, c in enumerate(checkpoints)
        ]
        for i, services in outcome.unreachable(done.progress, len(items)).items():
            items[i]["unreachable"] = services  # it needed a service that is not here: 0, and said so
            if i in done.progress.withheld:
                items[i]["withheld"] = done.progress.withheld[i]  # what the evaluator gave it, not counted
        extra: dict[str, Any] = {"evaluator_failure": failure} if failure else {}
        if any("unreachable" in i for i in items):
            extra["unreachable_checkpoints"] = sum(1 for i in items if "unreachable" in i)
        return scores_doc(
            self.name, task, checkpoint_metrics(final["result"], final["total"]), items,
            judge_failures=llm_errors, final_score=final, evaluator_log=done.end.stderr[-4000:],
            image_skipped=[{"step": line, "reason": why} for line, why in plan.skipped], **extra,
        )

    @staticmethod
    def _outcome(task: Task, record: JobRecord, done: evaluation.Run, llm_errors: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The evaluator's result, or (it failed once handed something of the agent's: a result) the
        unfinished checkpoints at 0 with its `evaluator_failure`; an InfrastructureFailure when it
        failed on evidence the agent cannot write (the job stays unscored, re-scorable)."""
        if done.end.returncode == 0 and not done.end.timed_out and done.result is not None:
            return done.result, None
        read = outcome.agent_files_read(done.progress, original_unchanged(task, record))
        why = outcome.host_failure(done.end, done.progress, read, llm_errors)
        if why is not None:
            raise InfrastructureFailure(f"task {task.id!r}: evaluator.py failed ({why}); the job stays unscored (re-score it with "
                                        f"python -m eval.score):\n{done.end.stderr[-3000:]}")
        failure = outcome.evaluator_failure(done.end, done.progress, read, done.result is not None)
        return outcome.unfinished_result(done.progress, [c.points for c in task.checkpoints]), failure

    def _image(self, task: Task, record: JobRecord, evaluator: Path, task_dir: Path, plan: dockerfile.Plan, tmp: Path) -> dict[str, Path]:
        """The image's top-level folders on the host, built for this job."""
        root = tmp / "image"
        tops = dockerfile.build(plan, root)
        install_base_utils(root / "utils", evaluator, task_dir)
        if (task_dir / "task.md").is_file():
            shutil.copyfile(task_dir / "task.md", root / "instruction" / "task.md")
        image = {top: root / top for top in tops if top != "workspace"}
        image["workspace"] = build_files_view(task, record, tmp / "workspace")
        image["srv"] = tmp / "srv"
        take_state(image["workspace"], image, tmp / "agent-image")
        served = image["srv"] / OWNCLOUD  # the file server's files, when the agent had them served
        image["outputs"] = tmp / "outputs"
        image["outputs"].mkdir()
        files = served if served.is_dir() else image["workspace"]
        (image["outputs"] / "trajectory").write_text(trajectory_text(record, files), encoding="utf-8")
        return image

    def _run(self, task: Task, record: JobRecord, evaluator: Path, task_dir: Path, plan: dockerfile.Plan, tmp: Path) -> tuple[evaluation.Run, int]:
        image = self._image(task, record, evaluator, task_dir, plan, tmp)
        sock_dir = tmp / "sock"
        sock_dir.mkdir()
        env = evaluation.recorded_env(record.meta.config)
        with LLMProxy(self.llm, sock_dir / "llm.sock") as proxy:
            try:
                done = evaluation.run(image, sock_dir, tmp / "evaluator.log", env, self.cfg.evaluator_timeout_s, lambda: proxy.in_flight)
            except SandboxError as e:
                raise JudgeError(f"task {task.id!r}: {e}") from e
            return done, proxy.errors
