"""A model server as a subprocess: vLLM (GPUs, or its CPU build) or llama.cpp on CPU, one code path.

A plain class (the sweep wraps it with `ray.remote`): `start()` launches the command built for
the config's kind under a lifeline (runners/models/lifeline.py: the server dies with the process
that started it), waits until `/v1/models` answers 200 and a one-token chat completion succeeds,
and returns the OpenAI-compatible URL; `stop()` ends the whole process group (SIGTERM, then
SIGKILL after a grace period).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH, PATH_OR_NAME
from runners.models import lifeline
from runners.models.config import ApiModelConfig
from runners.models.embedded import BACKEND_HINT, embedded_gguf

_WEIGHTS = Enters.JOB_ID | Enters.CACHE_KEY | Enters.SWEEP_NAME
_START = Enters.NOTHING


@dataclass
class ServerConfig:
    """How to start a model server (kinds `vllm` and `llamacpp`).

    `model_path`: a HF id or local dir for vLLM, a .gguf file for llama.cpp (null = the embedded
    SmolLM2). `port` 0 picks a free port. `gpus` sets CUDA_VISIBLE_DEVICES (empty = inherit, as
    under Ray, which sets it per actor). `ctx_size`: the context length (vLLM's `--max-model-len`,
    llama.cpp's `--n_ctx`); null = the model's own. `log_path` null = a file in the system temp dir.
    `resources`: custom Ray resources each replica holds (`{model_host: 1}` puts replicas only on
    nodes started with `ray start --resources='{"model_host": N}'`).
    `executable`: the command that starts the server, before its arguments; empty = the kind's own
    (`vllm serve` beside this interpreter or on PATH; this interpreter's llama.cpp launcher). vLLM
    usually lives in an environment of its own: `[/path/to/venv/bin/vllm, serve]`, or for the CPU
    build, whose `vllm` command does not start, `[/path/to/venv/bin/python, -m,
    vllm.entrypoints.openai.api_server]` (docs/models.md). `env`: variables set for the server on
    top of the environment it inherits (e.g. `VLLM_CPU_KVCACHE_SPACE`); they are recorded with the
    config, so keep secrets out of them. `slots`: the requests one replica
    serves at once, so the jobs a sweep runs on it at once (null: the kind's, 1 for llama.cpp, whose
    server answers one request at a time, no cap for vLLM; 0: no cap).
    """

    # the weights and how they answer (runners/core/config_fields.py); the rest: how and where it starts
    model_path: str | None = setting(_WEIGHTS, default=None, path=PATH_OR_NAME)  # a HF id, or a local folder or file
    host: str = setting(_START, default="127.0.0.1")
    port: int = setting(_START, default=0)
    tool_call_parser: str = setting(_WEIGHTS, default="hermes")
    tensor_parallel_size: int = setting(_WEIGHTS, default=1)
    gpus: list[int] = setting(_START, default_factory=list)
    ctx_size: int | None = setting(_WEIGHTS, default=8192)
    chat_format: str = setting(_WEIGHTS, default="chatml-function-calling")
    startup_timeout_s: float = setting(_START, default=900.0)
    stop_grace_s: float = setting(_START, default=15.0)
    log_path: str | None = setting(_START, default=None, path=PATH)
    extra_args: list[str] = setting(_WEIGHTS, default_factory=list)
    replicas: int = setting(_START, default=1)
    resources: dict[str, float] = setting(_START, default_factory=dict)
    executable: list[str] = setting(_START, default_factory=list)
    env: dict[str, str] = setting(_START, default_factory=dict)
    slots: int | None = setting(_START, default=None)


@dataclass
class ServedModelConfig(ApiModelConfig):
    """A model the sweep serves itself (kinds `vllm`, `llamacpp`) unless `base_url` points at a running server."""

    # a judge's verdicts do not depend on how its model is served (its key leaves the server out)
    server: ServerConfig = setting(Enters.JOB_ID | Enters.CACHE_KEY | Enters.SWEEP_NAME, default_factory=ServerConfig)


def needs_server(cfg: object) -> bool:
    """Whether the sweep must start a server for this model config (a served kind with no `base_url`)."""
    return isinstance(cfg, ServedModelConfig) and cfg.kind in COMMANDS and not cfg.base_url


class ServerError(RuntimeError):
    """The server could not be started (missing backend, exited early, or never became healthy)."""


def vllm_command(cfg: ServedModelConfig, port: int) -> list[str]:
    """vLLM's OpenAI-compatible server with tool calling on; vLLM lives in its own environment
    (`model.server.executable`) or this one, and is never imported here. The model goes as
    `--model`, which both `vllm serve` and `python -m vllm.entrypoints.openai.api_server` take."""
    s = cfg.server
    if not s.model_path:
        raise ServerError("model.kind=vllm needs model.server.model_path (a HF model id or a local directory)")
    return [
        *(s.executable or [_vllm_executable(), "serve"]), "--model", s.model_path,
        "--host", s.host, "--port", str(port),
        "--served-model-name", cfg.name,
        "--enable-auto-tool-choice", "--tool-call-parser", s.tool_call_parser,
        "--tensor-parallel-size", str(s.tensor_parallel_size),
        *(["--max-model-len", str(s.ctx_size)] if s.ctx_size is not None else []),
        *s.extra_args,
    ]


def llamacpp_command(cfg: ServedModelConfig, port: int) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server; the embedded SmolLM2 when no model_path."""
    s = cfg.server
    if not s.executable and importlib.util.find_spec("llama_cpp") is None:
        raise ServerError(f"llama.cpp, the embedded model's server, is not installed: {BACKEND_HINT}")
    model = s.model_path or embedded_gguf()
    return [
        *(s.executable or [sys.executable, "-m", "runners.models.llamacpp_serve"]),
        "--model", model, "--model_alias", cfg.name,
        "--chat_format", s.chat_format,
        "--host", s.host, "--port", str(port),
        "--n_ctx", str(s.ctx_size or 0),  # 0: the model's own
        *s.extra_args,
    ]


COMMANDS: dict[str, Callable[[ServedModelConfig, int], list[str]]] = {"vllm": vllm_command, "llamacpp": llamacpp_command}


def _vllm_executable() -> str:
    # The venv's bin dir first: a venv's python run without activation does not have it on PATH.
    beside = Path(sys.executable).parent / "vllm"
    if beside.exists():
        return str(beside)
    found = shutil.which("vllm")
    if found:
        return found
    raise ServerError("vLLM was not found beside this Python or on PATH: install it in an environment of its own "
                      "and name it with model.server.executable (docs/models.md#vllm: a GPU build, or the CPU "
                      "build .ci/vllm-up.sh installs)")


def _normal_priority() -> None:
    """Ray runs actors at a low priority (nice 15), which a CPU model server would inherit and then
    starve behind any other work; servers run at normal priority where the OS allows it."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ModelServer:
    """One served model for the lifetime of a sweep (or of one job, see `served`).

    `owner`: the label the server carries in its environment (`lifeline.owner_label`), by which a
    sweep's start finds the servers of its own dead drivers."""

    def __init__(self, cfg: ServedModelConfig, owner: str | None = None):
        if cfg.kind not in COMMANDS:
            raise ServerError(f"model.kind={cfg.kind!r} is not served; served kinds: {sorted(COMMANDS)}")
        self.cfg, self.owner = cfg, owner
        self.proc: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self.log_path = cfg.server.log_path

    def start(self) -> str:
        """Launch and wait until healthy; the base URL (`http://host:port/v1`)."""
        if self.proc is not None:
            return self.url  # type: ignore[return-value]
        s = self.cfg.server
        port = s.port or free_port(s.host)
        cmd = COMMANDS[self.cfg.kind](self.cfg, port)
        if shutil.which(cmd[0]) is None:
            raise ServerError(f"{self.cfg.kind} server: {cmd[0]!r} is not an executable file or a command on PATH "
                              "(model.server.executable)")
        env = dict(os.environ)
        if cfg_max := self.cfg.max_tokens:
            env["RUNNINGTAB_MAX_TOKENS"] = str(cfg_max)
        if s.gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in s.gpus)
        env.update(s.env)
        if self.owner:
            env[lifeline.OWNER_ENV] = self.owner
        if not self.log_path:
            fd, self.log_path = tempfile.mkstemp(prefix=f"{self.cfg.kind}-{port}-", suffix=".log")
            os.close(fd)
        Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"$ {' '.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                lifeline.wrap(cmd, s.stop_grace_s), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env, start_new_session=True, preexec_fn=_normal_priority,
            )
        self.url = f"http://{s.host}:{port}/v1"
        try:
            self._wait_healthy(s.startup_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self.url

    def _wait_healthy(self, timeout_s: float) -> None:
        """Until `/v1/models` answers 200, then a one-token chat completion: a server can list its
        model and still die on its first completion (vLLM's CPU attention refuses some head sizes)."""
        import httpx  # here, not at import: the config schema imports this module (a sweep's start, issue 38.5)

        assert self.proc is not None and self.url is not None
        deadline = time.monotonic() + timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ServerError(f"{self.cfg.kind} server exited with code {code} during startup; "
                                  f"log {self.log_path}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"{self.cfg.kind} server not healthy after {timeout_s:g}s "
                                  f"(model.server.startup_timeout_s); log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.25)
        body = {"model": self.cfg.name, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
        try:
            r = httpx.post(f"{self.url}/chat/completions", json=body, timeout=max(deadline - time.monotonic(), 5.0))
            failure = None if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:300]}"
        except httpx.HTTPError as e:
            failure = f"{type(e).__name__}: {e}"
        if failure:
            try:
                died = f" and exited with code {self.proc.wait(timeout=5.0)}"  # a server that dies of it
            except subprocess.TimeoutExpired:
                died = ""
            raise ServerError(f"{self.cfg.kind} server listed its model but failed a one-token completion "
                              f"({failure}){died}; log {self.log_path}:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path or not Path(self.log_path).exists():
            return ""
        return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it after `stop_grace_s`; safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=self.cfg.server.stop_grace_s)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(proc, signal.SIGKILL)  # also any worker the leader left behind
        proc.wait()

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
