"""Pi's `bash`: run a command in the workspace, stream its output to a file, show the tail.

Output is read from a pipe in chunks; only the last ~50 KB stay in memory. When the output is
too long to show whole, its first `bash_output_max_bytes` (and at most `saved_output_max_bytes`
per job) go to `<n>.txt` in the shell's output folder, outside the workspace and read-only to the
agent, which can still `read` it. The file is made relative to a descriptor of that folder,
without following links. A command printing 1 GB leaves the runner's memory flat. A timeout (at
most the job's remaining time) kills everything the command started.
"""

from __future__ import annotations

import fcntl
import math
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from envs import harness_texts
from envs.bash_output import OutputSink
from envs.config import EnvConfig
from envs.disk_quota import DiskQuota, format_bytes
from envs.procfs import descendants
from envs.protocol import ToolResult, function_schema
from envs.sandbox import Shell
from envs.sandbox_extras import Service
from envs.shell_session import run_in_session
from envs.truncate import Tail, decode, format_size, tail_window

_CHUNK = 1 << 20
_PIPE_SIZE = 1 << 20
_GRACE_S = 0.2  # how long background children may keep the pipe open after the command returns
_DRAIN_S = 2.0  # how long to wait for EOF after killing the group
_TERM_S = 2.0  # how long the reaper (no bubblewrap) may take to kill what the command left on timeout


def bash_schema(cfg: EnvConfig) -> dict[str, Any]:
    """The OpenAI function-calling schema of `bash`."""
    return function_schema(
        "bash",
        harness_texts.BASH_DESCRIPTION.format(
            max_lines=cfg.bash_max_lines, max_kb=cfg.bash_max_bytes // 1024,
            timeout=cfg.bash_timeout, timeout_max=cfg.bash_timeout_max,
        ),
        {
            "command": {"type": "string", "description": "Bash command to execute"},
            "timeout": {"type": "integer", "description": "Timeout in seconds (optional)"},
        },
        ["command"],
    )


@dataclass
class _Run:
    exit_code: int | None
    timed_out: bool


