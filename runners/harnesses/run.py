"""One episode of a production harness: the harness runs in the job's sandbox, and every model call
it makes comes to the job's endpoint, where the method's plugins and the job's model answer it.

The sandbox is the one our own agent's shell gets (bubblewrap: the workspace at `env.agent_root`, no
network, the agent's memory, process and file-size caps), plus, read-only, the harnesses' npm prefix
and a folder of the runner's holding the endpoint's Unix socket and the forwarder that gives the
harness its one address (`forwarder.py`). The episode ends when the harness exits, when the model
ends the job (budget, time, turn budget, a model error: the harness is stopped), or at the job's
time limit. Its result is our `EpisodeResult`, with our stop reasons; the harness's own transcript
(bounded) and exit status go to the record beside it.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.program import HOME, ProgramRun, run_program, write_home_files
from envs.safeio import remove_tree
from envs.sandbox_extras import Service
from runners.agent.episode import EpisodeResult, stop_of
from runners.config.runner import AgentConfig
from runners.core.messages import Model
from runners.harnesses.bridge.server import ModelBridge, new_token
from runners.harnesses.conversation import HarnessConversation

if TYPE_CHECKING:
    from runners.harnesses.harness import Harness

PREFIX_VAR = "RUNNINGTAB_AGENTS_PREFIX"
PORT = 8788  # the endpoint's address inside the sandbox's own network namespace
MAX_TRANSCRIPT_BYTES = 16 << 20
MAX_STDERR_BYTES = 64 << 10
_READY = "/tmp/.runningtab-endpoint-ready"
_FORWARDER = Path(__file__).with_name("forwarder.py")


class HarnessUnavailable(RuntimeError):
    """The harness cannot run here (no npm prefix with it, no bubblewrap): the message says how to fix it."""


def agents_prefix(harness: Harness) -> str:
    """The npm prefix holding the harness (RUNNINGTAB_AGENTS_PREFIX), checked."""
    prefix = os.environ.get(PREFIX_VAR, "")
    if not prefix:
        raise HarnessUnavailable(f"agent.harness={harness.name} needs {PREFIX_VAR}, an npm prefix holding it "
                                 "(bash .ci/agents-up.sh installs the pinned versions and prints one; docs/harnesses.md)")
    if not os.path.isabs(prefix) or not os.access(os.path.join(prefix, harness.binary), os.X_OK):
        raise HarnessUnavailable(f"{PREFIX_VAR}={prefix} holds no {harness.binary}: install it there "
                                 "(bash .ci/agents-up.sh) or point the variable at the prefix that has it")
    return os.path.realpath(prefix)


def check_harness(harness: Harness, env: EnvConfig, here: bool = True) -> None:
    """The preflight's check of a production harness: installed where RUNNINGTAB_AGENTS_PREFIX says, and
    bubblewrap here (`here` False: a Slurm submission, checked on the node)."""
    from envs.sandbox import resolve_mode

    if not here:
        return
    agents_prefix(harness)
    if resolve_mode(env.sandbox) != "bwrap":
        raise HarnessUnavailable(f"agent.harness={harness.name} runs only inside bubblewrap: install it "
                                 "(apt-get install bubblewrap) and keep env.sandbox=auto or bwrap")


@dataclass(frozen=True)
class Site:
    """The runner's folder for one harness run: the endpoint's socket and the forwarder (read-only
    in the sandbox), and the npm prefix the harness runs from."""

    folder: str
    prefix: str

    @property
    def socket(self) -> str:
        return f"{self.folder}/endpoint.sock"

    def env_config(self, cfg: EnvConfig) -> EnvConfig:
        """The job's sandbox settings with the site and the prefix bound in (read-only)."""
        return dataclasses.replace(cfg, extra_ro_binds=[*cfg.extra_ro_binds, self.folder, self.prefix])

    def close(self) -> None:
        remove_tree(self.folder)


