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

import asyncio
import dataclasses
import os
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.bash_tool import command_fd
from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.safeio import remove_tree
from envs.sandbox_extras import Service
from runners.agent.loop import EpisodeResult
from runners.config.runner import AgentConfig
from runners.core import deadline
from runners.core.messages import (
    BudgetExceeded,
    ContextLengthError,
    Model,
    ModelError,
    OutOfTime,
)
from runners.harnesses.bridge.server import ModelBridge, new_token
from runners.harnesses.conversation import HarnessConversation, TurnBudget
from runners.harnesses.kinds import HARNESSES, Harness

PREFIX_VAR = "RUNNINGTAB_AGENTS_PREFIX"
PORT = 8788  # the endpoint's address inside the sandbox's own network namespace
MAX_TRANSCRIPT_BYTES = 16 << 20
MAX_STDERR_BYTES = 64 << 10
_READY = "/tmp/.runningtab-endpoint-ready"
_FORWARDER = Path(__file__).with_name("forwarder.py")


class HarnessUnavailable(RuntimeError):
    """The harness cannot run here (no npm prefix with it, no bubblewrap): the message says how to fix it."""


def agents_prefix(harness: str) -> str:
    """The npm prefix holding the harness (RUNNINGTAB_AGENTS_PREFIX), checked."""
    prefix = os.environ.get(PREFIX_VAR, "")
    spec = HARNESSES.get(harness)
    if not prefix:
        raise HarnessUnavailable(f"agent.harness={harness} needs {PREFIX_VAR}, an npm prefix holding it "
                                 "(bash .ci/agents-up.sh installs the pinned versions and prints one; docs/harnesses.md)")
    if not os.path.isabs(prefix) or not os.access(os.path.join(prefix, spec.binary), os.X_OK):
        raise HarnessUnavailable(f"{PREFIX_VAR}={prefix} holds no {spec.binary}: install it there "
                                 "(bash .ci/agents-up.sh) or point the variable at the prefix that has it")
    return os.path.realpath(prefix)


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


def open_site(harness: str) -> Site:
    folder = os.path.realpath(tempfile.mkdtemp(prefix="runningtab-harness-"))
    shutil.copyfile(_FORWARDER, f"{folder}/forwarder.py")
    return Site(folder, agents_prefix(harness))


async def run_harness_async(
    harness_name: str, site: Site, model: Model, env: WorkspaceEnv, prompt: str, agent: AgentConfig,
    on_message: Callable[[dict[str, Any]], None] = lambda m: None, service: Service | None = None,
) -> tuple[EpisodeResult, dict[str, Any]]:
    """Run the harness on `prompt` in `env`'s sandbox (with the task's `service` beside it, as our own
    agent's shell has it); returns the episode and the harness's record."""
    if not env.sandboxed:
        raise HarnessUnavailable(f"agent.harness={harness_name} runs only inside bubblewrap (env.sandbox=bwrap where it runs)")
    harness = HARNESSES.get(harness_name)
    start = time.monotonic()
    until = start + agent.time_limit_s
    token = new_token()
    talk = HarnessConversation(model, env.plugins, harness.as_ours, agent.max_turns, on_message, secret=token,
                               shown=harness.shown)
    bridge = ModelBridge(_within(until, talk.answer), token=token)
    await bridge.start_unix(site.socket)
    try:
        status = await _run(harness, site, env, bridge, prompt, until, service)
    finally:
        await bridge.close()
    res = talk.result
    res.wall_s = time.monotonic() - start
    res.stop_reason, res.error = _stop(res, bridge, status, env.disk_quota.exceeded, talk.commands_handed)
    record = {"harness": harness_name, "exit_code": status.exit_code, "killed": status.killed,
              "transcript": _redact(status.stdout, bridge.token).splitlines(),
              "stderr": _redact(status.stderr, bridge.token)[-4000:], "model_calls": len(bridge.exchanges)}
    return res, record


def _within(until: float, answer: Any) -> Any:
    """Every model call of the harness ends by the job's deadline, as our own loop's do."""

    async def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        left = until - time.monotonic()
        if left <= 0:
            raise OutOfTime("the job's time limit has passed")
        with deadline.until(until):
            try:
                async with asyncio.timeout(left):
                    return await answer(messages, tools)
            except TimeoutError:
                raise OutOfTime(f"the model did not answer within the job's remaining {left:.1f} s") from None

    return call


@dataclass
class _Status:
    exit_code: int | None = None
    killed: str | None = None  # why we stopped it: "time_limit", "disk_quota" or "model"
    stdout: str = ""
    stderr: str = ""


