"""A production harness: how it is started, headless and non-interactive, against the job's endpoint,
and how its tools read as ours for the environment's plugins. Each one is a module of
`runners/harnesses/agents/` holding `HARNESS` (its command line, files and tool names), found by its
name (`runners/agent/harnesses.py`); its wire is a module of `runners/harnesses/bridge/`.

Each runs inside the job's bubblewrap sandbox (`runners/harnesses/run.py`), so nothing in a harness
lifts a limit of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envs.config import EnvConfig
    from envs.environment import WorkspaceEnv
    from envs.protocol import ToolCall
    from envs.sandbox_extras import Service
    from runners.agent.episode import EpisodeResult
    from runners.config.runner import AgentConfig
    from runners.core.messages import Model
    from runners.harnesses.run import Site


@dataclass(frozen=True)
class Harness:
    """One harness: its binary under the npm prefix, its command line for a task prompt, the files
    and variables that point it at the job's endpoint, and its tools as ours."""

    name: str
    binary: str  # relative to RUNNINGTAB_AGENTS_PREFIX (npm's node_modules/.bin/…, or a venv's bin/…)
    wire: str  # the API it speaks: its module of runners/harnesses/bridge/ ("messages_wire", "responses_wire", …)
    tools_allowed: tuple[str, ...] = field(default=())
    compaction_marker: str = ""  # how its summary of a compacted history begins (its own text)
    keeps_answers: bool = True  # False: it leaves a reply without a tool call out of its history (and answers it itself)

    def argv(self, prefix: str, prompt: str) -> list[str]:
        raise NotImplementedError

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        raise NotImplementedError

    def files(self, base_url: str) -> dict[str, str]:
        """Files to write under the harness's HOME before it starts (relative path -> text)."""
        return {}

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        raise NotImplementedError

    def finishes(self, calls: list[ToolCall]) -> bool:
        """Whether a reply with these calls of the harness's own tools ends its run: the model's stop,
        which the environment's stop hook (the tab's finish check) sees first. Most harnesses stop at a
        reply without a tool call; one that stops on a call of its own (mini-swe-agent's submit
        command) says which."""
        return not calls

    def shown(self, text: str) -> str:
        """A tool result as the model is sent it: what varies from run to run and tells the model
        nothing is dropped, so that a job re-run from the model-call cache meets the same calls."""
        return text

    # --- the seam (runners/agent/harnesses.py): what a job calls, as it calls our own loop ---

    def check(self, env: EnvConfig, here: bool = True) -> None:
        """Refuse (`HarnessUnavailable`) where the harness cannot run: not installed, no bubblewrap."""
        from runners.harnesses.run import check_harness

        check_harness(self, env, here)

    def setup(self, env: EnvConfig) -> Site:
        """The runner's folder for one run (the endpoint's socket, the forwarder), bound into the sandbox."""
        from runners.harnesses.run import open_site

        return open_site(self, env)

    async def run(self, setup: Site, model: Model, env: WorkspaceEnv, prompt: str, agent: AgentConfig,
                  on_message: Callable[[dict[str, Any]], None], service: Service | None) -> tuple[EpisodeResult, dict[str, Any]]:
        """One episode: the harness in `env`'s sandbox, every model call of it at the job's endpoint."""
        from runners.harnesses.run import run_harness_async

        return await run_harness_async(self, setup, model, env, prompt, agent, on_message, service)