def open_site(harness: Harness, env: EnvConfig) -> Site:
    """The site of one run of `harness` (its prefix checked first: nothing is made for a harness that is not there)."""
    prefix = agents_prefix(harness)
    folder = os.path.realpath(tempfile.mkdtemp(prefix="runningtab-harness-"))
    shutil.copyfile(_FORWARDER, f"{folder}/forwarder.py")
    return Site(folder, prefix)


async def run_harness_async(
    harness: Harness, site: Site, model: Model, env: WorkspaceEnv, prompt: str, agent: AgentConfig,
    on_message: Callable[[dict[str, Any]], None] = lambda m: None, service: Service | None = None,
) -> tuple[EpisodeResult, dict[str, Any]]:
    """Run the harness on `prompt` in `env`'s sandbox (with the task's `service` beside it, as our own
    agent's shell has it); returns the episode and the harness's record."""
    if not env.sandboxed:
        raise HarnessUnavailable(f"agent.harness={harness.name} runs only inside bubblewrap (env.sandbox=bwrap where it runs)")
    token = new_token()
    talk = HarnessConversation(model, env, harness, agent, on_message, secret=token)
    until = time.monotonic() + talk.episode.time_left()
    bridge = ModelBridge(talk.answer, wire=harness.wire, token=token)
    await bridge.start_unix(site.socket)
    try:
        status = await _run(harness, site, env, bridge, prompt, until, service)
    finally:
        await bridge.close()
    res = talk.episode.finish()
    res.stop_reason, res.error = _stop(res, bridge, status, env.disk_quota.exceeded, talk.commands_handed)
    record = {"harness": harness.name, "exit_code": status.exit_code, "killed": status.killed,
              "transcript": _redact(status.stdout, bridge.token).splitlines(),
              "stderr": _redact(status.stderr, bridge.token)[-4000:], "model_calls": len(bridge.exchanges),
              "refused": talk.refused}
    return res, record


async def _run(
    harness: Harness, site: Site, env: WorkspaceEnv, bridge: ModelBridge, prompt: str, until: float, service: Service | None,
) -> ProgramRun:
    """The harness, run by the environment (`envs/program.py`): its files under HOME, the forwarder
    that gives it its one address, its command line; stopped once the job's model has ended the job."""
    base = f"http://127.0.0.1:{PORT}"
    write_home_files(env, harness.files(base))
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in harness.env(base, bridge.token, HOME).items())
    script = (
        f"python3 -I {shlex.quote(site.folder)}/forwarder.py {PORT} {shlex.quote(site.socket)} {_READY} &\n"
        f"i=0; while [ ! -e {_READY} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
        f"{exports}cd {shlex.quote(env.agent_root)}\n"
        f"{shlex.join(harness.argv(site.prefix, prompt))} < /dev/null\n"
    )
    return await run_program(env, script, until, lambda: "model" if bridge.stop is not None else None, service,
                             MAX_TRANSCRIPT_BYTES, MAX_STDERR_BYTES)


def _stop(res: EpisodeResult, bridge: ModelBridge, status: ProgramRun, quota: str | None, handed: int = 0) -> tuple[str, str | None]:
    """Our stop reason: the model's (`stop_of`), the job's time limit or disk quota, the harness's
    finish, or its failure. A harness that exits or is killed once the agent's first command was
    handed to it (`handed`: the endpoint's own count, which nothing in the sandbox writes) may have
    been ended by that command: a result (`harness_exit`), scored on what it left; before that, the
    host's (`env_error`)."""
    if status.killed == "disk_quota":
        return "disk_quota", f"the job's disk quota was exceeded: {quota}"
    if bridge.stop is not None:
        return stop_of(bridge.stop)
    if status.killed == "time_limit":
        return "time_limit", None
    if res.stop_reason == "finished" and status.exit_code == 0:
        return "finished", None
    tail = " | ".join(status.stderr.strip().splitlines()[-3:])
    if handed:  # the service was up and the harness running by then, whatever code it exits with
        return "harness_exit", f"the harness exited with code {status.exit_code} after the agent's first command ran: {tail}"
    return "env_error", f"the harness exited with code {status.exit_code} before the agent's first command ran: {tail}"


def _redact(text: str, token: str) -> str:
    return text.replace(token, "[job token]")