class BashTool:
    """Runs `bash` calls for one workspace; numbers the saved outputs and counts their bytes."""

    def __init__(self, workspace: str, cfg: EnvConfig, shell: Shell) -> None:
        self.workspace, self.cfg, self.shell = workspace, cfg, shell
        self.calls = 0
        self.pristine = True  # nothing of the agent's has run in the workspace yet (no command, no write)
        self.saved_bytes = 0  # of all saved outputs so far (capped at cfg.saved_output_max_bytes)
        self._proc: subprocess.Popen | None = None  # the command running now
        self._interrupted = False
        # Measures the workspace and the shell's /tmp now (the baseline), then watches every call.
        self.quota = DiskQuota(cfg.disk_quota_bytes, [workspace, shell.tmp], self._pids, outside=shell.mode == "none",
                               holders=self._sandboxed if shell.mode == "bwrap" else None, release=shell.release)

    def _pids(self) -> list[int]:
        """Every process of the agent's shell: its cgroup's, else those below the sandbox or command."""
        pids = self.shell.caps.pids()
        if pids is not None:
            return pids
        session = self.shell.session.proc if self.shell.session is not None else None
        tops = [p.pid for p in (session, self._proc) if p is not None and p.returncode is None]
        return descendants(tops) if tops else []

    def _sandboxed(self) -> list[int]:
        """The shell's processes but bubblewrap's launcher (the session's or the call's): it runs
        outside the sandbox's PID namespace, where nothing inside can name, signal or trace it, so it
        never holds a file of the agent's; its descriptors and mappings need no scan at each measure."""
        launchers = {p.pid for p in (self.shell.session.proc if self.shell.session is not None else None, self._proc)
                     if p is not None}
        return [pid for pid in self._pids() if pid not in launchers]

    def interrupt(self) -> None:
        """Kill the running command's process group, and refuse later commands (from any thread)."""
        self._interrupted = True
        proc = self._proc
        if proc is not None:
            _kill_group(proc.pid)
        if self.shell.session is not None:
            self.shell.session.kill()

    @property
    def limits_hit(self) -> list[str]:
        return self.shell.caps.hit

    def run(self, command: str, timeout: int | None = None, time_left: float | None = None) -> ToolResult:
        """One call: output tail, notices, `Command exited with code N` / timeout as an error result.

        `time_left` (the job's remaining seconds) bounds the timeout whatever the call asks for.
        """
        if self._interrupted:
            return ToolResult(harness_texts.BASH_INTERRUPTED, is_error=True, meta={"exit_code": None, "timed_out": False})
        if self.quota.exceeded is not None:
            return self.quota_result("", {"exit_code": None, "timed_out": False})
        asked = timeout
        seconds: float = self.cfg.bash_timeout if timeout is None or timeout <= 0 else min(timeout, self.cfg.bash_timeout_max)
        job_clamped = time_left is not None and time_left < seconds
        if job_clamped:
            seconds = max(time_left, 0.0)
            self.shell.caps.note("tool_timeout_clamped")
        self.calls += 1
        pristine, self.pristine = self.pristine, False
        if pristine and not self._service_ready():  # the runner's own evidence, before anything of the agent's ran
            service = self.shell.session.service
            notice = harness_texts.BASH_SERVICE_FAILED.format(name=service.name, port=service.port, seconds=f"{service.start_s:g}")
            return ToolResult(notice, is_error=True, meta={"exit_code": None, "timed_out": False}, stop="env_error")
        name = f"{self.calls}.txt"
        out_path = os.path.join(self.shell.outputs, name)
        room = max(self.cfg.saved_output_max_bytes - self.saved_bytes, 0)
        sink = OutputSink(self.shell.outputs_fd, name, min(self.cfg.bash_output_max_bytes, room),
                     self.cfg.bash_max_lines, self.cfg.bash_max_bytes)
        self.quota.start()
        try:
            run = self._execute(command, seconds, sink)
        finally:
            self.quota.stop()
            sink.close()
        self.saved_bytes += sink.saved
        tail = tail_window(sink.window, sink.total, sink.lines(), self.cfg.bash_max_lines, self.cfg.bash_max_bytes)
        if not tail.truncated and sink.file is not None:
            os.unlink(name, dir_fd=self.shell.outputs_fd)
        elif tail.truncated and sink.total > sink.saved and sink.cap < self.cfg.bash_output_max_bytes:
            self.shell.caps.note("saved_output_bytes")
        self.shell.caps.check(decode(sink.window[-4096:]), run.exit_code)
        text = self._format(tail, sink, out_path)
        shown = math.ceil(seconds)
        if job_clamped:
            text = harness_texts.BASH_TIMEOUT_JOB_CLAMPED.format(used=shown) + "\n" + text
        elif asked is not None and asked > self.cfg.bash_timeout_max:
            text = harness_texts.BASH_TIMEOUT_CLAMPED.format(asked=asked, used=shown) + "\n" + text
        is_error = run.timed_out or run.exit_code != 0
        if run.timed_out:
            text += "\n\n" + harness_texts.BASH_TIMEOUT.format(seconds=shown)
        elif run.exit_code != 0:
            text += "\n\n" + harness_texts.BASH_EXIT.format(code=run.exit_code)
        meta = {
            "exit_code": run.exit_code, "timed_out": run.timed_out, "output_bytes": sink.total,
            "full_output": out_path if tail.truncated else None,
        }
        if self.quota.exceeded is not None:
            return self.quota_result(text, meta)
        service = self._service_down()
        if service is not None:  # the agent may have stopped it
            text += "\n\n" + harness_texts.BASH_SERVICE_DOWN.format(name=service.name, port=service.port)
        return ToolResult(text, is_error=is_error, meta=meta)

    def _service_ready(self) -> bool:
        """Whether the task's service (if any) listens once the sandbox has started, by the runner's
        own wait: nothing of the agent's has run yet, so a service down is the environment's failure."""
        session = self.shell.session
        return session is None or session.service is None or session.service_ready()

    def _service_down(self) -> Service | None:
        """The task's service when the supervisor found it not listening as this call began (else None)."""
        session = self.shell.session
        return session.service if session is not None and session.service_listening is False else None

    def quota_result(self, text: str, meta: dict[str, Any]) -> ToolResult:
        """The call's output (if any) and why the job ends: its disk quota was exceeded."""
        self.shell.caps.note("disk_quota")
        notice = harness_texts.BASH_DISK_QUOTA.format(quota=format_bytes(self.cfg.disk_quota_bytes), why=self.quota.exceeded)
        return ToolResult(f"{text}\n\n{notice}" if text else notice, is_error=True, meta=meta, stop="disk_quota")

    def _format(self, tail: Tail, sink: OutputSink, out_path: str) -> str:
        text = decode(tail.text)
        if not tail.truncated:
            return text if sink.total else harness_texts.BASH_NO_OUTPUT
        path = out_path
        if sink.total > sink.saved:
            path += harness_texts.BASH_CAPPED_NOTE.format(saved=format_size(sink.saved), total=format_size(sink.total))
        if tail.by == "partial":
            notice = harness_texts.BASH_PARTIAL_LINE_NOTICE.format(
                shown=format_size(len(tail.text)), line=tail.last, size=format_size(sink.last_line_size()), path=path
            )
        elif tail.by == "lines":
            notice = harness_texts.BASH_LINES_NOTICE.format(start=tail.first, end=tail.last, total=tail.last, path=path)
        else:
            notice = harness_texts.BASH_BYTES_NOTICE.format(
                start=tail.first, end=tail.last, total=tail.last, limit=format_size(self.cfg.bash_max_bytes), path=path
            )
        return f"{text}\n\n{notice}"

    def _execute(self, command: str, seconds: float, sink: OutputSink) -> _Run:
        if self.shell.session is not None:
            code, timed_out = run_in_session(self.shell.session, command, seconds, sink.add, lambda: self._interrupted)
            return _Run(code, timed_out)
        script = command_fd(command)
        r, w = os.pipe()
        try:
            fcntl.fcntl(r, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        except OSError:
            pass  # a smaller pipe only means more reads
        try:
            proc = subprocess.Popen(
                self.shell.argv(script), cwd=self.workspace, env=self.shell.env, stdin=subprocess.DEVNULL,
                stdout=w, stderr=w, start_new_session=True, close_fds=True, pass_fds=(script, *self.shell.pass_fds),
            )
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)
            os.close(script)
        self._proc = proc
        if self._interrupted:  # interrupted while it started
            _kill_group(proc.pid)
        deadline = time.monotonic() + seconds
        try:
            timed_out = _pump(r, proc, deadline, sink)
            if not timed_out:  # EOF can come a moment before the shell exits
                try:
                    proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
                except subprocess.TimeoutExpired:
                    timed_out = True
            if timed_out and self.shell.mode == "none":
                _terminate(proc)  # the reaper kills what escaped the group (setsid), then exits
            _kill_group(proc.pid)  # also ends background children the command left behind
            _drain(r, sink)
            return _Run(proc.wait(), timed_out)
        finally:
            self._proc = None
            os.close(r)
            if proc.poll() is None:
                _kill_group(proc.pid)
                proc.wait()


