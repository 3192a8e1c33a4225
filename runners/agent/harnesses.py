"""Who runs a job's episode, by name (`agent.harness`): our own loop, or a production harness in the
job's sandbox. The job calls the one it is given, with no branch (`runners/job/run.py`):

    harness = HARNESSES.get(cfg.agent.harness)   # an unknown name: the error lists those there are
    harness.check(cfg.env, here)                 # the preflight: what it needs on this machine
    setup = harness.setup(cfg.env)               # before the environment (a harness binds folders into it)
    res, record = await harness.run(setup, model, env, prompt, agent, on_message, service)
    setup.close()

Our loop is `dci` (SPEC section 2). Each production harness is a module of `runners/harnesses/agents/`
named after it and holding `HARNESS`: found here by that name, imported only when a job runs it.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.sandbox_extras import Service
from runners.agent.episode import EpisodeResult
from runners.agent.loop import run_episode_async
from runners.config.runner import AgentConfig
from runners.core.harness_names import OWN_LOOP
from runners.core.messages import Model
from runners.core.registry import Registry


class Setup(Protocol):
    """What a harness prepares before the job's environment exists, and removes after it."""

    def env_config(self, env: EnvConfig) -> EnvConfig:
        """The job's environment settings as the harness needs them (folders bound in, read-only)."""

    def close(self) -> None: ...


class Harness(Protocol):
    name: str

    def check(self, env: EnvConfig, here: bool = True) -> None:
        """Raise (a `RuntimeError` saying how to fix it) where it cannot run with the job's environment
        settings; `here` False: checked where it runs."""

    def setup(self, env: EnvConfig) -> Setup: ...

    async def run(self, setup: Any, model: Model, env: WorkspaceEnv, prompt: str, agent: AgentConfig,
                  on_message: Callable[[dict[str, Any]], None], service: Service | None) -> tuple[EpisodeResult, dict[str, Any] | None]:
        """The episode, and the harness's own record (`harness.json`; None: none)."""


@dataclass(frozen=True)
class _Nothing:
    def env_config(self, env: EnvConfig) -> EnvConfig:
        return env

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class OwnLoop:
    """Our own loop (`runners/agent/loop.py`): the environment's tools, in the job's process."""

    name: str = OWN_LOOP

    def check(self, env: EnvConfig, here: bool = True) -> None:
        pass

    def setup(self, env: EnvConfig) -> Setup:
        return _Nothing()

    async def run(self, setup: Any, model: Model, env: WorkspaceEnv, prompt: str, agent: AgentConfig,
                  on_message: Callable[[dict[str, Any]], None], service: Service | None) -> tuple[EpisodeResult, None]:
        return await run_episode_async(model, env, prompt, agent, on_message), None


def production_harnesses() -> list[str]:
    """The names of the production harnesses (the modules of `runners/harnesses/agents/`), none imported."""
    from runners.harnesses import agents

    return sorted(m.name for m in pkgutil.iter_modules(agents.__path__) if not m.name.startswith("_"))


HARNESSES: Registry[Harness] = Registry("agent.harness")
HARNESSES.add(OWN_LOOP, OwnLoop())
for _name in production_harnesses():
    HARNESSES.add(_name, f"runners.harnesses.agents.{_name}:HARNESS")