async def _run(
    harness: Harness, site: Site, env: WorkspaceEnv, bridge: ModelBridge, prompt: str, until: float, service: Service | None,
) -> _Status:
    home = "/tmp/home"
    base = f"http://127.0.0.1:{PORT}"
    for rel, text in harness.files(base).items():  # written before anything of the agent runs
        host = Path(env.shell.scratch, "tmp", "home", rel)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_text(text)
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in harness.env(base, bridge.token, home).items())
    script = (
        _service_start(service, env.agent_root) +
        f"python3 -I {shlex.quote(site.folder)}/forwarder.py {PORT} {shlex.quote(site.socket)} {_READY} &\n"
        f"i=0; while [ ! -e {_READY} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
        f"{exports}cd {shlex.quote(env.agent_root)}\n"
        f"{shlex.join(harness.argv(site.prefix, prompt))} < /dev/null\n"
    )
    fd = command_fd(script)
    try:
        proc = await asyncio.create_subprocess_exec(
            *env.shell.argv(fd), pass_fds=(fd,), env=env.shell.env, cwd=env.root,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
    finally:
        os.close(fd)
    status = _Status()
    quota = env.disk_quota
    quota.start()  # watched for the whole run, as each of our own shell's calls is
    out = asyncio.ensure_future(_bounded(proc.stdout, MAX_TRANSCRIPT_BYTES))
    err = asyncio.ensure_future(_bounded(proc.stderr, MAX_STDERR_BYTES))
    waiting = asyncio.ensure_future(proc.wait())
    try:
        while not waiting.done():
            await asyncio.wait({waiting}, timeout=0.2)
            if waiting.done():
                break
            if bridge.stop is not None:
                status.killed = "model"
            elif quota.exceeded is not None:
                status.killed = "disk_quota"
            elif time.monotonic() >= until:
                status.killed = "time_limit"
            if status.killed:
                _kill(proc.pid)
                await waiting
    finally:
        if not waiting.done():  # cancelled: the job's sweep limit
            _kill(proc.pid)
            await asyncio.shield(waiting)
        if await asyncio.to_thread(quota.stop) is not None and status.killed is None:
            status.killed = "disk_quota"
    status.exit_code = proc.returncode
    status.stdout, status.stderr = await out, await err
    return status


SERVICE_DOWN_EXIT = 97


def _service_start(service: Service | None, root: str) -> str:
    """The task's service started beside the harness (TheAgentCompany's file server, served), waited
    for on its port as the agent's shell session waits for it. Not listening by then, the harness
    is not started: the job ends in an environment error, never a dead server scored as the agent's."""
    if service is None:
        return ""
    tries = max(int(service.start_s * 10), 1)
    probe = f"(exec 3<>/dev/tcp/127.0.0.1/{service.port}) 2>/dev/null"
    down = f"the task's service {service.name} was not listening on port {service.port} {service.start_s:g} s after it was started"
    return (f"( {service.command(root)} ) > /tmp/.runningtab-service.log 2>&1 &\n"
            f"i=0; until {probe} || [ $i -ge {tries} ]; do sleep 0.1; i=$((i+1)); done\n"
            f"{probe} || {{ echo {shlex.quote(down)} >&2; exit {SERVICE_DOWN_EXIT}; }}\n")


async def _bounded(stream: asyncio.StreamReader | None, cap: int) -> str:
    """What the stream says, up to `cap` bytes; the rest is read and dropped (the harness never blocks)."""
    kept = bytearray()
    while stream is not None and (chunk := await stream.read(1 << 16)):
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
    return kept.decode("utf-8", errors="replace")


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(res: EpisodeResult, bridge: ModelBridge, status: _Status, quota: str | None, handed: int = 0) -> tuple[str, str | None]:
    """Our stop reason: the model's, the job's time limit or disk quota, the harness's finish, or its
    failure. A harness that exits or is killed once the agent's first command was handed to it
    (`handed`: the endpoint's own count, which nothing in the sandbox writes) may have been ended by
    that command: a result (`harness_exit`), scored on what it left; before that, the host's (`env_error`)."""
    stop = bridge.stop
    if status.killed == "disk_quota":
        return "disk_quota", f"the job's disk quota was exceeded: {quota}"
    if isinstance(stop, TurnBudget):
        return "turn_budget", None
    if isinstance(stop, OutOfTime) or status.killed == "time_limit":
        return "time_limit", None
    if isinstance(stop, BudgetExceeded):
        return "budget", str(stop)
    if isinstance(stop, ContextLengthError):
        return "context_length", str(stop)
    if isinstance(stop, ModelError):
        return "model_error", str(stop)
    if res.stop_reason == "finished" and status.exit_code == 0:
        return "finished", None
    tail = " | ".join(status.stderr.strip().splitlines()[-3:])
    if handed:  # the service was up and the harness running by then, whatever code it exits with
        return "harness_exit", f"the harness exited with code {status.exit_code} after the agent's first command ran: {tail}"
    return "env_error", f"the harness exited with code {status.exit_code} before the agent's first command ran: {tail}"


def _redact(text: str, token: str) -> str:
    return text.replace(token, "[job token]")