def command_fd(command: str) -> int:
    """A memfd holding the command, at offset 0 (bash reads it from there; argv has a size limit).
    The bash tool passes each call this way, and an external harness its launch script."""
    fd = os.memfd_create("runningtab-command")
    try:
        data = memoryview(command.encode("utf-8", errors="surrogateescape"))
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _terminate(proc: subprocess.Popen) -> None:
    try:
        proc.terminate()
        proc.wait(timeout=_TERM_S)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass


def _pump(fd: int, proc: subprocess.Popen, deadline: float, sink: OutputSink) -> bool:
    """Read output until EOF, the command's return (plus a grace for its children), or the deadline."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    returned_at: float | None = None
    while True:
        now = time.monotonic()
        if now >= deadline:
            return True
        if returned_at is None and proc.poll() is not None:
            returned_at = now
        if returned_at is not None and now - returned_at > _GRACE_S:
            return False
        wait = min(deadline - now, _GRACE_S / 2 if returned_at is not None else 0.5)
        if poller.poll(max(wait, 0.0) * 1000):
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return False
            sink.add(chunk)


def _drain(fd: int, sink: OutputSink) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    end = time.monotonic() + _DRAIN_S
    while (left := end - time.monotonic()) > 0 and poller.poll(left * 1000):
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return
        sink.add(chunk)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass

