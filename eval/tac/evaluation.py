"""One run of a task's evaluator in its sandbox, under the agent's caps, with its progress read.

The evaluator reads files the agent made, so it gets the caps the agent's own shell had
(`envs.limits.Caps` from the job's recorded `env` settings: memory, file size, processes) plus a
CPU-time cap and the wall-clock timeout (`judge.evaluator_timeout_s`). Its progress lines and its
result come over two pipes only `run_evaluator.py` (and, for the files it serves, the file server)
holds: programs they start do not inherit them, and neither process is dumpable, so no program the
evaluator runs (the agent's code, in the sde tasks) can open them through /proc and forge a line or
the result. The result never comes from a file such a program could overwrite.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from envs.config import EnvConfig
from envs.limits import Caps
from eval.tac.outcome import Ended, Progress
from eval.tac.sandbox import HOSTS, bwrap_argv, sandbox_env

MAX_PROGRESS_BYTES = 1024 * 1024
MAX_RESULT_BYTES = 1024 * 1024
# Isolated (-I): the working folder is /workspace, which the agent wrote; run_evaluator.py puts /utils on sys.path.
COMMAND = ["python", "-I", "-B", "/utils/run_evaluator.py", "/utils/evaluator.py", "/outputs/trajectory", "/outputs/result.json"]


def recorded_env(config: dict[str, Any]) -> EnvConfig:
    """The agent's environment settings as the job recorded them (defaults for what it lacks)."""
    env = config.get("env")
    known = {f.name for f in dataclasses.fields(EnvConfig)}
    return EnvConfig(**{k: v for k, v in env.items() if k in known}) if isinstance(env, dict) else EnvConfig()


@dataclasses.dataclass
class Run:
    """What the run left: how it ended, its progress, and its result (None when it wrote none)."""

    end: Ended
    progress: Progress
    result: dict[str, Any] | None


def run(image: dict[str, Path], socket_dir: Path, log: Path, env: EnvConfig, timeout_s: float, in_flight: Any) -> Run:
    """Run the evaluator, its output to `log` (a host file, capped by the file-size limit);
    `in_flight()` says whether a judge-model call is under way (asked when it ends)."""
    read_fd, write_fd = os.pipe()
    result_read, result_write = os.pipe()
    caps = Caps(env, cpu_seconds=int(timeout_s) + 1)
    chunks: list[bytes] = []
    result: list[bytes] = []
    readers = [threading.Thread(target=_drain, args=(read_fd, chunks, MAX_PROGRESS_BYTES), daemon=True),
               threading.Thread(target=_drain, args=(result_read, result, MAX_RESULT_BYTES + 1), daemon=True)]
    hosts = log.with_name("hosts")
    hosts.write_text(HOSTS)
    try:
        argv = [*caps.prefix(), *bwrap_argv(image, socket_dir, hosts, COMMAND)]
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, env={**sandbox_env(), "RT_TAC_PROGRESS_FD": str(write_fd), "RT_TAC_RESULT_FD": str(result_write)},
                                    pass_fds=(write_fd, result_write), stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        for fd in (write_fd, result_write):
            os.close(fd)
        write_fd = result_write = -1
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        busy = bool(in_flight())
        if timed_out:
            proc.kill()
            proc.wait()
    finally:
        for fd in (write_fd, result_write):
            if fd >= 0:
                os.close(fd)
        caps.close()  # kills whatever the evaluator left behind
    for reader in readers:
        reader.join(timeout=5)
    end = Ended(proc.returncode, timed_out, _tail(log), busy)
    return Run(end, Progress.parse(b"".join(chunks).decode("utf-8", errors="replace")), _result(b"".join(result)))


def _tail(log: Path, size: int = 20000) -> str:
    with open(log, "rb") as f:
        f.seek(max(os.fstat(f.fileno()).st_size - size, 0))
        return f.read(size).decode("utf-8", errors="replace")


def _drain(fd: int, chunks: list[bytes], cap: int) -> None:
    """Everything the pipe says, the first `cap` bytes kept (the writer never blocks on a full pipe)."""
    got = 0
    try:
        while data := os.read(fd, 65536):
            if got < cap:
                chunks.append(data[: cap - got])
            got += len(data)
    finally:
        os.close(fd)


def _result(data: bytes) -> dict[str, Any] | None:
    """The result the evaluator sent on its result pipe (bounded), or None."""
    if not data or len(data) > MAX_RESULT_BYTES:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("checkpoints"), list) and isinstance(doc.get("final_score"), dict) else None
