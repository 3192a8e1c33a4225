"""`wb_agent`: the judge model as an agent that inspects what the agent left, a reconstruction of
Workspace-Bench's current judge.

Workspace-Bench now judges rubrics with `agent_as_a_judge.py` (its `agent_eval.py`, the protocol of
`llm_rubric`, is marked deprecated): an agent that enters the task's output folder and inspects the
files itself. Its code is not public, so this is a reconstruction, not the original: the judge
model runs in our own agent loop (runners/agent/loop.py) with `read` and `bash`, sandboxed by bubblewrap
over a read-only folder holding the deliverable, the task's inputs and the agent's run
(eval/judges/workspace_bench/judge_view.py), within `judge.agent_max_turns` turns, `judge.agent_time_limit_s`
seconds and `judge.agent_max_cost` dollars. It is told the task and its rubrics in the words of the
benchmark's judge and ends with the same verdict JSON as `llm_rubric`, read the same way
(eval/judges/workspace_bench/verdicts.py). A run that uses up its budget first is asked once more, without running
anything, for its verdict; an answer without a verdict object is asked again up to
`judge.max_retries` times. Every turn goes through the judge cache, so a re-score replays it.
The judge needs bubblewrap: without it the judge model's commands would run on the host.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from envs import sandbox
from envs.config import EnvConfig
from envs.context import manage_context
from envs.environment import WorkspaceEnv
from eval.config import JudgeConfig
from eval.judges.base import JudgeError
from eval.judges.client import CachedLLM, judge_llm
from eval.judges.workspace_bench import judge_texts
from eval.judges.workspace_bench.judge_view import judge_folder
from eval.judges.workspace_bench.protocol import task_fields
from eval.judges.workspace_bench.rubric_judge import ask
from eval.judges.workspace_bench.verdicts import Verdicts, rubric_scores
from runners.agent.episode import EpisodeResult
from runners.agent.loop import run_episode
from runners.config.runner import AgentConfig
from runners.core.job_record import JobRecord
from runners.core.messages import (
    AssistantMessage,
    ContextLengthError,
    Model,
    ModelError,
)
from runners.core.task import Task

OUT_OF_BUDGET = ("turn_budget", "time_limit", "context_length")
MODEL_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "extra")  # what the loop sends of a message


class BudgetedModel:
    """The cached judge model as the loop's `Model`: every turn through the judge cache, and no call
    once the turns' recorded cost reaches `budget` dollars (cached turns count what they cost)."""

    def __init__(self, llm: CachedLLM, budget: float):
        self.llm = llm
        self.budget = budget
        self.name = str(llm.identity.get("name"))
        self.spent = 0.0
        self.exhausted = False

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        if self.spent >= self.budget:
            self.exhausted = True
            raise ModelError(f"the judge's cost budget of ${self.budget:g} is spent")
        reply = self.llm.reply(messages, tools)
        self.spent += reply.usage.cost
        return reply


class JudgeEnv(WorkspaceEnv):
    """The judge's workspace: the folder read-only, `read` and `bash`, and the judge's own system
    prompt (which names no host path, so that the turns replay from the cache). Its shell's Pythons
    have PYTHONSAFEPATH: run from inside the deliverable (`cd deliverable/output && python3 -c
    "import openpyxl"`), none imports a module the agent planted there."""

    def __init__(self, root: Path) -> None:
        env_set = {**EnvConfig().env_set, "PYTHONSAFEPATH": "1"}
        super().__init__(root, EnvConfig(sandbox="bwrap", env_set=env_set), read_only=True)

    def system_prompt(self) -> str:
        return judge_texts.WBA_SYSTEM + judge_texts.UNTRUSTED_NOTE


class WBAgentJudge:
    """Module doc."""

    name = "wb_agent"

    def __init__(self, cfg: JudgeConfig, model: Model | None = None):
        self.cfg = cfg
        self.llm = judge_llm(cfg, model)

    @staticmethod
    def preflight(cfg: JudgeConfig) -> None:
        """Before any job runs: refuse where bubblewrap cannot run (every job would stay unscored)."""
        problem = sandbox.bwrap_problem()
        if problem is not None:
            raise ValueError(f"judge=wb_agent runs the judge model's commands in bubblewrap, but {problem}; "
                             "install it (apt-get install bubblewrap) or choose another judge")

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        if not task.rubrics:
            raise JudgeError(f"task {task.id!r} has no rubrics; the {self.name} judge scores rubric tasks only")
        record = JobRecord(job_dir)
        model = BudgetedModel(self.llm, self.cfg.agent_max_cost)
        prompt = judge_texts.WBA_TASK.format(turns=self.cfg.agent_max_turns, task=json.dumps(task_fields(task), ensure_ascii=False, indent=1))
        agent = self.agent_config()
        try:
            with judge_folder(task, record) as root:
                env = JudgeEnv(root)
                try:
                    tools = env.tools()
                    with ThreadPoolExecutor(1) as pool:  # the loop makes its own event loop: never the caller's
                        run = pool.submit(run_episode, model, env, prompt, agent).result()
                finally:
                    env.close()
        except sandbox.SandboxUnavailable as e:
            raise JudgeError(f"judge {self.name} runs the judge model's commands in bubblewrap, but: {e}") from None
        verdicts = self.verdicts(task, run, model, tools)
        summary = {"turns": run.turns, "stop_reason": run.stop_reason, "cost": round(model.spent, 6),
                   "tokens_in": run.tokens_in, "tokens_out": run.tokens_out,
                   "tool_calls": sum(len(m.get("tool_calls") or []) for m in run.messages)}
        return rubric_scores(self.name, task, verdicts, judge_agent=summary)

    def agent_config(self) -> AgentConfig:
        """The loop's settings for the judge's run: its turn and time budget, the paper's context management."""
        return AgentConfig(max_turns=self.cfg.agent_max_turns, time_limit_s=self.cfg.agent_time_limit_s)

    def verdicts(self, task: Task, run: EpisodeResult, model: BudgetedModel, tools: list[dict[str, Any]]) -> Verdicts:
        """The verdicts the run ended with, asking for them when its budget ran out first."""
        n, retries = len(task.rubrics), self.cfg.max_retries
        seen = manage_context(run.messages, self.agent_config().context_level)  # as the loop showed it to the model
        conversation = [{k: m[k] for k in MODEL_FIELDS if k in m} for m in seen]
        if run.stop_reason == "finished":  # its last message is the answer, which `ask` appends itself on a retry
            return ask(self.llm, conversation[:-1], n, retries, tools, answer=run.final_answer)
        if run.stop_reason not in OUT_OF_BUDGET and not model.exhausted:
            raise JudgeError(f"judge {self.name}: its run stopped with {run.stop_reason}: {run.error}")
        why = "cost" if model.exhausted else run.stop_reason.replace("_", " ")
        try:
            return ask(self.llm, [*conversation, {"role": "user", "content": judge_texts.WBA_FINAL.format(why=why)}], n, retries, tools)
        except ContextLengthError as e:
            return Verdicts({}, f"the judge ran out of context ({e})")
